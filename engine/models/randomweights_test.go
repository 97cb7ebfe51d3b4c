package models_test

import (
	"testing"

	"boxd/engine/models"
	"boxd/engine/models/testmodels"
)

// TestHasRandomWeights: every generated test model is marked (chat,
// embedder, reranker, projector, Whisper), a real model is not, and a
// file that is not GGUF is an error.
func TestHasRandomWeights(t *testing.T) {
	for _, name := range []string{testmodels.ChatFile, testmodels.EmbedFile, testmodels.RerankFile, testmodels.VisionFile, testmodels.WhisperMicroGGUF} {
		if ok, err := models.HasRandomWeights(testmodels.Generated(t, name)); err != nil || !ok {
			t.Errorf("%s: %v %v, want marked", name, ok, err)
		}
	}
	if ok, err := models.HasRandomWeights(testmodels.Shared(t, "stories260K.gguf")); err != nil || ok {
		t.Errorf("stories260K.gguf: %v %v, want not marked", ok, err)
	}
	if _, err := models.HasRandomWeights(testmodels.Shared(t, "ggml-silero-v6.2.0.bin")); err == nil {
		t.Error("a whisper.cpp .bin read as GGUF")
	}
}
