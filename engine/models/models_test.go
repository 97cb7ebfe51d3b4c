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
	manifest := fmt.Sprintf(`{"files":[{"name":"m.gguf","sha256":"%s","size":"%d"}]}`, sum(body), len(body))
	if want := sum([]byte(manifest)); got.Root != want {
		t.Errorf("root = %s, want sha256(%s) = %s", got.Root, manifest, want)
	}
	if len(got.Files) != 1 || got.Files[0].Size != int64(len(body)) {
		t.Errorf("files = %+v", got.Files)
	}
}

func TestWeightsRootChangesWithAnyByteAndName(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, _ := WeightsRootOf(write("a.gguf", "weights"))
	b, _ := WeightsRootOf(write("b.gguf", "weights"))
	c, _ := WeightsRootOf(write("c.gguf", "weightz"))
	if a.Root == b.Root || a.Root == c.Root {
		t.Errorf("roots collide: %s %s %s", a.Root, b.Root, c.Root)
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
