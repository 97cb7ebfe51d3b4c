// Package a11y is the storefront accessibility audit (contract 2, section
// 1): a page (pasted HTML or a sample) loaded in a real browser with no
// network, run through the rule engine (axe-core), the keyboard pass and
// the form pass; their results become findings ranked by how much they
// block a purchase, with WCAG 2.2 references and fixes, under a signed
// service.record.v1 record.
package a11y

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"boxd/engine/attest"
	"boxd/engine/browser"
	"boxd/ids"
	"boxd/pipelines/a11y/axe"
	"boxd/pipelines/a11y/findings"
	"boxd/pipelines/a11y/forms"
	"boxd/pipelines/a11y/keyboard"
	"boxd/problem"
)

// Limits (contract 2, section 8).
const (
	MaxHTMLChars = 400_000
	MaxURLs      = 5
	MobileWidth  = 390
	MobileHeight = 844
)

// RecordKind is the kind of the signed record.
const RecordKind = "a11y-audit"

// Request is POST /a11y/audit's body.
type Request struct {
	URLs      []string `json:"urls"`
	HTML      string   `json:"html"`
	Synthetic *bool    `json:"synthetic"`
	SampleID  string   `json:"sample_id"`
	Judge     *bool    `json:"judge"`
	Mobile    bool     `json:"mobile"`
	Stream    bool     `json:"stream"`
}

// Validate checks the body: exactly one source, the HTML's bound and
// its synthetic confirmation, a known sample, one to five URLs.
func (r *Request) Validate() error {
	n := 0
	for _, set := range []bool{len(r.URLs) > 0, r.HTML != "", r.SampleID != ""} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return problem.New(problem.Invalid, "send exactly one of urls (1 to 5 pages on one verified origin), html (one page, with synthetic: true) or sample_id (%s, %s or %s)", SampleShopWithIssues, SampleCleanShop, SampleProductPage)
	case r.HTML != "" && utf8.RuneCountInString(r.HTML) > MaxHTMLChars:
		return problem.New(problem.TooLarge, "html holds %d characters; at most %d are audited", utf8.RuneCountInString(r.HTML), MaxHTMLChars)
	case r.HTML != "" && (r.Synthetic == nil || !*r.Synthetic):
		return problem.New(problem.Invalid, "synthetic must be true with html: it confirms the page holds no personal data")
	case r.SampleID != "" && Sample(r.SampleID) == "":
		return problem.New(problem.NotFound, "no sample %q; the samples are %s, %s and %s", r.SampleID, SampleShopWithIssues, SampleCleanShop, SampleProductPage)
	case len(r.URLs) > MaxURLs:
		return problem.New(problem.Invalid, "urls holds %d pages; at most %d on one origin", len(r.URLs), MaxURLs)
	}
	return nil
}

// Events receives the audit's events (run.Emitter is one).
type Events interface {
	Emit(typ string, body any)
}

// Service runs audits.
type Service struct {
	Browser    *browser.Pool // nil: no browser (503)
	BrowserErr error         // why there is none
	Axe        *axe.Engine   // nil: no rule engine (503)
	AxeErr     error
	Criteria   map[string]axe.Criterion
	Key        *attest.Key
	Log        *slog.Logger
	Now        func() time.Time
}

// Checked says what the audit checked (contract 2, section 2).
type Checked struct {
	RuleEngine     RuleEngine `json:"rule_engine"`
	Pages          int        `json:"pages"`
	ImagesJudged   int        `json:"images_judged"`
	TabStops       int        `json:"tab_stops"`
	FormsSubmitted int        `json:"forms_submitted"`
	PromptHashes   []string   `json:"prompt_hashes"`
}

// RuleEngine names the rule engine that ran.
type RuleEngine struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// Result is the audit response (contract 2, section 2).
type Result struct {
	ID         string             `json:"id"`
	Summary    findings.Summary   `json:"summary"`
	Findings   []findings.Finding `json:"findings"`
	Advisories []findings.Finding `json:"advisories"`
	Checked    Checked            `json:"checked"`
	NotChecked []string           `json:"not_checked"`
	Record     *attest.Record     `json:"record"`
	ModelCalls int                `json:"model_calls"`
	ElapsedS   float64            `json:"elapsed_s"`
}

// PageEvent is the page event: the page as audited, with a screenshot.
type PageEvent struct {
	Page          string `json:"page"`
	Width         int    `json:"width"`
	Height        int    `json:"height"`
	ScreenshotPNG string `json:"screenshot_png_b64"`
	TabStops      int    `json:"tab_stops"`
	Forms         int    `json:"forms"`
}

// Ready says why the audit cannot run (nil when it can).
func (s *Service) Ready() error {
	switch {
	case s.Browser == nil:
		return problem.Wrap(problem.Unavailable, s.BrowserErr, "the accessibility audit needs chromium, and this box has none (the operator installs it: apt-get install chromium)")
	case s.Axe == nil:
		return problem.Wrap(problem.Unavailable, s.AxeErr, "the accessibility audit's rule engine (axe-core) is not installed on this box (a11y.axe_dir)")
	}
	return nil
}

// Audit audits the request's page: pasted HTML or a sample (URL audits
// are refused before: they need a verified domain).
func (s *Service) Audit(ctx context.Context, req Request, ev Events) (*Result, error) {
	if err := s.Ready(); err != nil {
		return nil, err
	}
	start := time.Now()
	html, name := req.HTML, "pasted"
	if req.SampleID != "" {
		html, name = Sample(req.SampleID), "sample:"+req.SampleID
	}
	ev.Emit("start", map[string]any{"pages": 1, "mobile": req.Mobile, "rule_engine": s.Axe.Version})
	pol := browser.Policy{Network: browser.Offline}
	if req.Mobile {
		pol.Width, pol.Height = MobileWidth, MobileHeight
	}
	tab, err := s.Browser.Open(ctx, pol)
	if err != nil {
		return nil, fmt.Errorf("a11y: %w", err)
	}
	defer tab.Close()
	if err := tab.LoadHTML(html); err != nil {
		ev.Emit("page_error", map[string]string{"page": name, "error": err.Error()})
		return nil, problem.Wrap(problem.Unprocessable, err, "the page did not load in the browser: %v", err)
	}
	shot, err := chromedp.Call(tab.Context(), page.CaptureScreenshot, page.CaptureScreenshotParams{})
	if err != nil {
		return nil, fmt.Errorf("a11y: screenshot: %w", err)
	}
	rules, err := s.Axe.Run(tab)
	if err != nil {
		return nil, fmt.Errorf("a11y: %w", err)
	}
	kb, err := keyboard.Pass(ctx, tab, 0)
	if err != nil {
		return nil, fmt.Errorf("a11y: %w", err)
	}
	fm, err := forms.Pass(ctx, tab)
	if err != nil {
		return nil, fmt.Errorf("a11y: %w", err)
	}
	w, h := s.Browser.Viewport()
	if req.Mobile {
		w, h = MobileWidth, MobileHeight
	}
	ev.Emit("page", PageEvent{Page: name, Width: w, Height: h, ScreenshotPNG: base64.StdEncoding.EncodeToString(shot.Data), TabStops: len(kb.Stops), Forms: len(fm)})
	fs, adv := findings.Build([]findings.Page{{URL: name, Rules: rules, Keyboard: kb, Forms: fm}}, s.Criteria)
	for _, f := range fs {
		ev.Emit("finding", f)
	}
	out := &Result{ID: ids.New("a11y-", 12), Findings: fs, Advisories: adv, ModelCalls: 0,
		Checked: Checked{RuleEngine: RuleEngine{Name: "axe-core", Version: s.Axe.Version, SHA256: s.Axe.SHA256}, Pages: 1,
			TabStops: len(kb.Stops), FormsSubmitted: len(fm), PromptHashes: []string{}},
		NotChecked: notChecked(req)}
	if out.Findings == nil {
		out.Findings = []findings.Finding{}
	}
	if out.Advisories == nil {
		out.Advisories = []findings.Finding{}
	}
	out.Summary = findings.Summarize(out.Findings, out.Advisories, 1)
	if out.Record, err = s.record(out); err != nil {
		return nil, fmt.Errorf("a11y: sign the record: %w", err)
	}
	out.ElapsedS = float64(time.Since(start).Milliseconds()) / 1000
	ev.Emit("result", map[string]any{"id": out.ID, "summary": out.Summary, "record": out.Record.ID})
	s.log().Info("a11y audit", "id", out.ID, "page", name, "findings", len(fs), "advisories", len(adv), "record", out.Record.ID)
	return out, nil
}

// notChecked lists what this audit did not check, and why.
func notChecked(req Request) []string {
	judge := "the vision judge (alt text that does not describe its image, text in images, contrast the rule engine could not decide): not built in this version"
	if req.Judge != nil && !*req.Judge {
		judge = "the vision judge: judge is false"
	}
	return []string{judge,
		"keyboard: traps that cycle among several elements; dialogs opened by controls that do not declare them (aria-haspopup or aria-controls): not checked in this version"}
}

// record signs the audit: its findings, advisories, what was and was not
// checked, one entry each.
func (s *Service) record(out *Result) (*attest.Record, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	b := attest.NewRecord(RecordKind, out.ID, map[string]string{"rule_engine": "axe-core " + out.Checked.RuleEngine.Version,
		"rule_engine_sha256": out.Checked.RuleEngine.SHA256, "pages": strconv.Itoa(out.Checked.Pages)})
	for _, e := range []struct {
		typ string
		v   any
	}{{"findings", out.Findings}, {"advisories", out.Advisories}, {"checked", out.Checked}, {"not_checked", out.NotChecked}} {
		j, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.AddText(e.typ, string(j), map[string]any{"section": e.typ})
	}
	return b.Sign(s.Key, now())
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}
