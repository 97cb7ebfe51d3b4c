// Package oral declares the oral assessment's routes (contract document 3,
// "Oral assessment", vertical oral-assessment) over pipelines/oral:
// scoring (JSON or server-sent events), the examiner's review, the
// examiner prompt, bundle verification, info, samples and rubrics.
package oral

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/oral"
	"boxd/web/api"
)

// Vertical is the family's demo vertical.
const Vertical = "oral-assessment"

// Body limits: a transcript of 60,000 characters (up to 4 bytes each) and
// its JSON; a draft record of one; a bundle of two.
const (
	scoreBody  = 512 << 10
	reviewBody = 2 << 20
	verifyBody = 4 << 20
)

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log     *slog.Logger
	Service *oral.Service
	Key     *attest.Key
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	svc, log, key := d.Service, d.Log, d.Key
	api.Declare(a, api.Declared[oral.ScoreRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/oral/score", Auth: api.Bearer, Verticals: []string{Vertical},
			Body: scoreBody, OneRun: true, Stream: true, Example: `{"sample_id": "stats-strong"}`},
		Validate:  svc.Validate,
		TokensFor: func(r *oral.ScoreRequest) int64 { return r.EstimateFor() },
		BudgetHint: func(r *oral.ScoreRequest) string {
			return "scoring is one call per criterion, at most " + strconv.FormatInt(r.EstimateFor(), 10) + " generated tokens for this rubric"
		},
		Run: func(ad *api.Admitted, req *oral.ScoreRequest, env run.Env) (any, error) {
			ans, err := svc.Score(ad.R.Context(), *req, env)
			if err == nil {
				log.Info("oral score", "caller", ad.Principal.LogID(), "draft", ans.Draft.ID, "rubric", ans.Ready.Rubric, "criteria", len(ans.Draft.Scores), "minor", ans.Ready.Minor)
			}
			return ans, err
		},
	})
	api.Declare(a, api.Declared[oral.ReviewRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/oral/review", Auth: api.Bearer, Verticals: []string{Vertical},
			Body: reviewBody, Example: `{"draft": {}, "examiner": "J. Okafor", "decisions": []}`},
		Do: func(ad *api.Admitted, req *oral.ReviewRequest) (any, error) {
			ans, err := svc.Review(ad.R.Context(), *req)
			if err == nil {
				log.Info("oral review", "caller", ad.Principal.LogID(), "review", ans.Bundle.Review.ID, "overrides", ans.Overrides)
			}
			return ans, err
		},
	})
	api.Declare(a, api.Declared[oral.PromptRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/oral/prompt", Auth: api.Bearer, Verticals: []string{Vertical},
			Body: scoreBody, Example: `{"rubric_id": "intro-stats-viva", "transcript": "Examiner: Hello"}`},
		Do: func(_ *api.Admitted, req *oral.PromptRequest) (any, error) { return oral.PromptFor(*req) },
	})
	api.Declare(a, api.Declared[oral.VerifyBody]{
		Route: api.Route{Gate: a.Verifications.Named("record verifications"), Method: http.MethodPost, Path: "/oral/verify",
			Body: verifyBody, Example: `{"bundle": {"draft": {}, "review": {}}}`},
		Do: func(_ *api.Admitted, b *oral.VerifyBody) (any, error) { return oral.VerifyBundle(*b, key.PublicKey()) },
	})
	a.Handle(api.Route{Method: http.MethodGet, Path: "/oral/info"}, func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, oral.InfoOf(svc))
	})
	a.Handle(api.Route{Method: http.MethodGet, Path: "/oral/samples"}, func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, oral.Samples())
	})
	a.Handle(api.Route{Method: http.MethodGet, Path: "/oral/samples/{id}"}, func(w http.ResponseWriter, r *http.Request) {
		s := oral.SampleByID(r.PathValue("id"))
		if s == nil {
			api.WriteProblem(w, problem.New(problem.NotFound, "no sample %q: the samples are %s", r.PathValue("id"), strings.Join(sampleIDs(), ", ")))
			return
		}
		api.WriteJSON(w, http.StatusOK, s)
	})
	a.Handle(api.Route{Method: http.MethodGet, Path: "/oral/rubrics/{id}"}, func(w http.ResponseWriter, r *http.Request) {
		rb, err := oral.RubricByID(r.PathValue("id"))
		if err != nil {
			api.WriteProblem(w, err)
			return
		}
		api.WriteJSON(w, http.StatusOK, rb)
	})
}

func sampleIDs() []string {
	var out []string
	for _, s := range oral.Samples() {
		out = append(out, s.ID)
	}
	return out
}
