package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"boxd/internal/platform"
	"boxd/internal/store"
)

// TestKeysLabelControlCharacters: `boxd keys create` refuses a label with
// control characters, naming the field; `boxd keys list` prints a label
// that an older database holds with them quoted (Go escapes), so the
// terminal gets no escape sequence, and the columns stay whole.
func TestKeysLabelControlCharacters(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	cfg := writeConfig(t, "")
	code, out, errOut := runCLI(t, "keys", "create", "--config", cfg, "--state-dir", state, "--label", "ops\x1b]0;pwned\x07")
	if code == 0 || !strings.Contains(errOut, "label") || !strings.Contains(errOut, "non-printable") || strings.Contains(out, "dk_") {
		t.Errorf("create with an escape in the label: %d %q %q", code, out, errOut)
	}

	// A key stored before labels were checked.
	ctx := context.Background()
	st, err := store.Open(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	_, _, limits, d := platform.KeySpec{}.Limits()
	if d != nil {
		t.Fatal(d)
	}
	raw := "old\x1b[2J\x1b[31m\tkey\r\n"
	if _, err := st.CreateKey(ctx, "key_oldlabel", "dk_0123456789abcdef0123456789abcdef", raw, "free", limits, time.Now()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if code, out, errOut = runCLI(t, "keys", "list", "--config", cfg, "--state-dir", state); code != 0 {
		t.Fatalf("list: %d %s", code, errOut)
	}
	if strings.ContainsAny(out, "\x1b\t\r") || !strings.Contains(out, `"old\x1b[2J\x1b[31m\tkey\r\n"`) {
		t.Errorf("list prints the label raw or unquoted:\n%q", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "key_oldlabel ") || !strings.Contains(lines[1], " free ") {
		t.Errorf("list lines:\n%q", out)
	}
}
