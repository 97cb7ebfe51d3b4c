// Package a11y is the storefront accessibility audit (contract 2, section
// 1): a page (pasted HTML or a sample) loaded in a real browser with no
// network, run through the rule engine (axe-core), the motion check, the
// keyboard pass and the form pass; their results become findings ranked by how much they
// block a purchase, with WCAG 2.2 references and fixes, under a signed
// service.record.v1 record.
package a11y

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"boxd/engine/attest"
	"boxd/engine/browser"
	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/a11y/axe"
	"boxd/pipelines/a11y/domains"
	"boxd/pipelines/a11y/findings"
	"boxd/pipelines/a11y/forms"
	"boxd/pipelines/a11y/judge"
	"boxd/pipelines/a11y/keyboard"
	"boxd/pipelines/a11y/motion"
	"boxd/pipelines/a11y/pagecheck"
	"boxd/pipelines/llmcall"
	"boxd/pipelines/outbound"
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

// SyntheticClaim names the caller's own page the body carries (html;
// none for URLs or a sample) and its synthetic flag
// (limits.require_synthetic, applied at admission).
func (r *Request) SyntheticClaim() (string, *bool) {
	if r.HTML == "" {
		return "", nil
	}
	return "html", r.Synthetic
}

// Streaming reports the body's stream flag (read by admission).
func (r *Request) Streaming() bool { return r.Stream }

// Validate checks the body: exactly one source, the HTML's bound, a
// known sample, one to five URLs.
func (r *Request) Validate() error {
	n := 0
	for _, set := range []bool{len(r.URLs) > 0, r.HTML != "", r.SampleID != ""} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return problem.New(problem.Invalid, "send exactly one of urls (1 to 5 pages on one verified origin), html (one page) or sample_id (%s, %s or %s)", SampleShopWithIssues, SampleCleanShop, SampleProductPage)
	case r.HTML != "" && utf8.RuneCountInString(r.HTML) > MaxHTMLChars:
		return problem.New(problem.TooLarge, "html holds %d characters; at most %d are audited", utf8.RuneCountInString(r.HTML), MaxHTMLChars)
	case r.SampleID != "" && Sample(r.SampleID) == "":
		return problem.New(problem.NotFound, "no sample %q; the samples are %s, %s and %s", r.SampleID, SampleShopWithIssues, SampleCleanShop, SampleProductPage)
	case len(r.URLs) > MaxURLs:
		return problem.New(problem.Invalid, "urls holds %d pages; at most %d on one origin", len(r.URLs), MaxURLs)
	}
	var origin string
	for i, raw := range r.URLs {
		u, err := url.Parse(raw)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "":
			return problem.New(problem.Invalid, "urls[%d] is not an http or https URL", i)
		case u.User != nil:
			return problem.New(problem.Invalid, "urls[%d] carries a user name or password: audits fetch public pages only", i)
		case i > 0 && u.Scheme+"://"+strings.ToLower(u.Host) != origin:
			return problem.New(problem.Invalid, "urls[%d] is on %s, not %s: the pages of one audit are on one origin", i, u.Scheme+"://"+u.Host, origin)
		}
		origin = u.Scheme + "://" + strings.ToLower(u.Host)
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
	// Fetch fetches a URL audit's requests under the outbound rules (nil:
	// URL audits answer 503).
	Fetch browser.Fetcher
	// Chat is the vision judge's model (nil or blind: not judged, and
	// not_checked says so).
	Chat *llmcall.Model
	Key  *attest.Key
	Log  *slog.Logger
	Now  func() time.Time
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
	// ReceiptEvents are the receipts of the audit's model calls (the
	// vision judge's), as its stream sent them.
	ReceiptEvents []run.ReceiptBody `json:"receipt_events"`
	ModelCalls    int               `json:"model_calls"`
	ElapsedS      float64           `json:"elapsed_s"`
}

var _ run.Tallied = (*Result)(nil)

// SetTally fills receipt_events from the run's events.
func (r *Result) SetTally(t run.Tally) { r.ReceiptEvents = append([]run.ReceiptBody{}, t.Receipts...) }

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

// Caller is who asked for an audit, as the audit needs it: the domains
// its key verified (URL audits), and its budget (the budget event).
type Caller struct {
	Verified []domains.Verified
	Budget   run.Budget // nil: no budget event
}

// source is one page to audit: a URL, or HTML served by the tab.
type source struct {
	name, url, html string
}

// pageResult is one audited page.
type pageResult struct {
	findings.Page
	shot []byte
}

// Serve runs an audit on the run path: its events go to env.Events, the
// judge spends env.Budget, and done (the result) is sent last. who gives
// the caller's verified domains.
func (s *Service) Serve(ctx context.Context, env run.Env, req Request, who Caller) (*Result, error) {
	who.Budget = env.Budget
	out, err := s.Audit(ctx, req, env.Events, who)
	if err != nil {
		return nil, err
	}
	env.Events.End(run.TypeDone, out)
	return out, nil
}

// Audit audits the request's pages: pasted HTML or a sample with no
// network; or one to five URLs of an origin the caller verified, loaded
// read-only (GET and HEAD), every request fetched through the outbound
// rules. Events: start; per page, page (with its screenshot) or
// page_error, then names (the tab stops' accessible names) and errors
// (what the empty forms showed); each finding; result; budget.
func (s *Service) Audit(ctx context.Context, req Request, ev Events, who Caller) (*Result, error) {
	if err := s.Ready(); err != nil {
		return nil, err
	}
	start := time.Now()
	var srcs []source
	pol := browser.Policy{Network: browser.Offline}
	switch {
	case len(req.URLs) > 0:
		origin, err := s.allowURLs(req.URLs, who.Verified)
		if err != nil {
			return nil, err
		}
		pol = browser.Policy{Network: browser.ReadOnly, Origins: []string{origin}, Fetch: s.Fetch, Subresources: true}
		for _, u := range req.URLs {
			srcs = append(srcs, source{name: u, url: u})
		}
	case req.SampleID != "":
		srcs = []source{{name: "sample:" + req.SampleID, html: Sample(req.SampleID)}}
	default:
		srcs = []source{{name: "pasted", html: req.HTML}}
	}
	if req.Mobile {
		pol.Width, pol.Height, pol.Mobile = MobileWidth, MobileHeight, true
	}
	w, h := s.Browser.Viewport()
	if req.Mobile {
		w, h = MobileWidth, MobileHeight
	}
	ev.Emit("start", map[string]any{"pages": len(srcs), "mobile": req.Mobile, "viewport": []int{w, h}, "rule_engine": s.Axe.Version})
	tab, err := s.Browser.Open(ctx, pol)
	if errors.Is(err, browser.ErrBusy) {
		return nil, problem.Wrap(problem.Busy, err, "every browser of this box is auditing and the queue is full; retry in a minute").Retry(time.Minute)
	}
	if err != nil {
		return nil, fmt.Errorf("a11y: %w", err)
	}
	defer tab.Close()
	// Watch every page from its first script, for what keeps moving.
	if err := motion.Prepare(tab); err != nil {
		return nil, fmt.Errorf("a11y: %w", tab.Err(err))
	}
	var pages []findings.Page
	var stops, submitted, imagesJudged int
	var pageErrors, prompts []string
	var judged []judge.Summary
	judging := req.judging() && s.Chat.Sees()
	prog := run.ProgressOf(ev) // a streamed audit reports it when silent
	prog.Stage("pages")
	for i, src := range srcs {
		prog.Units("pages", i, len(srcs))
		pr, err := s.auditPage(ctx, tab, src, pagecheck.Viewport{Width: w, Height: h, Mobile: req.Mobile})
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A page that crashed the browser ends the audit with the crash
		// (422 naming the memory bound), whichever action it broke.
		err = tab.Err(err)
		if err != nil {
			if errors.Is(err, browser.ErrCrashed) {
				return nil, fmt.Errorf("a11y: %s: %w", src.name, err)
			}
			ev.Emit("page_error", map[string]string{"page": src.name, "error": err.Error()})
			pageErrors = append(pageErrors, src.name+": "+err.Error())
			continue
		}
		ev.Emit("page", PageEvent{Page: src.name, Width: w, Height: h, ScreenshotPNG: base64.StdEncoding.EncodeToString(pr.shot),
			TabStops: len(pr.Keyboard.Stops), Forms: len(pr.Forms)})
		if judging {
			vs, sum, err := s.judgePage(ctx, tab, who, ev, src.name)
			if err != nil {
				return nil, tab.Err(err)
			}
			pr.Judged = vs
			judged = append(judged, sum)
			for _, v := range vs {
				imagesJudged++
				if !slices.Contains(prompts, v.PromptHash) {
					prompts = append(prompts, v.PromptHash)
				}
			}
		}
		ev.Emit("names", namesOf(pr.Page))
		ev.Emit("errors", errorsOf(pr.Page))
		pages = append(pages, pr.Page)
		stops += len(pr.Keyboard.Stops)
		submitted += len(pr.Forms)
	}
	prog.Units("pages", len(srcs), len(srcs))
	if len(pages) == 0 {
		return nil, problem.New(problem.Unprocessable, "no page could be audited: %s", strings.Join(pageErrors, "; "))
	}
	fs, adv := findings.Build(pages, s.Criteria)
	fs, cutF := bound(fs, MaxFindings, "findings")
	adv, cutA := bound(adv, MaxAdvisories, "advisories")
	for _, f := range fs {
		ev.Emit("finding", f)
	}
	if prompts == nil {
		prompts = []string{}
	}
	out := &Result{ID: ids.New("a11y-", 12), Findings: fs, Advisories: adv, ModelCalls: imagesJudged,
		Checked: Checked{RuleEngine: RuleEngine{Name: "axe-core", Version: s.Axe.Version, SHA256: s.Axe.SHA256}, Pages: len(pages),
			TabStops: stops, FormsSubmitted: submitted, ImagesJudged: imagesJudged, PromptHashes: prompts},
		NotChecked: s.notChecked(req, pageErrors, judged)}
	for _, cut := range []string{cutF, cutA} {
		if cut != "" {
			out.NotChecked = append(out.NotChecked, cut)
		}
	}
	out.ReceiptEvents = []run.ReceiptBody{}
	if out.Findings == nil {
		out.Findings = []findings.Finding{}
	}
	if out.Advisories == nil {
		out.Advisories = []findings.Finding{}
	}
	out.Summary = findings.Summarize(out.Findings, out.Advisories, len(pages))
	if out.Record, err = s.record(out, req); err != nil {
		return nil, fmt.Errorf("a11y: sign the record: %w", err)
	}
	out.ElapsedS = float64(time.Since(start).Milliseconds()) / 1000
	ev.Emit("result", map[string]any{"id": out.ID, "summary": out.Summary, "record": out.Record.ID})
	if who.Budget != nil {
		if left, err := who.Budget.TokensLeft(ctx); err == nil {
			b := run.BudgetBody{LLMTokensLeft: left, KeyID: who.Budget.KeyID()}
			if who.Budget.Daily() {
				b.Period = "day"
			}
			ev.Emit(run.TypeBudget, b)
		}
	}
	s.log().Info("a11y audit", "id", out.ID, "pages", len(pages), "page_errors", len(pageErrors), "findings", len(fs), "advisories", len(adv), "record", out.Record.ID)
	return out, nil
}

// auditPage loads one page in the tab and runs the rule engine with
// boxd's own rules (pagecheck), the motion check, the reflow check (at
// 320 px wide, then back to vp), the keyboard pass and the form pass
// over it.
func (s *Service) auditPage(ctx context.Context, tab *browser.Tab, src source, vp pagecheck.Viewport) (*pageResult, error) {
	if src.url == "" {
		if err := tab.LoadHTML(src.html); err != nil {
			return nil, fmt.Errorf("the page did not load in the browser: %w", err)
		}
	} else {
		resp, err := chromedp.RunResponse(tab.Context(), chromedp.Navigate(src.url))
		switch {
		case err != nil:
			why := err.Error()
			for _, r := range tab.Refused() {
				if r.Type == "Document" {
					why = r.Why
				}
			}
			return nil, fmt.Errorf("%s did not load: %s", src.url, why)
		case resp == nil:
			return nil, fmt.Errorf("%s did not load: no response", src.url)
		case resp.Status >= 400:
			return nil, fmt.Errorf("%s answered %d", src.url, resp.Status)
		}
	}
	// The page at rest: entrance animations (a banner fading in) ended,
	// so the rule engine does not judge text half faded; endless ones go
	// on (the motion check's business). The motion check waits past this
	// anyway.
	if _, err := chromedp.Run(tab.Context(), chromedp.Evaluate[int](fmt.Sprintf(settleJS, maxSettle.Milliseconds()), chromedp.EvalAwaitPromise)); err != nil {
		return nil, fmt.Errorf("a11y: wait for the page's animations: %w", err)
	}
	shot, err := chromedp.Call(tab.Context(), page.CaptureScreenshot, page.CaptureScreenshotParams{})
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	rules, err := s.Axe.Run(tab)
	if err != nil {
		return nil, err
	}
	own, err := pagecheck.Run(tab)
	if err != nil {
		return nil, err
	}
	rules = append(rules, own...)
	measured, err := measureContrast(tab, rules)
	if err != nil {
		return nil, err
	}
	// What moves is read once the page has been open past five seconds
	// (the rule engine's time counts), before the keyboard pass touches
	// it (a carousel may stop when it takes focus).
	moving, err := motion.Check(ctx, tab)
	if err != nil {
		return nil, err
	}
	// Reflow lays the page out narrow and back, after the motion check
	// (a resize may restart what moves) and before the passes that act.
	reflow, err := pagecheck.Reflow(tab, vp)
	if err != nil {
		return nil, err
	}
	rules = append(rules, reflow)
	kb, err := keyboard.Pass(ctx, tab, 0)
	if err != nil {
		return nil, err
	}
	fm, err := forms.Pass(ctx, tab)
	if err != nil {
		return nil, err
	}
	return &pageResult{Page: findings.Page{URL: src.name, Rules: rules, Keyboard: kb, Forms: fm, Contrast: measured, Motion: moving}, shot: shot.Data}, nil
}

// maxSettle bounds the wait for a page's finite animations to end.
const maxSettle = 4 * time.Second

// settleJS waits (at most %d ms) for the page's running animations that
// end to end, and resolves to how many there were.
const settleJS = `(async (ms) => {
  const ending = document.getAnimations().filter(a => a.playState === "running" && a.effect && isFinite(a.effect.getComputedTiming().endTime));
  if (ending.length) await Promise.race([Promise.all(ending.map(a => a.finished.catch(() => null))), new Promise(r => setTimeout(r, ms))]);
  return ending.length;
})(%d)`

// NamesEvent is the names event: a page's tab stops, in order, with the
// accessible names a screen reader would read.
type NamesEvent struct {
	Page  string     `json:"page"`
	Stops []StopName `json:"stops"`
}

// StopName is one tab stop.
type StopName struct {
	Selector string `json:"selector"`
	Role     string `json:"role"`
	Name     string `json:"name"`
}

func namesOf(p findings.Page) NamesEvent {
	out := NamesEvent{Page: p.URL, Stops: []StopName{}}
	for _, st := range p.Keyboard.Stops {
		out.Stops = append(out.Stops, StopName{Selector: st.Selector, Role: cmp.Or(st.Role, st.Tag), Name: st.Name})
	}
	return out
}

// ErrorsEvent is the errors event: what each form showed when submitted
// empty.
type ErrorsEvent struct {
	Page  string       `json:"page"`
	Forms []forms.Form `json:"forms"`
}

func errorsOf(p findings.Page) ErrorsEvent {
	out := ErrorsEvent{Page: p.URL, Forms: p.Forms}
	if out.Forms == nil {
		out.Forms = []forms.Form{}
	}
	return out
}

// MaxResource bounds one resource a URL audit's page loads.
const MaxResource = 16 << 20

// Outbound is the browser's fetcher over the outbound client: one hop at
// a time (the browser follows redirects and its policy sees each), at
// most MaxResource a resource, public addresses only unless the operator
// allows others.
type Outbound struct{ Client *outbound.Client }

var _ browser.Fetcher = Outbound{}

// Fetch fetches one request for the browser.
func (o Outbound) Fetch(ctx context.Context, method, rawURL, accept string) (browser.Fetched, error) {
	r, err := o.Client.Hop(ctx, method, rawURL, accept, MaxResource)
	if err != nil {
		return browser.Fetched{}, err
	}
	return browser.Fetched{Status: r.Status, Header: r.Header, Body: r.Body}, nil
}

// allowURLs checks a URL audit against the caller's verified domains and
// returns the origin it stays on (403 naming the host and how to verify
// it when it is not covered).
func (s *Service) allowURLs(urls []string, verified []domains.Verified) (string, error) {
	if s.Fetch == nil {
		return "", problem.New(problem.Unavailable, "this box makes no outbound fetches (outbound settings), so it cannot audit URLs; audit pasted HTML instead")
	}
	u, err := url.Parse(urls[0])
	if err != nil {
		return "", problem.New(problem.Invalid, "urls[0] is not a URL")
	}
	if !domains.Covers(verified, u.Hostname()) {
		return "", problem.New(problem.Forbidden, "%s is not a domain this key verified: ask for a challenge with POST /a11y/domains {\"domain\": %q}, publish it, then POST /a11y/domains/check", u.Hostname(), u.Hostname())
	}
	return u.Scheme + "://" + u.Host, nil
}

// judging says whether the request wants the vision judge (judge: true
// or left out).
func (r *Request) judging() bool { return r.Judge == nil || *r.Judge }

// Pages is how many pages the request audits.
func (r *Request) Pages() int { return max(1, len(r.URLs)) }

// TokensFor is what the request needs left of the caller's budget to
// start (contract 2, section 7: about 4,200 tokens a page with the model
// on); 0 when the judge is off or this box's model cannot see.
func (s *Service) TokensFor(r *Request) int64 {
	if !r.judging() || !s.Chat.Sees() {
		return 0
	}
	return int64(r.Pages()) * judge.TokensPerPage
}

// judgePage asks the vision model about the page's images, emitting each
// call's receipt and an image event per verdict.
func (s *Service) judgePage(ctx context.Context, tab *browser.Tab, who Caller, ev Events, name string) ([]judge.Verdict, judge.Summary, error) {
	imgs, err := judge.Collect(tab)
	if err != nil {
		return nil, judge.Summary{}, err
	}
	j := &judge.Judge{Chat: s.Chat, Budget: who.Budget, Events: ev, Verdict: func(v judge.Verdict) { ev.Emit("image", ImageEvent{Page: name, Verdict: v}) }}
	return j.Page(ctx, tab, imgs)
}

// ImageEvent is the image event: the judge's verdict on one image.
type ImageEvent struct {
	Page string `json:"page"`
	judge.Verdict
}

// notChecked lists what this audit did not check, and why.
func (s *Service) notChecked(req Request, pageErrors []string, judged []judge.Summary) []string {
	var out []string
	switch {
	case !req.judging():
		out = append(out, "the vision judge (whether alt text describes its image, text in images): judge is false, so no model was asked")
	case !s.Chat.Sees():
		out = append(out, "the vision judge (whether alt text describes its image, text in images): this box's chat model does not read images (models.llm.projector)")
	default:
		for _, j := range judged {
			if j.Skipped > 0 {
				out = append(out, fmt.Sprintf("the vision judge: %d of %d images not judged (%s)", j.Skipped, j.Images, j.Note))
			}
		}
	}
	out = append(out, NotChecked()...)
	for _, e := range pageErrors {
		out = append(out, "the page "+e)
	}
	return out
}

// record signs the audit: its findings, advisories, what was and was not
// checked, one entry each; for a page sent as html, its meta says what
// the caller said of it (synthetic: true or false).
func (s *Service) record(out *Result, req Request) (*attest.Record, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	meta := map[string]string{"rule_engine": "axe-core " + out.Checked.RuleEngine.Version,
		"rule_engine_sha256": out.Checked.RuleEngine.SHA256, "pages": strconv.Itoa(out.Checked.Pages)}
	if req.HTML != "" {
		meta["synthetic"] = strconv.FormatBool(req.Synthetic != nil && *req.Synthetic)
	}
	b := attest.NewRecord(RecordKind, out.ID, meta)
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
