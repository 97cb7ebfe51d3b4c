package models

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestHashCacheSkipsUnchangedFiles: a second start reads nothing; any change
// to the file (even one that restores its size and modification time) is
// read again; the roots always equal the uncached WeightsRootOf.
func TestHashCacheSkipsUnchangedFiles(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	model := filepath.Join(dir, "m.gguf")
	writeFile(t, model, "weights one")

	check := func(c *HashCache, wantCached bool) string {
		t.Helper()
		got, cached, err := c.WeightsRootOf(context.Background(), model)
		if err != nil {
			t.Fatal(err)
		}
		want, err := WeightsRootOf(model)
		if err != nil {
			t.Fatal(err)
		}
		if got.Root != want.Root {
			t.Fatalf("cached root %s, full hash %s", got.Root, want.Root)
		}
		if cached != wantCached {
			t.Fatalf("cached = %v, want %v", cached, wantCached)
		}
		return got.Root
	}

	c := OpenHashCache(state)
	first := check(c, false)
	if c.Hashed() != 1 {
		t.Fatalf("hashed %d files, want 1", c.Hashed())
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}

	// A restart: the cache file answers.
	c = OpenHashCache(state)
	check(c, true)
	if c.Hashed() != 0 {
		t.Fatalf("a restart read the unchanged file again (%d)", c.Hashed())
	}

	// Same size, modification time put back: the status change time moved
	// (the kernel's clock for it ticks every few milliseconds).
	st, _ := os.Stat(model)
	time.Sleep(20 * time.Millisecond)
	writeFile(t, model, "weights two")
	if err := os.Chtimes(model, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	second := check(c, false)
	if second == first {
		t.Fatal("the root did not change with the bytes")
	}

	// Replaced by another file (new inode) through a rename.
	other := filepath.Join(dir, "new.gguf")
	writeFile(t, other, "weights three")
	if err := os.Rename(other, model); err != nil {
		t.Fatal(err)
	}
	check(c, false)
	check(c, true)
}

// TestHashCacheSplitAndSymlink: a split GGUF is cached per part; a link to
// the model shares the entry of the file it names.
func TestHashCacheSplitAndSymlink(t *testing.T) {
	dir := t.TempDir()
	for i, body := range []string{"part one", "part two"} {
		writeFile(t, filepath.Join(dir, "big-0000"+string(rune('1'+i))+"-of-00002.gguf"), body)
	}
	first := filepath.Join(dir, "big-00001-of-00002.gguf")
	c := OpenHashCache(t.TempDir())
	r1, cached, err := c.WeightsRootOf(context.Background(), first)
	if err != nil || cached || c.Hashed() != 2 {
		t.Fatalf("first: %v cached=%v hashed=%d", err, cached, c.Hashed())
	}
	want, _ := WeightsRootOf(first)
	if r1.Root != want.Root || len(r1.Files) != 2 {
		t.Fatalf("split root %+v, want %+v", r1, want)
	}
	link := filepath.Join(t.TempDir(), "current-00001-of-00002.gguf")
	if err := os.Symlink(first, link); err != nil {
		t.Fatal(err)
	}
	// The link names part one; part two is looked for next to the link.
	if _, _, err := c.WeightsRootOf(context.Background(), link); err == nil {
		t.Fatal("a split model whose other parts are missing must fail")
	}
	solo := filepath.Join(dir, "solo.gguf")
	writeFile(t, solo, "solo")
	if _, _, err := c.WeightsRootOf(context.Background(), solo); err != nil {
		t.Fatal(err)
	}
	soloLink := filepath.Join(t.TempDir(), "model.gguf")
	if err := os.Symlink(solo, soloLink); err != nil {
		t.Fatal(err)
	}
	n := c.Hashed()
	if _, cached, err := c.WeightsRootOf(context.Background(), soloLink); err != nil || !cached || c.Hashed() != n {
		t.Fatalf("link: %v cached=%v (hashed %d → %d)", err, cached, n, c.Hashed())
	}
}

// TestHashCacheDamagedFile: a damaged cache is an empty one, and Save
// replaces it.
func TestHashCacheDamagedFile(t *testing.T) {
	state := t.TempDir()
	model := filepath.Join(t.TempDir(), "m.gguf")
	writeFile(t, model, "weights")
	for _, junk := range []string{"{not json", `{"files": 3}`, `{"files": {"x": {"sha256": 5}}}`, ""} {
		writeFile(t, filepath.Join(state, HashCacheFile), junk)
		c := OpenHashCache(state)
		if _, cached, err := c.WeightsRootOf(context.Background(), model); err != nil || cached {
			t.Fatalf("%q: %v cached=%v", junk, err, cached)
		}
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
		if _, cached, _ := OpenHashCache(state).WeightsRootOf(context.Background(), model); !cached {
			t.Fatalf("%q: the rewritten cache does not answer", junk)
		}
	}
	// A forged entry with the file's identity but another hash is what
	// Verify reports.
	c := OpenHashCache(state)
	key, id, err := identity(model)
	if err != nil {
		t.Fatal(err)
	}
	id.SHA256 = "00000000000000000000000000000000000000000000000000000000000000ff"
	c.entries[key] = id
	root, bad, err := c.Verify(context.Background(), model)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || bad[0].Cached != id.SHA256 || bad[0].Actual != root.Files[0].SHA256 {
		t.Fatalf("mismatch not reported: %+v", bad)
	}
	if got := c.Cached(model); got != root.Files[0].SHA256 {
		t.Fatalf("verify did not correct the cache: %s", got)
	}
	if _, bad, _ := c.Verify(context.Background(), model); len(bad) != 0 {
		t.Fatalf("a second verify still reports %+v", bad)
	}
	// Entries for deleted files are dropped on save.
	if err := os.Remove(model); err != nil {
		t.Fatal(err)
	}
	c.dirty = true
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	if n := len(OpenHashCache(state).entries); n != 0 {
		t.Fatalf("%d entries left for a deleted file", n)
	}
	if _, _, err := c.WeightsRootOf(context.Background(), model); err == nil {
		t.Fatal("a missing file must fail")
	}
}
