package studio

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func write(t *testing.T, path, body string, mod time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if !mod.IsZero() {
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGalleryListsOnlyExistingFiles(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "media")
	g := &Gallery{Dir: dir}
	items, _, err := g.List()
	if err != nil || items == nil || len(items) != 0 {
		t.Fatalf("missing dir: %v %v", items, err)
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	write(t, filepath.Join(dir, "kite.png"), "png", t0)
	write(t, filepath.Join(dir, "kite.json"), `{"kind":"image","title":"Kite","prompt":"a red kite","model":"img-1","file":"kite.png","seed":7,"notice":"AI-generated"}`, time.Time{})
	write(t, filepath.Join(dir, "2026", "tune.mp3"), "mp3", t0.Add(time.Hour))
	write(t, filepath.Join(dir, "tune.json"), `{"kind":"music","title":"Tune","prompt":"folk","model":"m","file":"2026/tune.mp3","seed":1,"duration_s":12.5}`, time.Time{})
	write(t, filepath.Join(dir, "gone.json"), `{"kind":"video","title":"Gone","prompt":"x","model":"v","file":"gone.mp4","seed":2}`, time.Time{})
	write(t, filepath.Join(dir, "wrongkind.json"), `{"kind":"video","title":"W","prompt":"x","model":"v","file":"kite.png","seed":2}`, time.Time{})
	write(t, filepath.Join(dir, "escape.json"), `{"kind":"image","title":"E","prompt":"x","model":"v","file":"../secret.png","seed":2}`, time.Time{})
	write(t, filepath.Join(base, "secret.png"), "secret", time.Time{})
	write(t, filepath.Join(dir, "bad id!.json"), `{"kind":"image","title":"B","prompt":"x","model":"v","file":"kite.png","seed":2}`, time.Time{})
	write(t, filepath.Join(dir, "junk.json"), `{"kind":"image","extra":1}`, time.Time{})
	if err := os.Symlink(filepath.Join(base, "secret.png"), filepath.Join(dir, "link.png")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "link.json"), `{"kind":"image","title":"L","prompt":"x","model":"v","file":"link.png","seed":2}`, time.Time{})

	items, skipped, err := g.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].ID != "tune" || items[1].ID != "kite" {
		t.Fatalf("items = %+v", items)
	}
	k := items[1]
	if k.Kind != Image || k.URL != "/studio/media/kite.png" || k.Seed != 7 || k.Notice != "AI-generated" || k.ReportURL != "/studio/report?item=kite" || k.DurationS != nil || k.Prompt != "a red kite" {
		t.Errorf("kite = %+v", k)
	}
	if u := items[0]; u.URL != "/studio/media/2026/tune.mp3" || u.DurationS == nil || *u.DurationS != 12.5 {
		t.Errorf("tune = %+v", u)
	}
	if len(skipped) != 6 {
		t.Errorf("skipped = %+v", skipped)
	}
	if !g.Has("kite") || g.Has("gone") || g.Has("link") || g.Has("../kite") || g.Has("nope") {
		t.Error("Has disagrees with the listing")
	}
	if err := os.Remove(filepath.Join(dir, "kite.png")); err != nil {
		t.Fatal(err)
	}
	if items, _, _ := g.List(); len(items) != 1 || g.Has("kite") {
		t.Errorf("after the file went: %+v", items)
	}
}

func TestMediaOpen(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "media")
	write(t, filepath.Join(dir, "a.png"), "png", time.Time{})
	write(t, filepath.Join(dir, "sub", "b.webm"), "webm", time.Time{})
	write(t, filepath.Join(dir, "note.txt"), "txt", time.Time{})
	write(t, filepath.Join(dir, ".hidden.png"), "x", time.Time{})
	write(t, filepath.Join(base, "outside.png"), "x", time.Time{})
	if err := os.Mkdir(filepath.Join(dir, "dir.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "outside.png"), filepath.Join(dir, "out.png")); err != nil {
		t.Fatal(err)
	}
	g := &Gallery{Dir: dir}
	for p, ct := range map[string]string{"a.png": "image/png", "sub/b.webm": "video/webm"} {
		f, fi, got, err := g.Open(p)
		if err != nil || got != ct || !fi.Mode().IsRegular() {
			t.Errorf("Open(%q) = %q, %v", p, got, err)
			continue
		}
		f.Close()
	}
	for _, p := range []string{"", "note.txt", ".hidden.png", "../outside.png", "sub/../a.png", "a/b/c/d/e.png", "dir.png", "out.png", "missing.png", "/etc/passwd.png", "sub//b.webm", "a.png/"} {
		if f, _, _, err := g.Open(p); !errors.Is(err, ErrNotMedia) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open(%q) = %v, want ErrNotMedia", p, err)
		}
	}
}
