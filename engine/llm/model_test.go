package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"boxd/engine/models"
	"boxd/engine/models/testmodels"
)

func TestInspectStories260K(t *testing.T) {
	path := testmodels.Shared(t, "stories260K.gguf")
	info, err := Inspect(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	// Figures from ../shared/models/MANIFEST.md: llama, 5 blocks, embd 64,
	// ctx 2048, all tensors F32, no chat template.
	if info.Architecture != "llama" || info.Layers != 5 || info.EmbeddingSize != 64 || info.ContextLength != 2048 {
		t.Errorf("info = %+v", info)
	}
	// The file has no general.file_type, so llama.cpp derives it from the
	// tensor types and says so.
	if info.Quantisation != "all F32 (guessed)" {
		t.Errorf("quantisation = %q, want all F32 (guessed)", info.Quantisation)
	}
	if info.ChatTemplate != string(models.TemplateNone) {
		t.Errorf("chat template = %q, want none", info.ChatTemplate)
	}
	// 260K parameters in the model's name; llama.cpp counts every tensor.
	if info.Parameters < 250_000 || info.Parameters > 300_000 {
		t.Errorf("parameters = %d, want about 260K", info.Parameters)
	}
	if info.SizeBytes != 1185376 {
		t.Errorf("size = %d", info.SizeBytes)
	}
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fileSum := sha256.Sum256(body)
	if hex.EncodeToString(fileSum[:]) != "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d" {
		t.Fatal("stories260K.gguf differs from the manifest")
	}
	root, _ := models.WeightsRootOf(path)
	if info.WeightsRoot != root.Root || len(info.WeightsRoot) != 64 {
		t.Errorf("weights root = %s, want %s", info.WeightsRoot, root.Root)
	}
}

func TestInspectRejectsNonGGUF(t *testing.T) {
	p := filepath.Join(t.TempDir(), "not.gguf")
	if err := os.WriteFile(p, []byte("this is not a model"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Inspect(context.Background(), p); err == nil {
		t.Fatal("a text file was accepted as a model")
	}
	if _, err := Inspect(context.Background(), filepath.Join(t.TempDir(), "missing.gguf")); err == nil {
		t.Fatal("a missing file was accepted")
	}
}

func TestOpenLoadsAndCancels(t *testing.T) {
	path := testmodels.Shared(t, "stories260K.gguf")
	var last float32
	e, err := Open(context.Background(), EngineOptions{Options: Options{Path: path, ContextLength: 1024, Parallel: 2, Progress: func(p float32) { last = p }}})
	if err != nil {
		t.Fatal(err)
	}
	if last != 1 || e.Info().Architecture != "llama" || e.ContextPerRequest() != 1024 || e.Parallel() != 2 {
		t.Errorf("progress %v info %+v", last, e.Info())
	}
	e.Close()
	e.Close() // twice is safe

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, EngineOptions{Options: Options{Path: path, ContextLength: 512, Parallel: 1}}); !errors.Is(err, ErrCancelled) {
		t.Fatalf("err = %v, want ErrCancelled", err)
	}
}

func sharedModel(t testing.TB, name string) string { return testmodels.Shared(t, name) }
