package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"boxd/engine/attest"
	runpkg "boxd/internal/run"
	"boxd/pipelines/llmcall/llmcalltest"
	"boxd/pipelines/migration"
)

type keySigner struct{ k *attest.Key }

func (s keySigner) Issue(_ context.Context, mc attest.ModelCall, _ string) (attest.SignedModelCall, error) {
	return attest.IssueModelCall(s.k, mc)
}

type discard struct{}

func (discard) Emit(string, any)     {}
func (discard) End(string, any) bool { return true }

// TestVerifyMigration: boxd verify checks a migration check's answer and
// its record offline (chain, receipts, every figure recomputed); a record
// with a figure changed does not verify.
func TestVerifyMigration(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	cfg := writeConfig(t, "")
	key, _, err := attest.LoadOrCreateKey(state)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := llmcalltest.Tiny(t, false)
	m.Receipts, m.ModelID = keySigner{key}, "tiny-chat"
	svc := &migration.Service{Key: key, Candidates: []migration.Candidate{{ID: "tiny-chat", Model: m}}, Judge: m, Prices: migration.ShippedPrices()}
	req := migration.Samples()[0].Body
	if err := svc.Validate(&req); err != nil {
		t.Fatal(err)
	}
	rep, err := svc.Run(context.Background(), req, runpkg.Env{Events: discard{}, Budget: &llmcalltest.Budget{}})
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := json.Marshal(rep)
	record, _ := json.Marshal(rep.Report)
	dir := t.TempDir()
	for name, body := range map[string][]byte{"answer.json": answer, "record.json": record} {
		p := filepath.Join(dir, name)
		_ = os.WriteFile(p, body, 0o600)
		if code, out, errOut := runCLI(t, "verify", p, "--config", cfg, "--state-dir", state); code != 0 || !strings.Contains(out, "verified: migration check") || !strings.Contains(out, "ok  recompute") {
			t.Errorf("%s: %d %s %s", name, code, out, errOut)
		}
	}
	changed := bytes.Replace(record, []byte(`"bootstrap_same_verdict":"`), []byte(`"bootstrap_same_verdict":"0.0`), 1)
	p := filepath.Join(dir, "changed.json")
	_ = os.WriteFile(p, changed, 0o600)
	if code, out, _ := runCLI(t, "verify", p, "--config", cfg, "--state-dir", state); code == 0 || !strings.Contains(out, "NOT VERIFIED") {
		t.Errorf("a changed record verifies: %d %s", code, out)
	}
}
