package catalogue

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogueBuiltinIsWellFormed: every built-in entry validates (https
// URLs, 64-hex SHA-256, a licence, a known role, unique names and files),
// each role the box needs has an entry, and the chat models include a
// Gemma 3 with its projector.
func TestCatalogueBuiltinIsWellFormed(t *testing.T) {
	c := Builtin()
	if err := c.Validate(false); err != nil {
		t.Fatal(err)
	}
	have := map[Role]int{}
	for _, e := range c {
		have[e.Role]++
		for _, f := range e.Files {
			if !strings.HasPrefix(f.URL, "https://huggingface.co/") {
				t.Errorf("%s: %s is not a Hugging Face URL", e.Name, f.URL)
			}
			if e.Role == Speech && (f.Convert != ConvertWhisper || !strings.HasSuffix(f.Output, ".gguf")) {
				t.Errorf("%s: a whisper.cpp file must be converted to GGUF", e.Name)
			}
			if e.Role != Speech && !strings.HasSuffix(f.Name, ".gguf") && e.Role != VAD {
				t.Errorf("%s: %s is not a GGUF file", e.Name, f.Name)
			}
		}
	}
	for _, r := range []Role{Chat, Speech, VAD, Embedder, Reranker} {
		if have[r] == 0 {
			t.Errorf("no %s entry", r)
		}
	}
	g, ok := c.Lookup("GEMMA-3-4B-IT")
	if !ok {
		t.Fatal("gemma-3-4b-it missing")
	}
	if p, ok := g.Projector(); !ok || p.Size == 0 || g.Model().Size == 0 {
		t.Errorf("gemma-3-4b-it: projector %+v, model %+v", p, g.Model())
	}
	if n, known := g.Size(); !known || n != 2_489_757_856+851_251_104 {
		t.Errorf("gemma-3-4b-it size %d %v", n, known)
	}
	for _, name := range []string{"whisper-tiny.en", "whisper-base.en", "whisper-small.en", "silero-vad-v6.2.0", "bge-small-en-v1.5", "bge-reranker-v2-m3"} {
		if _, ok := c.Lookup(name); !ok {
			t.Errorf("%s missing", name)
		}
	}
	// Builtin returns a copy: a caller cannot change the compiled-in list.
	c[0].Name = "changed"
	if Builtin()[0].Name == "changed" {
		t.Error("Builtin shares its backing array")
	}
}

// TestCatalogueSharedTestModelsMatch: the two entries pinned from the
// shared test models name those files' real size and SHA-256.
func TestCatalogueSharedTestModelsMatch(t *testing.T) {
	manifest, err := os.ReadFile(filepath.Join(sharedDir(), "MANIFEST.md"))
	if err != nil {
		t.Skipf("shared models: %v", err)
	}
	for _, name := range []string{"stories260k", "silero-vad-v6.2.0"} {
		e, _ := Builtin().Lookup(name)
		f := e.Model()
		if !strings.Contains(string(manifest), f.SHA256) {
			t.Errorf("%s: %s is not in MANIFEST.md", name, f.SHA256)
		}
		if st, err := os.Stat(filepath.Join(sharedDir(), f.Name)); err == nil && st.Size() != f.Size {
			t.Errorf("%s: size %d, the shared file %d", name, f.Size, st.Size())
		}
	}
}

func sharedDir() string {
	if d := os.Getenv("BOXD_TEST_MODELS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "..", "shared", "models")
}

func TestCatalogueValidateRefuses(t *testing.T) {
	good := func() Entry {
		return Entry{Name: "m", Role: Embedder, Summary: "s", Licence: "MIT", Files: []File{
			{Kind: KindModel, Name: "m.gguf", URL: "https://example.org/m.gguf", SHA256: strings.Repeat("ab", 32)}}}
	}
	if err := (Catalogue{good()}).Validate(false); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(*Entry)
		want string
	}{
		{"bad name", func(e *Entry) { e.Name = "M/1" }, "lower-case"},
		{"role", func(e *Entry) { e.Role = "tts" }, "not one of"},
		{"licence", func(e *Entry) { e.Licence = "" }, "licence"},
		{"short sha", func(e *Entry) { e.Files[0].SHA256 = "abc" }, "64 lower-case hex"},
		{"upper sha", func(e *Entry) { e.Files[0].SHA256 = strings.Repeat("AB", 32) }, "64 lower-case hex"},
		{"non-hex sha", func(e *Entry) { e.Files[0].SHA256 = strings.Repeat("zz", 32) }, "64 lower-case hex"},
		{"http", func(e *Entry) { e.Files[0].URL = "http://example.org/m.gguf" }, "not an https URL"},
		{"path name", func(e *Entry) { e.Files[0].Name = "../m.gguf" }, "without a folder"},
		{"part name", func(e *Entry) { e.Files[0].Name = "m.gguf.part" }, "not .part"},
		{"negative size", func(e *Entry) { e.Files[0].Size = -1 }, "negative size"},
		{"no model", func(e *Entry) { e.Files[0].Kind = KindProjector }, "exactly one model file"},
		{"projector off chat", func(e *Entry) {
			e.Files = append(e.Files, File{Kind: KindProjector, Name: "p.gguf", URL: "https://example.org/p", SHA256: strings.Repeat("cd", 32)})
		}, "only a chat entry"},
		{"convert without output", func(e *Entry) { e.Files[0].Convert = ConvertWhisper }, "needs an output"},
		{"unknown convert", func(e *Entry) { e.Files[0].Convert, e.Files[0].Output = "onnx", "x.gguf" }, "not known"},
		{"setting", func(e *Entry) { e.Settings = map[string]string{"listen": "0.0.0.0:1"} }, "not one an entry may carry"},
	}
	for _, c := range cases {
		e := good()
		c.edit(&e)
		if err := (Catalogue{e}).Validate(false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	a, b := good(), good()
	if err := (Catalogue{a, b}).Validate(false); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate name: %v", err)
	}
	b.Name = "n"
	if err := (Catalogue{a, b}).Validate(false); err == nil || !strings.Contains(err.Error(), "also used by m") {
		t.Errorf("duplicate file: %v", err)
	}
	h := good()
	h.Files[0].URL = "http://127.0.0.1:1/m.gguf"
	if err := (Catalogue{h}).Validate(true); err != nil {
		t.Errorf("http allowed: %v", err)
	}
}

func TestCatalogueLoadAndMirror(t *testing.T) {
	e := Entry{Name: "w", Role: Speech, Summary: "s", Licence: "MIT", Files: []File{
		{Kind: KindModel, Name: "ggml-w.bin", URL: "http://127.0.0.1:9/x/ggml-w.bin", SHA256: strings.Repeat("0", 64), Convert: ConvertWhisper, Output: "w.gguf"}}}
	b, _ := json.Marshal([]Entry{e})
	p := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil || len(c) != 1 || c[0].Model().Installed() != "w.gguf" {
		t.Fatalf("load: %v %+v", err, c)
	}
	if err := os.WriteFile(p, []byte(`[{"name":"x"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil {
		t.Error("an invalid catalogue loaded")
	}
	for _, m := range []struct{ mirror, want string }{
		{"", "http://127.0.0.1:9/x/ggml-w.bin"},
		{"http://mirror.lan", "http://mirror.lan/ggml-w.bin"},
		{"http://mirror.lan/boxd/models/", "http://mirror.lan/boxd/models/ggml-w.bin"},
	} {
		if got, err := SourceURL(c[0].Files[0], m.mirror); err != nil || got != m.want {
			t.Errorf("SourceURL(%q) = %q %v, want %q", m.mirror, got, err, m.want)
		}
	}
	if _, err := SourceURL(c[0].Files[0], "mirror.lan"); err == nil {
		t.Error("a mirror without a scheme was accepted")
	}
}

func TestCatalogueRoles(t *testing.T) {
	for in, want := range map[string]Role{"llm": Chat, "Chat": Chat, "asr": Speech, "whisper": Speech, "embeddings": Embedder, "rerank": Reranker, "vad": VAD} {
		if r, err := ParseRole(in); err != nil || r != want {
			t.Errorf("ParseRole(%q) = %q %v", in, r, err)
		}
	}
	if _, err := ParseRole("tts"); err == nil {
		t.Error("tts accepted")
	}
	keys := map[Role]string{Chat: "models.llm.path", Speech: "models.asr.path", VAD: "models.vad.path", Embedder: "models.embedder.path", Reranker: "models.reranker.path", Diarizer: "models.diarizer.path"}
	for r, k := range keys {
		if r.Key() != k {
			t.Errorf("%s key %s, want %s", r, r.Key(), k)
		}
	}
	for in, want := range map[string]string{"llama3.2": "llama-3.2-3b-instruct", "gemma-3-4b": "gemma-3-4b-it", "whisper-base.em": "whisper-base.en", "tts-model-xyz": ""} {
		if got := Builtin().Suggest(in); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
	sorted := Builtin().Sorted()
	if sorted[0].Role != Chat || sorted[len(sorted)-1].Role != Reranker {
		t.Errorf("sorted: %s … %s", sorted[0].Role, sorted[len(sorted)-1].Role)
	}
}
