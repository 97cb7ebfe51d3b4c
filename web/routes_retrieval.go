package web

import (
	"encoding/json"
	"net/http"
	"strings"

	"boxd/pipelines/retrieval"
)

// Body limits of the retrieval routes: 60 documents of 1,500 chunks of
// 1,200 characters at most (up to 4 bytes each in UTF-8) with their JSON;
// a verification carries a receipt, its chunks with proofs and,
// optionally, the documents again.
const (
	retrievalBody       = 8 << 20
	retrievalVerifyBody = 10 << 20
	retrievalQuotesBody = 1 << 20 // 50 quotes of 1,000 characters, or an answer of 10,000, and chunk ids
)

func (s *Server) retrievalRoutes() {
	// The indexes held per owner and by demo sessions together
	// (retrieval.* settings; pipelines/retrieval/quota.go).
	if c := s.cfg.Retrieval; s.retrieval.Quota == (retrieval.Quota{}) {
		s.retrieval.Quota = retrieval.Quota{Max: c.MaxIndexes, PerKey: c.IndexesPerKey, Demo: c.DemoIndexes, PerDemo: c.IndexesPerDemo}
	}
	declare(s, Declared[retrieval.IndexRequest]{
		Route: Route{Method: http.MethodPost, Path: "/retrieval/index", Auth: Bearer, Body: retrievalBody, OneRun: true,
			Example: `{"sample": "pump-station-manual"}`},
		Serve: s.retrievalIndex,
	})
	declare(s, Declared[retrieval.IndexScansRequest]{
		Route: Route{Method: http.MethodPost, Path: "/retrieval/index-scans", Auth: Bearer, Body: docreaderVerifyBody, OneRun: true,
			Example: `{"documents": [{"name": "letter", "document": {"id": "doc-x"}}], "synthetic": true}`},
		Validate: func(r *retrieval.IndexScansRequest) error { return r.Validate() },
		Serve:    s.retrievalIndexScans,
	})
	declare(s, Declared[retrieval.SearchRequest]{
		Route: Route{Method: http.MethodPost, Path: "/retrieval/search", Auth: Bearer, Body: retrievalBody, OneRun: true,
			Example: `{"documents": [{"id": "a", "text": "The pump loses pressure."}], "synthetic": true, "query": "pressure"}`},
		Validate: func(r *retrieval.SearchRequest) error { return r.Validate() },
		Serve:    s.retrievalSearch,
	})
	declare(s, Declared[retrieval.QuotesRequest]{
		Route: Route{Method: http.MethodPost, Path: "/retrieval/quotes", Auth: Bearer, Body: retrievalQuotesBody, OneRun: true,
			Example: `{"index": "` + strings.Repeat("0", 64) + `", "chunks": ["c0"], "quotes": ["the pump"]}`},
		Validate: func(r *retrieval.QuotesRequest) error { return r.Validate() },
		Serve:    s.retrievalQuotes,
	})
	// Verifications hash documents and proofs: bounded like /record/verify.
	declareGated(s, s.bounds.verify, "verifications", Declared[retrieval.VerifyRequest]{
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

// retrievalIndexScans answers POST /retrieval/index-scans: documents the
// reader read here, each checked by the reader's verification, indexed by
// their elements with anchors.
func (s *Server) retrievalIndexScans(a *Admitted, req *retrieval.IndexScansRequest) {
	pr := a.Principal
	out, err := s.retrieval.IndexScans(a.R.Context(), pr.LogID(), pr.KeyID(), *req, s.scanReader)
	if err != nil {
		writeProblem(a.W, err)
		return
	}
	s.log.Info("retrieval index-scans", "caller", pr.LogID(), "index", out.Index.Hash, "chunks", out.Index.NChunks, "receipt", out.Receipt.ID)
	writeJSON(a.W, http.StatusOK, out)
}

// scanReader checks a document reader document with the reader's own
// verification (this box's key pinned) and hands retrieval its elements.
func (s *Server) scanReader(raw json.RawMessage) (*retrieval.Scan, error) {
	d, err := s.docreader.Checked(raw)
	if err != nil {
		return nil, err
	}
	sc := &retrieval.Scan{ID: d.ID}
	for _, p := range d.Pages {
		for _, e := range p.Elements {
			sc.Elements = append(sc.Elements, retrieval.ScanElement{ID: e.ID, Kind: e.Kind, Page: e.Page, BBox: e.BBox, Text: e.Text})
		}
	}
	return sc, nil
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

// retrievalQuotes answers POST /retrieval/quotes: each quote found word
// for word in a retrieved chunk (with its document offsets) or not.
func (s *Server) retrievalQuotes(a *Admitted, req *retrieval.QuotesRequest) {
	pr := a.Principal
	out, err := s.retrieval.Quotes(a.R.Context(), pr.LogID(), pr.KeyID(), *req)
	if err != nil {
		writeProblem(a.W, err)
		return
	}
	writeJSON(a.W, http.StatusOK, out)
}

// peerBody bounds /v1/embeddings (256 texts of up to 32,000 characters
// would be more; the route refuses what the model cannot take) and
// /v1/rerank (100 documents of 8,000 characters).
const peerBody = 8 << 20

// peerRoutes are the peers' shapes on retrieval's engines: OpenAI's
// embeddings and the rerank route of llama-server, Jina and Cohere.
func (s *Server) peerRoutes() {
	declare(s, Declared[retrieval.EmbeddingsRequest]{
		Route: Route{Method: http.MethodPost, Path: "/v1/embeddings", Auth: Bearer, Body: peerBody, Lenient: true, OneRun: true,
			Example: `{"model": "embedder", "input": "hello"}`},
		Serve: func(a *Admitted, req *retrieval.EmbeddingsRequest) {
			out, err := s.retrieval.Embeddings(a.R.Context(), a.Principal.KeyID(), *req)
			if err != nil {
				writeProblem(a.W, err)
				return
			}
			a.W.Header().Set("x-service-receipt", out.Receipt.ID)
			writeJSON(a.W, http.StatusOK, out)
		},
	})
	declare(s, Declared[retrieval.RerankRequest]{
		Route: Route{Method: http.MethodPost, Path: "/v1/rerank", Auth: Bearer, Body: peerBody, Lenient: true, OneRun: true,
			Example: `{"model": "reranker", "query": "q", "documents": ["d"]}`},
		Serve: func(a *Admitted, req *retrieval.RerankRequest) {
			out, err := s.retrieval.Rerank(a.R.Context(), a.Principal.KeyID(), *req)
			if err != nil {
				writeProblem(a.W, err)
				return
			}
			a.W.Header().Set("x-service-receipt", out.Receipt.ID)
			writeJSON(a.W, http.StatusOK, out)
		},
	})
}
