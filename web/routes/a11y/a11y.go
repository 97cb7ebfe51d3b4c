// Package a11y declares the accessibility audit's routes (/a11y/audit,
// info, samples, domains) over pipelines/a11y.
package a11y

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"boxd/pipelines/a11y/domains"
	"boxd/web/api"

	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/a11y"
	"boxd/pipelines/a11y/judge"
)

// a11yBody bounds an audit's body: 400,000 characters of HTML, up to
// four bytes each, as JSON (escapes can double a few).
const a11yBody = 4 << 20

// a11yVertical is the accessibility audit's vertical.
const a11yVertical = "storefront-accessibility-pass"

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log     *slog.Logger
	Service *a11y.Service
	// Domains verifies the domains URL audits may visit.
	Domains *domains.Registry
}

type routes struct {
	api         *api.API
	log         *slog.Logger
	a11y        *a11y.Service
	a11yDomains *domains.Registry
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	s := &routes{api: a, log: d.Log, a11y: d.Service, a11yDomains: d.Domains}
	s.a11yRoutes()
}

func (s *routes) a11yRoutes() {
	api.Declare(s.api, api.Declared[a11y.Request]{
		Route: api.Route{Method: http.MethodPost, Path: "/a11y/audit", Auth: api.Bearer, Verticals: []string{a11yVertical},
			Body: a11yBody, OneRun: true, Stream: true, Example: `{"sample_id": "shop-with-issues"}`},
		TokensFor: func(r *a11y.Request) int64 { return s.a11y.TokensFor(r) },
		BudgetHint: func(r *a11y.Request) string {
			return fmt.Sprintf("an audit with the vision judge needs about %d tokens a page (%d for this one); send judge: false to audit without the model", judge.TokensPerPage, s.a11y.TokensFor(r))
		},
		Run: func(a *api.Admitted, req *a11y.Request, env run.Env) (any, error) {
			var who a11y.Caller
			if len(req.URLs) > 0 {
				if !a.Principal.IsKey() {
					return nil, problem.New(problem.Forbidden, "a demo session may audit the samples and pasted HTML only: URLs need a developer key and a verified domain")
				}
				v, err := s.a11yDomains.VerifiedFor(a.R.Context(), *a.Principal.KeyID())
				if err != nil {
					return nil, err
				}
				who.Verified = v
			}
			out, err := s.a11y.Serve(a.R.Context(), env, *req, who)
			if err == nil {
				s.log.Info("a11y", "caller", a.Principal.LogID(), "id", out.ID, "findings", len(out.Findings), "record", out.Record.ID)
			}
			return out, err
		},
	})
	type domainBody struct {
		Domain string `json:"domain"`
	}
	domainRoute := func(path, example string, do func(ctx context.Context, keyID, domain string) (any, error)) {
		api.Declare(s.api, api.Declared[domainBody]{
			Route: api.Route{Method: http.MethodPost, Path: path, Auth: api.KeyOnly, Verticals: []string{a11yVertical}, Body: 4 << 10, Example: example},
			Validate: func(b *domainBody) error {
				if b.Domain == "" {
					return problem.New(problem.Invalid, "domain is required, like {\"domain\": \"shop.example.com\"}")
				}
				return nil
			},
			Serve: func(a *api.Admitted, b *domainBody) {
				out, err := do(a.R.Context(), *a.Principal.KeyID(), b.Domain)
				if err != nil {
					api.WriteProblem(a.W, err)
					return
				}
				api.WriteJSON(a.W, http.StatusOK, out)
			},
		})
	}
	domainRoute("/a11y/domains", `{"domain": "shop.example.com"}`, func(ctx context.Context, keyID, domain string) (any, error) {
		v, err := s.a11yDomains.Ask(ctx, keyID, domain)
		if err == nil {
			s.log.Info("a11y domain challenge", "caller", keyID, "domain", v.Domain, "verified", v.Verified)
		}
		return v, err
	})
	domainRoute("/a11y/domains/check", `{"domain": "shop.example.com"}`, func(ctx context.Context, keyID, domain string) (any, error) {
		v, err := s.a11yDomains.Check(ctx, keyID, domain)
		if err == nil {
			s.log.Info("a11y domain check", "caller", keyID, "domain", v.Domain, "verified", v.Verified, "method", v.Method)
		}
		return v, err
	})
	api.Declare(s.api, api.Declared[struct{}]{
		Route: api.Route{Method: http.MethodGet, Path: "/a11y/domains", Auth: api.KeyOnly, Verticals: []string{a11yVertical}},
		Serve: func(a *api.Admitted, _ *struct{}) {
			ds, err := s.a11yDomains.List(a.R.Context(), *a.Principal.KeyID())
			if err != nil {
				api.WriteProblem(a.W, err)
				return
			}
			api.WriteJSON(a.W, http.StatusOK, map[string]any{"domains": ds})
		},
	})
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/a11y/info"}, func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, s.a11yInfo())
	})
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/a11y/samples"}, func(w http.ResponseWriter, r *http.Request) {
		var out []map[string]string
		for _, id := range a11y.SampleIDs {
			out = append(out, map[string]string{"id": id, "html": a11y.Sample(id)})
		}
		api.WriteJSON(w, http.StatusOK, map[string]any{"samples": out})
	})
}

// a11yInfo is GET /a11y/info: laws, criteria, limits, what is not
// checked, and whether the browser and the rule engine are here.
func (s *routes) a11yInfo() map[string]any {
	engine := map[string]any{"name": "axe-core", "available": s.a11y.Axe != nil}
	if s.a11y.Axe != nil {
		engine["version"], engine["sha256"] = s.a11y.Axe.Version, s.a11y.Axe.SHA256
	} else if s.a11y.AxeErr != nil {
		engine["error"] = s.a11y.AxeErr.Error()
	}
	br := map[string]any{"name": "chromium", "available": s.a11y.Browser != nil}
	if s.a11y.Browser == nil && s.a11y.BrowserErr != nil {
		br["error"] = s.a11y.BrowserErr.Error()
	}
	return map[string]any{
		"rule_engine": engine, "browser": br, "wcag": map[string]any{"version": "2.2", "criteria": len(s.a11y.Criteria), "levels": []string{"A", "AA"}},
		"limits":      map[string]any{"urls": a11y.MaxURLs, "resource_bytes": a11y.MaxResource, "url_audits": s.a11y.Fetch != nil, "html_characters": a11y.MaxHTMLChars, "mobile_viewport": []int{a11y.MobileWidth, a11y.MobileHeight}},
		"samples":     a11y.SampleIDs,
		"judge":       map[string]any{"available": s.a11y.Chat.Sees(), "model": s.a11y.Chat.ModelID, "tokens_per_page": judge.TokensPerPage, "images_per_page": judge.MaxPerPage},
		"not_checked": a11y.NotChecked(),
		"laws": []map[string]string{
			{"name": "European Accessibility Act (Directive (EU) 2019/882)", "applies_from": "2025-06-28", "url": "https://eur-lex.europa.eu/eli/dir/2019/882/oj"},
			{"name": "Americans with Disabilities Act, Title II web rule (28 CFR part 35, subpart H): WCAG 2.1 AA", "applies_from": "2026-04-24", "url": "https://www.ada.gov/resources/2024-03-08-web-rule/"},
			{"name": "Equality Act 2010 (United Kingdom)", "applies_from": "2010-10-01", "url": "https://www.legislation.gov.uk/ukpga/2010/15/contents"},
			{"name": "Accessibility for Ontarians with Disabilities Act, 2005", "applies_from": "2005-06-13", "url": "https://www.ontario.ca/laws/statute/05a11"},
		},
		"note": "an audit is an aid, not a certification",
	}
}
