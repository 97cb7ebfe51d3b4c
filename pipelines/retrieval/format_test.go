package retrieval

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"boxd/pipelines/retrieval/chunker"
	"boxd/pipelines/retrieval/proof"
)

// htmlDocs have ids and text with <, > and & (Go's HTML-safe JSON wrote
// them \u003c, \u003e, \u0026 in v1 leaves) and non-ASCII.
func htmlDocs() []Document {
	return []Document{
		{ID: "R&D <draft>", Text: "The pump loses pressure when the filter clogs.\n\nBleed the air <after> a filter change & check."},
		{ID: "notes-é", Text: "Roof shingles crack in the cold. The chimney needs sealant & flashing."},
	}
}

// searchOver signs a BM25 search over ix and hands back the receipt and
// its chunks with their proofs.
func searchOver(t *testing.T, ix *Index) ([]byte, []ProvenChunk) {
	t.Helper()
	ctx := context.Background()
	if err := ix.Prepare(ctx, &bagEmbedder{}); err != nil {
		t.Fatal(err)
	}
	p := Params{K: 4, Mode: ModeBM25}
	res, err := ix.Search(ctx, "pump filter pressure sealant", p, nil, nil)
	if err != nil || len(res) < 2 {
		t.Fatalf("%d results: %v", len(res), err)
	}
	k := newKey(t)
	rc, err := SignSearch(k, ix, "pump filter pressure sealant", p, res, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(rc)
	var chunks []ProvenChunk
	for _, r := range res {
		pr, _ := ix.Prove(r.Pos)
		chunks = append(chunks, ProvenChunk{Chunk: r.Chunk.ID, Text: r.Chunk.Text, Proof: pr})
	}
	cs, err := VerifySearch(raw, k.PublicKey(), chunks, htmlDocs())
	if err != nil {
		t.Fatal(err)
	}
	if f := failed(cs); len(f) > 0 {
		t.Fatalf("%s index: %v", ix.Format, f)
	}
	return raw, chunks
}

// TestIndexFormats: new indexes are v2 (leaves and hash over canonical
// JSON, named in index.format and the receipt's index.format); an index
// in v1 (no format field, as every index made before v2) still proves and
// its receipts still verify; a receipt cannot be moved from one format
// to the other.
func TestIndexFormats(t *testing.T) {
	s := ChunkerSettings{Version: "t", MaxChars: 60}
	e := ModelRef{Repo: "e", Revision: "1"}
	v2, err := BuildIndex(htmlDocs(), s, e)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := BuildIndexWith(htmlDocs(), s, e, "", chunker.Counters{})
	if err != nil {
		t.Fatal(err)
	}
	if v2.Format != proof.IndexV2 || v1.Format != "" || v1.CorpusRoot == v2.CorpusRoot || v1.Hash == v2.Hash {
		t.Fatalf("formats %q %q, roots %s %s", v2.Format, v1.Format, v2.CorpusRoot, v1.CorpusRoot)
	}
	// The v2 leaf is canonical JSON: the id as sent, not \u0026 and \u003c.
	c := v2.Chunks[0]
	if l := string(c.Leaf(v2.Format)); !strings.Contains(l, `"R&D <draft>"`) {
		t.Errorf("v2 leaf %s", l)
	}
	if l := string(c.Leaf(v1.Format)); !strings.Contains(l, `"R\u0026D \u003cdraft\u003e"`) {
		t.Errorf("v1 leaf %s", l)
	}
	raw2, _ := searchOver(t, v2)
	raw1, chunks1 := searchOver(t, v1)
	var m map[string]any
	_ = json.Unmarshal(raw1, &m)
	if _, ok := m["index"].(map[string]any)["format"]; ok {
		t.Error("a v1 index's receipt names a format (its signed bytes would differ from before)")
	}
	_ = json.Unmarshal(raw2, &m)
	if m["index"].(map[string]any)["format"] != proof.IndexV2 {
		t.Errorf("a v2 receipt's index: %v", m["index"])
	}
	// A v1 receipt read as v2: the signature no longer covers it.
	var rc SearchReceipt
	_ = json.Unmarshal(raw1, &rc)
	rc.Index.Format = proof.IndexV2
	cs, err := VerifySearch(mustJSON(rc), nil, chunks1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Join(failed(cs), "; "); !strings.Contains(f, "signature") {
		t.Errorf("a v1 receipt relabelled v2: failed %q", f)
	}
	rc.Index.Format = "boxd.retrieval.index.v9"
	if _, err := VerifySearch(mustJSON(rc), nil, chunks1, nil); err == nil || !strings.Contains(err.Error(), "v9") {
		t.Errorf("an unknown index format: %v", err)
	}
}

// TestPersistedV1IndexLoads: an index kept on disk before v2 (no format,
// chunker boxd-chunker-1) comes back with its hash and proofs, and a new
// one is kept as v2.
func TestPersistedV1IndexLoads(t *testing.T) {
	dir := t.TempDir()
	s := testService(t)
	s.PersistDir = dir
	old := ChunkerSettings{Version: "boxd-chunker-1", MaxChars: 1200}
	ix, err := BuildIndexWith(htmlDocs(), old, s.EmbedderModel.Ref, "", chunker.Counters{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Prepare(context.Background(), s.Embedder); err != nil {
		t.Fatal(err)
	}
	if err := s.persist("key-1", ix, htmlDocs()); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	raw, _ := os.ReadFile(files[0])
	if strings.Contains(string(raw), `"format"`) {
		t.Fatalf("the v1 file names a format: %s", raw)
	}
	b := testService(t)
	b.PersistDir = dir
	if n, err := b.LoadPersisted(); n != 1 || err != nil {
		t.Fatalf("loaded %d: %v", n, err)
	}
	out, err := b.Search(context.Background(), "key-1", nil, SearchRequest{Index: ix.Hash, Query: "pump pressure", K: ptr(2)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Index.Hash != ix.Hash || out.Index.Format != "" {
		t.Fatalf("index %+v", out.Index)
	}
	var chunks []ProvenChunk
	for _, r := range out.Results {
		chunks = append(chunks, ProvenChunk{Chunk: r.Chunk, Text: r.Text, Proof: r.Proof})
	}
	v, err := b.Verify(VerifyRequest{Receipt: mustJSON(out.Receipt), Chunks: chunks, Documents: htmlDocs()})
	if err != nil || !v.OK || len(chunks) == 0 {
		t.Errorf("a v1 index's search after a restart: %v %+v", err, v)
	}
}
