package models

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"boxd/engine/models"
	"boxd/engine/models/testmodels"
)

// TestModelsPullListVerify: a model pulled from a loopback mirror lands in
// the state directory checked, list shows it with the remembered root
// without reading it, verify reads it in full and reports corruption.
func TestModelsPullListVerify(t *testing.T) {
	blob, err := os.ReadFile(testmodels.Generated(t, testmodels.ChatFile))
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(blob)
	sum := hex.EncodeToString(s[:])
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		http.ServeContent(w, r, "chat.gguf", time.Time{}, bytes.NewReader(blob))
	}))
	defer srv.Close()
	state := filepath.Join(t.TempDir(), "state")
	empty := writeConfig(t, "")
	url := srv.URL + "/mirror/chat.gguf?sig=abc"

	code, out, errOut := runCLI(t, "models", "pull", url, "--sha256", sum, "--state-dir", state, "--config", empty, "--header", "Authorization: Bearer mirror-token")
	if code != 0 {
		t.Fatalf("pull: %d %s", code, errOut)
	}
	dest := filepath.Join(state, "models", "chat.gguf")
	got, err := os.ReadFile(dest)
	if err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("pulled file: %v", err)
	}
	root, _ := models.WeightsRootOf(dest)
	for _, want := range []string{dest, sum + " (checked)", "weights root  " + root.Root, "set the role's models.*.path"} {
		if !strings.Contains(out, want) {
			t.Errorf("pull output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "pull: 100%") || len(auth) == 0 || auth[0] != "Bearer mirror-token" {
		t.Errorf("progress %q, auth %q", errOut, auth)
	}

	// Refusals.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"models", "pull", url}, "--sha256 must be the file's 64-character hex SHA-256"},
		{[]string{"models", "pull", "llama3.2"}, `"llama3.2" is not a model in boxd's catalogue; did you mean llama-3.2-3b-instruct?`},
		{[]string{"models", "pull", "ftp:/mirror/m.gguf"}, "is not a model in boxd's catalogue"},
		{[]string{"models", "pull", "ftp://mirror/m.gguf", "--sha256", sum}, "is not a URL"},
		{[]string{"models", "pull", url, "--sha256", sum}, "exists: pass --force"},
		{[]string{"models", "pull", url, filepath.Join(state, "x.gguf"), "--sha256", strings.Repeat("ab", 32)}, "sha256 mismatch"},
		{[]string{"models", "pull", url, filepath.Join(state, "y.gguf"), "--sha256", sum, "--header", "Authorization Bearer secret-value"}, "write it as 'Name: value'"},
		{[]string{"models", "pull", srv.URL + "/", "--sha256", sum}, "names no file"},
	} {
		args := append(c.args, "--state-dir", state, "--config", empty)
		code, _, errOut := runCLI(t, args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errOut, c.want)
		}
		if strings.Contains(errOut, "secret-value") || strings.Contains(errOut, "sig=abc") {
			t.Errorf("%v: the error repeats a credential: %s", c.args, errOut)
		}
	}

	// list: the model is there and its root is known without reading it:
	// with a planted hash in the cache, list shows the root of that hash
	// (a list that read the file would show the real one).
	cacheFile := filepath.Join(state, models.HashCacheFile)
	goodCache, err := os.ReadFile(cacheFile)
	if err != nil {
		t.Fatal(err)
	}
	planted := strings.Repeat("d", 64)
	if err := os.WriteFile(cacheFile, bytes.ReplaceAll(goodCache, []byte(sum), []byte(planted)), 0o600); err != nil {
		t.Fatal(err)
	}
	plantedRoot, _ := models.RootOf([]models.ManifestFile{{Name: "chat.gguf", Size: int64(len(blob)), SHA256: planted}})
	cfg := writeConfig(t, "models:\n  llm:\n    path: "+dest+"\n")
	code, out, errOut = runCLI(t, "models", "list", "--json", "--state-dir", state, "--config", cfg)
	if code != 0 {
		t.Fatalf("list: %d %s", code, errOut)
	}
	if err := os.WriteFile(cacheFile, goodCache, 0o600); err != nil {
		t.Fatal(err)
	}
	var listing struct {
		Configured []struct {
			Role, Key, Path, Status string
			Bytes                   int64
			WeightsRoot             string `json:"weights_root"`
		}
	}
	if err := json.Unmarshal([]byte(out), &listing); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	rows := listing.Configured
	if len(rows) != 8 || rows[0].Role != "llm" || rows[0].Status != "present" || rows[0].Bytes != int64(len(blob)) || rows[0].WeightsRoot != plantedRoot.Root || rows[0].Key != "models.llm.path" {
		t.Errorf("list: %+v (want the remembered root %s, without reading the file)", rows, plantedRoot.Root)
	}
	if rows[1].Role != "projector" || rows[1].Status != "not set" || rows[2].Role != "asr" || rows[2].Status != "not set" {
		t.Errorf("list projector, asr: %+v %+v", rows[1], rows[2])
	}

	// verify: everything configured, in full.
	code, out, _ = runCLI(t, "models", "verify", "--state-dir", state, "--config", cfg)
	if code != 0 || !strings.Contains(out, "OK      llm  "+dest) || !strings.Contains(out, root.Root) {
		t.Fatalf("verify: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "models", "verify", dest, "--sha256", sum, "--state-dir", state, "--config", empty)
	if code != 0 || !strings.Contains(out, "OK") {
		t.Errorf("verify --sha256 right: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "models", "verify", dest, "--sha256", strings.Repeat("0", 64), "--state-dir", state, "--config", empty)
	if code != 1 || !strings.Contains(out, "MISMATCH") {
		t.Errorf("verify --sha256 wrong: %d %s", code, out)
	}
	// A remembered hash that the bytes no longer match under the same
	// identity (what a bad disk does) is reported.
	cache := filepath.Join(state, models.HashCacheFile)
	b, _ := os.ReadFile(cache)
	if err := os.WriteFile(cache, bytes.ReplaceAll(b, []byte(sum), []byte(strings.Repeat("e", 64))), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, "models", "verify", "--state-dir", state, "--config", cfg)
	if code != 1 || !strings.Contains(out, "CHANGED llm") || !strings.Contains(out, "disk corruption") {
		t.Errorf("verify after corruption: %d %s", code, out)
	}
	if code, _, _ = runCLI(t, "models", "verify", "--state-dir", state, "--config", cfg); code != 0 {
		t.Error("verify does not accept the file once it has re-read it")
	}
	if code, _, errOut = runCLI(t, "models", "verify", "--state-dir", state, "--config", empty); code != 2 || !strings.Contains(errOut, "no model files are configured") {
		t.Errorf("verify with nothing configured: %d %s", code, errOut)
	}
	if code, _, errOut = runCLI(t, "models", "verify", dest, dest, "--sha256", sum, "--state-dir", state, "--config", empty); code != 1 || !strings.Contains(errOut, "exactly one FILE") {
		t.Errorf("verify --sha256 with two files: %d %s", code, errOut)
	}
	if code, _, errOut = runCLI(t, "models", "verify", dest, "--sha256", "abc", "--state-dir", state, "--config", empty); code != 1 || !strings.Contains(errOut, "64-character hex SHA-256") {
		t.Errorf("verify with a malformed --sha256: %d %s", code, errOut)
	}
	missing := filepath.Join(state, "models", "nope.gguf")
	if code, out, _ = runCLI(t, "models", "verify", missing, "--state-dir", state, "--config", empty); code != 1 || !strings.Contains(out, "FAILED  file  "+missing) || !strings.Contains(out, "check the path") {
		t.Errorf("verify a missing file: %d %s", code, out)
	}
}
