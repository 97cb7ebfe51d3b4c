package retrieval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPersistReplaceKeepsTheOldUntilTheNewIsKept: an owner at its bound
// whose next index cannot be kept on disk still has its oldest index, file
// and all, after a restart. Found while writing crashtest's kill -9 test:
// the oldest's file used to be removed before the new one was written, so
// a crash (or a failed write) in between lost an index the owner had been
// answered for, with nothing in its place.
func TestPersistReplaceKeepsTheOldUntilTheNewIsKept(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := testService(t)
	s.PersistDir = dir
	yes := true
	doc := func(i int) []Document {
		return []Document{{ID: "log", Text: fmt.Sprintf("Entry %d: the pump station logged a pressure drop after the filter change.", i)}}
	}
	const bound = 8 // an owner's indexes (the default bound)
	var first string
	for i := range bound {
		out, err := s.Index(ctx, "key-1", nil, IndexRequest{Documents: doc(i), Synthetic: &yes})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = out.Index.Hash
		}
	}
	// The next index's file cannot be written: a directory is in its way.
	next, err := BuildIndex(doc(bound), DefaultChunker, s.EmbedderModel.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.persistPath("key-1", next.Hash), "in-the-way"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Index(ctx, "key-1", nil, IndexRequest{Documents: doc(bound), Synthetic: &yes}); err == nil {
		t.Fatal("an index that could not be kept on disk was answered as kept")
	}
	if _, err := os.Stat(s.persistPath("key-1", first)); err != nil {
		t.Errorf("the oldest index's file is gone though its replacement was never kept: %v", err)
	}
	if err := os.RemoveAll(s.persistPath("key-1", next.Hash)); err != nil {
		t.Fatal(err)
	}
	b := testService(t) // a restart on the same directory
	b.PersistDir = dir
	n, err := b.LoadPersisted()
	if err != nil || n != bound {
		t.Fatalf("after the restart: %d indexes loaded (%v), want %d", n, err, bound)
	}
	k := 1
	if _, err := b.Search(ctx, "key-1", nil, SearchRequest{Index: first, Query: "pressure drop", K: &k}); err != nil {
		t.Errorf("the oldest index after the restart: %v", err)
	}

	// A replacement a crash cut short (the new file written, the oldest's
	// not yet removed) is finished at the next start: the owner holds its
	// newest bound, and the oldest's file goes.
	if err := next.Prepare(ctx, b.Embedder); err != nil {
		t.Fatal(err)
	}
	if err := b.persist("key-1", next, doc(bound)); err != nil {
		t.Fatal(err)
	}
	// Modification times order an owner's indexes: the new file is the
	// newest.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(b.persistPath("key-1", next.Hash), later, later); err != nil {
		t.Fatal(err)
	}
	c := testService(t)
	c.PersistDir = dir
	if n, err := c.LoadPersisted(); err != nil || n != bound {
		t.Fatalf("after a replacement cut short: %d indexes loaded (%v), want %d", n, err, bound)
	}
	if _, err := os.Stat(c.persistPath("key-1", first)); !os.IsNotExist(err) {
		t.Errorf("the replaced index's file is still there: %v", err)
	}
	if _, err := c.Search(ctx, "key-1", nil, SearchRequest{Index: next.Hash, Query: "pressure drop", K: &k}); err != nil {
		t.Errorf("the replacing index: %v", err)
	}
}
