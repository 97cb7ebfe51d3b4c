package configedit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"boxd/configs"
)

// TestUseSplicesThePackagedConfig: setting the model keys in the packaged
// boxd.yaml changes only those values' bytes; every comment and blank line
// stays.
func TestUseSplicesThePackagedConfig(t *testing.T) {
	src := configs.DefaultYAML
	kvs := []KV{
		{"models.llm.path", "/var/lib/boxd/models/gemma-3-4b-it-Q4_K_M.gguf"},
		{"models.llm.projector", "/var/lib/boxd/models/gemma-3-4b-it-mmproj-f16.gguf"},
		{"models.llm.template", "auto"},
		{"models.asr.path", `/srv/with "quotes" \ and é.gguf`},
	}
	out, err := Set(src, kvs...)
	if err != nil {
		t.Fatal(err)
	}
	a, b := strings.Split(string(src), "\n"), strings.Split(string(out), "\n")
	if len(a) != len(b) {
		t.Fatalf("lines %d -> %d", len(a), len(b))
	}
	changed := 0
	for i := range a {
		if a[i] != b[i] {
			changed++
			if !strings.Contains(b[i], "path: ") && !strings.Contains(b[i], "projector: ") && !strings.Contains(b[i], "template: ") {
				t.Errorf("line %d changed: %q -> %q", i+1, a[i], b[i])
			}
		}
	}
	if changed != 3 { // template was "auto" already
		t.Errorf("%d lines changed, want 3", changed)
	}
	for _, kv := range kvs {
		if v, ok, err := Get(out, kv.Key); err != nil || !ok || v != kv.Value {
			t.Errorf("%s = %q %v %v", kv.Key, v, ok, err)
		}
	}
	// The file still loads, with the values.
	p := filepath.Join(t.TempDir(), "boxd.yaml")
	model := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(model, []byte("GGUF"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = Set(out, KV{"models.llm.path", model}, KV{"models.llm.projector", model}, KV{"models.asr.path", ""})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := configs.Load(flagsFor(t, p))
	if err != nil {
		t.Fatal(err)
	}
	if c.Models.LLM.Path != model || c.Models.LLM.Projector != model {
		t.Errorf("loaded %+v", c.Models.LLM)
	}
}

func TestUseEditsEveryShape(t *testing.T) {
	cases := []struct {
		name, src, key, value, want string
	}{
		{"plain with comment", "models:\n  llm:\n    path: /a/b.gguf # the model\n", "models.llm.path", "/c.gguf", "models:\n  llm:\n    path: \"/c.gguf\" # the model\n"},
		{"single quoted", "models:\n  llm:\n    path: 'it''s.gguf'\n    id: x\n", "models.llm.path", "/c.gguf", "models:\n  llm:\n    path: \"/c.gguf\"\n    id: x\n"},
		{"double quoted escape", "models:\n  llm:\n    path: \"a\\\"b\"\n", "models.llm.path", "n", "models:\n  llm:\n    path: \"n\"\n"},
		{"unicode before", "# é café\nmodels: {}\nx:\n  é: 1\n  k: \"v\"\n", "x.k", "w", "# é café\nmodels: {}\nx:\n  é: 1\n  k: \"w\"\n"},
		{"crlf-free keys after", "models:\n  asr:\n    path: \"\"\n  vad:\n    path: \"\"\n", "models.vad.path", "/v.bin", "models:\n  asr:\n    path: \"\"\n  vad:\n    path: \"/v.bin\"\n"},
	}
	for _, c := range cases {
		out, err := Set([]byte(c.src), KV{c.key, c.value})
		if err != nil || string(out) != c.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", c.name, err, out, c.want)
		}
	}

	// Keys the file lacks are added; comments stay.
	for _, c := range []struct{ name, src, key string }{
		{"empty file", "", "models.llm.path"},
		{"missing group", "# mine\nlisten: \"127.0.0.1:8445\" # port\n", "models.llm.path"},
		{"missing key", "models:\n  # chat\n  llm:\n    id: m\n", "models.llm.projector"},
		{"null value", "models:\n  llm:\n    path:\n", "models.llm.path"},
		{"flow mapping", "models: {llm: {path: /a}}\n", "models.llm.path"},
		{"literal block", "models:\n  llm:\n    path: |\n      /a\n", "models.llm.path"},
	} {
		out, err := Set([]byte(c.src), KV{c.key, "/x y.gguf"})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if v, ok, _ := Get(out, c.key); !ok || v != "/x y.gguf" {
			t.Errorf("%s: %q", c.name, out)
		}
		for _, l := range strings.Split(c.src, "\n") {
			if i := strings.Index(l, "#"); i >= 0 && !strings.Contains(string(out), l[i:]) {
				t.Errorf("%s: comment %q lost:\n%s", c.name, l[i:], out)
			}
		}
	}

	for _, c := range []struct{ src, key, want string }{
		{"models: foo\n", "models.llm.path", "models is written as a value"},
		{"models:\n  llm:\n    path:\n      x: 1\n", "models.llm.path", "is a group of settings"},
		{"- a\n", "models.llm.path", "not a YAML mapping"},
		{"models: [\n", "models.llm.path", "not valid YAML"},
	} {
		if _, err := Set([]byte(c.src), KV{c.key, "v"}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
	}
}

func TestUseWriteFileKeepsMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "boxd.yaml")
	if err := os.WriteFile(p, []byte("a: 1\n"), 0o604); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o604); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("a: 2\n")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o604 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
	if b, _ := os.ReadFile(p); string(b) != "a: 2\n" {
		t.Errorf("content %q", b)
	}
	n := filepath.Join(t.TempDir(), "new.yaml")
	if err := WriteFile(n, []byte("a: 1\n")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(n); st.Mode().Perm() != 0o640 {
		t.Errorf("new file mode %v", st.Mode())
	}
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "dir.yaml"), nil); err == nil {
		t.Error("wrote into a missing folder")
	}
}

func flagsFor(t *testing.T, file string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("use", pflag.ContinueOnError)
	configs.RegisterFileFlags(fs)
	if err := fs.Parse([]string{"--config", file}); err != nil {
		t.Fatal(err)
	}
	return fs
}
