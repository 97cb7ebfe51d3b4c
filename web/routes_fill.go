package web

import (
	"context"
	"encoding/json"
	"net/http"

	"boxd/engine/browser"
	"boxd/internal/problem"
	"boxd/internal/records"
	"boxd/internal/run"
	"boxd/pipelines/fill"
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
	Check RecordCheck `json:"check"`
}

// newFill makes the form filler: its own browser pool (fresh profile per
// run), the chat model, the box's key; runs kept 24 hours.
func (s *Server) newFill() {
	p, err := browser.NewPool(browser.Options{Slots: 2, Log: s.log})
	s.fill = &fill.Service{Browser: p, Chat: s.chat, Reader: s.docreader, Key: s.key, Now: s.now, Log: s.log, Inbox: &fill.Inbox{}}
	s.fillErr = err
	s.fillGate = make(chan struct{}, fillSlots)
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
			s.serveRun(a, func(ctx context.Context, em *run.Emitter) (any, error) {
				out, err := s.fill.Run(ctx, *b.Parsed, em, budget{a.Principal})
				if err != nil {
					return nil, err
				}
				s.fill.Keep(out, owner)
				raw, err := json.Marshal(out.Record)
				if err != nil {
					return nil, err
				}
				ans := FillAnswer{Result: out, Check: checkOf(records.Verify(raw, s.key.PublicKey()))}
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
			ap, err := s.fill.ApproveRun(a.R.Context(), id, a.Principal.LogID(), *b)
			if err != nil {
				writeProblem(a.W, err)
				return
			}
			s.log.Info("fill approved", "caller", a.Principal.LogID(), "run", id, "record", ap.Record.ID, "released", ap.Released)
			writeJSON(a.W, http.StatusOK, map[string]any{"run_id": id, "approval": ap})
		},
	})
	declare(s, Declared[struct{}]{
		Route: Route{Method: http.MethodDelete, Path: "/fill/runs/{run_id}", Auth: Bearer, Verticals: []string{fill.Vertical}},
		Serve: func(a *Admitted, _ *struct{}) {
			id := a.R.PathValue("run_id")
			if err := s.fill.Delete(id, a.Principal.LogID()); err != nil {
				writeProblem(a.W, err)
				return
			}
			writeJSON(a.W, http.StatusOK, map[string]any{"run_id": id, "deleted": true})
		},
	})
	declareGated(s, s.bounds.verify, "record verifications", Declared[verifyBody]{
		Route: Route{Method: http.MethodPost, Path: "/flight/verify", Body: recordBody, Example: `{"record": {}}`},
		Serve: func(a *Admitted, body *verifyBody) {
			raw, err := recordOf(body)
			if err != nil {
				writeProblem(a.W, err)
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
			"demo_submissions": len(s.fill.Inbox.Sent()),
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
