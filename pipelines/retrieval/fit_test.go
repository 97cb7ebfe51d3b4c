package retrieval

import (
	"context"
	"strings"
	"testing"

	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/internal/problem"
	"boxd/pipelines/retrieval/chunker"
	"boxd/pipelines/retrieval/index"
)

// engines opens the test embedder and reranker (llama.cpp, the tiny
// BERT models with real tokenizers, 512-token contexts).
func engines(t *testing.T) (*llm.Embedder, *llm.Embedder) {
	t.Helper()
	ctx := context.Background()
	emb, err := llm.OpenEmbedder(ctx, llm.Options{Path: testmodels.Generated(t, testmodels.EmbedFile), Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	rr, err := llm.OpenEmbedder(ctx, llm.Options{Path: testmodels.Generated(t, testmodels.RerankFile), Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rr.Close)
	return emb, rr
}

// longParagraph is about 1,150 characters of one paragraph, within the
// 1,200 characters, and well over 512 of the test tokenizer's tokens.
func longParagraph() string {
	words := []string{"Pressure", "drops", "0.35", "bar", "(valve", "V-12)", "after", "filter", "FX-9921", "swaps;", "bleed", "vents", "#4–#7", "quickly."}
	var b strings.Builder
	for i := 0; b.Len() < 1150; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[i%len(words)])
	}
	return b.String()
}

// TestChunksFitTheModels: with the models' token bounds, every chunk is
// within what the embedder reads (512) and leaves the reranker room for
// a query; the bounds are in the chunker settings and so in the index
// hash; without them the same text is one chunk the models would read
// cut.
func TestChunksFitTheModels(t *testing.T) {
	emb, rr := engines(t)
	text := longParagraph() + "\n\nA short second paragraph about the roof."
	docs := []Document{{ID: "manual", Text: text}}

	plain, err := BuildIndex(docs, DefaultChunker, ModelRef{Repo: "e", Revision: "1"})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := emb.CountTokens(plain.Chunks[0].Text)
	if n <= emb.MaxTokens() {
		t.Fatalf("the test paragraph is %d tokens, within the embedder's %d: it tests nothing", n, emb.MaxTokens())
	}

	s := &Service{Embedder: emb, Reranker: rr, EmbedderModel: Model{Ref: ModelRef{Repo: "e", Revision: "1"}}}
	s.Key = newKey(t)
	s.Receipts = memReceipts{s.Key}
	yes := true
	out, err := s.Index(context.Background(), "owner", nil, IndexRequest{Documents: docs, Synthetic: &yes})
	if err != nil {
		t.Fatal(err)
	}
	ix := out.Index
	if ix.Chunker.MaxTokens != 512 || ix.Chunker.RerankMaxTokens != 512-chunker.QueryTokens || ix.Chunker.Version != chunker.V3 {
		t.Fatalf("chunker %+v", ix.Chunker)
	}
	if len(ix.Chunks) <= len(plain.Chunks) {
		t.Errorf("%d chunks with the bounds, %d without", len(ix.Chunks), len(plain.Chunks))
	}
	for _, c := range ix.Chunks {
		e, _ := emb.CountTokens(c.Text)
		r, _ := rr.CountTokens(c.Text)
		if e > ix.Chunker.MaxTokens || r > ix.Chunker.RerankMaxTokens {
			t.Errorf("chunk %s: %d embedder and %d reranker tokens, bounds %d and %d", c.ID, e, r, ix.Chunker.MaxTokens, ix.Chunker.RerankMaxTokens)
		}
		if text[c.ByteStart:c.ByteEnd] != c.Text {
			t.Errorf("chunk %s: offsets", c.ID)
		}
	}
	unbounded := ix.Chunker
	unbounded.MaxTokens, unbounded.RerankMaxTokens = 0, 0
	if ix.Hash == IndexHash(ix.Format, ix.CorpusRoot, ix.NChunks, unbounded, ix.Embedder, "") ||
		ix.Hash != IndexHash(ix.Format, ix.CorpusRoot, ix.NChunks, ix.Chunker, ix.Embedder, "") {
		t.Error("the index hash does not commit to the token bounds")
	}

	// Searches: a query the embedder or the reranker cannot read whole is
	// refused (400), not cut.
	long := strings.Repeat("pressure 0.35 bar FX-9921 ", 60)
	for _, tc := range []struct {
		name string
		req  SearchRequest
		bad  bool
		want string
	}{
		{"fits", SearchRequest{Index: ix.Hash, Query: "filter pressure", Rerank: &yes}, false, ""},
		{"query over the embedder", SearchRequest{Index: ix.Hash, Query: long, Mode: ModeDense}, true, "the embedder reads at most 512"},
		{"query over the reranker", SearchRequest{Index: ix.Hash, Query: long, Mode: ModeBM25, Rerank: &yes}, true, "the reranker reads at most 512"},
	} {
		_, err := s.Search(context.Background(), "owner", nil, tc.req)
		if !tc.bad {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !problem.Is(err, problem.Invalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want 400 naming %q", tc.name, err, tc.want)
		}
	}
}

// TestOverlongChunksRefused: an index whose chunks the embedder cannot
// read whole (kept from before the chunker counted tokens) is refused,
// and a rerank whose query and candidate do not fit together is 400.
func TestOverlongChunksRefused(t *testing.T) {
	emb, rr := engines(t)
	docs := []Document{{ID: "manual", Text: longParagraph()}}
	ix, err := BuildIndex(docs, ChunkerSettings{Version: "boxd-chunker-1", MaxChars: 1200}, ModelRef{Repo: "e", Revision: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Prepare(context.Background(), emb); err == nil || !strings.Contains(err.Error(), "the embedder reads at most 512") {
		t.Errorf("an overlong chunk was embedded: %v", err)
	}
	err = index.RerankFits(rr, "pump", []string{longParagraph()})
	if fe, ok := err.(*FitError); !ok || fe.Model != "reranker" || fe.Limit != 512 {
		t.Errorf("an overlong rerank pair: %v", err)
	}
	if _, err := chunker.CutCounted("d", "x", ChunkerSettings{Version: "t", MaxChars: 10, MaxTokens: 1}, chunker.Counters{Embed: emb}); err == nil || !strings.Contains(err.Error(), "over the chunk bound of 1") {
		t.Errorf("a character over the bound: %v", err)
	}
}
