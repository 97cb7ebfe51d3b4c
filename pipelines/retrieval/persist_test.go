package retrieval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"boxd/internal/problem"
)

// TestPersistenceAcrossARestart: with a persist directory, an index comes
// back after a restart (a new Service on the same directory) with the
// same hash, chunks and proofs, for its owner only; files that no longer
// give their hash, or were built with another embedder, are named and
// left out.
func TestPersistenceAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	a := testService(t)
	a.PersistDir = dir
	yes := true
	docs := manyDocs()
	out, err := a.Index(ctx, "key-1", nil, IndexRequest{Documents: docs, Synthetic: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Persistent || out.ExpiresAt != "" {
		t.Errorf("persistent %v, expires_at %q", out.Persistent, out.ExpiresAt)
	}
	q := SearchRequest{Index: out.Index.Hash, Query: "pump pressure filter", K: ptr(5)}
	before, err := a.Search(ctx, "key-1", nil, q)
	if err != nil {
		t.Fatal(err)
	}

	b := testService(t) // a restart: another process, the same directory
	b.PersistDir = dir
	n, err := b.LoadPersisted()
	if err != nil || n != 1 {
		t.Fatalf("loaded %d: %v", n, err)
	}
	after, err := b.Search(ctx, "key-1", nil, q)
	if err != nil {
		t.Fatal(err)
	}
	if after.Index.Hash != out.Index.Hash || after.Index.CorpusRoot != out.Index.CorpusRoot || len(after.Results) != len(before.Results) {
		t.Fatalf("after the restart: index %+v, %d results", after.Index, len(after.Results))
	}
	for i := range after.Results {
		if after.Results[i].Chunk != before.Results[i].Chunk || strings.Join(after.Results[i].Proof.Path, ",") != strings.Join(before.Results[i].Proof.Path, ",") {
			t.Errorf("result %d differs after the restart", i)
		}
	}
	if _, err := b.Search(ctx, "key-2", nil, q); !problem.Is(err, problem.NotFound) {
		t.Errorf("another owner: %v", err)
	}

	c := testService(t)
	c.PersistDir = dir
	c.EmbedderModel.Ref.Revision = "2"
	if n, err := c.LoadPersisted(); n != 0 || err == nil || !strings.Contains(err.Error(), "embedder") {
		t.Errorf("another embedder: loaded %d, %v", n, err)
	}

	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 || strings.Contains(files[0], "key-1") {
		t.Fatalf("files %v (one, named without the owner)", files)
	}
	raw, _ := os.ReadFile(files[0])
	if err := os.WriteFile(files[0], []byte(strings.Replace(string(raw), "pump pressure", "pump  pressure", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	d := testService(t)
	d.PersistDir = dir
	if n, err := d.LoadPersisted(); n != 0 || err == nil || !strings.Contains(err.Error(), "now give index") {
		t.Errorf("changed documents: loaded %d, %v", n, err)
	}
}
