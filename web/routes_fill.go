package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"boxd/engine/browser"
	"boxd/pipelines/fill"
	"boxd/problem"
	"boxd/records"
	"boxd/run"
)

// fillBody bounds POST /fill/run: the form (512 KB) and up to 8 sources
// of 8 MB each, as base64 (the contract's limits). The body is read whole,
// so at most fillSlots are read at once (503 busy beyond).
const fillBody = fill.MaxSources*(fill.MaxSourceSize/3*4+4+1024) + fill.MaxHTML + 64<<10

// fillSlots is how many /fill/run bodies are read and run at once.
const fillSlots = 2

// fillMinTokens is the budget a fill run needs left to start (contract 2,
// section 7).
const fillMinTokens = 3000

// FillAnswer is POST /fill/run's answer.
type FillAnswer struct {
	*fill.Result
	Translation any         `json:"translation"`
	Check       RecordCheck `json:"check"`
}

// newFill makes the form filler: its own browser pool (fresh profile per
// run), the chat model, the box's key; runs kept 24 hours.
// demoInbox is the demo forms' endpoint: what released Submits sent.
type demoInbox struct {
	mu   sync.Mutex
	sent []map[string]any
}

// receive records one released Submit and returns how many there were.
func (d *demoInbox) receive(run, demo string, fields map[string]string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sent = append(d.sent, map[string]any{"run_id": run, "demo": demo, "fields": fields})
	return len(d.sent)
}

// count is how many Submits were released.
func (d *demoInbox) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.sent)
}

func (s *Server) newFill() {
	p, err := browser.NewPool(browser.Options{Slots: 2})
	s.fill = &fill.Service{Browser: p, Chat: s.chat, Reader: s.docreader, Key: s.key, Now: s.now, Log: s.log}
	s.fillErr = err
	s.fillRuns = &run.Store[*fill.Result]{TTL: 24 * time.Hour, Now: s.now, What: "fill run"}
	s.fillInbox = &demoInbox{}
	s.fillGate = make(chan struct{}, fillSlots)
}

// fillTranslate puts the review into lang with the chat model (an error
// when there is none: the review stays in English and says why).
func (s *Server) fillTranslate(ctx context.Context, a *Admitted, em *run.Emitter, lang string, rv fill.Review) (*fill.Translation, error) {
	if !s.fill.Chat.Ready() {
		return nil, problem.New(problem.Unavailable, "no chat model is loaded to translate the review; it is in English")
	}
	return fill.Translate(ctx, s.fill.Chat, budget{a.Principal}, em, lang, rv)
}

func (s *Server) fillRoutes() {
	declareGated(s, s.fillGate, "form fills", Declared[fill.Body]{
		Route: Route{Method: http.MethodPost, Path: "/fill/run", Auth: Bearer, Verticals: []string{fill.Vertical},
			Body: fillBody, OneRun: true, MinTokens: fillMinTokens, Stream: true, Example: `{"sample_id": "clinic-intake"}`},
		Validate: func(b *fill.Body) error {
			req, err := b.Validate()
			b.Parsed = req
			return err
		},
		StreamOf: func(b *fill.Body) bool { return b.Stream },
		Serve: func(a *Admitted, b *fill.Body) {
			if s.fill.Browser == nil {
				writeProblem(a.W, problem.Wrap(problem.Unavailable, s.fillErr, "the form filler needs chromium, and this box has none (the operator installs it: apt-get install chromium)"))
				return
			}
			if s.fill.Ask == nil && !s.fill.Chat.Ready() {
				writeProblem(a.W, problem.New(problem.Unavailable, "the form filler needs the chat model (models.llm.path), and none is loaded"))
				return
			}
			owner := a.Principal.LogID()
			lang := b.ReviewLang
			s.serveRun(a, func(ctx context.Context, em *run.Emitter) (any, error) {
				out, err := s.fill.Run(ctx, *b.Parsed, em, budget{a.Principal})
				if err != nil {
					return nil, err
				}
				s.fillRuns.Put(out.ID, owner, out)
				raw, err := json.Marshal(out.Record)
				if err != nil {
					return nil, err
				}
				v := records.Verify(raw, s.key.PublicKey())
				ans := FillAnswer{Result: out, Check: RecordCheck{OK: v.OK, Checks: v.Checks, Entries: v.Entries, FirstBadEntry: v.FirstBadEntry,
					Signer: v.Signer, SignedByThisBox: v.SignedByTrustedKey, Problem: v.Problem}}
				if lang != "en" {
					switch tr, err := s.fillTranslate(ctx, a, em, lang, out.Review); {
					case err != nil:
						ans.Translation = map[string]any{"lang": lang, "available": false, "why": message(err)}
					default:
						ans.Translation = tr
					}
				}
				em.End(run.TypeDone, ans)
				return ans, nil
			})
		},
	})
	declare(s, Declared[fill.ApproveBody]{
		Route: Route{Method: http.MethodPost, Path: "/fill/runs/{run_id}/approve", Auth: Bearer, Verticals: []string{fill.Vertical},
			Body: 16 << 10, Example: `{"person": {"name": "Ana Silva"}, "confirm": true, "acknowledge_flags": []}`},
		Validate: func(b *fill.ApproveBody) error { return b.Validate() },
		Serve: func(a *Admitted, b *fill.ApproveBody) {
			id := a.R.PathValue("run_id")
			owner := a.Principal.LogID()
			out, err := s.fillRuns.Update(id, owner, func(r *fill.Result) (*fill.Result, error) {
				ap, err := fill.Approve(r, *b, s.key, s.now())
				if err != nil {
					return r, err
				}
				c := *r
				c.Approval = ap
				return &c, nil
			})
			if err != nil {
				writeProblem(a.W, err)
				return
			}
			if out.Demo != "" {
				// The one held Submit of a demo form: the form filled again
				// with the reviewed values and its Submit pressed in the
				// browser; its one request is released to this box's demo
				// endpoint and nowhere else.
				released, why := false, ""
				if fields, err := s.fill.Release(a.R.Context(), out); err != nil {
					why = "the demo form's Submit was not released: " + message(err)
				} else {
					n := s.fillInbox.receive(out.ID, out.Demo, fields)
					released, why = true, fmt.Sprintf("the held Submit of the demo form %q was released to this box's demo endpoint (%s, submission %d)", out.Demo, fill.DemoAction(out.Demo), n)
				}
				if out, err = s.fillRuns.Update(id, owner, func(r *fill.Result) (*fill.Result, error) {
					c := *r
					ap := *c.Approval
					ap.Released, ap.Why = released, why
					c.Approval = &ap
					return &c, nil
				}); err != nil {
					writeProblem(a.W, err)
					return
				}
			}
			s.log.Info("fill approved", "caller", a.Principal.LogID(), "run", id, "record", out.Approval.Record.ID)
			writeJSON(a.W, http.StatusOK, map[string]any{"run_id": id, "approval": out.Approval})
		},
	})
	declare(s, Declared[struct{}]{
		Route: Route{Method: http.MethodDelete, Path: "/fill/runs/{run_id}", Auth: Bearer, Verticals: []string{fill.Vertical}},
		Serve: func(a *Admitted, _ *struct{}) {
			id := a.R.PathValue("run_id")
			if !s.fillRuns.Delete(id, a.Principal.LogID()) {
				writeProblem(a.W, problem.New(problem.NotFound, "no fill run %s: it was deleted, removed after 24 hours, or belongs to another token", id))
				return
			}
			writeJSON(a.W, http.StatusOK, map[string]any{"run_id": id, "deleted": true})
		},
	})
	declareGated(s, s.bounds.verify, "record verifications", Declared[verifyBody]{
		Route: Route{Method: http.MethodPost, Path: "/flight/verify", Body: recordBody, Example: `{"record": {}}`},
		Serve: func(a *Admitted, body *verifyBody) {
			raw := bytes.TrimSpace(body.Record)
			if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
				writeProblem(a.W, problem.New(problem.Invalid, "%s", "record is required: send {\"record\": <a fill or approval record>}"))
				return
			}
			writeJSON(a.W, http.StatusOK, fill.Flight(raw, s.key.PublicKey()))
		},
	})
	s.Handle(http.MethodGet, "/fill/info", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"vertical": fill.Vertical, "browser": map[string]any{"available": s.fill.Browser != nil}, "model": map[string]any{"available": s.fill.Chat.Ready()},
			"limits":       map[string]any{"html_bytes": fill.MaxHTML, "sources": fill.MaxSources, "source_bytes": fill.MaxSourceSize, "min_tokens": fillMinTokens, "runs_kept_hours": 24},
			"review_langs": fill.ReviewLangs, "samples": []string{"clinic-intake"}, "demo_forms": []string{"clinic-intake"},
			"demo_submissions": s.fillInbox.count(),
			"rules": []string{"a value is typed only when its cited line holds it, or the same date, time, phone number or amount written another way",
				"secrets are never typed and never shown to a model", "text aimed at AI agents is flagged, withheld from the model, and keeps Submit locked until acknowledged",
				"every request that could send the form is held", "the person presses Submit"},
			"not_built": []string{},
		})
	})
	s.Handle(http.MethodGet, "/fill/samples", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"samples": fill.Samples})
	})
}
