package retrieval

import (
	"context"
	"strings"
	"testing"

	"boxd/pipelines/retrieval/chunker"
)

// clusterDocs are documents whose 1,200-character cut falls inside a ZWJ
// emoji sequence (code points 1,199 to 1,203) and inside a flag.
func clusterDocs() []Document {
	return []Document{
		{ID: "zwj", Text: strings.Repeat("a", 1198) + "👩‍👩‍👧" + strings.Repeat("b", 50)},
		{ID: "flag", Text: strings.Repeat("c", 1199) + "🇫🇷" + strings.Repeat("d", 50)},
	}
}

// TestPersistedV2IndexKeepsItsCut: an index kept with boxd-chunker-2,
// whose cuts split a ZWJ sequence and a flag, comes back after a restart
// cut the same way, with its hash, and its search verifies; a new index
// of the same documents is boxd-chunker-3's, with every cluster whole
// and another hash.
func TestPersistedV2IndexKeepsItsCut(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := testService(t)
	s.PersistDir = dir
	old := ChunkerSettings{Version: chunker.V2, MaxChars: 1200}
	ix, err := BuildIndexWith(clusterDocs(), old, s.EmbedderModel.Ref, "boxd.retrieval.index.v2", chunker.Counters{})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Chunks[0].ByteEnd != 1198+len("👩\u200d") || ix.Chunks[2].ByteEnd != 1199+len("🇫") {
		t.Fatalf("boxd-chunker-2 no longer splits the clusters: chunks end at %d and %d", ix.Chunks[0].ByteEnd, ix.Chunks[2].ByteEnd)
	}
	if err := ix.Prepare(ctx, s.Embedder); err != nil {
		t.Fatal(err)
	}
	if err := s.persist("key-1", ix, clusterDocs()); err != nil {
		t.Fatal(err)
	}
	b := testService(t)
	b.PersistDir = dir
	if n, err := b.LoadPersisted(); n != 1 || err != nil {
		t.Fatalf("loaded %d: %v", n, err)
	}
	h := b.held["key-1 "+ix.Hash]
	if h == nil || h.ix.Chunker != old || len(h.ix.Chunks) != len(ix.Chunks) {
		t.Fatalf("the kept boxd-chunker-2 index did not come back as it was: %+v", h)
	}
	for i, c := range h.ix.Chunks {
		if c.ByteStart != ix.Chunks[i].ByteStart || c.ByteEnd != ix.Chunks[i].ByteEnd {
			t.Errorf("chunk %d at %d..%d, kept at %d..%d", i, c.ByteStart, c.ByteEnd, ix.Chunks[i].ByteStart, ix.Chunks[i].ByteEnd)
		}
	}
	out, err := b.Search(ctx, "key-1", nil, SearchRequest{Index: ix.Hash, Query: "the clusters", Mode: ModeDense})
	if err != nil {
		t.Fatal(err)
	}
	var chunks []ProvenChunk
	for _, r := range out.Results {
		chunks = append(chunks, ProvenChunk{Chunk: r.Chunk, Text: r.Text, Proof: r.Proof})
	}
	if v, err := b.Verify(VerifyRequest{Receipt: mustJSON(out.Receipt), Chunks: chunks, Documents: clusterDocs()}); err != nil || !v.OK || len(chunks) == 0 {
		t.Errorf("a boxd-chunker-2 index's search after a restart: %v %+v", err, v)
	}

	yes := true
	fresh, err := s.Index(ctx, "key-1", nil, IndexRequest{Documents: clusterDocs(), Synthetic: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Index.Chunker.Version != chunker.V3 || fresh.Index.Hash == ix.Hash {
		t.Fatalf("a new index: chunker %+v, hash %s", fresh.Index.Chunker, fresh.Index.Hash)
	}
	if c := fresh.Index.Chunks; c[0].ByteEnd != 1198 || c[1].ByteStart != 1198 || c[2].ByteEnd != 1199 || c[3].ByteStart != 1199 {
		t.Errorf("boxd-chunker-3 cuts at %d..%d, %d..%d, %d..%d, %d..%d; want the clusters whole", c[0].ByteStart, c[0].ByteEnd, c[1].ByteStart, c[1].ByteEnd, c[2].ByteStart, c[2].ByteEnd, c[3].ByteStart, c[3].ByteEnd)
	}
}
