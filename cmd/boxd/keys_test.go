package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"boxd/internal/store"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestKeysCommands(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	cfg := writeConfig(t, "")
	code, out, errOut := runCLI(t, "keys", "create", "--config", cfg, "--state-dir", state, "--label", "ops", "--verticals", "clinical, code", "--daily-llm-tokens", "1000")
	if code != 0 {
		t.Fatalf("create: %d %s", code, errOut)
	}
	var created map[string]any
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatal(err)
	}
	key, id := created["key"].(string), created["key_id"].(string)
	if !strings.HasPrefix(key, "dk_") || !strings.Contains(errOut, "shown once") {
		t.Errorf("create output: %s / %s", out, errOut)
	}
	if l := created["limits"].(map[string]any); l["daily_llm_tokens"] != 1000.0 || len(l["verticals"].([]any)) != 2 {
		t.Errorf("limits = %v", l)
	}

	code, out, _ = runCLI(t, "keys", "show", id, "--config", cfg, "--state-dir", state)
	if code != 0 || strings.Contains(out, key) || !strings.Contains(out, `"history"`) {
		t.Errorf("show: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "keys", "list", "--config", cfg, "--state-dir", state)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "ops") {
		t.Errorf("list: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "keys", "revoke", id, "--config", cfg, "--state-dir", state)
	if code != 0 || !strings.Contains(out, `"revoked": true`) {
		t.Errorf("revoke: %d %s", code, out)
	}
	if code, _, errOut := runCLI(t, "keys", "show", "key_missing", "--config", cfg, "--state-dir", state); code == 0 || !strings.Contains(errOut, "no developer key") {
		t.Errorf("show unknown: %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "keys", "create", "--config", cfg, "--state-dir", state, "--daily-llm-tokens", "9000000"); code == 0 || !strings.Contains(errOut, "use 0 to 5000000") {
		t.Errorf("create over the cap: %d %s", code, errOut)
	}
}

// The CLI works on the store while the daemon runs; the daemon sees its
// changes at once.
func TestKeysCommandsWithDaemonRunning(t *testing.T) {
	const secret = "admin-secret-0123456789abcdef"
	state := filepath.Join(t.TempDir(), "state")
	ns := newNotifySocket(t)
	cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path, "BOXD_ADMIN_SECRET=" + secret},
		"serve", "--config", writeConfig(t, ""), "--state-dir", state, "--listen", "127.0.0.1:0")
	exited := ns.watch(t, cmd)
	ready := ns.waitFor(t, "READY=1", 30*time.Second)
	addr := strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):])

	code, out, errOut := runCLI(t, "keys", "create", "--config", writeConfig(t, ""), "--state-dir", state)
	if code != 0 {
		t.Fatalf("create while the daemon runs: %s", errOut)
	}
	var created map[string]any
	_ = json.Unmarshal([]byte(out), &created)
	id := created["key_id"].(string)

	get := func() map[string]any {
		req, _ := http.NewRequest("GET", "http://"+addr+"/v1/keys/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		if resp.StatusCode != 200 {
			t.Fatalf("daemon GET: %d %v", resp.StatusCode, m)
		}
		return m
	}
	if get()["revoked"] != false {
		t.Fatal("daemon does not see the new key")
	}
	if code, _, errOut := runCLI(t, "keys", "revoke", id, "--config", writeConfig(t, ""), "--state-dir", state); code != 0 {
		t.Fatalf("revoke while the daemon runs: %s", errOut)
	}
	if get()["revoked"] != true {
		t.Error("daemon does not see the revocation")
	}
	ns.exited = nil
	_ = cmd.Process.Signal(syscall.SIGTERM)
	<-exited
}

// TestKeysNeedABoxState: keys list, show and revoke where no box has run
// (a clone, a wrong --state-dir) exit 2 saying so and create nothing;
// keys create makes the store and says where.
func TestKeysNeedABoxState(t *testing.T) {
	cfg := writeConfig(t, "")
	state := filepath.Join(t.TempDir(), "state")
	for _, args := range [][]string{{"keys", "list"}, {"keys", "show", "key_x"}, {"keys", "revoke", "key_x"}} {
		code, _, errOut := runCLI(t, append(args, "--config", cfg, "--state-dir", state)...)
		if code != exitConfig || !strings.Contains(errOut, "holds no boxd state (no boxd.db)") || !strings.Contains(errOut, "--state-dir") {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
		if _, err := os.Stat(filepath.Join(state, store.File)); !os.IsNotExist(err) {
			t.Fatalf("%v made %s (%v)", args, store.File, err)
		}
	}
	code, _, errOut := runCLI(t, "keys", "create", "--config", cfg, "--state-dir", state)
	if code != 0 || !strings.Contains(errOut, "creating boxd.db") {
		t.Errorf("keys create on a new state_dir: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "keys", "list", "--config", cfg, "--state-dir", state); code != 0 {
		t.Errorf("keys list after create: exit %d: %s", code, errOut)
	}
}
