// Package fill declares the form filler's routes (/fill/run, approve,
// delete, inbox, flight verification, info) over pipelines/fill.
package fill

import (
	"log/slog"
	"net/http"

	"boxd/engine/attest"
	"boxd/web/api"

	"boxd/internal/problem"
	"boxd/internal/records"
	"boxd/internal/run"
	"boxd/pipelines/fill"
)

// fillBody bounds POST /fill/run: the form (512 KB) and up to 8 sources
// of 8 MB each, as base64 (the contract's limits). The body is read whole,
// so at most fillSlots are read at once (503 busy beyond).
const BodyLimit = fill.MaxSources*(fill.MaxSourceSize/3*4+4+1024) + fill.MaxHTML + 64<<10

// Slots is how many /fill/run bodies are read and run at once.
const Slots = 2

// fillMinTokens is the budget a fill run needs left to start (contract 2,
// section 7).
const fillMinTokens = 3000

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log     *slog.Logger
	Service *fill.Service
	// BrowserErr says why Service has no browser.
	BrowserErr error
	// Gate bounds the fills read and run at once (nil: Slots).
	Gate *api.Gate
	Key  *attest.Key
}

type routes struct {
	api     *api.API
	log     *slog.Logger
	fill    *fill.Service
	fillErr error
	gate    *api.Gate
	key     *attest.Key
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	s := &routes{api: a, log: d.Log, fill: d.Service, fillErr: d.BrowserErr, gate: d.Gate, key: d.Key}
	if s.gate == nil {
		s.gate = api.NewGate(Slots, "form fills")
	}
	s.fillRoutes()
}

func (s *routes) fillRoutes() {
	api.Declare(s.api, api.Declared[fill.Body]{
		Route: api.Route{Gate: s.gate, Method: http.MethodPost, Path: "/fill/run", Auth: api.Bearer, Verticals: []string{fill.Vertical},
			Body: BodyLimit, OneRun: true, MinTokens: fillMinTokens, Stream: true, Example: `{"sample_id": "clinic-intake"}`},
		Validate: func(b *fill.Body) error {
			req, err := b.Validate()
			b.Parsed = req
			return err
		},
		Run: func(a *api.Admitted, b *fill.Body, env run.Env) (any, error) {
			if s.fill.Browser == nil {
				return nil, problem.Wrap(problem.Unavailable, s.fillErr, "the form filler needs chromium, and this box has none (the operator installs it: apt-get install chromium)")
			}
			if s.fill.Ask == nil && !s.fill.Chat.Ready() {
				return nil, problem.New(problem.Unavailable, "the form filler needs the chat model (models.llm.path), and none is loaded")
			}
			return s.fill.Serve(a.R.Context(), env, *b.Parsed, a.Principal.LogID())
		},
	})
	api.Declare(s.api, api.Declared[fill.ApproveBody]{
		Route: api.Route{Method: http.MethodPost, Path: "/fill/runs/{run_id}/approve", Auth: api.Bearer, Verticals: []string{fill.Vertical},
			Body: 16 << 10, Example: `{"person": {"name": "Ana Silva"}, "confirm": true, "acknowledge_flags": []}`},
		Serve: func(a *api.Admitted, b *fill.ApproveBody) {
			id := a.R.PathValue("run_id")
			ap, err := s.fill.ApproveRun(a.R.Context(), id, a.Principal.LogID(), *b)
			if err != nil {
				api.WriteProblem(a.W, err)
				return
			}
			s.log.Info("fill approved", "caller", a.Principal.LogID(), "run", id, "record", ap.Record.ID, "released", ap.Released)
			api.WriteJSON(a.W, http.StatusOK, map[string]any{"run_id": id, "approval": ap})
		},
	})
	api.Declare(s.api, api.Declared[struct{}]{
		Route: api.Route{Method: http.MethodDelete, Path: "/fill/runs/{run_id}", Auth: api.Bearer, Verticals: []string{fill.Vertical}},
		Serve: func(a *api.Admitted, _ *struct{}) {
			id := a.R.PathValue("run_id")
			if err := s.fill.Delete(id, a.Principal.LogID()); err != nil {
				api.WriteProblem(a.W, err)
				return
			}
			api.WriteJSON(a.W, http.StatusOK, map[string]any{"run_id": id, "deleted": true})
		},
	})
	api.Declare(s.api, api.Declared[records.VerifyBody]{
		Route: api.Route{Gate: s.api.Verifications.Named("record verifications"), Method: http.MethodPost, Path: "/flight/verify", Body: records.VerifyBodyLimit, Example: `{"record": {}}`},
		Serve: func(a *api.Admitted, body *records.VerifyBody) {
			raw, err := body.Raw()
			if err != nil {
				api.WriteProblem(a.W, err)
				return
			}
			api.WriteJSON(a.W, http.StatusOK, fill.Flight(raw, s.key.PublicKey()))
		},
	})
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/fill/info"}, func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, map[string]any{
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
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/fill/samples"}, func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, map[string]any{"samples": fill.Samples})
	})
}
