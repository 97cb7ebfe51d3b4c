// Package testmodels gives tests their model files: the real small models in
// ../shared/models (read in place, never copied into the repository).
package testmodels

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// SharedDir is the directory of the shared test models: $BOXD_TEST_MODELS,
// else ../shared/models beside the repository.
func SharedDir() string {
	if d := os.Getenv("BOXD_TEST_MODELS"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	// file is <repo>/engine/models/testmodels/shared.go
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "models")
}

// Shared returns the path of a shared model file. When it is missing the test
// fails under CI=true and is skipped elsewhere.
func Shared(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(SharedDir(), name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("test model %s is missing (CI=true): %v", name, err)
		}
		tb.Skipf("test model %s not available: %v", name, err)
	}
	return p
}

func isWhisper(name string) bool {
	switch name {
	case WhisperBin, WhisperGGUF, WhisperF16Bin, WhisperF16GGUF, WhisperENGGUF, WhisperMicroGGUF, WhisperMicroV3GGUF:
		return true
	}
	return false
}

// generatorVersion names the generated-model cache; bump it when the
// generator's output changes.
const generatorVersion = "v6" // v6: boxd.random_weights

var generateMu sync.Mutex

// GeneratedDir is where Generated writes the tiny models: one directory per
// generator version under the system temp dir, shared by test processes.
func GeneratedDir() string {
	return filepath.Join(os.TempDir(), "boxd-testmodels-"+generatorVersion)
}

// Generated returns the path of a generated test model (ChatFile,
// EmbedFile, RerankFile, TemplateFile(...)), writing the set on first use.
// Generation is deterministic, so concurrent test processes write the same
// bytes (each through its own temporary file).
func Generated(tb testing.TB, name string) string {
	tb.Helper()
	generateMu.Lock()
	defer generateMu.Unlock()
	p := filepath.Join(GeneratedDir(), name)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if isWhisper(name) {
		// They build on the shared vocabulary files (skip or fail as Shared does).
		Shared(tb, "whisper-vocab-tiny.bin")
		Shared(tb, "whisper-vocab-tiny.en.bin")
		if _, err := MakeWhisper(SharedDir(), GeneratedDir()); err != nil {
			tb.Fatalf("generate Whisper test models: %v", err)
		}
	} else if _, err := MakeAll(GeneratedDir(), name == BenchFile); err != nil {
		tb.Fatalf("generate test models: %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("generated models lack %s", name)
	}
	return p
}

// EnvInt reads a whole-number benchmark setting from the environment
// (BOXD_BENCH_*), def when unset; anything else fails the benchmark.
func EnvInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		tb.Fatalf("%s=%q: want a whole number", name, v)
	}
	return n
}
