package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"boxd/pipelines/retrieval/bm25"
	"boxd/pipelines/retrieval/proof"
)

// Embedder turns texts into unit-length vectors (engine/llm.Embedder is
// one).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Reranker scores documents against a query, higher more relevant
// (engine/llm.Embedder on a cross-encoder is one).
type Reranker interface {
	Rerank(ctx context.Context, query string, docs []string) ([]float32, error)
}

// Search settings (contract 3, evidence retrieval: each retriever proposes
// 40, reciprocal-rank fusion, a reranker orders those 40).
const (
	Candidates = 40
	// RRFK is reciprocal-rank fusion's k: score = Σ 1 / (RRFK + rank), ranks
	// from 1, as Cormack, Clarke and Büttcher (2009) set it.
	RRFK = 60
	// DefaultK is how many results a search returns when k is not given.
	DefaultK = 5
)

// Modes.
const (
	ModeHybrid = "hybrid"
	ModeDense  = "dense"
	ModeBM25   = "bm25"
)

// Prepare embeds the index's chunks (in batches, as the embedder takes
// them) and builds its keyword index. The vectors are the dense side of
// every search: exact cosine over at most 1,500 of them, so no approximate
// index is needed.
func (ix *Index) Prepare(ctx context.Context, emb Embedder) error {
	texts := make([]string, len(ix.Chunks))
	toks := make([][]string, len(ix.Chunks))
	for i, c := range ix.Chunks {
		texts[i] = c.Text
		toks[i] = bm25.Analyze(c.Text)
	}
	ix.bm25 = bm25.New(toks)
	if len(texts) == 0 {
		return nil
	}
	if err := ix.ChunksFit(emb); err != nil {
		return fmt.Errorf("retrieval: %w (index it again: chunks are now cut to fit)", err)
	}
	vs, err := emb.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("retrieval: embed %d chunks: %w", len(texts), err)
	}
	if len(vs) != len(texts) {
		return fmt.Errorf("retrieval: the embedder gave %d vectors for %d chunks", len(vs), len(texts))
	}
	ix.vectors = vs
	return nil
}

// Params are a search's settings.
type Params struct {
	K      int    // results (1..Candidates; 0: DefaultK)
	Rerank bool   // order the candidates by the reranker
	Mode   string // hybrid (default), dense or bm25
}

// Result is one ranked chunk.
type Result struct {
	Rank  int         // from 1
	Chunk proof.Chunk // the chunk (its position is Chunk.ID's number)
	Pos   int         // the chunk's position in the index (its leaf)
	// Scores: cosine with the query (dense), BM25, the fused RRF score and
	// the reranker's relevance (sigmoid of its logit), when computed.
	Dense, BM25, RRF, Relevance float64
	HasDense, HasBM25, Reranked bool
	// DenseRank and BM25Rank are the chunk's ranks (from 1) in each
	// retriever's list of 40; 0 when it is not in that list.
	DenseRank, BM25Rank int
}

// ErrNotPrepared is returned by Search on an index Prepare has not run on.
var ErrNotPrepared = errors.New("retrieval: the index has no vectors (Prepare it first)")

// Search finds the chunks that answer query: the dense and the keyword
// retriever each propose 40 (mode hybrid; one of them in modes dense and
// bm25), reciprocal-rank fusion merges them and keeps 40, and with
// rerank the reranker scores those 40 and orders them. Ties keep index
// order. emb embeds the query (dense and hybrid); rr may be nil without
// rerank.
func (ix *Index) Search(ctx context.Context, query string, p Params, emb Embedder, rr Reranker) ([]Result, error) {
	if p.K == 0 {
		p.K = DefaultK
	}
	if p.K < 1 || p.K > Candidates {
		return nil, fmt.Errorf("k %d: give 1 to %d", p.K, Candidates)
	}
	if p.Mode == "" {
		p.Mode = ModeHybrid
	}
	if p.Mode != ModeHybrid && p.Mode != ModeDense && p.Mode != ModeBM25 {
		return nil, fmt.Errorf("mode %q: use hybrid, dense or bm25", p.Mode)
	}
	if ix.bm25 == nil {
		return nil, ErrNotPrepared
	}
	if p.Rerank && rr == nil {
		return nil, errors.New("retrieval: rerank asked for and no reranker is loaded")
	}
	res := map[int]*Result{}
	get := func(i int) *Result {
		r, ok := res[i]
		if !ok {
			r = &Result{Pos: i, Chunk: ix.Chunks[i]}
			res[i] = r
		}
		return r
	}
	if p.Mode != ModeBM25 {
		if len(ix.vectors) != len(ix.Chunks) {
			return nil, ErrNotPrepared
		}
		qv, err := emb.Embed(ctx, []string{query})
		if err != nil {
			return nil, fmt.Errorf("retrieval: embed the query: %w", err)
		}
		for rank, h := range topCosine(qv[0], ix.vectors, Candidates) {
			r := get(h.Doc)
			r.Dense, r.HasDense, r.DenseRank = float64(h.Score), true, rank+1
			r.RRF += 1 / float64(RRFK+rank+1)
		}
	}
	if p.Mode != ModeDense {
		for rank, h := range ix.bm25.Search(bm25.Analyze(query), Candidates) {
			r := get(h.Doc)
			r.BM25, r.HasBM25, r.BM25Rank = float64(h.Score), true, rank+1
			r.RRF += 1 / float64(RRFK+rank+1)
		}
	}
	cands := make([]*Result, 0, len(res))
	for _, r := range res {
		cands = append(cands, r)
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].RRF != cands[j].RRF {
			return cands[i].RRF > cands[j].RRF
		}
		return cands[i].Pos < cands[j].Pos
	})
	if len(cands) > Candidates {
		cands = cands[:Candidates]
	}
	if p.Rerank && len(cands) > 0 {
		texts := make([]string, len(cands))
		for i, c := range cands {
			texts[i] = c.Chunk.Text
		}
		scores, err := rr.Rerank(ctx, query, texts)
		if err != nil {
			return nil, fmt.Errorf("retrieval: rerank %d candidates: %w", len(cands), err)
		}
		if len(scores) != len(cands) {
			return nil, fmt.Errorf("retrieval: the reranker gave %d scores for %d candidates", len(scores), len(cands))
		}
		for i, c := range cands {
			c.Relevance, c.Reranked = Relevance(scores[i]), true
		}
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].Relevance > cands[j].Relevance })
	}
	if len(cands) > p.K {
		cands = cands[:p.K]
	}
	out := make([]Result, len(cands))
	for i, c := range cands {
		c.Rank = i + 1
		out[i] = *c
	}
	return out, nil
}

// topCosine is the k vectors nearest q by cosine (all unit length: the
// dot product), best first, ties by position.
func topCosine(q []float32, vs [][]float32, k int) []bm25.Hit {
	hits := make([]bm25.Hit, len(vs))
	for i, v := range vs {
		var s float64
		for j := range q {
			s += float64(q[j]) * float64(v[j])
		}
		hits[i] = bm25.Hit{Doc: i, Score: float32(s)}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// Relevance is a cross-encoder's logit as a relevance in 0..1 (its
// sigmoid), the scale the peers' rerank APIs report.
func Relevance(logit float32) float64 { return 1 / (1 + math.Exp(-float64(logit))) }

// PPM is a score in parts per million, rounded: how the contract's
// scores_ppm carries them (integers, no floats in signed records).
func PPM(x float64) int64 { return int64(math.Round(x * 1e6)) }
