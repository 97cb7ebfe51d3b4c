package verify

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"boxd/cmd/boxd/cli"
	"boxd/engine/attest"
)

func TestVerifyCommand(t *testing.T) {
	state := t.TempDir()
	key, _, err := attest.LoadOrCreateKey(state)
	if err != nil {
		t.Fatal(err)
	}
	b := attest.NewRecord("test", "rec_1", nil)
	b.AddText("input", "hello", nil)
	b.AddText("output", "world", map[string]any{"k": "v"})
	rec, _ := b.Sign(key, time.Now())
	raw, _ := json.Marshal(rec)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	wrapped := filepath.Join(dir, "wrapped.json")
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(good, raw, 0o600)
	w, _ := json.Marshal(map[string]json.RawMessage{"record": raw})
	_ = os.WriteFile(wrapped, w, 0o600)
	_ = os.WriteFile(bad, bytes.Replace(raw, []byte(`"world"`), []byte(`"World"`), 1), 0o600)
	cfg := writeConfig(t, "")

	if code, out, _ := runCLI(t, "verify", good, "--pubkey", key.PublicKeyHex()); code != 0 || !strings.Contains(out, "verified: 2 entries") {
		t.Errorf("good with --pubkey: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "verify", wrapped, "--config", cfg, "--state-dir", state); code != 0 {
		t.Errorf("wrapped with the state dir's key: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "verify", bad, "--pubkey", key.PublicKeyHex()); code != 1 || !strings.Contains(out, "NOT VERIFIED: chain: entry 2: text changed") {
		t.Errorf("tampered: %d %s", code, out)
	}
	other, _, _ := attest.LoadOrCreateKey(t.TempDir())
	if code, out, _ := runCLI(t, "verify", good, "--pubkey", other.PublicKeyHex()); code != 1 || !strings.Contains(out, "not by the trusted key") {
		t.Errorf("other signer: %d %s", code, out)
	}
	if code, _, errOut := runCLI(t, "verify", good, "--pubkey", "xyz"); code != cli.ExitConfig || !strings.Contains(errOut, "64 hex") {
		t.Errorf("bad --pubkey: %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "verify", good, "--config", cfg, "--state-dir", t.TempDir()); code != cli.ExitConfig || !strings.Contains(errOut, "give --pubkey") {
		t.Errorf("no key anywhere: %d %s", code, errOut)
	}
}

// TestVerifyReceiptCommand: boxd verify takes model-call receipts, alone or
// as GET /receipts/{id} answers them, and fails a changed field, an added
// one, a number written for a string, and another signer.
func TestVerifyReceiptCommand(t *testing.T) {
	state := t.TempDir()
	key, _, err := attest.LoadOrCreateKey(state)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := attest.IssueModelCall(key, attest.ModelCall{ID: "chatcmpl-1", Model: "model-27b", WeightsRoot: strings.Repeat("ab", 32),
		RequestHash: strings.Repeat("cd", 32), OutputHash: attest.HashText("Hello"), Params: map[string]string{"max_tokens": "8"},
		Usage: attest.NewUsage(5, 3), Created: "1795651871"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(signed)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	body, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "status": "attested", "receipt": json.RawMessage(raw)})
	pub := key.PublicKeyHex()
	other, _, _ := attest.LoadOrCreateKey(t.TempDir())
	for _, tc := range []struct {
		name, file, pub string
		code            int
		want            string
	}{
		{"receipt", write("r.json", raw), pub, 0, "verified: receipt chatcmpl-1 (model-27b"},
		{"GET /receipts body", write("body.json", body), pub, 0, "verified: receipt chatcmpl-1"},
		{"state dir key", write("r2.json", raw), "", 0, "signed by " + key.ID()},
		{"changed output hash", write("changed.json", bytes.Replace(raw, []byte(attest.HashText("Hello")), []byte(attest.HashText("Hellp")), 1)), pub, 1, "NOT VERIFIED: commitment"},
		{"added field", write("added.json", bytes.Replace(raw, []byte(`{"format"`), []byte(`{"extra":"x","format"`), 1)), pub, 1, "NOT VERIFIED: the receipt cannot be read"},
		{"number for a string", write("number.json", bytes.Replace(raw, []byte(`"created":"1795651871"`), []byte(`"created":1795651871`), 1)), pub, 1, "NOT VERIFIED"},
		{"other signer", write("r3.json", raw), other.PublicKeyHex(), 1, "NOT VERIFIED: key_pinned"},
	} {
		args := []string{"verify", tc.file, "--config", writeConfig(t, ""), "--state-dir", state}
		if tc.pub != "" {
			args = append(args, "--pubkey", tc.pub)
		}
		if code, out, errOut := runCLI(t, args...); code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: %d %s %s", tc.name, code, out, errOut)
		}
	}
}
