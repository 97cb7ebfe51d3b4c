package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/configs"
	"boxd/docs"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/chat"
	"boxd/web"
)

// auditServer is a box whose chat model is the tiny test model, with its
// audit reference recorded as at start, an offline resolver (names do
// not resolve), and the log kept.
func auditServer(t *testing.T, cfg *configs.Config) (*testServer, *syncBuffer) {
	t.Helper()
	if cfg == nil {
		cfg = configs.Defaults()
	}
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 4096, Parallel: 2, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	logs := &syncBuffer{}
	offline := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS in tests")
	}}
	ts := newTestBox(t, boxOptions{cfg: cfg, probes: web.Probes{LLMReady: func() bool { return true }}, log: logs,
		deps: func(d *Deps) { d.Resolver = offline },
		tweak: func(s *Box) {
			s.Chat = &chat.Service{Engine: e, ModelID: cfg.Models.LLM.ID, WeightsRoot: strings.Repeat("ab", 32), Upstream: "tiny-chat.gguf", Provider: s.deps.Key.ID(), Receipts: s.deps.Receipts, Meter: s.Server.LLMMeter()}
			s.Audit.Resolver = offline
		}})
	ts.RecordAuditReference(context.Background())
	if ts.Audit.Refs.Find(cfg.Models.LLM.ID) == nil {
		t.Fatalf("no reference recorded at start:\n%s", logs.String())
	}
	return ts, logs
}

// auditEvents posts an audit and reads its stream's events.
func auditEvents(t *testing.T, ts *testServer, token string, body any) (int, []map[string]any, []byte) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", ts.url+"/audit/runs", bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	all, _ := io.ReadAll(resp.Body)
	var evs []map[string]any
	for _, line := range strings.Split(string(all), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("event is not JSON: %s", d)
			}
			evs = append(evs, m)
		}
	}
	return resp.StatusCode, evs, all
}

// order is the events' types with lanes named, repeats and receipts and
// progress left out.
func order(evs []map[string]any) []string {
	var out []string
	for _, e := range evs {
		typ, _ := e["type"].(string)
		if typ == "receipt" || typ == "progress" {
			continue
		}
		if typ == "lane" {
			typ += ":" + e["lane"].(string)
		}
		if len(out) > 0 && out[len(out)-1] == typ {
			continue
		}
		out = append(out, typ)
	}
	return out
}

// TestAuditRoutes audits the box's own chat model end to end: the public
// routes, the stream's events in the contract's order with a receipt per
// probe, a pass verdict, the signed report (it verifies; a changed field
// does not), the recent list and a 404.
func TestAuditRoutes(t *testing.T) {
	ts, _ := auditServer(t, nil)
	sk := ts.do(t, call{method: "GET", path: "/audit/signing-key"}).json(t)
	if sk["alg"] != "ed25519" || sk["pubkey"] != ts.deps.Key.PublicKeyHex() || sk["domain"] != "service.audit.report.v1" || sk["key_id"] == "" || sk["canonical"] == "" {
		t.Errorf("signing key: %v", sk)
	}
	var targets []map[string]any
	if err := json.Unmarshal(ts.do(t, call{method: "GET", path: "/audit/targets"}).body, &targets); err != nil || len(targets) != 1 {
		t.Fatalf("targets: %v %v", targets, err)
	}
	for _, k := range []string{"id", "label", "claimed_model", "kind", "note", "expect", "available"} {
		if _, ok := targets[0][k]; !ok {
			t.Errorf("target lacks %s: %v", k, targets[0])
		}
	}
	if targets[0]["id"] != "box-chat" || targets[0]["available"] != true {
		t.Errorf("target: %v", targets[0])
	}
	var refs []map[string]any
	if err := json.Unmarshal(ts.do(t, call{method: "GET", path: "/audit/references"}).body, &refs); err != nil || len(refs) != 1 {
		t.Fatalf("references: %v %v", refs, err)
	}
	for _, k := range []string{"id", "aliases", "model", "engine", "recorded_at", "fixture_sha256", "fixture_sig", "noise"} {
		if _, ok := refs[0][k]; !ok {
			t.Errorf("reference lacks %s: %v", k, refs[0])
		}
	}

	tok := session(t, ts, "auditor")
	status, evs, _ := auditEvents(t, ts, tok, map[string]any{"target": "box-chat"})
	if status != http.StatusOK {
		t.Fatalf("audit: %d %v", status, evs)
	}
	got := order(evs)
	want := []string{"ready", "lane:identity", "lane:quality", "lane:performance", "lane:verdict", "done", "budget"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	receipts := 0
	for _, e := range evs {
		if e["type"] == "receipt" {
			receipts++
		}
	}
	ready := evs[0]
	suite := ready["suite"].(map[string]any)
	if ready["target"] != "box-chat" || ready["reference"] == nil || suite["goldens"] != float64(10) || suite["canaries"] != float64(4) || len(suite["sha256"].(string)) != 64 {
		t.Errorf("ready: %v", ready)
	}
	done := evs[len(evs)-2]["summary"].(map[string]any)
	if done["verdict"] != "pass" {
		t.Fatalf("verdict %v: %v", done["verdict"], evs[len(evs)-3])
	}
	if evs[len(evs)-1]["llm_tokens_left"] == nil {
		t.Errorf("budget: %v", evs[len(evs)-1])
	}
	id := done["report"].(string)
	if done["report_url"] != "/audit/reports/"+id {
		t.Errorf("done: %v", done)
	}
	r := ts.do(t, call{method: "GET", path: "/audit/reports/" + id})
	if r.status != http.StatusOK {
		t.Fatalf("report: %d %s", r.status, r.body)
	}
	var rep map[string]any
	_ = json.Unmarshal(r.body, &rep)
	probes := rep["probes"].(map[string]any)
	if receipts == 0 || float64(receipts) != probes["sent"] {
		t.Errorf("%d receipts for %v probes", receipts, probes["sent"])
	}
	v := ts.do(t, call{method: "POST", path: "/audit/verify", body: map[string]json.RawMessage{"report": r.body}}).json(t)
	if v["valid_signature"] != true || v["signed_by_this_auditor"] != true || v["auditor_pubkey"] != ts.deps.Key.PublicKeyHex() {
		t.Errorf("verify: %v", v)
	}
	changed := bytes.Replace(r.body, []byte(`"verdict":"pass"`), []byte(`"verdict":"fail"`), 1)
	if bytes.Equal(changed, r.body) {
		t.Fatal("no verdict to change")
	}
	if v := ts.do(t, call{method: "POST", path: "/audit/verify", body: map[string]json.RawMessage{"report": changed}}).json(t); v["valid_signature"] != false {
		t.Errorf("a changed report verifies: %v", v)
	}
	var recent []map[string]any
	_ = json.Unmarshal(ts.do(t, call{method: "GET", path: "/audit/reports"}).body, &recent)
	if len(recent) != 1 || recent[0]["id"] != id || recent[0]["verdict"] != "pass" {
		t.Errorf("recent: %v", recent)
	}
	if r := ts.do(t, call{method: "GET", path: "/audit/reports/aud_nope"}); r.status != http.StatusNotFound || !strings.Contains(r.errMsg(t), "no audit report") {
		t.Errorf("unknown report: %d %s", r.status, r.body)
	}

	// README's verifier, a few lines of Python, checks it too.
	python, script := docs.PythonScript(t, "# verify_audit_report.py", "cryptography.hazmat.primitives.asymmetric.ed25519")
	dir := t.TempDir()
	for name, body := range map[string][]byte{"report": r.body, "changed": changed} {
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(python, script, p, ts.deps.Key.PublicKeyHex()).CombinedOutput()
		if (err == nil) != (name == "report") {
			t.Errorf("README verifier on the %s: %v %s", name, err, out)
		}
	}
}

// TestAuditRefusals: every refusal with the contract's status and a
// message that says what to fix.
func TestAuditRefusals(t *testing.T) {
	cfg := configs.Defaults()
	ts, _ := auditServer(t, cfg)
	tok := session(t, ts, "auditor")
	other := session(t, ts, "code")
	for _, c := range []struct {
		name   string
		token  string
		body   string
		status int
		want   string
	}{
		{"no token", "", `{"target":"box-chat"}`, 401, ""},
		{"other vertical", other, `{"target":"box-chat"}`, 403, ""},
		{"empty body", tok, ``, 400, "empty"},
		{"neither", tok, `{}`, 400, "send target"},
		{"both", tok, `{"target":"box-chat","base_url":"https://api.example.com/v1","model":"m"}`, 400, "not both"},
		{"unknown target", tok, `{"target":"nope"}`, 404, "GET /audit/targets"},
		{"unknown field", tok, `{"target":"box-chat","temperature":1}`, 400, "temperature"},
		{"model missing", tok, `{"base_url":"https://api.example.com/v1"}`, 400, "model is required"},
		{"no /v1", tok, `{"base_url":"https://api.example.com","model":"m"}`, 400, "must end /v1"},
		{"plain http", tok, `{"base_url":"http://api.example.com/v1","model":"m"}`, 400, "plain http"},
		{"loopback", tok, `{"base_url":"https://127.0.0.1:8445/v1","model":"m"}`, 400, "loopback"},
		{"private", tok, `{"base_url":"https://10.1.2.3/v1","model":"m"}`, 400, "private"},
		{"link-local", tok, `{"base_url":"https://169.254.10.1/v1","model":"m"}`, 400, "link-local"},
		{"metadata", tok, `{"base_url":"https://169.254.169.254/v1","model":"m"}`, 400, "metadata"},
		{"unresolvable", tok, `{"base_url":"https://no-such-host.invalid/v1","model":"m"}`, 400, "does not resolve"},
		{"credentials in URL", tok, `{"base_url":"https://u:p@api.example.com/v1","model":"m"}`, 400, "api_key"},
		{"context too long", tok, `{"base_url":"https://api.example.com/v1","model":"m","context_tokens":32001}`, 400, "0 to 32000"},
		{"context negative", tok, `{"target":"box-chat","context_tokens":-1}`, 400, "0 to 32000"},
		{"context not a number", tok, `{"target":"box-chat","context_tokens":"lots"}`, 400, "context_tokens"},
		{"key with a demo target", tok, `{"target":"box-chat","api_key":"sk-x"}`, 400, "no model or api_key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do(t, call{method: "POST", path: "/audit/runs", body: c.body, token: c.token})
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if msg := r.errMsg(t); !strings.Contains(msg, c.want) {
				t.Errorf("message %q lacks %q", msg, c.want)
			}
		})
	}
}

// TestAuditBudgetAndOneRun: 402 below 3,000 tokens; 409 for a second run
// on the same demo token while one is running.
func TestAuditBudgetAndOneRun(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.TokenBudget = 2999
	cfg.Audit.AllowPrivate = true
	ts, _ := auditServer(t, cfg)
	tok := session(t, ts, "auditor")
	r := ts.do(t, call{method: "POST", path: "/audit/runs", body: `{"target":"box-chat"}`, token: tok})
	if r.status != http.StatusPaymentRequired || !strings.Contains(r.errMsg(t), "3,000") {
		t.Errorf("402: %d %s", r.status, r.body)
	}

	cfg2 := configs.Defaults()
	cfg2.Audit.AllowPrivate = true
	ts2, _ := auditServer(t, cfg2)
	tok2 := session(t, ts2, "auditor")
	release, arrived := make(chan struct{}), make(chan struct{}, 64)
	var once sync.Once
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, `{"error":"slow"}`, http.StatusServiceUnavailable)
	}))
	defer slow.Close()
	defer once.Do(func() { close(release) })
	first := make(chan int, 1)
	go func() {
		st, _, _ := auditEvents(t, ts2, tok2, map[string]any{"base_url": slow.URL + "/v1", "model": "m"})
		first <- st
	}()
	select {
	case <-arrived: // the first audit is probing
	case <-time.After(30 * time.Second):
		t.Fatal("the first audit never probed")
	}
	if r := ts2.do(t, call{method: "POST", path: "/audit/runs", body: `{"target":"box-chat"}`, token: tok2}); r.status != http.StatusConflict || !strings.Contains(r.errMsg(t), "run") {
		t.Errorf("a second audit while one runs: %d %s", r.status, r.body)
	}
	once.Do(func() { close(release) })
	if st := <-first; st != http.StatusOK {
		t.Errorf("first audit: %d", st)
	}
}

// TestAuditProviderKeyNeverWritten: an audit of an endpoint with a
// recognisable provider key sends it to the provider and writes it
// nowhere: not the log, the state directory (store, receipts, fixtures),
// the report, or the stream.
func TestAuditProviderKeyNeverWritten(t *testing.T) {
	const key = "sk-CANARY-3f9a1c7e5b2d4086-provider-key"
	cfg := configs.Defaults()
	cfg.Audit.AllowPrivate = true
	ts, logs := auditServer(t, cfg)
	var mu sync.Mutex
	var seen []string
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req["stream"] == true {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"Hello there\"}}]}\n\n")
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n")
			return
		}
		// A provider that echoes the key in an error, as some do.
		if _, ok := req["tools"]; ok && len(seen)%2 == 0 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":"invalid key %s for tools"}}`, r.Header.Get("Authorization"))
			return
		}
		fmt.Fprint(w, `{"model":"m","choices":[{"message":{"content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`)
	}))
	defer provider.Close()
	tok := session(t, ts, "auditor")
	status, evs, stream := auditEvents(t, ts, tok, map[string]any{"base_url": provider.URL + "/v1", "model": "m", "claimed_model": ts.Chat.ModelID, "api_key": key, "context_tokens": 300})
	if status != http.StatusOK || len(evs) == 0 {
		t.Fatalf("audit: %d %s", status, stream)
	}
	mu.Lock()
	sent := slices.Contains(seen, "Bearer "+key)
	mu.Unlock()
	if !sent {
		t.Fatalf("the provider never saw the key: %v", seen)
	}
	done := evs[len(evs)-2]["summary"].(map[string]any)
	rep := ts.do(t, call{method: "GET", path: "/audit/reports/" + done["report"].(string)})
	for what, b := range map[string][]byte{"stream": stream, "report": rep.body, "log": []byte(logs.String())} {
		if bytes.Contains(b, []byte(key)) || bytes.Contains(b, []byte("CANARY")) {
			t.Errorf("the provider key is in the %s", what)
		}
	}
	if done["verdict"] != "fail" && done["verdict"] != "inconclusive" {
		t.Errorf("a fake endpoint got %v", done["verdict"])
	}
	// Everything the box wrote: the store (receipts, reports), fixtures,
	// keys.
	err := filepath.WalkDir(ts.cfg.StateDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte("CANARY")) {
			t.Errorf("the provider key is in %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAuditBoxTargetUnavailable: without a chat model the box's own target
// is listed unavailable, and an audit of it is 503 saying why.
func TestAuditBoxTargetUnavailable(t *testing.T) {
	ts := newTestBox(t, boxOptions{})
	var targets []map[string]any
	_ = json.Unmarshal(ts.do(t, call{method: "GET", path: "/audit/targets"}).body, &targets)
	if len(targets) != 1 || targets[0]["available"] != false || !strings.Contains(targets[0]["note"].(string), "models.llm.path") {
		t.Errorf("targets: %v", targets)
	}
	tok := session(t, ts, "auditor")
	r := ts.do(t, call{method: "POST", path: "/audit/runs", body: `{"target":"box-chat"}`, token: tok})
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.errMsg(t), "not available") {
		t.Errorf("%d %s", r.status, r.body)
	}
}
