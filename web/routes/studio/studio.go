// Package studio declares the media studio's routes (gallery, media,
// jobs, policy, reports) over pipelines/studio.
package studio

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"boxd/configs"
	"boxd/pipelines/chat"
	"boxd/web/api"

	"boxd/internal/problem"

	"boxd/internal/platform"
	"boxd/pipelines/studio"
)

// Body limits and the vertical of the studio routes.
const (
	studioVertical   = "studio"
	studioJobBody    = 32 << 10 // {kind, prompt (2,000 characters), params (lyrics: 4,000)}
	studioReportBody = 32 << 10 // {item or job, category, details (2,000), contact (200)}
)

// studioRoutes serves the media studio (contract sections 2 to 8). This
// version runs no render worker: jobs are checked and queued, and stay
// queued with a note that says so.
type studioRoutes struct {
	s       *routes
	gallery *studio.Gallery
	queue   *studio.Queue
	reports *studio.Reports
}

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log      *slog.Logger
	Config   *configs.Config
	Now      func() time.Time
	Platform *platform.Platform
	Chat     *chat.Service
}

type routes struct {
	api      *api.API
	log      *slog.Logger
	cfg      *configs.Config
	now      func() time.Time
	platform *platform.Platform
	chat     *chat.Service
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	s := &routes{api: a, log: d.Log, cfg: d.Config, now: d.Now, platform: d.Platform, chat: d.Chat}
	s.studioRoutes()
}

func (s *routes) studioRoutes() {
	dir := filepath.Join(s.cfg.StateDir, "studio")
	now := func() time.Time { return s.now() } // the server's clock as it is when called
	h := &studioRoutes{
		s:       s,
		gallery: &studio.Gallery{Dir: filepath.Join(dir, "media")},
		queue:   &studio.Queue{Live: s.platform.LiveSessions, Now: now},
		reports: &studio.Reports{Dir: filepath.Join(dir, "reports"), Now: now},
	}
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/studio/gallery"}, h.listGallery)
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/studio/media/{path...}"}, h.media)
	api.Declare(s.api, api.Declared[jobBody]{
		Route: api.Route{Method: http.MethodPost, Path: "/studio/jobs", Auth: api.Bearer,
			Verticals: []string{studioVertical}, Body: studioJobBody, OneRun: true,
			Example: `{"kind": "image", "prompt": "a lighthouse at dawn, watercolour"}`},
		Validate:  func(b *jobBody) (err error) { b.spec, err = studio.Validate(b.Request); return err },
		TokensFor: h.judgeTokens,
		Serve:     h.submitJob,
	})
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/studio/jobs/{id}"}, h.getJob)
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/studio/policy"}, h.policy)
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/studio/report"}, h.reportForm)
	s.api.Handle(api.Route{Method: http.MethodPost, Path: "/studio/report"}, h.fileReport)
}

func (h *studioRoutes) listGallery(w http.ResponseWriter, r *http.Request) {
	items, skipped, err := h.gallery.List()
	if err != nil {
		h.s.log.Error("studio gallery unreadable", "err", err)
		api.WriteProblem(w, problem.New(problem.Internal, "%s", "the studio gallery could not be read; the operator should check state_dir/studio/media"))
		return
	}
	for _, sk := range skipped {
		h.s.log.Warn("studio gallery item left out", "sidecar", sk.Name, "reason", sk.Reason)
	}
	w.Header().Set("Cache-Control", "no-cache")
	api.WriteJSON(w, http.StatusOK, items)
}

// media serves a rendered file: only regular files with a media
// extension inside state_dir/studio/media, never a listing.
func (h *studioRoutes) media(w http.ResponseWriter, r *http.Request) {
	p := r.PathValue("path")
	f, fi, ct, err := h.gallery.Open(p)
	if err != nil {
		api.WriteProblem(w, problem.New(problem.NotFound, "%s", "no studio media file "+strconv.Quote(p)+"; GET /studio/gallery lists the files"))
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", ct)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	w.Header().Set("Cache-Control", "public, max-age=300")
	http.ServeContent(&jsonErrorWriter{ResponseWriter: w}, r, "", fi.ModTime(), f)
}

// jsonErrorWriter turns the plain-text errors http.ServeContent writes
// (416 for a byte range outside the file) into the API's {"error"} body;
// successful responses pass through.
type jsonErrorWriter struct {
	http.ResponseWriter
	failed bool
}

func (j *jsonErrorWriter) WriteHeader(code int) {
	if code < 400 {
		j.ResponseWriter.WriteHeader(code)
		return
	}
	j.failed = true
	var err *problem.Error
	switch code {
	case http.StatusRequestedRangeNotSatisfiable:
		err = problem.New(problem.RangeNotSatisfiable, "%s", "the Range header asks for bytes outside the file; Content-Range gives its size")
	case http.StatusPreconditionFailed:
		err = problem.New(problem.PreconditionFailed, "%s", "the file changed since the If-Match or If-Unmodified-Since condition was taken; fetch it again without the condition")
	default:
		err = problem.New(problem.Internal, "the file could not be served (%s)", http.StatusText(code))
	}
	h := j.Header()
	h.Del("Content-Length")
	h.Del("Cache-Control")
	api.WriteProblem(j.ResponseWriter, err)
}

func (j *jsonErrorWriter) Write(b []byte) (int, error) {
	if j.failed {
		return len(b), nil // ServeContent's plain-text message; the JSON body is written
	}
	return j.ResponseWriter.Write(b)
}

// JobAccepted is the response of POST /studio/jobs.
type JobAccepted struct {
	JobID     string        `json:"job_id"`
	Status    studio.Status `json:"status"`
	Position  int           `json:"position"`
	ReportURL string        `json:"report_url"`
}

// jobBody is the body of POST /studio/jobs and, once validated, its spec.
type jobBody struct {
	studio.Request
	spec studio.Spec
}

// StrictShape gives strictjson the body's keys, the request's
// (strictjson.Shaped).
func (jobBody) StrictShape() any { return studio.Request{} }

// UnmarshalJSON reads the request itself, so that error messages name its
// fields as the caller wrote them (prompt, not Request.prompt).
func (b *jobBody) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(&b.Request)
}

// judgeTokens is what a job's policy check needs left: the judge's answer
// needs its whole allowance (with fewer tokens it would be cut, charged
// and refused as unavailable), when the rules ask the judge and one is
// loaded.
func (h *studioRoutes) judgeTokens(b *jobBody) int64 {
	if _, _, need := studio.Rules(b.spec); need && (&studio.ChatJudge{Chat: h.s.chat}).Ready() {
		return studio.JudgeTokens
	}
	return 0
}

func (h *studioRoutes) submitJob(a *api.Admitted, b *jobBody) {
	s, w, r, pr, spec := h.s, a.W, a.R, a.Principal, b.spec
	owner, network := pr.LogID(), platform.Network(r.RemoteAddr)
	if err := h.queue.Room(owner, network); err != nil {
		api.WriteProblem(w, err)
		return
	}
	judge := &studio.ChatJudge{Chat: s.chat}
	pol := studio.Policy{Judge: judge}
	dec := pol.Check(r.Context(), spec, api.Budget{Principal: pr})
	if dec.Receipt != "" {
		w.Header().Set("x-service-receipt", dec.Receipt)
	}
	if !dec.Allowed {
		switch {
		case problem.KindOf(dec.Err) == problem.Budget, problem.KindOf(dec.Err) == problem.Unauthorized:
			api.WriteProblem(w, dec.Err)
			return
		case r.Context().Err() != nil:
			return
		}
		s.log.Info("studio job refused", "caller", owner, "kind", spec.Kind, "category", dec.Category, "rule", dec.Rule, "judged", dec.Judged)
		if dec.Err != nil && !errors.Is(dec.Err, studio.ErrNoJudge) {
			s.log.Warn("studio policy judge failed", "caller", owner, "err", dec.Err)
		}
		api.WriteProblem(w, dec.Refusal())
		return
	}
	v, err := h.queue.Submit(owner, network, spec)
	if err != nil {
		api.WriteProblem(w, err)
		return
	}
	s.log.Info("studio job queued", "job_id", v.JobID, "caller", owner, "kind", spec.Kind, "rule", dec.Rule, "judged", dec.Judged, "position", v.Position)
	w.Header().Set("Location", "/studio/jobs/"+v.JobID)
	w.Header().Set("Cache-Control", "no-store")
	api.WriteJSON(w, http.StatusAccepted, JobAccepted{JobID: v.JobID, Status: v.Status, Position: v.Position, ReportURL: v.ReportURL})
}

func (h *studioRoutes) getJob(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	v, ok := h.queue.Get(id)
	if !ok {
		api.WriteProblem(w, problem.New(problem.NotFound, "%s", "no studio job "+strconv.Quote(id)+"; jobs are kept in memory for 24 hours and not across restarts"))
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	api.WriteJSON(w, http.StatusOK, v)
}

func (h *studioRoutes) policy(w http.ResponseWriter, r *http.Request) {
	api.WriteJSON(w, http.StatusOK, studio.Info())
}

// reportTarget reads ?item= or ?job= (exactly one): its field name and id.
func reportTarget(r *http.Request) (field, id string, e *problem.Error) {
	q := r.URL.Query()
	item, job := q.Get("item"), q.Get("job")
	switch {
	case len(q["item"]) > 1 || len(q["job"]) > 1:
		return "", "", api.BadRequest("give ?item= or ?job= once")
	case q.Has("item") && q.Has("job"):
		return "", "", api.BadRequest("send either ?item= or ?job=, not both")
	case item != "":
		field, id = "item", item
	case job != "":
		field, id = "job", job
	default:
		return "", "", api.BadRequest("the report form needs ?item=<gallery item id> or ?job=<job id>")
	}
	if err := studio.CheckTargetID(field, id); err != nil {
		return "", "", api.BadRequest("%s", err.Error())
	}
	return field, id, nil
}

// exists reports whether the item or job being reported is known.
func (h *studioRoutes) exists(field, id string) bool {
	if field == "item" {
		return h.gallery.Has(id)
	}
	return h.queue.Has(id)
}

func (h *studioRoutes) reportForm(w http.ResponseWriter, r *http.Request) {
	field, id, e := reportTarget(r)
	if e != nil {
		api.WriteProblem(w, e)
		return
	}
	if !h.exists(field, id) {
		api.WriteProblem(w, problem.New(problem.NotFound, "no studio %s %q to report", field, id))
		return
	}
	api.WriteJSON(w, http.StatusOK, studio.NewReportForm(field, id))
}

// ReportFiled is the 201 response of POST /studio/report.
type ReportFiled struct {
	ReportID string `json:"report_id"`
	Received int64  `json:"received"`
}

func (h *studioRoutes) fileReport(w http.ResponseWriter, r *http.Request) {
	var in studio.ReportInput
	if e := api.DecodeJSON(w, r, studioReportBody, &in); e != nil {
		// The contract answers bad report input with 400, an oversize
		// body included; a body that did not arrive in time is 408.
		if e.Kind != problem.Timeout {
			e = problem.New(problem.Invalid, "%s", e.Message)
		}
		api.WriteProblem(w, e)
		return
	}
	rep, err := studio.ValidateReport(in)
	if err != nil {
		api.WriteProblem(w, err)
		return
	}
	field, id := "item", rep.Item
	if rep.Job != "" {
		field, id = "job", rep.Job
	}
	if !h.exists(field, id) {
		api.WriteProblem(w, problem.New(problem.NotFound, "no studio %s %q to report", field, id))
		return
	}
	network := platform.Network(r.RemoteAddr)
	rep, err = h.reports.File(network, rep)
	switch {
	case errors.Is(err, studio.ErrReportsFull):
		h.s.log.Error("studio reports full: review and remove them", "dir", "state_dir/studio/reports")
		api.WriteProblem(w, err)
		return
	case problem.Is(err, problem.RateLimited):
		api.WriteProblem(w, err)
		return
	case err != nil:
		h.s.log.Error("studio report not stored", "err", err)
		api.WriteProblem(w, problem.Wrap(problem.Internal, err, "the report could not be stored; try again later"))
		return
	}
	h.s.log.Info("studio report", "report_id", rep.ReportID, field, id, "category", rep.Category, "network_hmac", api.NetworkHMAC(network))
	w.Header().Set("Cache-Control", "no-store")
	api.WriteJSON(w, http.StatusCreated, ReportFiled{ReportID: rep.ReportID, Received: rep.Received})
}
