package retrieval

import (
	"context"
	"strings"
	"testing"

	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/retrieval/index/indextest"
)

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
	ix, err := BuildIndex(manyDocs(), ChunkerSettings{Version: "t", MaxChars: 60}, ModelRef{Repo: "test", Revision: "1"})
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

func TestSearchRejects(t *testing.T) {
	ctx := context.Background()
	emb := &bagEmbedder{}
	ix, _ := BuildIndex(manyDocs(), DefaultChunker, ModelRef{})
	if _, err := ix.Search(ctx, "q", Params{}, emb, nil); err != ErrNotPrepared {
		t.Errorf("unprepared: %v", err)
	}
	ix = preparedIndex(t, emb)
	for _, p := range []Params{{K: -1}, {K: Candidates + 1}, {Mode: "fuzzy"}, {Rerank: true}} {
		if _, err := ix.Search(ctx, "q", p, emb, nil); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
	r, err := ix.Search(ctx, "pump", Params{}, emb, nil)
	if err != nil || len(r) != DefaultK {
		t.Errorf("default k: %d results, %v", len(r), err)
	}
	if r, _ := ix.Search(ctx, "zzzz qqqq", Params{Mode: ModeBM25}, emb, nil); len(r) != 0 {
		t.Errorf("words in no chunk found %d", len(r))
	}
}

// TestSearchWithTheEngines: the real engine path (the random-weight test
// embedder and reranker through llama.cpp) indexes, searches and reranks,
// and every result carries a proof that verifies.
func TestSearchWithTheEngines(t *testing.T) {
	ctx := context.Background()
	emb, err := llm.OpenEmbedder(ctx, llm.Options{Path: testmodels.Generated(t, testmodels.EmbedFile), Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	rr, err := llm.OpenEmbedder(ctx, llm.Options{Path: testmodels.Generated(t, testmodels.RerankFile), Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	docs := manyDocs()
	ix, err := BuildIndex(docs, ChunkerSettings{Version: "t", MaxChars: 60}, ModelRef{Repo: "test", Revision: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Prepare(ctx, emb); err != nil {
		t.Fatal(err)
	}
	res, err := ix.Search(ctx, "pump pressure after the filter change", Params{K: 8, Rerank: true}, emb, rr)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 8 {
		t.Fatalf("%d results", len(res))
	}
	text := map[string]string{}
	for _, d := range docs {
		text[d.ID] = d.Text
	}
	for _, r := range res {
		p, err := ix.Prove(r.Pos)
		if err != nil {
			t.Fatal(err)
		}
		doc := text[r.Chunk.Doc]
		if err := VerifyChunk(ix.Format, r.Chunk, p, ix.CorpusRoot, ix.NChunks, &doc); err != nil {
			t.Errorf("rank %d: %v", r.Rank, err)
		}
	}
}
