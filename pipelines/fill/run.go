package fill

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"boxd/engine/attest"
	"boxd/engine/browser"
	"boxd/ids"
	"boxd/pipelines/fill/rules"
	"boxd/pipelines/llmcall"
	"boxd/problem"
	"boxd/run"
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
	once  sync.Once
}

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
func (s *Service) Run(ctx context.Context, req Request, ev Events, budget run.Budget) (*Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	id := ids.New("fill-", 12)
	ev.Emit("stage", map[string]string{"stage": "sources"})
	for _, f := range req.Files {
		if s.Reader == nil {
			return nil, problem.New(problem.Unavailable, "source %q is a file, and this box has no document reader to read it; send its text", f.Name)
		}
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
	docs := []map[string]any{}
	for _, src := range req.Sources {
		docs = append(docs, map[string]any{"name": src.Name, "sha256": attest.HashText(src.Text)})
	}
	ev.Emit("sources", map[string]any{"documents": docs, "lines": len(lines)})
	ev.Emit("stage", map[string]string{"stage": "page"})
	tab, err := s.Browser.Open(ctx, browser.Policy{Network: browser.Offline})
	if errors.Is(err, browser.ErrBusy) {
		return nil, problem.Wrap(problem.Busy, err, "every browser of this box is busy; retry in a minute").Retry(time.Minute)
	}
	if err != nil {
		return nil, fmt.Errorf("fill: %w", err)
	}
	defer tab.Close()
	if err := tab.LoadHTML(req.HTML); err != nil {
		return nil, problem.Wrap(problem.Unprocessable, err, "the form did not load in the browser: %v", err)
	}
	fields, segs, err := Scan(ctx, tab)
	if err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return nil, problem.New(problem.Unprocessable, "target.html has no input, select or textarea to fill")
	}
	commits, err := chromedp.Run(tab.Context(), chromedp.Evaluate[int](`document.querySelectorAll('button:not([type]), button[type=submit], input[type=submit], input[type=image]').length`))
	if err != nil {
		return nil, fmt.Errorf("fill: %w", err)
	}
	flags := Flags(segs)
	ev.Emit("ready", map[string]any{"fields": len(fields), "commit_buttons": commits})
	for _, f := range flags {
		ev.Emit("flag", f)
	}
	ev.Emit("stage", map[string]string{"stage": "model"})
	ask := s.Ask
	if ask == nil {
		ask = &Proposer{Chat: s.Chat, Budget: budget, Events: ev}
	}
	props, prompt, res, err := ask.Propose(ctx, fields, lines)
	if err != nil {
		return nil, err
	}
	out := &Result{ID: id, Prompt: prompt, Demo: req.Demo}
	if res != nil {
		out.Review.Summary.ModelCalls, out.Review.Summary.Tokens = 1, res.Usage.TotalTokens
	}
	ds := Decide(fields, lines, props, req.Hints)
	ev.Emit("stage", map[string]string{"stage": "typing"})
	if err := Type(ctx, tab, ds); err != nil {
		return nil, err
	}
	if shot, err := chromedp.Call(tab.Context(), page.CaptureScreenshot, page.CaptureScreenshotParams{}); err == nil {
		ev.Emit("frame", map[string]string{"png_b64": base64.StdEncoding.EncodeToString(shot.Data), "stage": "filled"})
	}
	out.Held = tab.Refused()
	if out.Held == nil {
		out.Held = []browser.Refused{}
	}
	for _, h := range out.Held {
		ev.Emit("net", h)
	}
	for _, d := range ds {
		rf := ReviewField{FID: d.FID, Name: d.Name, Selector: d.Selector, Label: d.Label, Type: d.Type, Status: d.Status, Value: d.Value, Filled: d.Filled, Why: d.Why, Source: d.Source}
		out.Review.Fields = append(out.Review.Fields, rf)
		ev.Emit("field", rf)
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
	out.Review.Summary.CommitButtons, out.Review.Summary.HeldRequests, out.Review.Summary.Flags = commits, len(out.Held), len(flags)
	ev.Emit("review", out.Review)
	if req.ReviewLang != "" && req.ReviewLang != "en" {
		out.Translation = s.translate(ctx, budget, ev, req.ReviewLang, out.Review)
	}
	if out.Record, err = s.record(out, docs, req.HTML); err != nil {
		return nil, fmt.Errorf("fill: sign the record: %w", err)
	}
	for _, e := range out.Record.Entries {
		ev.Emit("entry", map[string]string{"n": e.N, "type": e.Type, "hash": e.Hash})
	}
	ev.Emit("record", map[string]string{"id": out.Record.ID})
	s.log().Info("fill run", "id", id, "fields", len(fields), "filled", out.Review.Summary.Filled, "flags", len(flags), "held", len(out.Held), "record", out.Record.ID)
	return out, nil
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
