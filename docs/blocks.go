// Package docs finds the code blocks of README.md that tests run, so that
// what the README tells users to type is what the tests check.
package docs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// README is the path of the repository's README.md.
func README() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "README.md")
}

// Block returns the fenced code block of language lang in the file at path
// whose first line starts with head (its "# name.py" comment).
func Block(path, lang, head string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	rest := string(b)
	for {
		i := strings.Index(rest, "```"+lang+"\n")
		if i < 0 {
			return "", fmt.Errorf("%s: no ```%s block starting with %q", path, lang, head)
		}
		rest = rest[i+len("```"+lang+"\n"):]
		end := strings.Index(rest, "\n```")
		if end < 0 {
			return "", fmt.Errorf("%s: an unclosed ```%s block", path, lang)
		}
		if strings.HasPrefix(rest, head) {
			return rest[:end+1], nil
		}
	}
}

// PythonScript writes README's ```python block that starts with head to a
// file in a temporary directory and returns python3 and the file. Without
// python3, or without one of modules, the test is skipped, or fails under
// CI=true (make deps installs them).
func PythonScript(tb testing.TB, head string, modules ...string) (python, script string) {
	tb.Helper()
	code, err := Block(README(), "python", head)
	if err != nil {
		tb.Fatal(err)
	}
	python, err = exec.LookPath("python3")
	for _, mod := range modules {
		if err == nil {
			err = exec.Command(python, "-c", "import "+mod).Run()
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("python3 or %v is missing (make deps installs them): %v", modules, err)
		}
		tb.Skipf("python3 or %v is missing; run make deps", modules)
	}
	script = filepath.Join(tb.TempDir(), "snippet.py")
	if err := os.WriteFile(script, []byte(code), 0o600); err != nil {
		tb.Fatal(err)
	}
	return python, script
}
