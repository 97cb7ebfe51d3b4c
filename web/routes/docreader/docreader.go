// Package docreader declares the document reader's routes (/docreader/read,
// verify, chart, chart/verify, info, samples) over pipelines/docreader.
package docreader

import (
	"log/slog"
	"net/http"
	"strings"

	"boxd/web/api"

	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/docreader"
	"boxd/web/api/upload"
)

// Body limits of the document reader: the file (12 MB decoded) streams to
// a temporary file; the other fields are small. A verification carries a
// whole document back: 10 pages of elements and their lines.
const (
	docreaderBody       = 64 << 10
	docreaderVerifyBody = 16 << 20
)

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log     *slog.Logger
	Service *docreader.Service
}

type routes struct {
	api       *api.API
	log       *slog.Logger
	docreader *docreader.Service
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	s := &routes{api: a, log: d.Log, docreader: d.Service}
	s.docreaderRoutes()
}

func (s *routes) docreaderRoutes() {
	api.Declare(s.api, api.Declared[docreader.ReadRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/docreader/read", Auth: api.Bearer, Body: docreaderBody, OneRun: true, Stream: true,
			Uploads: []upload.Field{{Name: "file_b64", Limit: docreader.MaxFileBytes}},
			Example: `{"sample": "born-digital"}`},
		Uploaded: func(r *docreader.ReadRequest, u *upload.Upload) {
			if f := u.Files["file_b64"]; f != nil {
				r.File = f.Path
			}
		},
		Run: s.docreaderRead,
	})
	api.Declare(s.api, api.Declared[docreader.VerifyRequest]{
		Route: api.Route{Gate: s.api.Verifications.Named("verifications"), Method: http.MethodPost, Path: "/docreader/verify", Body: docreaderVerifyBody,
			Example: `{"document": {"receipt": {"v": "service.docreader-receipt.v1"}}}`},
		Serve: func(a *api.Admitted, req *docreader.VerifyRequest) {
			out, err := s.docreader.Verify(*req)
			if err != nil {
				api.WriteProblem(a.W, err)
				return
			}
			api.WriteJSON(a.W, http.StatusOK, out)
		},
	})
	api.Declare(s.api, api.Declared[docreader.ChartRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/docreader/chart", Auth: api.Bearer, Body: docreaderBody, OneRun: true,
			Uploads: []upload.Field{{Name: "image_b64", Limit: docreader.MaxFileBytes}},
			Example: `{"sample": "km-survival"}`},
		Uploaded: func(r *docreader.ChartRequest, u *upload.Upload) {
			if f := u.Files["image_b64"]; f != nil {
				r.File = f.Path
			}
		},
		// The run path: a model reading's receipt event (method model,
		// hybrid's fallback or its labels) reaches x-service-receipt.
		Run: func(a *api.Admitted, req *docreader.ChartRequest, env run.Env) (any, error) {
			out, err := s.docreader.ServeChart(a.R.Context(), env, *req)
			if err != nil {
				return nil, err
			}
			s.log.Info("docreader chart", "caller", a.Principal.LogID(), "result", out.ID, "receipt", out.Receipt.ID)
			return out, nil
		},
	})
	api.Declare(s.api, api.Declared[docreader.ChartVerifyRequest]{
		Route: api.Route{Gate: s.api.Verifications.Named("verifications"), Method: http.MethodPost, Path: "/docreader/chart/verify", Body: docreaderVerifyBody,
			Example: `{"chart": {"receipt": {"v": "service.docreader-chart-receipt.v1"}}}`},
		Serve: func(a *api.Admitted, req *docreader.ChartVerifyRequest) {
			out, err := s.docreader.ChartVerify(*req)
			if err != nil {
				api.WriteProblem(a.W, err)
				return
			}
			api.WriteJSON(a.W, http.StatusOK, out)
		},
	})
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/docreader/info"}, func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, s.docreader.Info())
	})
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/docreader/samples/{id}"}, func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimSuffix(r.PathValue("id"), ".pdf")
		b, err := docreader.Sample(id)
		if err != nil {
			api.WriteProblem(w, err)
			return
		}
		if b == nil {
			api.WriteProblem(w, problem.New(problem.NotFound, "no sample %q; the samples are %s", id, strings.Join(docreader.SampleIDs, ", ")))
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `inline; filename="`+id+`.pdf"`)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b)
	})
}

// docreaderRead answers POST /docreader/read: the pages of elements, the
// fields, the models and the signed receipt.
//
// With stream: true (or Accept: text/event-stream) the answer is
// server-sent events: a page event as each page is read, the schema
// mapping's receipt event when there is one, then done with the document.
func (s *routes) docreaderRead(a *api.Admitted, req *docreader.ReadRequest, env run.Env) (any, error) {
	out, err := s.docreader.Serve(a.R.Context(), env, *req)
	if err != nil {
		return nil, err
	}
	s.log.Info("docreader", "caller", a.Principal.LogID(), "document", out.ID, "receipt", out.Receipt.ID, "pages", out.File.Pages)
	return out, nil
}
