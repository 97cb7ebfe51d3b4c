package main

import (
	"slices"
	"testing"

	"boxd/configs"
)

// TestModelAliases: models.llm.aliases, then the file's own name without
// .gguf; the id itself and repeats left out.
func TestModelAliases(t *testing.T) {
	for _, tc := range []struct {
		path    string
		aliases []string
		want    []string
	}{
		{"/m/gemma-3-4b-it-Q4_K_M.gguf", nil, []string{"gemma-3-4b-it-Q4_K_M"}},
		{"/m/tiny.gguf", []string{"llama3.2", "tiny", "model-27b"}, []string{"llama3.2", "tiny"}},
		{"/m/model-27b.gguf", nil, nil},
	} {
		cfg := configs.Defaults()
		cfg.Models.LLM.Path, cfg.Models.LLM.Aliases = tc.path, tc.aliases
		if got := modelAliases(cfg); !slices.Equal(got, tc.want) {
			t.Errorf("%s %v: %v, want %v", tc.path, tc.aliases, got, tc.want)
		}
	}
}
