package index

import (
	"context"
	"math"
	"strings"
	"testing"

	"boxd/pipelines/retrieval/bm25"
	"boxd/pipelines/retrieval/chunker"
	"boxd/pipelines/retrieval/index/indextest"
	"boxd/pipelines/retrieval/proof"
)

// The index's search, checked against its own retrievers (the keyword
// index and the vectors). bagEmbedder, overlapReranker and manyDocs are
// package retrieval's test models and corpus.

// The test models (indextest).
type (
	bagEmbedder     = indextest.BagEmbedder
	overlapReranker = indextest.OverlapReranker
)

func manyDocs() []Document {
	topics := []string{"pump pressure drops after the filter change", "roof shingles crack in cold weather", "the patient reports lower back pain",
		"invoice totals and tax for the quarter", "valve seals leak under high pressure", "the chimney flashing needs new sealant"}
	var docs []Document
	for i := range 12 {
		var b strings.Builder
		for j := range 6 {
			b.WriteString(topics[(i+j)%len(topics)])
			b.WriteString(". Note ")
			b.WriteString(strings.Repeat("x", i+j))
			b.WriteString(".\n\n")
		}
		docs = append(docs, Document{ID: string(rune('a' + i)), Text: b.String()})
	}
	return docs
}

func preparedIndex(t *testing.T, emb Embedder) *Index {
	t.Helper()
	ix, err := Build(manyDocs(), chunker.Settings{Version: "t", MaxChars: 60}, proof.ModelRef{Repo: "test", Revision: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Prepare(context.Background(), emb); err != nil {
		t.Fatal(err)
	}
	if ix.NChunks <= Candidates {
		t.Fatalf("only %d chunks: the test needs more than %d", ix.NChunks, Candidates)
	}
	return ix
}

func TestSearchModesFusionAndRerank(t *testing.T) {
	ctx := context.Background()
	emb := &bagEmbedder{}
	ix := preparedIndex(t, emb)
	query := "why does the pump lose pressure"

	bm, err := ix.Search(ctx, query, Params{K: 10, Mode: ModeBM25}, emb, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ix.bm25.Search(bm25.Analyze(query), 10)
	for i, r := range bm {
		if r.Pos != want[i].Doc || r.BM25Rank != i+1 || r.HasDense || r.DenseRank != 0 || r.Rank != i+1 {
			t.Fatalf("bm25 rank %d: %+v, want chunk %d", i+1, r, want[i].Doc)
		}
	}

	dn, err := ix.Search(ctx, query, Params{K: 10, Mode: ModeDense}, emb, nil)
	if err != nil {
		t.Fatal(err)
	}
	qv, _ := emb.Embed(ctx, []string{query})
	wantD := topCosine(qv[0], ix.vectors, 10)
	for i, r := range dn {
		if r.Pos != wantD[i].Doc || r.DenseRank != i+1 || r.HasBM25 {
			t.Fatalf("dense rank %d: %+v, want chunk %d", i+1, r, wantD[i].Doc)
		}
	}

	hy, err := ix.Search(ctx, query, Params{K: Candidates}, emb, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range hy {
		var rrf float64
		if r.DenseRank > 0 {
			rrf += 1 / float64(RRFK+r.DenseRank)
		}
		if r.BM25Rank > 0 {
			rrf += 1 / float64(RRFK+r.BM25Rank)
		}
		if math.Abs(rrf-r.RRF) > 1e-12 || rrf == 0 {
			t.Fatalf("hybrid rank %d: RRF %v, ranks give %v", i+1, r.RRF, rrf)
		}
		if i > 0 && (hy[i-1].RRF < r.RRF || hy[i-1].RRF == r.RRF && hy[i-1].Pos > r.Pos) {
			t.Fatalf("hybrid ranks %d and %d out of order", i, i+1)
		}
	}

	rr := &overlapReranker{}
	rk, err := ix.Search(ctx, query, Params{K: 7, Rerank: true}, emb, rr)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Got) != Candidates {
		t.Errorf("the reranker scored %d candidates, want %d", len(rr.Got), Candidates)
	}
	if len(rk) != 7 {
		t.Fatalf("%d results, want 7", len(rk))
	}
	for i, r := range rk {
		if !r.Reranked || r.Relevance <= 0 || r.Relevance >= 1 {
			t.Fatalf("rank %d: relevance %v", i+1, r.Relevance)
		}
		if i > 0 && rk[i-1].Relevance < r.Relevance {
			t.Fatalf("reranked results out of order at %d", i+1)
		}
	}
	if !strings.Contains(rk[0].Chunk.Text, "pump") {
		t.Errorf("the best reranked chunk %q does not mention the pump", rk[0].Chunk.Text)
	}
}
