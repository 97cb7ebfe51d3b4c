package web

import (
	"context"
	"net/http"

	"boxd/internal/run"
	"boxd/pipelines/docreader"
	"boxd/pipelines/hcc"
	"boxd/web/upload"
)

// hccRoutes: POST /hcc/read-chart, a scanned chart into a note and a
// coding review whose every item cites the chart's words by page and box
// (pipelines/hcc; the shape is in docs/decisions.md).
func (s *Server) hccRoutes() {
	declare(s, Declared[hcc.Request]{
		Route: Route{Method: http.MethodPost, Path: "/hcc/read-chart", Auth: Bearer, Body: docreaderBody, OneRun: true,
			Uploads: []upload.Field{{Name: "file_b64", Limit: docreader.MaxFileBytes}},
			Example: `{"sample": "scanned-chart"}`},
		Uploaded: func(r *hcc.Request, u *upload.Upload) {
			if f := u.Files["file_b64"]; f != nil {
				r.File = f.Path
			}
		},
		Validate: func(r *hcc.Request) error { return r.Validate() },
		// The run path: the model call's receipt event reaches the
		// answer's x-service-receipt header.
		Serve: func(a *Admitted, req *hcc.Request) {
			req.Budget = budget{a.Principal}
			s.serveRun(a, func(ctx context.Context, em *run.Emitter) (any, error) {
				req.Events = em
				out, err := s.hcc.Read(ctx, *req)
				if err != nil {
					return nil, err
				}
				s.log.Info("hcc", "caller", a.Principal.LogID(), "id", out.ID, "document", out.Document.ID, "record", out.Record.ID)
				return out, nil
			})
		},
	})
}
