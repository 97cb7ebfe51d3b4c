package fill

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"boxd/engine/attest"
	"boxd/engine/browser"
	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/fill/form"
	"boxd/pipelines/fill/rules"
	"boxd/pipelines/llmcall"
)

// RecordKind is the kind of the signed fill record.
const RecordKind = "fill"

// MaxHTML bounds the target form's markup (contract 2, section 8).
const MaxHTML = 512 << 10

// Asker proposes which line answers which field (*Proposer asks the
// model; tests give fixed answers).
type Asker interface {
	Propose(ctx context.Context, fields []Field, lines []Line) ([]Proposal, string, *llmcall.Result, error)
}

var _ Asker = (*Proposer)(nil)

// Events receives a run's events (run.Emitter is one).
type Events interface {
	Emit(typ string, body any)
}

// Service fills forms.
type Service struct {
	Browser *browser.Pool
	// Ask proposes the answers (nil: a Proposer over Chat).
	Ask  Asker
	Chat *llmcall.Model
	// Reader reads PDF and image sources (nil: they are refused).
	Reader Reader
	Key    *attest.Key
	Now    func() time.Time
	Log    *slog.Logger
	// Runs keeps finished runs (nil: kept RunTTL on Now); Inbox receives
	// the demo forms' released Submits (nil: a new one).
	Runs  *run.Store[*Result]
	Inbox *Inbox
	// RunLimit bounds one run, from its sources to its signed record
	// (0: DefaultRunLimit).
	RunLimit time.Duration
	once     sync.Once
}

// DefaultRunLimit is the longest a fill run may take: reading 8 sources
// of 8 MB, two looks at the form and one model call fit in it many times
// over on this box's CPU path; a run past it ends with 422 and frees its
// slot.
const DefaultRunLimit = 5 * time.Minute

// errRunLimit is the cause of a run's context that ended at RunLimit.
var errRunLimit = errors.New("fill: the run's time limit")

// Request is one fill: the form's markup and the person's documents.
type Request struct {
	HTML    string
	Sources []Source
	Hints   rules.Hints
	// Demo names the demo form filled ("" for submitted HTML): only a
	// demo form's held Submit is released on approval.
	Demo string
	// Files are sources sent as PDF or image, read by the document
	// reader when the run starts.
	Files []FileSource
	// ReviewLang is the language the review is translated into ("" or
	// "en": none).
	ReviewLang string
}

// FileSource is a source sent as a file.
type FileSource struct {
	Name, DataB64, MediaType string
}

// Summary is review.summary (contract 2, section 2).
type Summary struct {
	Filled        int `json:"filled"`
	LeftForYou    int `json:"left_for_you"`
	CommitButtons int `json:"commit_buttons"`
	HeldRequests  int `json:"held_requests"`
	Flags         int `json:"flags"`
	ModelCalls    int `json:"model_calls"`
	Tokens        int `json:"tokens"`
}

// ReviewField is one field of the review.
type ReviewField struct {
	FID      string `json:"fid"`
	Name     string `json:"name"`
	Selector string `json:"selector"`
	Label    string `json:"label"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	Value    string `json:"value"`
	Filled   bool   `json:"filled"`
	Why      string `json:"why"`
	Source   *Line  `json:"source"`
}

// Review is what the person reviews before pressing Submit.
type Review struct {
	Fields  []ReviewField `json:"fields"`
	Summary Summary       `json:"summary"`
	Flags   []Flag        `json:"flags"`
}

// Result is a run's answer.
type Result struct {
	ID     string            `json:"run_id"`
	Review Review            `json:"review"`
	Record *attest.Record    `json:"record"`
	Held   []browser.Refused `json:"held_requests"`
	Prompt string            `json:"prompt_sha256,omitempty"`
	// Approval is set once the person approved.
	Approval *Approval `json:"approval,omitempty"`
	// Demo is the demo form filled ("" for submitted HTML).
	Demo string `json:"demo,omitempty"`
	// Translation is the review in ReviewLang (*Translation), or why it
	// is not ({lang, available: false, why}); nil for English.
	Translation any `json:"translation"`
}

// Validate checks a request's sizes and shape.
func (r *Request) Validate() error {
	switch {
	case len(r.HTML) > MaxHTML:
		return problem.New(problem.TooLarge, "target.html is %d bytes; at most %d", len(r.HTML), MaxHTML)
	case r.HTML == "" || !utf8.ValidString(r.HTML):
		return problem.New(problem.Invalid, "target.html is required: the form's markup, as UTF-8")
	case len(r.Sources)+len(r.Files) == 0:
		return problem.New(problem.Invalid, "sources is required: the documents the values come from (1 to %d)", MaxSources)
	case len(r.Sources)+len(r.Files) > MaxSources:
		return problem.New(problem.Invalid, "sources holds %d documents; at most %d", len(r.Sources)+len(r.Files), MaxSources)
	}
	for i, s := range r.Sources {
		if s.Name == "" || len(s.Text) > MaxSourceSize {
			return problem.New(problem.Invalid, "sources[%d] needs a name and at most %d bytes of text", i, MaxSourceSize)
		}
	}
	return nil
}

// Run fills the form: the documents become numbered lines, the form is
// read in a browser with no network (every request it makes is held and
// counted), text aimed at agents is flagged, the model proposes, the
// rules decide, the values are typed with every request held, and the
// run is signed step by step. Nothing is submitted.
//
// The work is kept when a step fails after the page was read: a proposal
// that fails (an answer cut at its token bound, a model error) leaves the
// fields it would have answered to the person, with why, and the run
// completes; the page is opened again to type after the model call (a
// tab's life does not bound how long the model may take), and a field
// the page did not take is left, with why. Every failed run logs one
// line: its id and the reason, never a value.
func (s *Service) Run(ctx context.Context, req Request, ev Events, budget run.Budget) (out *Result, err error) {
	id := ids.New("fill-", 12)
	defer func() {
		if err != nil {
			s.log().Warn("fill run failed", "id", id, "reason", reason(err))
		}
	}()
	if err := req.Validate(); err != nil {
		return nil, err
	}
	limit := cmp.Or(s.RunLimit, DefaultRunLimit)
	parent := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, limit, errRunLimit)
	defer cancel()
	defer func() {
		// A run stopped by its limit (not by a caller that left) says so.
		if err != nil && parent.Err() == nil && errors.Is(context.Cause(ctx), errRunLimit) {
			err = problem.Wrap(problem.Unprocessable, err, "the fill run took longer than %s, the box's limit for one run: send fewer or shorter sources", limit)
		}
	}()
	// Each stage is an event and the run's progress (run.ProgressOf: a
	// streamed run reports it when silent, with its units and tokens).
	prog := run.ProgressOf(ev)
	stage := func(name string) {
		ev.Emit("stage", map[string]string{"stage": name})
		prog.Stage(name)
	}
	stage("sources")
	for i, f := range req.Files {
		if s.Reader == nil {
			return nil, problem.New(problem.Unavailable, "source %q is a file, and this box has no document reader to read it; send its text", f.Name)
		}
		prog.Units("documents", i, len(req.Files))
		src, err := ReadFile(ctx, s.Reader, f.Name, f.DataB64, f.MediaType)
		if err != nil {
			return nil, err
		}
		req.Sources = append(req.Sources, src)
	}
	lines, err := Lines(req.Sources)
	if err != nil {
		return nil, problem.Wrap(problem.Invalid, err, "%v", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	docs := []map[string]any{}
	for _, src := range req.Sources {
		docs = append(docs, map[string]any{"name": src.Name, "sha256": attest.HashText(src.Text)})
	}
	ev.Emit("sources", map[string]any{"documents": docs, "lines": len(lines)})
	stage("page")
	pg, err := s.readPage(ctx, req.HTML)
	if err != nil {
		return nil, err
	}
	fields := pg.fields
	flags := form.Flags(pg.segs)
	ev.Emit("ready", map[string]any{"fields": len(fields), "commit_buttons": pg.commits})
	if pg.shot != nil {
		ev.Emit("frame", map[string]string{"png_b64": base64.StdEncoding.EncodeToString(pg.shot), "stage": "page"})
	}
	for _, f := range flags {
		ev.Emit("flag", f)
	}
	stage("model")
	ask := s.Ask
	if ask == nil {
		ask = &Proposer{Chat: s.Chat, Budget: budget, Events: ev}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	props, prompt, res, perr := ask.Propose(ctx, fields, lines)
	if err := ctx.Err(); err != nil {
		return nil, err // the caller went away, or the run's limit passed
	}
	out = &Result{ID: id, Prompt: prompt, Demo: req.Demo}
	if res != nil {
		out.Review.Summary.ModelCalls, out.Review.Summary.Tokens = 1, res.Usage.TotalTokens
	}
	ds := Decide(fields, lines, props, req.Hints)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if perr != nil {
		why := "the model's proposal failed (" + reason(perr) + "); this field is left to you"
		s.log().Warn("fill proposal failed", "id", id, "reason", reason(perr))
		for i := range ds {
			if ds[i].Status == StatusLeft {
				ds[i].Why = why
			}
		}
	}
	stage("typing")
	typing := 0
	for _, d := range ds {
		if d.Filled {
			typing++
		}
	}
	prog.Units("fields", 0, typing)
	held, shot := s.typeInto(ctx, id, req.HTML, fields, ds)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if shot != nil {
		ev.Emit("frame", map[string]string{"png_b64": base64.StdEncoding.EncodeToString(shot), "stage": "filled"})
	}
	out.Held = heldOnce(pg.held, held)
	heldTotal := len(out.Held)
	out.Held = capHeld(out.Held)
	for _, h := range out.Held {
		ev.Emit("net", withKind(h))
	}
	for _, d := range ds {
		rf := ReviewField{FID: d.FID, Name: d.Name, Selector: d.Selector, Label: d.Label, Type: d.Type, Status: d.Status, Value: d.Value, Filled: d.Filled, Why: d.Why, Source: d.Source}
		out.Review.Fields = append(out.Review.Fields, rf)
		ev.Emit("field", withKind(rf))
		if d.Filled {
			out.Review.Summary.Filled++
		} else {
			out.Review.Summary.LeftForYou++
		}
	}
	out.Review.Flags = flags
	if out.Review.Flags == nil {
		out.Review.Flags = []Flag{}
	}
	out.Review.Summary.CommitButtons, out.Review.Summary.HeldRequests, out.Review.Summary.Flags = pg.commits, heldTotal, len(flags)
	ev.Emit("review", out.Review)
	if req.ReviewLang != "" && req.ReviewLang != "en" {
		out.Translation = s.translate(ctx, budget, ev, req.ReviewLang, out.Review)
	}
	if out.Record, err = s.record(out, docs, req.HTML); err != nil {
		return nil, fmt.Errorf("fill: sign the record: %w", err)
	}
	for _, e := range out.Record.Entries {
		ev.Emit("entry", withKind(map[string]string{"n": e.N, "type": e.Type, "hash": e.Hash}))
	}
	ev.Emit("record", map[string]string{"id": out.Record.ID})
	s.log().Info("fill run", "id", id, "fields", len(fields), "filled", out.Review.Summary.Filled, "flags", len(flags), "held", len(out.Held), "record", out.Record.ID, "proposal_failed", perr != nil)
	return out, nil
}

// pageRead is what the first look at the form found.
type pageRead struct {
	fields  []Field
	segs    []form.Segment
	commits int
	held    []browser.Refused
	shot    []byte // the form as loaded (nil when the screenshot failed)
}

// readPage opens the form in a tab with no network, reads its fields and
// text, and closes the tab (it is not kept open while the model works).
func (s *Service) readPage(ctx context.Context, html string) (*pageRead, error) {
	tab, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	defer tab.Close()
	if err := tab.LoadHTML(html); err != nil {
		return nil, problem.Wrap(problem.Unprocessable, err, "the form did not load in the browser: %v", err)
	}
	fields, segs, err := form.Scan(ctx, tab)
	if err != nil {
		return nil, tab.Err(err) // a crash is 422 naming the memory bound
	}
	if len(fields) == 0 {
		return nil, problem.New(problem.Unprocessable, "target.html has no input, select or textarea to fill")
	}
	commits, err := chromedp.Run(tab.Context(), chromedp.Evaluate[int](`document.querySelectorAll('button:not([type]), button[type=submit], input[type=submit], input[type=image]').length`))
	if err != nil {
		return nil, fmt.Errorf("fill: count the form's buttons: %w", tab.Err(err))
	}
	return &pageRead{fields: fields, segs: segs, commits: commits, held: tab.Refused(), shot: screenshot(tab)}, nil
}

func (s *Service) open(ctx context.Context) (*browser.Tab, error) {
	tab, err := s.Browser.Open(ctx, browser.Policy{Network: browser.Offline})
	if errors.Is(err, browser.ErrBusy) {
		return nil, problem.Wrap(problem.Busy, err, "every browser of this box is busy; retry in a minute").Retry(time.Minute)
	}
	if err != nil {
		return nil, fmt.Errorf("fill: %w", err)
	}
	return tab, nil
}

// typeInto opens the form again, checks it is the form that was read,
// and types the decided values. A field that could not be typed (the
// form changed, the browser failed, the page did not take the value) is
// left to the person with why (ds is updated). It returns the requests
// the second tab held and a screenshot of the filled form (nil when it
// has none).
func (s *Service) typeInto(ctx context.Context, id, html string, fields []Field, ds []Decided) ([]browser.Refused, []byte) {
	want := 0
	for _, d := range ds {
		if d.Filled {
			want++
		}
	}
	if want == 0 {
		return nil, nil
	}
	leave := func(why string, typed map[string]bool) {
		for i := range ds {
			if ds[i].Filled && !typed[ds[i].FID] {
				ds[i].Filled, ds[i].Status, ds[i].Why = false, StatusLeft, why+"; the value was not typed: enter it yourself"
			}
		}
	}
	tab, err := s.open(ctx)
	if err != nil {
		s.log().Warn("fill typing failed", "id", id, "reason", reason(err))
		leave("the browser could not open the form again to type ("+reason(err)+")", nil)
		return nil, nil
	}
	defer tab.Close()
	if err := tab.LoadHTML(html); err != nil {
		s.log().Warn("fill typing failed", "id", id, "reason", reason(err))
		leave("the form did not load again to type ("+reason(err)+")", nil)
		return tab.Refused(), nil
	}
	again, _, err := form.Scan(ctx, tab)
	err = tab.Err(err)
	if err == nil && !sameFields(fields, again) {
		err = errors.New("the form's fields were not the same when it was opened again")
	}
	if err != nil {
		s.log().Warn("fill typing failed", "id", id, "reason", reason(err))
		leave(reason(err), nil)
		return tab.Refused(), nil
	}
	typed, err := Type(ctx, tab, ds)
	err = tab.Err(err)
	if err != nil {
		s.log().Warn("fill typing failed", "id", id, "reason", reason(err), "typed", len(typed))
		leave("typing stopped ("+reason(err)+")", typed)
	} else {
		leave("the page did not take the value (the field is gone, disabled or takes no focus)", typed)
	}
	return tab.Refused(), screenshot(tab)
}

// screenshot is the tab's page as a PNG, nil when it cannot be taken
// (a frame is shown to the person, never needed by the run).
func screenshot(tab *browser.Tab) []byte {
	got, err := chromedp.Call(tab.Context(), page.CaptureScreenshot, page.CaptureScreenshotParams{})
	if err != nil {
		return nil
	}
	return got.Data
}

// sameFields says whether a second reading of the form found the same
// fields in the same places.
func sameFields(a, b []Field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].FID != b[i].FID || a[i].Selector != b[i].Selector || a[i].Name != b[i].Name || a[i].Type != b[i].Type {
			return false
		}
	}
	return true
}

// heldOnce joins the requests held while the form was read and while it
// was typed into; a request the page made on both loads (the same
// method, URL, type and reason) is counted once.
func heldOnce(first, second []browser.Refused) []browser.Refused {
	out := append([]browser.Refused{}, first...)
	left := map[browser.Refused]int{}
	for _, r := range first {
		left[r]++
	}
	for _, r := range second {
		if left[r] > 0 {
			left[r]--
			continue
		}
		out = append(out, r)
	}
	return out
}

// Bounds of the held requests a run lists (its record's largest part a
// page controls): the first MaxHeldListed, each URL cut to MaxHeldURL
// bytes (at a character) and marked "…"; review.summary.held_requests
// counts them all.
const (
	MaxHeldListed = 200
	MaxHeldURL    = 2048
)

// capHeld bounds a run's list of held requests.
func capHeld(held []browser.Refused) []browser.Refused {
	if len(held) > MaxHeldListed {
		held = held[:MaxHeldListed]
	}
	for i := range held {
		if u := held[i].URL; len(u) > MaxHeldURL {
			cut := MaxHeldURL
			for cut > 0 && !utf8.RuneStart(u[cut]) {
				cut--
			}
			held[i].URL = u[:cut] + "…"
		}
	}
	return held
}

// withKind is an event's payload with the payload's own "type" (a
// field's input type, a held request's resource type, a record entry's
// type) moved to "kind": the event envelope's "type" is the event's.
func withKind(v any) map[string]any {
	j, err := json.Marshal(v)
	m := map[string]any{}
	if err != nil || json.Unmarshal(j, &m) != nil {
		return m
	}
	if t, ok := m["type"]; ok {
		delete(m, "type")
		m["kind"] = t
	}
	return m
}

// reason is an error's message for a log line or a field's why (boxd's
// messages name no value), at most 300 bytes.
func reason(err error) string {
	msg := err.Error()
	if len(msg) > 300 {
		msg = strings.ToValidUTF8(msg[:300], "") + "…"
	}
	return msg
}

// translate puts the review into lang with the chat model; without one,
// or when the call fails, the review stays in English and says why.
func (s *Service) translate(ctx context.Context, b run.Budget, ev Events, lang string, rv Review) any {
	unavailable := func(why string) any { return map[string]any{"lang": lang, "available": false, "why": why} }
	if !s.Chat.Ready() {
		return unavailable("no chat model is loaded to translate the review; it is in English")
	}
	tr, err := Translate(ctx, s.Chat, b, ev, lang, rv)
	if err != nil {
		return unavailable("the translation failed (" + err.Error() + "); the review is in English")
	}
	return tr
}

// record signs the run step by step: the sources, the page, each field,
// each held request, each flag.
func (s *Service) record(out *Result, docs []map[string]any, html string) (*attest.Record, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	b := attest.NewRecord(RecordKind, out.ID, map[string]string{"fields": strconv.Itoa(len(out.Review.Fields)), "flags": strconv.Itoa(len(out.Review.Flags))})
	add := func(typ string, v any) error {
		j, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.AddText(typ, string(j), map[string]any{"step": typ})
		return nil
	}
	steps := []struct {
		typ string
		v   any
	}{{"sources", docs}, {"page", map[string]any{"sha256": attest.HashText(html), "bytes": len(html)}}}
	for _, f := range out.Review.Fields {
		steps = append(steps, struct {
			typ string
			v   any
		}{"field", f})
	}
	for _, h := range out.Held {
		steps = append(steps, struct {
			typ string
			v   any
		}{"held", h})
	}
	for _, f := range out.Review.Flags {
		steps = append(steps, struct {
			typ string
			v   any
		}{"flag", f})
	}
	for _, st := range steps {
		if err := add(st.typ, st.v); err != nil {
			return nil, err
		}
	}
	return b.Sign(s.Key, now())
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}
