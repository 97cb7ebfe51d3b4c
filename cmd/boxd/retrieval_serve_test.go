package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"boxd/engine/models/testmodels"
)

// TestServeRetrieval: serve loads the embedder and the reranker from
// models.embedder.path and models.reranker.path, reports them with their
// weights roots, indexes a sample, searches it, and `boxd verify` on the
// box checks the search receipt with its chunks offline.
func TestServeRetrieval(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ns := newNotifySocket(t)
	args := []string{"serve", "--config", writeConfig(t, "# empty\n"), "--state-dir", state, "--listen", "127.0.0.1:0", "--log-format", "text",
		"--models-embedder-path", testmodels.Generated(t, testmodels.EmbedFile), "--models-reranker-path", testmodels.Generated(t, testmodels.RerankFile)}
	cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path}, args...)
	exited := ns.watch(t, cmd)
	ready := ns.waitFor(t, "READY=1", 60*time.Second)
	base := "http://" + strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):])
	do := func(method, path, token, body string) (int, []byte) {
		return request(t, base, method, path, token, body)
	}
	status, raw := do("GET", "/retrieval/info", "", "")
	var info struct {
		Models map[string]struct {
			Loaded      bool   `json:"loaded"`
			Repo        string `json:"repo"`
			WeightsRoot string `json:"weights_root"`
		} `json:"models"`
	}
	_ = json.Unmarshal(raw, &info)
	if status != 200 || !info.Models["embedder"].Loaded || !info.Models["reranker"].Loaded || info.Models["embedder"].Repo != "boxd-tiny-embed" || len(info.Models["reranker"].WeightsRoot) != 64 {
		t.Fatalf("info: %d %s", status, raw)
	}
	_, raw = do("POST", "/demo/session", "", `{"vertical": "field"}`)
	var sess struct{ Token string }
	_ = json.Unmarshal(raw, &sess)
	status, raw = do("POST", "/retrieval/index", sess.Token, `{"sample": "pump-station-manual"}`)
	var ix struct {
		Index struct{ Hash string } `json:"index"`
	}
	if status != 200 || json.Unmarshal(raw, &ix) != nil {
		t.Fatalf("index: %d %s", status, raw)
	}
	status, raw = do("POST", "/retrieval/search", sess.Token, `{"index": "`+ix.Index.Hash+`", "query": "pressure after a filter change", "k": 4}`)
	if status != 200 {
		t.Fatalf("search: %d %s", status, raw)
	}
	var sr struct {
		Results []struct {
			Chunk string          `json:"chunk"`
			Text  string          `json:"text"`
			Proof json.RawMessage `json:"proof"`
		} `json:"results"`
		Receipt json.RawMessage `json:"receipt"`
	}
	_ = json.Unmarshal(raw, &sr)
	var chunks []map[string]any
	for _, r := range sr.Results {
		chunks = append(chunks, map[string]any{"chunk": r.Chunk, "text": r.Text, "proof": r.Proof})
	}
	file := filepath.Join(t.TempDir(), "search.json")
	b, _ := json.Marshal(map[string]any{"receipt": sr.Receipt, "chunks": chunks})
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "verify", file, "--config", writeConfig(t, "# empty\n"), "--state-dir", state); code != 0 || len(chunks) == 0 || !strings.Contains(out, fmt.Sprintf("all %d results checked", len(chunks))) {
		t.Errorf("boxd verify on the box: exit %d\n%s%s", code, out, errOut)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		t.Fatal(err)
	}
}

// request sends a JSON request to a served box and returns the status and
// body.
func request(t *testing.T, base, method, path, token, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// TestServeRetrievalPersists: with retrieval.persist, an index built
// before a restart is searched after it, under the same hash.
func TestServeRetrievalPersists(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	cfg := writeConfig(t, "retrieval:\n  persist: true\n")
	start := func() (string, func()) {
		ns := newNotifySocket(t)
		cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path, "BOXD_ADMIN_SECRET=retrieval-admin-secret-0"}, "serve", "--config", cfg, "--state-dir", state, "--listen", "127.0.0.1:0",
			"--log-format", "text", "--models-embedder-path", testmodels.Generated(t, testmodels.EmbedFile))
		exited := ns.watch(t, cmd)
		ready := ns.waitFor(t, "READY=1", 60*time.Second)
		return "http://" + strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):]), func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			if err := <-exited; err != nil {
				t.Fatal(err)
			}
		}
	}
	base, stop := start()
	// A developer key: demo sessions end with the process, keys do not.
	_, raw := request(t, base, "POST", "/v1/keys", "retrieval-admin-secret-0", `{"label": "persist test"}`)
	var key struct{ Key string }
	if json.Unmarshal(raw, &key) != nil || key.Key == "" {
		t.Fatalf("key: %s", raw)
	}
	status, raw := request(t, base, "POST", "/retrieval/index", key.Key, `{"sample": "pump-station-manual"}`)
	var ix struct {
		Index      struct{ Hash, CorpusRoot string } `json:"index"`
		Persistent bool                              `json:"persistent"`
	}
	if status != 200 || json.Unmarshal(raw, &ix) != nil || !ix.Persistent {
		t.Fatalf("index: %d %s", status, raw)
	}
	stop()
	base, stop = start()
	defer stop()
	status, raw = request(t, base, "POST", "/retrieval/search", key.Key, `{"index": "`+ix.Index.Hash+`", "query": "pressure", "rerank": false}`)
	if status != 200 || !strings.Contains(string(raw), ix.Index.Hash) {
		t.Fatalf("search after the restart: %d %s", status, raw)
	}
}
