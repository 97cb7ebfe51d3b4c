// Package hcc declares POST /hcc/read-chart over pipelines/hcc.
package hcc

import (
	"log/slog"
	"net/http"

	"boxd/web/api"

	"boxd/internal/run"
	"boxd/pipelines/docreader"
	"boxd/pipelines/hcc"
	"boxd/web/api/upload"
)

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log     *slog.Logger
	Service *hcc.Service
}

type routes struct {
	api *api.API
	log *slog.Logger
	hcc *hcc.Service
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	s := &routes{api: a, log: d.Log, hcc: d.Service}
	s.hccRoutes()
}

// hccRoutes: POST /hcc/read-chart, a scanned chart into a note and a
// coding review whose every item cites the chart's words by page and box
// (pipelines/hcc; the shape is in docs/decisions.md).
func (s *routes) hccRoutes() {
	api.Declare(s.api, api.Declared[hcc.Request]{
		Route: api.Route{Method: http.MethodPost, Path: "/hcc/read-chart", Auth: api.Bearer, Body: 64 << 10, // the file streams to a temporary file (Uploads)
			OneRun:  true,
			Uploads: []upload.Field{{Name: "file_b64", Limit: docreader.MaxFileBytes}},
			Example: `{"sample": "scanned-chart"}`},
		Uploaded: func(r *hcc.Request, u *upload.Upload) {
			if f := u.Files["file_b64"]; f != nil {
				r.File = f.Path
			}
		},
		// The run path: the model call's receipt event reaches the
		// answer's x-service-receipt header.
		Run: func(a *api.Admitted, req *hcc.Request, env run.Env) (any, error) {
			out, err := s.hcc.Serve(a.R.Context(), env, *req)
			if err != nil {
				return nil, err
			}
			s.log.Info("hcc", "caller", a.Principal.LogID(), "id", out.ID, "document", out.Document.ID, "record", out.Record.ID)
			return out, nil
		},
	})
}
