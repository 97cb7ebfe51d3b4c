package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"boxd/engine/models"
	"boxd/engine/models/catalogue"
)

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestPullStatusAndMatch: Pull puts an entry's files in the folder from
// the mirror (the publisher's URL unreachable), StatusOf follows the files
// from missing through partial and damaged to present without reading
// them, and Matches recognises a configured path by identity or by its
// remembered hash.
func TestPullStatusAndMatch(t *testing.T) {
	model, proj := bytes.Repeat([]byte("m"), 10_000), []byte("projector")
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		b := map[string][]byte{"m.gguf": model, "p.gguf": proj}[filepath.Base(r.URL.Path)]
		http.ServeContent(w, r, "f", time.Time{}, bytes.NewReader(b))
	}))
	defer srv.Close()
	e := catalogue.Entry{Name: "e", Role: catalogue.Chat, Summary: "s", Licence: "MIT", Files: []catalogue.File{
		{Kind: catalogue.KindModel, Name: "m.gguf", URL: "http://127.0.0.1:1/m.gguf", SHA256: sum(model), Size: int64(len(model))},
		{Kind: catalogue.KindProjector, Name: "p.gguf", URL: "http://127.0.0.1:1/p.gguf", SHA256: sum(proj)},
	}}
	dir := filepath.Join(t.TempDir(), "models")
	if s := StatusOf(dir, e); s.State != Missing || len(s.Paths) != 2 || s.Paths[0] != filepath.Join(dir, "m.gguf") {
		t.Fatalf("status before: %+v", s)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m.gguf.part"), model[:10], 0o644); err != nil {
		t.Fatal(err)
	}
	if s := StatusOf(dir, e); s.State != Partial {
		t.Errorf("status with a part: %+v", s)
	}
	hashes := models.OpenHashCache(t.TempDir())
	var notes []string
	res, err := Pull(context.Background(), e, Options{Dir: dir, Mirror: srv.URL + "/m/", Hashes: hashes, Note: func(m string) { notes = append(notes, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || !res[0].Fetched || res[0].Resumed != 10 || res[1].Size != int64(len(proj)) {
		t.Errorf("results %+v", res)
	}
	if strings.Join(paths, ",") != "/m/m.gguf,/m/p.gguf" {
		t.Errorf("requests %v", paths)
	}
	if s := StatusOf(dir, e); s.State != Present || s.Bytes != int64(len(model)+len(proj)) {
		t.Errorf("status after: %+v", s)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "fetching m.gguf (9.8 KiB) from "+srv.URL+"/m/m.gguf") {
		t.Errorf("notes %q", notes)
	}

	// A configured path is the entry's file: by identity, or (a copy
	// elsewhere) by its remembered hash; another file is not.
	inst := filepath.Join(dir, "m.gguf")
	cp := filepath.Join(t.TempDir(), "copy.gguf")
	if err := os.WriteFile(cp, model, 0o644); err != nil {
		t.Fatal(err)
	}
	if !Matches(inst, dir, e.Files[0], hashes) || Matches(cp, dir, e.Files[0], hashes) || Matches("", dir, e.Files[0], hashes) {
		t.Error("Matches before the copy's hash is known")
	}
	if err := hashes.Remember(cp, sum(model)); err != nil {
		t.Fatal(err)
	}
	if !Matches(cp, dir, e.Files[0], hashes) || Matches(cp, dir, e.Files[1], hashes) {
		t.Error("Matches by remembered hash")
	}

	// A file of the wrong size is damaged; the next pull refuses to
	// replace it without Force.
	if err := os.WriteFile(inst, []byte("short"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := StatusOf(dir, e); s.State != Damaged {
		t.Errorf("status damaged: %+v", s)
	}
	if _, err := Pull(context.Background(), e, Options{Dir: dir, Mirror: srv.URL}); err == nil || !strings.Contains(err.Error(), "pass --force") {
		t.Errorf("pull over a damaged file: %v", err)
	}
	if _, err := Pull(context.Background(), e, Options{Dir: dir, Mirror: srv.URL, Force: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(inst); !bytes.Equal(got, model) {
		t.Error("Force did not replace the file")
	}

	// An entry larger than the disk is refused before a byte moves.
	huge := e
	huge.Files = []catalogue.File{{Kind: catalogue.KindModel, Name: "huge.gguf", URL: "https://example.org/huge", SHA256: sum(nil), Size: 1 << 62}}
	if _, err := Pull(context.Background(), huge, Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "free some space") {
		t.Errorf("huge entry: %v", err)
	}
}
