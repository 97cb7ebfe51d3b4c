// Package docs finds the code blocks of README.md that tests run, so that
// what the README tells users to type is what the tests check.
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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
