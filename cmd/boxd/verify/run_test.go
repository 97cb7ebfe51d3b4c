package verify

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"boxd/cmd/boxd/cli"
)

// runCLI runs boxd ARGS, with this package's command under the root boxd
// builds, and returns the exit status, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	root := cli.NewRoot(&out, &errb)
	root.AddCommand(New())
	code := cli.Execute(context.Background(), root, args, &errb)
	return code, out.String(), errb.String()
}

// writeConfig writes a config file holding body.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "boxd.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
