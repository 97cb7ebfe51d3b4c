package models

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"boxd/docs"
)

// TestReadmeWeightsRootSnippet runs README's weights_root.py on a model
// split in three parts under names of its own and on a single file: it
// prints the root boxd computes.
func TestReadmeWeightsRootSnippet(t *testing.T) {
	python, script := docs.PythonScript(t, "# weights_root.py")
	dir := t.TempDir()
	var parts []string
	for i := 1; i <= 3; i++ {
		p := filepath.Join(dir, fmt.Sprintf("published-%05d-of-00003.gguf", i))
		if err := os.WriteFile(p, []byte(strings.Repeat(fmt.Sprint(i), 1000+i)), 0o600); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	for _, files := range [][]string{parts, parts[:1]} {
		// The snippet hashes the files as given; boxd names them by place.
		args := append([]string{script}, files...)
		out, err := exec.Command(python, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("weights_root.py: %v\n%s", err, out)
		}
		var want WeightsRoot
		if len(files) == 3 {
			want, err = WeightsRootOf(files[1])
		} else {
			single := filepath.Join(dir, "renamed.gguf")
			_ = os.Link(files[0], single)
			want, err = WeightsRootOf(single)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out)); got != want.Root {
			t.Errorf("%d files: README's snippet says %s, boxd %s", len(files), got, want.Root)
		}
	}
}
