package web

import (
	"net/http"

	"boxd/pipelines/retrieval"
)

// Body limits of the retrieval routes: 60 documents of 1,500 chunks of
// 1,200 characters at most (up to 4 bytes each in UTF-8) with their JSON;
// a verification carries a receipt, its chunks with proofs and,
// optionally, the documents again.
const (
	retrievalBody       = 8 << 20
	retrievalVerifyBody = 10 << 20
)

func (s *Server) retrievalRoutes() {
	declare(s, Declared[retrieval.IndexRequest]{
		Route: Route{Method: http.MethodPost, Path: "/retrieval/index", Auth: Bearer, Body: retrievalBody, OneRun: true,
			Example: `{"sample": "pump-station-manual"}`},
		Serve: s.retrievalIndex,
	})
	declare(s, Declared[retrieval.SearchRequest]{
		Route: Route{Method: http.MethodPost, Path: "/retrieval/search", Auth: Bearer, Body: retrievalBody, OneRun: true,
			Example: `{"documents": [{"id": "a", "text": "The pump loses pressure."}], "synthetic": true, "query": "pressure"}`},
		Validate: func(r *retrieval.SearchRequest) error { return r.Validate() },
		Serve:    s.retrievalSearch,
	})
	declare(s, Declared[retrieval.VerifyRequest]{
		Route: Route{Method: http.MethodPost, Path: "/retrieval/verify", Body: retrievalVerifyBody,
			Example: `{"receipt": {"v": "service.retrieval.search.v1"}}`},
		Serve: s.retrievalVerify,
	})
	s.Handle(http.MethodGet, "/retrieval/info", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.retrieval.Info())
	})
}

// retrievalIndex answers POST /retrieval/index: the index (held an hour
// for this caller) and the embedding call's receipt.
func (s *Server) retrievalIndex(a *Admitted, req *retrieval.IndexRequest) {
	pr := a.Principal
	out, err := s.retrieval.Index(a.R.Context(), pr.LogID(), pr.KeyID(), *req)
	if err != nil {
		writeProblem(a.W, err)
		return
	}
	s.log.Info("retrieval index", "caller", pr.LogID(), "index", out.Index.Hash, "chunks", out.Index.NChunks, "receipt", out.Receipt.ID)
	writeJSON(a.W, http.StatusOK, out)
}

// retrievalSearch answers POST /retrieval/search: ranked chunks with their
// proofs, the signed search receipt and the model calls' receipts.
func (s *Server) retrievalSearch(a *Admitted, req *retrieval.SearchRequest) {
	pr := a.Principal
	out, err := s.retrieval.Search(a.R.Context(), pr.LogID(), pr.KeyID(), *req)
	if err != nil {
		writeProblem(a.W, err)
		return
	}
	s.log.Info("retrieval search", "caller", pr.LogID(), "index", out.Index.Hash, "receipt", out.Receipt.ID, "results", len(out.Results))
	writeJSON(a.W, http.StatusOK, out)
}

// retrievalVerify answers POST /retrieval/verify: every check, and ok.
func (s *Server) retrievalVerify(a *Admitted, req *retrieval.VerifyRequest) {
	out, err := s.retrieval.Verify(*req)
	if err != nil {
		writeProblem(a.W, err)
		return
	}
	writeJSON(a.W, http.StatusOK, out)
}
