package web

import (
	"context"
	"net/http"
	"strings"

	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/docreader"
	"boxd/web/upload"
)

// Body limits of the document reader: the file (12 MB decoded) streams to
// a temporary file; the other fields are small. A verification carries a
// whole document back: 10 pages of elements and their lines.
const (
	docreaderBody       = 64 << 10
	docreaderVerifyBody = 16 << 20
)

func (s *Server) docreaderRoutes() {
	declare(s, Declared[docreader.ReadRequest]{
		Route: Route{Method: http.MethodPost, Path: "/docreader/read", Auth: Bearer, Body: docreaderBody, OneRun: true, Stream: true,
			Uploads: []upload.Field{{Name: "file_b64", Limit: docreader.MaxFileBytes}},
			Example: `{"sample": "born-digital"}`},
		Uploaded: func(r *docreader.ReadRequest, u *upload.Upload) {
			if f := u.Files["file_b64"]; f != nil {
				r.File = f.Path
			}
		},
		Validate: func(r *docreader.ReadRequest) error { return r.Validate() },
		StreamOf: func(r *docreader.ReadRequest) bool { return r.Stream },
		Serve:    s.docreaderRead,
	})
	declareGated(s, s.bounds.verify, "verifications", Declared[docreader.VerifyRequest]{
		Route: Route{Method: http.MethodPost, Path: "/docreader/verify", Body: docreaderVerifyBody,
			Example: `{"document": {"receipt": {"v": "service.docreader-receipt.v1"}}}`},
		Serve: func(a *Admitted, req *docreader.VerifyRequest) {
			out, err := s.docreader.Verify(*req)
			if err != nil {
				writeProblem(a.W, err)
				return
			}
			writeJSON(a.W, http.StatusOK, out)
		},
	})
	declare(s, Declared[docreader.ChartRequest]{
		Route: Route{Method: http.MethodPost, Path: "/docreader/chart", Auth: Bearer, Body: docreaderBody, OneRun: true,
			Uploads: []upload.Field{{Name: "image_b64", Limit: docreader.MaxFileBytes}},
			Example: `{"sample": "km-survival"}`},
		Uploaded: func(r *docreader.ChartRequest, u *upload.Upload) {
			if f := u.Files["image_b64"]; f != nil {
				r.File = f.Path
			}
		},
		Validate: func(r *docreader.ChartRequest) error { return r.Validate() },
		// The run path: a model reading's receipt event (method model,
		// hybrid's fallback or its labels) reaches x-service-receipt.
		Serve: func(a *Admitted, req *docreader.ChartRequest) {
			req.Budget = budget{a.Principal}
			s.serveRun(a, func(ctx context.Context, em *run.Emitter) (any, error) {
				req.Events = em
				out, err := s.docreader.Chart(ctx, *req)
				if err != nil {
					return nil, err
				}
				s.log.Info("docreader chart", "caller", a.Principal.LogID(), "result", out.ID, "receipt", out.Receipt.ID)
				return out, nil
			})
		},
	})
	declareGated(s, s.bounds.verify, "verifications", Declared[docreader.ChartVerifyRequest]{
		Route: Route{Method: http.MethodPost, Path: "/docreader/chart/verify", Body: docreaderVerifyBody,
			Example: `{"chart": {"receipt": {"v": "service.docreader-chart-receipt.v1"}}}`},
		Serve: func(a *Admitted, req *docreader.ChartVerifyRequest) {
			out, err := s.docreader.ChartVerify(*req)
			if err != nil {
				writeProblem(a.W, err)
				return
			}
			writeJSON(a.W, http.StatusOK, out)
		},
	})
	s.Handle(http.MethodGet, "/docreader/info", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.docreader.Info())
	})
	s.Handle(http.MethodGet, "/docreader/samples/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimSuffix(r.PathValue("id"), ".pdf")
		b, err := docreader.Sample(id)
		if err != nil {
			writeProblem(w, err)
			return
		}
		if b == nil {
			writeProblem(w, problem.New(problem.NotFound, "no sample %q; the samples are %s", id, strings.Join(docreader.SampleIDs, ", ")))
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
func (s *Server) docreaderRead(a *Admitted, req *docreader.ReadRequest) {
	req.Budget = budget{a.Principal}
	s.serveRun(a, func(ctx context.Context, em *run.Emitter) (any, error) {
		req.Events = em
		out, err := s.docreader.Read(ctx, *req)
		if err != nil {
			return nil, err
		}
		s.log.Info("docreader", "caller", a.Principal.LogID(), "document", out.ID, "receipt", out.Receipt.ID, "pages", out.File.Pages)
		em.End(run.TypeDone, out)
		return out, nil
	})
}
