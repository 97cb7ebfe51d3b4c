package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSweep: the temporary files of writes a kill cut short are removed
// once stale, in the directory and below it; a fresh one (a write in
// progress elsewhere), the finished files and look-alikes stay.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "retrieval")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	files := map[string]bool{ // name: removed
		filepath.Join(dir, ".instance.key.tmp-123456"): true,
		filepath.Join(sub, ".idx-abc.json.tmp-987"):    true,
		filepath.Join(sub, ".fresh.json.tmp-555"):      false,
		filepath.Join(dir, "instance.key"):             false,
		filepath.Join(dir, ".hidden.tmp-notdigits"):    false,
		filepath.Join(sub, "notes.tmp-1"):              false,
		filepath.Join(dir, "boxd.db"):                  false,
	}
	for p := range files {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if filepath.Base(p) != ".fresh.json.tmp-555" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, err := Sweep(dir, time.Hour)
	if err != nil || n != 2 {
		t.Fatalf("Sweep: %d removed, %v; want 2", n, err)
	}
	for p, gone := range files {
		_, err := os.Stat(p)
		if gone != os.IsNotExist(err) {
			t.Errorf("%s: removed %v, want %v", p, os.IsNotExist(err), gone)
		}
	}
	// A real write's temporary file has the pattern Sweep looks for.
	if err := WriteFunc(filepath.Join(dir, "f"), 0o600, func(w io.Writer) error {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() != "f" && leftover.MatchString(e.Name()) {
				return nil
			}
		}
		t.Error("place's temporary file does not match the sweep's pattern")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
