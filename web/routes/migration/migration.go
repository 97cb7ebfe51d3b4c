// Package migration declares the migration check's routes (contract
// document 3, "Migration check", vertical migration-check) over
// pipelines/migration: the run (JSON or server-sent events), the info and
// samples, and the verifier that recomputes every number of a record.
package migration

import (
	"log/slog"
	"net/http"
	"strconv"

	"boxd/engine/attest"
	"boxd/internal/platform"
	"boxd/internal/records"
	"boxd/internal/run"
	"boxd/pipelines/migration"
	"boxd/web/api"
)

// Vertical is the family's demo vertical.
const Vertical = "migration-check"

// Body limits: 200 examples of up to 16,000 characters of input and of
// logged output each fit in 8 MiB; a record holding them and the
// candidates' answers in 16 MiB.
const (
	runBody    = 8 << 20
	verifyBody = 16 << 20
)

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log     *slog.Logger
	Service *migration.Service
	Key     *attest.Key
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	svc, log, key := d.Service, d.Log, d.Key
	api.Declare(a, api.Declared[migration.Request]{
		Route: api.Route{Method: http.MethodPost, Path: "/migration/runs", Auth: api.Bearer, Verticals: []string{Vertical},
			Body: runBody, OneRun: true, Stream: true, Example: exampleBody},
		Validate: svc.Validate,
		ValidateFor: func(pr *platform.Principal, r *migration.Request) error {
			key := ""
			if pr != nil && pr.IsKey() {
				if id := pr.KeyID(); id != nil {
					key = *id
				}
			}
			return migration.ValidateFor(key, r)
		},
		TokensFor: func(r *migration.Request) int64 { n, _ := svc.Estimate(r); return n },
		BudgetHint: func(r *migration.Request) string {
			n, how := svc.Estimate(r)
			return "the run is estimated at " + strconv.FormatInt(n, 10) + " generated tokens (" + how + "); send fewer examples or candidates, or a smaller max_output_tokens"
		},
		Run: func(a *api.Admitted, req *migration.Request, env run.Env) (any, error) {
			rep, err := svc.Run(a.R.Context(), *req, env)
			if err == nil {
				log.Info("migration check", "caller", a.Principal.LogID(), "report", rep.ReportID, "examples", len(req.Examples), "verdicts", rep.Verdicts)
			}
			return rep, err
		},
	})
	api.Declare(a, api.Declared[records.VerifyBody]{
		Route: api.Route{Gate: a.Verifications.Named("record verifications"), Method: http.MethodPost, Path: "/migration/verify",
			Body: verifyBody, Example: `{"record": {}}`},
		Serve: func(ad *api.Admitted, body *records.VerifyBody) {
			raw, err := body.Raw()
			if err != nil {
				api.WriteProblem(ad.W, err)
				return
			}
			api.WriteJSON(ad.W, http.StatusOK, migration.Verify(raw, key.PublicKey()))
		},
	})
	a.Handle(api.Route{Method: http.MethodGet, Path: "/migration/info"}, func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, svc.Info())
	})
	a.Handle(api.Route{Method: http.MethodGet, Path: "/migration/samples"}, func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, migration.Samples())
	})
}

// exampleBody is a minimal valid body (ten examples).
const exampleBody = `{"task": {"type": "exact"}, "prompt": {"template": "{{input}}"}, "incumbent": {"model": "gpt-4o-mini"}, "max_output_tokens": 8, "examples": [` +
	`{"id": "1", "input": "a", "output": "a"}, {"id": "2", "input": "b", "output": "b"}, {"id": "3", "input": "c", "output": "c"}, ` +
	`{"id": "4", "input": "d", "output": "d"}, {"id": "5", "input": "e", "output": "e"}, {"id": "6", "input": "f", "output": "f"}, ` +
	`{"id": "7", "input": "g", "output": "g"}, {"id": "8", "input": "h", "output": "h"}, {"id": "9", "input": "i", "output": "i"}, ` +
	`{"id": "10", "input": "j", "output": "j"}]}`
