package models

import (
	"fmt"

	"boxd/engine/models/gguf"
)

// RandomWeightsKey marks a GGUF whose weights are random, written by
// `boxd models make-test-models` for tests and the quick start: it loads
// and runs like a real model of its shape, and what it says is noise.
const RandomWeightsKey = "boxd.random_weights"

// HasRandomWeights reports whether the GGUF at path is marked as having
// random weights (RandomWeightsKey true). A file that is not GGUF (a
// whisper.cpp .bin, Silero's VAD) is not marked.
func HasRandomWeights(path string) (bool, error) {
	f, err := gguf.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("models: %s: %w", path, err)
	}
	v, ok := f.Get(RandomWeightsKey)
	b, isBool := v.(bool)
	return ok && isBool && b, nil
}
