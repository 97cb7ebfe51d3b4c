package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"boxd/engine/attest"
	"boxd/engine/models/testmodels"
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

// TestServeLoadsMigrationCandidates: a candidate registered in
// migration.candidates is loaded at start beside the chat model and is a
// candidate in GET /migration/info (the chat model first, the default),
// and migration.judge may name it.
func TestServeLoadsMigrationCandidates(t *testing.T) {
	ns := newNotifySocket(t)
	cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path}, serveArgs(t,
		"--models-llm-path", testmodels.Shared(t, "stories260K.gguf"), "--models-llm-template", "mistral",
		"--migration-candidates", "tiny-b|"+testmodels.Generated(t, testmodels.ChatFile), "--migration-judge", "tiny-b",
		"--migration-hour-cost", "0.85", "--audit-record-at-start=false")...)
	ns.watch(t, cmd)
	ready := ns.waitFor(t, "READY=1", 60*time.Second)
	addr := strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):])
	resp, err := http.Get("http://" + addr + "/migration/info")
	if err != nil {
		t.Fatal(err)
	}
	var info migration.Info
	_ = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if len(info.Candidates) != 2 || !info.Candidates[0].Default || info.Candidates[0].File != "stories260K.gguf" || info.Candidates[1].ID != "tiny-b" ||
		!info.Candidates[1].Ready || len(info.Candidates[1].WeightsRoot) != 64 || info.Judge.Model != "tiny-b" || info.HourCost != "0.85" {
		t.Errorf("info: %+v", info)
	}
}
