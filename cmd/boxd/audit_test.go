package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"boxd/engine/attest"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/audit"
)

// TestAuditRecord: boxd audit record writes a signed fixture of a model
// file to the state directory, which boxd verify checks; a changed answer
// does not verify.
func TestAuditRecord(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	cfg := writeConfig(t, "")
	model := testmodels.Generated(t, testmodels.ChatFile)
	code, out, errOut := runCLI(t, "audit", "record", model, "--config", cfg, "--state-dir", state, "--id", "tiny-chat", "--alias", "tiny,boxd-tiny", "--runs", "2", "--parallel", "1")
	if code != 0 {
		t.Fatalf("record: %d %s %s", code, out, errOut)
	}
	file := filepath.Join(state, "audit", "references", "tiny-chat.json")
	if !strings.Contains(out, file) || !strings.Contains(errOut, "probes") {
		t.Errorf("record output: %s / %s", out, errOut)
	}
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("fixture file: %v %v", st, err)
	}
	code, out, _ = runCLI(t, "verify", file, "--config", cfg, "--state-dir", state)
	if code != 0 || !strings.Contains(out, "verified: audit fixture tiny-chat") {
		t.Errorf("verify: %d %s", code, out)
	}
	raw, _ := os.ReadFile(file)
	i := bytes.Index(raw, []byte(`"text": "`))
	if i < 0 {
		t.Fatal("no text in the fixture")
	}
	changed := append(append(append([]byte{}, raw[:i]...), []byte(`"text": "forged`)...), raw[i+len(`"text": "`):]...)
	bad := filepath.Join(t.TempDir(), "forged.json")
	if err := os.WriteFile(bad, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "verify", bad, "--config", cfg, "--state-dir", state); code == 0 || !strings.Contains(out, "NOT VERIFIED") {
		t.Errorf("a changed fixture verifies: %d %s", code, out)
	}
	// A signed report verifies; one changed does not.
	key, _, err := attest.LoadOrCreateKey(state)
	if err != nil {
		t.Fatal(err)
	}
	rep := &audit.Report{ID: "aud_cli", Format: audit.ReportFormat, Verdict: audit.VerdictDrift, Reasons: []string{"Q4 ≠ F16"}}
	if err := rep.Sign(key); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(rep)
	rp := filepath.Join(t.TempDir(), "report.json")
	_ = os.WriteFile(rp, body, 0o600)
	if code, out, _ := runCLI(t, "verify", rp, "--config", cfg, "--state-dir", state); code != 0 || !strings.Contains(out, "verified: audit report aud_cli, verdict drift") {
		t.Errorf("verify report: %d %s", code, out)
	}
	_ = os.WriteFile(rp, bytes.Replace(body, []byte(`"drift"`), []byte(`"pass"`), 1), 0o600)
	if code, out, _ := runCLI(t, "verify", rp, "--config", cfg, "--state-dir", state); code == 0 || !strings.Contains(out, "NOT VERIFIED") {
		t.Errorf("a changed report: %d %s", code, out)
	}
	if code, _, errOut := runCLI(t, "audit", "record", filepath.Join(t.TempDir(), "none.gguf"), "--config", cfg, "--state-dir", state); code != 2 || !strings.Contains(errOut, "none.gguf") {
		t.Errorf("a missing model: %d %s", code, errOut)
	}
}
