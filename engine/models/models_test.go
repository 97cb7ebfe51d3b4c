package models

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestWeightsRootSingleFile(t *testing.T) {
	dir := t.TempDir()
	body := []byte("GGUF fake weights")
	p := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(p, body, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := WeightsRootOf(p)
	if err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`{"files":[{"name":"00001-of-00001","sha256":"%s","size":"%d"}]}`, sum(body), len(body))
	if want := sum([]byte(manifest)); got.Root != want {
		t.Errorf("root = %s, want sha256(%s) = %s", got.Root, manifest, want)
	}
	if len(got.Files) != 1 || got.Files[0].Size != int64(len(body)) {
		t.Errorf("files = %+v", got.Files)
	}
}

// TestWeightsRootIdentifiesTheWeights: the same bytes under any file name
// have one root; any other byte gives another.
func TestWeightsRootIdentifiesTheWeights(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, _ := WeightsRootOf(write("a.gguf", "weights"))
	b, _ := WeightsRootOf(write("model-q4.gguf", "weights"))
	c, _ := WeightsRootOf(write("renamed-00001-of-00001.gguf", "weights"))
	d, _ := WeightsRootOf(write("d.gguf", "weightz"))
	if a.Root != b.Root || a.Root != c.Root {
		t.Errorf("the same weights under three names have roots %s %s %s", a.Root, b.Root, c.Root)
	}
	if a.Root == d.Root {
		t.Errorf("different weights share the root %s", a.Root)
	}
}

func TestWeightsRootCoversEverySplit(t *testing.T) {
	dir := t.TempDir()
	var files []ManifestFile
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("big-%05d-of-00003.gguf", i)
		body := []byte(fmt.Sprintf("part %d", i))
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, ManifestFile{Name: name, Size: int64(len(body)), SHA256: sum(body)})
	}
	got, err := WeightsRootOf(filepath.Join(dir, "big-00002-of-00003.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := RootOf(files)
	if got.Root != want.Root || len(got.Files) != 3 {
		t.Errorf("split root = %+v, want %+v", got, want)
	}
	// Recomputed by hand: parts named by their place, in order.
	manifest := `{"files":[`
	for i, f := range files {
		if i > 0 {
			manifest += ","
		}
		manifest += fmt.Sprintf(`{"name":"%05d-of-00003","sha256":"%s","size":"%d"}`, i+1, f.SHA256, f.Size)
	}
	if manifest += `]}`; got.Root != sum([]byte(manifest)) {
		t.Errorf("split root = %s, want sha256(%s)", got.Root, manifest)
	}
	// The same parts under another base name: the same root.
	for i := 1; i <= 3; i++ {
		if err := os.Link(filepath.Join(dir, fmt.Sprintf("big-%05d-of-00003.gguf", i)), filepath.Join(dir, fmt.Sprintf("other-%05d-of-00003.gguf", i))); err != nil {
			t.Fatal(err)
		}
	}
	if other, err := WeightsRootOf(filepath.Join(dir, "other-00001-of-00003.gguf")); err != nil || other.Root != got.Root {
		t.Errorf("renamed split root = %v %v, want %s", other.Root, err, got.Root)
	}
	if err := os.Remove(filepath.Join(dir, "big-00003-of-00003.gguf")); err != nil {
		t.Fatal(err)
	}
	if _, err := WeightsRootOf(filepath.Join(dir, "big-00001-of-00003.gguf")); err == nil {
		t.Error("a missing split must be an error")
	}
}

func TestDetectTemplate(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want Template
	}{
		{"gemma 3", "{{ bos_token }}{% for message in messages %}<start_of_turn>{{ role }}\n{{ message['content'] | trim }}<end_of_turn>\n{% endfor %}", TemplateGemma},
		{"llama 3", "{% for message in messages %}<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n{{ message['content'] }}<|eot_id|>{% endfor %}", TemplateLlama3},
		{"qwen chatml", "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n{% endfor %}", TemplateChatML},
		{"mistral", "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}[INST] {{ message['content'] }} [/INST]{% endif %}{% endfor %}", TemplateMistral},
		{"absent", "", TemplateNone},
		{"something else", "{% for m in messages %}### {{ m.role }}: {{ m.content }}{% endfor %}", TemplateUnknown},
	}
	for _, tc := range cases {
		if got := DetectTemplate(tc.src); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}
