package web

import (
	"net/http"

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
		Serve: func(a *Admitted, req *hcc.Request) {
			req.Budget = budget{a.Principal}
			out, err := s.hcc.Read(a.R.Context(), *req)
			if err != nil {
				writeProblem(a.W, err)
				return
			}
			s.log.Info("hcc", "caller", a.Principal.LogID(), "id", out.ID, "document", out.Document.ID, "record", out.Record.ID)
			writeJSON(a.W, http.StatusOK, out)
		},
	})
}
