package retrieval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"boxd/internal/problem"
)

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	Embedder
	texts atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

// quotaService is a test service with quota q and a clock the test moves.
func quotaService(t *testing.T, q Quota, now *time.Time) (*Service, *countingEmbedder) {
	t.Helper()
	s := testService(t)
	emb := &countingEmbedder{Embedder: s.Embedder}
	s.Embedder, s.Quota, s.Now = emb, q, func() time.Time { return *now }
	return s, emb
}

// indexFor indexes a document of its own (n makes it differ) for owner.
func indexFor(s *Service, owner string, n int) (*IndexResponse, error) {
	yes := true
	doc := Document{ID: "d", Text: fmt.Sprintf("Document %d of %s. The pump loses pressure after the filter change.", n, owner)}
	return s.Index(context.Background(), owner, nil, IndexRequest{Documents: []Document{doc}, Synthetic: &yes})
}

// TestQuotaDemoShareAndPerOwner is the probe's finding (8 free demo
// tokens filled all 64 index slots and every caller, keys included, got
// 503 for an hour): demo sessions together hold at most their share,
// refused with 429 naming retrieval.demo_indexes before any embedding
// work, with Retry-After until the oldest demo index expires; each owner
// past its own bound replaces its own oldest; keys still find room while
// demo sessions hold their whole share, up to the box's bound (503
// naming retrieval.max_indexes).
func TestQuotaDemoShareAndPerOwner(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	s, emb := quotaService(t, Quota{Max: 8, PerKey: 3, Demo: 4, PerDemo: 2}, &now)
	for i := range 2 {
		for n := range 2 {
			if _, err := indexFor(s, fmt.Sprintf("session:%d", i), n); err != nil {
				t.Fatalf("demo session %d, index %d: %v", i, n, err)
			}
		}
	}
	if all, demo := s.Held(); all != 4 || demo != 4 {
		t.Fatalf("held %d, demo %d; want 4 and 4", all, demo)
	}
	before := emb.texts.Load()
	_, err := indexFor(s, "session:third", 0)
	p, ok := problem.As(err)
	if !ok || p.Kind != problem.RateLimited || !strings.Contains(p.Message, "retrieval.demo_indexes") || p.RetryAfter != IndexTTL {
		t.Fatalf("a third demo session over the share: %#v", err)
	}
	if emb.texts.Load() != before {
		t.Error("the refused index was embedded first: the refusal must come before the work")
	}

	// A demo session at its own bound replaces its own oldest.
	first, err := indexFor(s, "session:0", 10)
	if err != nil {
		t.Fatalf("a demo session past its own bound: %v", err)
	}
	if _, err := s.Search(context.Background(), "session:0", nil, SearchRequest{Index: first.Index.Hash, Query: "pump"}); err != nil {
		t.Errorf("the new index: %v", err)
	}
	if all, demo := s.Held(); all != 4 || demo != 4 {
		t.Errorf("after a replacement: held %d, demo %d; want 4 and 4", all, demo)
	}

	// Keys are not starved: room is left beside the demo share.
	for n := range 4 {
		if _, err := indexFor(s, "key-1", n); err != nil {
			t.Fatalf("key-1 index %d beside the demo share: %v", n, err)
		}
	}
	if _, err := indexFor(s, "key-2", 0); err != nil {
		t.Fatalf("key-2 beside the demo share: %v", err)
	}
	_, err = indexFor(s, "key-3", 0)
	if p, ok := problem.As(err); !ok || p.Kind != problem.Unavailable || !strings.Contains(p.Message, "retrieval.max_indexes") {
		t.Errorf("over the box's bound: %v", err)
	}

	// The demo share comes back when the demo indexes' hour is up; the
	// keys' stay.
	now = now.Add(IndexTTL + time.Second)
	if _, err := indexFor(s, "session:third", 0); err != nil {
		t.Errorf("after the hour: %v", err)
	}
	if all, demo := s.Held(); demo != 1 || all != 1 {
		t.Errorf("after the hour: held %d, demo %d; want 1 and 1 (non-persistent keys' indexes expire too)", all, demo)
	}
}

// TestQuotaBounds: the demo share is capped so that a key always has
// room for its own bound, and the zero Quota is the defaults.
func TestQuotaBounds(t *testing.T) {
	for _, tc := range []struct {
		in, want Quota
	}{
		{Quota{}, Quota{Max: 64, PerKey: 8, Demo: 16, PerDemo: 2}},
		{Quota{Max: 10, PerKey: 4, Demo: 50, PerDemo: 2}, Quota{Max: 10, PerKey: 4, Demo: 6, PerDemo: 2}},
		{Quota{Max: 4, PerKey: 8, Demo: 0, PerDemo: 2}, Quota{Max: 4, PerKey: 4, Demo: 0, PerDemo: 1}},
	} {
		if got := tc.in.bounds(); got != tc.want {
			t.Errorf("%+v: %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// TestQuotaAcrossARestart: with retrieval.persist, demo sessions' indexes
// are neither kept on disk nor held past their hour (before the fix they
// never expired and survived restarts, so the lock outlived the
// sessions); a demo index file of an earlier version is removed at load;
// keys' indexes come back and count against the same bounds.
func TestQuotaAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	q := Quota{Max: 6, PerKey: 2, Demo: 2, PerDemo: 1}
	a, _ := quotaService(t, q, &now)
	a.PersistDir = dir
	for i := range 2 {
		out, err := indexFor(a, fmt.Sprintf("session:%d", i), 0)
		if err != nil {
			t.Fatal(err)
		}
		if out.Persistent || out.ExpiresAt == "" {
			t.Errorf("a demo index with persistence on: persistent %v, expires_at %q", out.Persistent, out.ExpiresAt)
		}
	}
	var keyHashes []string
	for n := range 2 {
		out, err := indexFor(a, "key-1", n)
		if err != nil || !out.Persistent {
			t.Fatalf("key index %d: %v", n, err)
		}
		keyHashes = append(keyHashes, out.Index.Hash)
	}
	// A demo index kept by an earlier version.
	legacy, err := BuildIndex([]Document{{ID: "x", Text: "An old demo document."}}, DefaultChunker, a.EmbedderModel.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := legacy.Prepare(context.Background(), a.Embedder); err != nil {
		t.Fatal(err)
	}
	if err := a.persist("session:old", legacy, []Document{{ID: "x", Text: "An old demo document."}}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 3 {
		t.Fatalf("%d files, want the two keys' and the legacy demo one", len(files))
	}

	// The demo share is held for the hour only, persistence or not.
	_, err = indexFor(a, "session:2", 0)
	if !problem.Is(err, problem.RateLimited) {
		t.Errorf("over the demo share: %v", err)
	}
	now = now.Add(IndexTTL + time.Second)
	if _, err := indexFor(a, "session:2", 0); err != nil {
		t.Errorf("after the hour, with persistence on: %v", err)
	}

	b, _ := quotaService(t, q, &now) // a restart
	b.PersistDir = dir
	n, err := b.LoadPersisted()
	if err != nil || n != 2 {
		t.Fatalf("loaded %d: %v; want the two keys' indexes", n, err)
	}
	if all, demo := b.Held(); all != 2 || demo != 0 {
		t.Errorf("after the restart: held %d, demo %d; want 2 and 0", all, demo)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) != 2 {
		t.Errorf("after the restart: %d files, want the legacy demo file removed", len(files))
	}
	for i := range 2 {
		if _, err := indexFor(b, fmt.Sprintf("session:new%d", i), 0); err != nil {
			t.Errorf("demo session %d after the restart: %v", i, err)
		}
	}
	// The key's loaded indexes count against its bound: its next replaces
	// its oldest, file and all.
	if _, err := indexFor(b, "key-1", 9); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(b.persistPath("key-1", keyHashes[0])); !os.IsNotExist(err) {
		t.Errorf("the replaced index's file: %v", err)
	}
	if all, demo := b.Held(); all != 4 || demo != 2 {
		t.Errorf("held %d, demo %d; want 4 and 2", all, demo)
	}
}
