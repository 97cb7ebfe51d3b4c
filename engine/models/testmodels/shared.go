// Package testmodels gives tests their model files: the real small models in
// ../shared/models (read in place, never copied into the repository).
package testmodels

import (
	"os"
	"path/filepath"
	"runtime"
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
