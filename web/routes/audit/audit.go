// Package audit declares the endpoint audit's routes (contract document 2,
// "Endpoint audit", vertical auditor) over pipelines/audit: the signing
// key, targets, reference fixtures, the audit run (server-sent events),
// signed reports and their verification.
package audit

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/audit"
	"boxd/web/api"
)

// Vertical is the audit's demo vertical.
const Vertical = "auditor"

// MinTokens is the generated-token budget an audit needs left to start
// (contract section 7: 402 below 3,000).
const MinTokens = 3000

// Body limits.
const (
	runBody    = 16 << 10
	verifyBody = 1 << 20
)

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log     *slog.Logger
	Service *audit.Service
	Key     *attest.Key
}

type routes struct {
	api *api.API
	log *slog.Logger
	svc *audit.Service
	key *attest.Key
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	s := &routes{api: a, log: d.Log, svc: d.Service, key: d.Key}
	s.publicRoutes()
	api.Declare(s.api, api.Declared[audit.Request]{
		Route: api.Route{Method: http.MethodPost, Path: "/audit/runs", Auth: api.Bearer, Verticals: []string{Vertical},
			Body: runBody, OneRun: true, MinTokens: MinTokens, Stream: true, Example: `{"target": "box-chat"}`},
		Validate: func(r *audit.Request) error {
			if err := s.svc.Validate(r); err != nil {
				return err
			}
			return s.svc.CheckAddress(context.Background(), r)
		},
		BudgetHint: func(*audit.Request) string {
			return "an audit needs 3,000 generated tokens left to start (its probes of this box's model spend them)"
		},
		Run: func(a *api.Admitted, req *audit.Request, env run.Env) (any, error) {
			rep, err := s.svc.Run(a.R.Context(), *req, env)
			if err == nil {
				s.log.Info("audit run", "caller", a.Principal.LogID(), "report", rep.ID, "verdict", rep.Verdict)
			}
			return rep, err
		},
	})
	api.Declare(s.api, api.Declared[verifyReq]{
		Route: api.Route{Gate: s.api.Verifications.Named("report verifications"), Method: http.MethodPost, Path: "/audit/verify",
			Body: verifyBody, Example: `{"report": {}}`},
		Do: func(a *api.Admitted, b *verifyReq) (any, error) {
			if len(b.Report) == 0 || string(b.Report) == "null" {
				return nil, problem.New(problem.Invalid, "send {\"report\": <the signed report object>} (GET /audit/reports/{id} gives one)")
			}
			return audit.VerifyReport(b.Report, s.key.PublicKeyHex()), nil
		},
	})
}

// verifyReq is POST /audit/verify's body.
type verifyReq struct {
	Report json.RawMessage `json:"report"`
}

// SigningKey is GET /audit/signing-key.
type SigningKey struct {
	Alg       string `json:"alg"`
	PubKey    string `json:"pubkey"`
	KeyID     string `json:"key_id"`
	Domain    string `json:"domain"`
	Canonical string `json:"canonical"`
}

// Canonical says how a report's signed message is formed.
const Canonical = "message = \"service.audit.report.v1\" + \"\\n\" + the report without its signature field as JSON: keys sorted, separators \",\" and \":\" without spaces, non-ASCII not escaped, UTF-8; every figure is a decimal string or an integer; signature = hex Ed25519 by signer.pubkey"

func (s *routes) publicRoutes() {
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/audit/signing-key"}, func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, SigningKey{Alg: "ed25519", PubKey: s.key.PublicKeyHex(), KeyID: s.key.ID(), Domain: audit.ReportFormat, Canonical: Canonical})
	})
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/audit/targets"}, func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, s.svc.Targets())
	})
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/audit/references"}, func(w http.ResponseWriter, r *http.Request) {
		refs := s.svc.References()
		api.WriteJSON(w, http.StatusOK, refs)
	})
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/audit/reports"}, func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, s.svc.Recent())
	})
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/audit/reports/{id}"}, func(w http.ResponseWriter, r *http.Request) {
		body, err := s.svc.Report(r.Context(), r.PathValue("id"))
		if err != nil {
			api.WriteProblem(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
}
