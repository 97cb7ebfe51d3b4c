package retrieval

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/retrieval/chunker"
	"boxd/pipelines/retrieval/index"
	"boxd/pipelines/retrieval/peer"
	"boxd/pipelines/retrieval/proof"
)

// Request limits beyond the contract's (which are MaxDocuments, MaxChunks
// and the chunker's 1,200 characters).
const (
	MaxQueryChars = 2000
	MaxIDChars    = 128
	MaxTitleChars = 300
	// IndexTTL is how long an index is held (contract: one hour).
	IndexTTL = time.Hour
)

// Receipts signs and stores model-call receipts (receipts.Book is one).
type Receipts = peer.Receipts

// Service is the evidence-retrieval family: the embedder and the
// reranker, the indexes held per owner for an hour. The box runs one
// request that embeds at a time: its routes share one admission gate
// (web/routes/retrieval, Deps.Gate).
type Service struct {
	Embedder      Embedder // nil: no embedder configured (index and search 503)
	EmbedderModel Model
	Reranker      Reranker // nil: no reranker (search without rerank)
	RerankerModel Model
	Key           *attest.Key
	Receipts      Receipts
	Now           func() time.Time
	// PersistDir, when set, keeps developer keys' indexes there across
	// restarts, without expiry (retrieval.persist on a self-hosted box;
	// persist.go).
	PersistDir string
	// Quota bounds the indexes held, per owner and by demo sessions
	// together (quota.go).
	Quota Quota

	mu   sync.Mutex
	held map[string]*heldIndex // owner + " " + index hash
}

type heldIndex struct {
	owner      string
	demo       bool // a demo session's (quota.go)
	ix         *Index
	docs       map[string]string // id → text, for offsets in answers
	expires    time.Time
	added      time.Time
	persistent bool
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// IndexRequest is POST /retrieval/index's body.
type IndexRequest struct {
	Documents []Document `json:"documents"`
	Synthetic *bool      `json:"synthetic"`
	Sample    string     `json:"sample"`
}

// ModelCallReceipt is a model call's receipt as the answers carry it (the
// shape of the platform's receipt events).
type ModelCallReceipt = run.ReceiptBody

// SyntheticClaim names the caller's documents (none for a sample) and
// the body's synthetic flag (limits.require_synthetic, applied at
// admission).
func (r *IndexRequest) SyntheticClaim() (string, *bool) {
	if len(r.Documents) == 0 {
		return "", nil
	}
	return "documents", r.Synthetic
}

// IndexResponse is its answer.
type IndexResponse struct {
	Index *Index `json:"index"`
	// ExpiresAt is when the index goes (an hour on); a persistent index
	// (retrieval.persist) has none.
	ExpiresAt  string           `json:"expires_at,omitempty"`
	Persistent bool             `json:"persistent"`
	Receipt    ModelCallReceipt `json:"receipt"`
}

// Check validates a request's documents (400, 413).
func checkDocuments(docs []Document) error {
	if len(docs) == 0 {
		return problem.New(problem.Invalid, "documents is empty: send 1 to %d documents {id, title, text}, or a sample id", MaxDocuments)
	}
	if len(docs) > MaxDocuments {
		return problem.New(problem.TooLarge, "%d documents: at most %d per index", len(docs), MaxDocuments)
	}
	seen := map[string]bool{}
	for i, d := range docs {
		switch {
		case d.ID == "" || utf8.RuneCountInString(d.ID) > MaxIDChars:
			return problem.New(problem.Invalid, "documents[%d].id must be 1 to %d characters", i, MaxIDChars)
		case seen[d.ID]:
			return problem.New(problem.Invalid, "documents[%d].id %q appears twice: ids must be unique", i, d.ID)
		case utf8.RuneCountInString(d.Title) > MaxTitleChars:
			return problem.New(problem.Invalid, "documents[%d].title is over %d characters", i, MaxTitleChars)
		case !utf8.ValidString(d.Text):
			return problem.New(problem.Invalid, "documents[%d].text is not valid UTF-8", i)
		}
		if err := checkDocument(i, d); err != nil {
			return err
		}
		seen[d.ID] = true
	}
	return nil
}

// isTrue says whether an optional flag was sent true.
func isTrue(b *bool) bool { return b != nil && *b }

// documents resolves a request's documents or sample.
func documents(docs []Document, sample string) ([]Document, error) {
	if sample != "" {
		if len(docs) > 0 {
			return nil, problem.New(problem.Invalid, "send documents or sample, not both")
		}
		d, ok := Samples[sample]
		if !ok {
			return nil, problem.New(problem.NotFound, "no sample %q; GET /retrieval/info lists them", sample)
		}
		return d, nil
	}
	if err := checkDocuments(docs); err != nil {
		return nil, err
	}
	return docs, nil
}

// build cuts, indexes and embeds documents, signing the embedding call.
// build indexes docs; synthetic is what the caller said of them, signed
// in the embedding call's receipt (params.synthetic).
func (s *Service) build(ctx context.Context, docs []Document, keyID *string, synthetic bool) (*Index, ModelCallReceipt, error) {
	if s.Embedder == nil {
		return nil, ModelCallReceipt{}, problem.New(problem.Unavailable, "no embedding model is configured on this box (models.embedder.path): retrieval cannot index")
	}
	c := s.counters()
	settings, err := chunker.Bounded(DefaultChunker, c)
	if err != nil {
		return nil, ModelCallReceipt{}, problem.Wrap(problem.Unavailable, err, "%v", err)
	}
	ix, err := BuildIndexWith(docs, settings, s.EmbedderModel.Ref, proof.Current, c)
	if err != nil {
		if le, ok := err.(*LimitError); ok {
			return nil, ModelCallReceipt{}, problem.New(problem.TooLarge, "%s", le.Error())
		}
		return nil, ModelCallReceipt{}, problem.Wrap(problem.Invalid, err, "%v", err)
	}
	if err := ix.Prepare(ctx, s.Embedder); err != nil {
		return nil, ModelCallReceipt{}, problem.Wrap(problem.Upstream, err, "the embedding model failed: %v", err)
	}
	texts := make([]string, len(ix.Chunks))
	for i, c := range ix.Chunks {
		texts[i] = c.Text
	}
	tokens, err := peer.SumTokens(s.Embedder, texts)
	if err != nil {
		return nil, ModelCallReceipt{}, err
	}
	rc, err := s.issuer().Sign(ctx, "embed", s.EmbedderModel, texts, peer.VectorsHash(ix.Vectors()), map[string]string{"inputs": strconv.Itoa(len(texts)), "synthetic": strconv.FormatBool(synthetic)}, tokens, keyID)
	return ix, rc, err
}

// counters are the loaded models that count tokens (chunker.Bounded).
func (s *Service) counters() chunker.Counters {
	var c chunker.Counters
	if tc, ok := s.Embedder.(TokenCounter); ok {
		c.Embed = tc
	}
	if tc, ok := s.Reranker.(TokenCounter); ok {
		c.Rerank = tc
	}
	return c
}

// issuer issues the service's model-call receipts (peer.Issuer).
func (s *Service) issuer() peer.Issuer { return peer.Issuer{Key: s.Key, Receipts: s.Receipts} }

// Index builds an index for owner and holds it for an hour.
func (s *Service) Index(ctx context.Context, owner string, keyID *string, req IndexRequest) (*IndexResponse, error) {
	docs, err := documents(req.Documents, req.Sample)
	if err != nil {
		return nil, err
	}
	demo := isDemo(owner)
	if err := s.room(owner, demo); err != nil {
		return nil, err
	}
	ix, rc, err := s.build(ctx, docs, keyID, req.Sample != "" || isTrue(req.Synthetic))
	if err != nil {
		return nil, err
	}
	keep := s.PersistDir != "" && !demo
	if keep {
		// On disk before it is held: holding it may replace the owner's
		// oldest, whose file goes only once this one's is there (a crash
		// in between leaves both, and LoadPersisted drops the older;
		// never neither).
		if err := s.persist(owner, ix, docs); err != nil {
			return nil, problem.Wrap(problem.Unavailable, err, "the index was built but could not be kept on disk: %v", err)
		}
	}
	exp, err := s.hold(owner, demo, ix, docs)
	if err != nil {
		if keep {
			_ = os.Remove(s.persistPath(owner, ix.Hash))
		}
		return nil, err
	}
	if keep {
		return &IndexResponse{Index: ix, Persistent: true, Receipt: rc}, nil
	}
	return &IndexResponse{Index: ix, ExpiresAt: exp.UTC().Format(time.RFC3339), Receipt: rc}, nil
}

// lookup finds owner's index by hash.
func (s *Service) lookup(owner, hash string) (*heldIndex, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.held[owner+" "+hash]
	if !ok || !s.now().Before(h.expires) {
		delete(s.held, owner+" "+hash)
		return nil, problem.New(problem.NotFound, "no index %s for this caller: it was never built with these credentials or its hour is up; POST /retrieval/index again", hash)
	}
	return h, nil
}

// SearchRequest is POST /retrieval/search's body: an index hash, or
// documents to index on the spot.
type SearchRequest struct {
	Index     string     `json:"index"`
	Documents []Document `json:"documents"`
	Synthetic *bool      `json:"synthetic"`
	Query     string     `json:"query"`
	K         *int       `json:"k"`
	Rerank    *bool      `json:"rerank"`
	Mode      string     `json:"mode"`
	notUTF8   []string   // input.go
}

// SyntheticClaim names the documents to index on the spot, if any, and
// the body's synthetic flag (limits.require_synthetic).
func (r *SearchRequest) SyntheticClaim() (string, *bool) {
	if len(r.Documents) == 0 {
		return "", nil
	}
	return "documents", r.Synthetic
}

// SearchHit is one ranked chunk in the answer.
type SearchHit struct {
	ReceiptResult
	Text  string `json:"text"`
	Proof Proof  `json:"proof"`
}

// SearchResponse is its answer.
type SearchResponse struct {
	Index      ReceiptIndex       `json:"index"`
	Results    []SearchHit        `json:"results"`
	Receipt    *SearchReceipt     `json:"receipt"`
	ModelCalls []ModelCallReceipt `json:"model_calls"`
}

// ServeSearch runs a search on the run path: each model call's receipt
// (embedding the query, reranking) goes to env.Events as a receipt event,
// then done with the answer (a stream: false answer's x-service-receipt
// header lists the calls).
func (s *Service) ServeSearch(ctx context.Context, env run.Env, owner string, keyID *string, req SearchRequest) (*SearchResponse, error) {
	out, err := s.Search(ctx, owner, keyID, req)
	if err != nil {
		return nil, err
	}
	for _, rc := range out.ModelCalls {
		env.Events.Emit(run.TypeReceipt, rc)
	}
	env.Events.End(run.TypeDone, out)
	return out, nil
}

// Validate checks a search body (400).
func (r *SearchRequest) Validate() error {
	if err := notUTF8Problem("", r.notUTF8); err != nil {
		return err
	}
	if err := checkText("query", r.Query, false); err != nil {
		return err
	}
	n := utf8.RuneCountInString(r.Query)
	switch {
	case n == 0 || n > MaxQueryChars:
		return problem.New(problem.Invalid, "query must be 1 to %d characters", MaxQueryChars)
	case r.Index == "" && len(r.Documents) == 0:
		return problem.New(problem.Invalid, "send index (an index hash from POST /retrieval/index) or documents")
	case r.Index != "" && len(r.Documents) > 0:
		return problem.New(problem.Invalid, "send index or documents, not both")
	case r.K != nil && (*r.K < 1 || *r.K > Candidates):
		return problem.New(problem.Invalid, "k must be 1 to %d", Candidates)
	case r.Mode != "" && r.Mode != ModeHybrid && r.Mode != ModeDense && r.Mode != ModeBM25:
		return problem.New(problem.Invalid, "mode %q: use hybrid, dense or bm25", r.Mode)
	case r.Index != "" && !isHexHash(r.Index):
		return problem.New(problem.Invalid, "index must be a 64-digit hex index hash")
	}
	return nil
}

func isHexHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// Search runs one search for owner and signs its receipt.
func (s *Service) Search(ctx context.Context, owner string, keyID *string, req SearchRequest) (*SearchResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	p := Params{K: DefaultK, Mode: req.Mode, Rerank: s.Reranker != nil}
	if req.K != nil {
		p.K = *req.K
	}
	if req.Rerank != nil {
		p.Rerank = *req.Rerank
	}
	if p.Rerank && s.Reranker == nil {
		return nil, problem.New(problem.Unavailable, "no reranker is configured on this box (models.reranker.path): send rerank false")
	}
	if p.Mode == "" {
		p.Mode = ModeHybrid
	}
	if err := s.queryFits(req.Query, p); err != nil {
		return nil, err
	}
	var h *heldIndex
	var calls []ModelCallReceipt
	if req.Index != "" {
		var err error
		if h, err = s.lookup(owner, req.Index); err != nil {
			return nil, err
		}
	} else if err := checkDocuments(req.Documents); err != nil {
		return nil, err
	}
	if h == nil {
		ix, rc, err := s.build(ctx, req.Documents, keyID, isTrue(req.Synthetic))
		if err != nil {
			return nil, err
		}
		calls = append(calls, rc)
		text := map[string]string{}
		for _, d := range req.Documents {
			text[d.ID] = d.Text
		}
		h = &heldIndex{ix: ix, docs: text}
	}
	ix := h.ix
	var emb Embedder
	if p.Mode != ModeBM25 {
		if s.Embedder == nil {
			return nil, problem.New(problem.Unavailable, "no embedding model is configured on this box (models.embedder.path): use mode bm25")
		}
		emb = &recordingEmbedder{e: s.Embedder}
	}
	var rr *recordingReranker
	if p.Rerank {
		rr = &recordingReranker{r: s.Reranker}
		rr.tc, _ = s.Reranker.(TokenCounter)
	}
	res, err := ix.Search(ctx, req.Query, p, emb, rerankerOrNil(rr))
	var fe *FitError
	if errors.As(err, &fe) {
		return nil, problem.Wrap(problem.Invalid, err, "%v: shorten the query or send rerank false", err)
	}
	if err != nil {
		return nil, problem.Wrap(problem.Upstream, err, "the search failed: %v", err)
	}
	var refs []ModelCallRef
	if re, ok := emb.(*recordingEmbedder); ok && re.called {
		tokens, err := peer.SumTokens(s.Embedder, []string{req.Query})
		if err != nil {
			return nil, err
		}
		rc, err := s.issuer().Sign(ctx, "embed", s.EmbedderModel, []string{req.Query}, peer.VectorsHash(re.out), map[string]string{"inputs": "1"}, tokens, keyID)
		if err != nil {
			return nil, err
		}
		calls, refs = append(calls, rc), append(refs, ModelCallRef{ID: rc.ID, Kind: "embed"})
	}
	if rr != nil && rr.called {
		tokens, err := peer.RerankTokens(s.Reranker, req.Query, rr.docs)
		if err != nil {
			return nil, err
		}
		rc, err := s.issuer().Sign(ctx, "rerank", s.RerankerModel, append([]string{req.Query}, rr.docs...), peer.ScoresHash(rr.scores),
			map[string]string{"candidates": strconv.Itoa(len(rr.docs))}, tokens, keyID)
		if err != nil {
			return nil, err
		}
		calls, refs = append(calls, rc), append(refs, ModelCallRef{ID: rc.ID, Kind: "rerank"})
	}
	var rref *ModelRef
	if p.Rerank {
		m := s.RerankerModel.Ref
		rref = &m
	}
	receipt, err := SignSearch(s.Key, ix, req.Query, p, res, rref, refs)
	if err != nil {
		return nil, err
	}
	out := &SearchResponse{Index: receipt.Index, Receipt: receipt, ModelCalls: append([]ModelCallReceipt{}, calls...), Results: []SearchHit{}}
	for i, r := range res {
		pr, err := ix.Prove(r.Pos)
		if err != nil {
			return nil, err
		}
		out.Results = append(out.Results, SearchHit{ReceiptResult: receipt.Results[i], Text: r.Chunk.Text, Proof: pr})
	}
	return out, nil
}

// recordingEmbedder and recordingReranker keep what a search sent the
// models and got back, for the model-call receipts.
type recordingEmbedder struct {
	e      Embedder
	called bool
	out    [][]float32
}

func (r *recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	v, err := r.e.Embed(ctx, texts)
	r.called, r.out = true, v
	return v, err
}

type recordingReranker struct {
	r      Reranker
	tc     TokenCounter // the reranker's counts, nil when it keeps none
	called bool
	docs   []string
	scores []float32
}

func (r *recordingReranker) Rerank(ctx context.Context, query string, docs []string) ([]float32, error) {
	if err := index.RerankFits(r.tc, query, docs); err != nil {
		return nil, err
	}
	s, err := r.r.Rerank(ctx, query, docs)
	r.called, r.docs, r.scores = true, docs, s
	return s, err
}

func rerankerOrNil(r *recordingReranker) Reranker {
	if r == nil {
		return nil
	}
	return r
}
