// Package retrieval declares the retrieval family's routes (contract
// document 3: /retrieval/index, index-scans, search, quotes, verify,
// info) and the peers' shapes on its engines (/v1/embeddings, /v1/rerank)
// over pipelines/retrieval. It holds declarations and short Do functions
// only: admission, the transport and the error table are web/api's, the
// service is built in internal/daemon.
package retrieval

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

	"boxd/internal/run"
	"boxd/pipelines/retrieval"
	"boxd/web/api"
)

// Body limits of the retrieval routes: 60 documents of 1,500 chunks of
// 1,200 characters at most (up to 4 bytes each in UTF-8) with their JSON;
// a verification carries a receipt, its chunks with proofs and,
// optionally, the documents again; index-scans carries read documents.
const (
	IndexBodyLimit = 8 << 20
	scansBody      = 16 << 20
	verifyBody     = 10 << 20
	quotesBody     = 1 << 20 // 50 quotes of 1,000 characters, or an answer of 10,000, and chunk ids
	// peerBody bounds /v1/embeddings (256 texts of up to 32,000
	// characters would be more; the route refuses what the model cannot
	// take) and /v1/rerank (100 documents of 8,000 characters).
	peerBody = 8 << 20
)

// Deps are what the family is served from.
type Deps struct {
	Service *retrieval.Service
	// Scans checks a document reader document with the reader's own
	// verification and hands its elements to index-scans.
	Scans func(raw json.RawMessage) (*retrieval.Scan, error)
	Log   *slog.Logger
	// Gate bounds the requests that run the embedder or the reranker
	// (index, index-scans, search, embeddings, rerank): one at a time.
	Gate *api.Gate
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	svc, log := d.Service, d.Log
	api.Declare(a, api.Declared[retrieval.IndexRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/retrieval/index", Auth: api.Bearer, Body: IndexBodyLimit, OneRun: true, Gate: d.Gate,
			Example: `{"sample": "pump-station-manual"}`},
		Do: func(a *api.Admitted, req *retrieval.IndexRequest) (any, error) {
			out, err := svc.Index(a.R.Context(), a.Principal.LogID(), a.Principal.KeyID(), *req)
			if err == nil {
				log.Info("retrieval index", "caller", a.Principal.LogID(), "index", out.Index.Hash, "chunks", out.Index.NChunks, "receipt", out.Receipt.ID)
			}
			return out, err
		},
	})
	api.Declare(a, api.Declared[retrieval.IndexScansRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/retrieval/index-scans", Auth: api.Bearer, Body: scansBody, OneRun: true, Gate: d.Gate,
			Example: `{"documents": [{"name": "letter", "document": {"id": "doc-x"}}], "synthetic": true}`},
		Do: func(a *api.Admitted, req *retrieval.IndexScansRequest) (any, error) {
			out, err := svc.IndexScans(a.R.Context(), a.Principal.LogID(), a.Principal.KeyID(), *req, d.Scans)
			if err == nil {
				log.Info("retrieval index-scans", "caller", a.Principal.LogID(), "index", out.Index.Hash, "chunks", out.Index.NChunks, "receipt", out.Receipt.ID)
			}
			return out, err
		},
	})
	api.Declare(a, api.Declared[retrieval.SearchRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/retrieval/search", Auth: api.Bearer, Body: IndexBodyLimit, OneRun: true, Gate: d.Gate,
			Example: `{"documents": [{"id": "a", "text": "The pump loses pressure."}], "synthetic": true, "query": "pressure"}`},
		// The run path: the model calls' receipt events reach the
		// answer's x-service-receipt header.
		Run: func(a *api.Admitted, req *retrieval.SearchRequest, env run.Env) (any, error) {
			out, err := svc.ServeSearch(a.R.Context(), env, a.Principal.LogID(), a.Principal.KeyID(), *req)
			if err == nil {
				log.Info("retrieval search", "caller", a.Principal.LogID(), "index", out.Index.Hash, "receipt", out.Receipt.ID, "results", len(out.Results))
			}
			return out, err
		},
	})
	api.Declare(a, api.Declared[retrieval.QuotesRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/retrieval/quotes", Auth: api.Bearer, Body: quotesBody, OneRun: true,
			Example: `{"index": "` + strings.Repeat("0", 64) + `", "chunks": ["c0"], "quotes": ["the pump"]}`},
		Do: func(a *api.Admitted, req *retrieval.QuotesRequest) (any, error) {
			return svc.Quotes(a.R.Context(), a.Principal.LogID(), a.Principal.KeyID(), *req)
		},
	})
	// Verifications hash documents and proofs: bounded like /record/verify.
	api.Declare(a, api.Declared[retrieval.VerifyRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/retrieval/verify", Body: verifyBody, Gate: a.Verifications,
			Example: `{"receipt": {"v": "service.retrieval.search.v1"}}`},
		Do: func(_ *api.Admitted, req *retrieval.VerifyRequest) (any, error) { return svc.Verify(*req) },
	})
	api.Declare(a, api.Declared[struct{}]{
		Route: api.Route{Method: http.MethodGet, Path: "/retrieval/info"},
		Do:    func(*api.Admitted, *struct{}) (any, error) { return svc.Info(), nil },
	})

	// The peers' shapes: OpenAI's embeddings, and the rerank route of
	// llama-server, Jina and Cohere.
	api.Declare(a, api.Declared[retrieval.EmbeddingsRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/v1/embeddings", Auth: api.Bearer, Body: peerBody, Lenient: true, OneRun: true, Gate: d.Gate,
			Example: `{"model": "embedder", "input": "hello"}`},
		Do: func(a *api.Admitted, req *retrieval.EmbeddingsRequest) (any, error) {
			out, err := svc.Embeddings(a.R.Context(), a.Principal.KeyID(), *req)
			if err != nil {
				return nil, err
			}
			a.W.Header().Set("x-service-receipt", out.Receipt.ID)
			return out, nil
		},
	})
	api.Declare(a, api.Declared[retrieval.RerankRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/v1/rerank", Auth: api.Bearer, Body: peerBody, Lenient: true, OneRun: true, Gate: d.Gate,
			Example: `{"model": "reranker", "query": "q", "documents": ["d"]}`},
		Do: func(a *api.Admitted, req *retrieval.RerankRequest) (any, error) {
			out, err := svc.Rerank(a.R.Context(), a.Principal.KeyID(), *req)
			if err != nil {
				return nil, err
			}
			a.W.Header().Set("x-service-receipt", out.Receipt.ID)
			return out, nil
		},
	})
}
