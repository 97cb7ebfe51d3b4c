package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/configs"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/chat"
	"boxd/pipelines/migration"
	"boxd/web"
)

// migrationServer is a box whose chat model is the tiny random one, with
// a second candidate registered on the same weights (as
// migration.candidates would load it).
func migrationServer(t *testing.T, cfg *configs.Config, gate func()) *testServer {
	t.Helper()
	if cfg == nil {
		cfg = configs.Defaults()
	}
	cfg.AdminSecret = configs.Secret(adminSecret)
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 4096, Parallel: 2, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return newTestBox(t, boxOptions{cfg: cfg, probes: web.Probes{LLMReady: func() bool { return true }},
		deps: func(d *Deps) {
			second := &chat.Service{Engine: gatedEngine{e, gate}, ModelID: "tiny-b", WeightsRoot: strings.Repeat("cd", 32), Upstream: "tiny-chat.gguf", Provider: d.Key.ID(), Receipts: d.Receipts}
			d.MigrationCandidates = []migration.Candidate{{ID: "tiny-b", Model: second, File: "tiny-chat.gguf", Note: "registered"}}
		},
		tweak: func(s *Box) {
			s.Chat = &chat.Service{Engine: e, ModelID: cfg.Models.LLM.ID, WeightsRoot: strings.Repeat("ab", 32), Upstream: "tiny-chat.gguf", Provider: s.deps.Key.ID(), Receipts: s.deps.Receipts, Meter: s.Server.LLMMeter()}
		}})
}

// gatedEngine waits on gate (when set) before each generation: a test
// holds a run mid-way.
type gatedEngine struct {
	*llm.Engine
	gate func()
}

func (g gatedEngine) Generate(ctx context.Context, r llm.Request) (*llm.Job, error) {
	if g.gate != nil {
		g.gate()
	}
	return g.Engine.Generate(ctx, r)
}

func migrationSample(t *testing.T, ts *testServer, id string) map[string]any {
	t.Helper()
	r := ts.do(t, call{method: "GET", path: "/migration/samples"})
	if r.status != 200 {
		t.Fatalf("samples: %d %s", r.status, r.body)
	}
	var samples []struct {
		ID   string
		Task string
		Body map[string]any
	}
	if err := json.Unmarshal(r.body, &samples); err != nil {
		t.Fatal(err)
	}
	tasks := map[string]bool{}
	for _, s := range samples {
		tasks[s.Task] = true
	}
	if len(tasks) != 4 {
		t.Errorf("samples cover %v, want every task type", tasks)
	}
	for _, s := range samples {
		if s.ID == id {
			return s.Body
		}
	}
	t.Fatalf("no sample %s", id)
	return nil
}

// TestMigrationRoutes: info and samples without a token; a sample run
// per task type as JSON with both candidates; the record verifies at
// /migration/verify (recomputed) and /record/verify; a stream's events
// in the contract's order.
func TestMigrationRoutes(t *testing.T) {
	ts := migrationServer(t, nil, nil)
	r := ts.do(t, call{method: "GET", path: "/migration/info"})
	var info migration.Info
	if r.status != 200 || json.Unmarshal(r.body, &info) != nil {
		t.Fatalf("info: %d %s", r.status, r.body)
	}
	if info.Judge.PromptSHA256 != migration.JudgePromptSHA256() || !info.Judge.Ready || info.Prices.Date == "" || len(info.Prices.Models) == 0 ||
		len(info.Candidates) != 2 || info.Candidates[0].ID != configs.Defaults().Models.LLM.ID || !info.Candidates[0].Default || info.Candidates[1].ID != "tiny-b" ||
		len(info.Tasks) != 4 || len(info.Tasks[2].SchemaKeywords) == 0 || info.Limits.MaxDemoExamples != 40 {
		t.Errorf("info: %+v", info)
	}
	key, _ := createKey(t, ts, map[string]any{})
	for _, id := range []string{"faq-exact", "ticket-label", "invoice-json", "message-freetext"} {
		body := migrationSample(t, ts, id)
		body["candidates"] = []string{configs.Defaults().Models.LLM.ID, "tiny-b"}
		r := ts.do(t, call{method: "POST", path: "/migration/runs", token: key, body: body})
		if r.status != 200 {
			t.Fatalf("%s: %d %s", id, r.status, r.body)
		}
		var rep struct {
			ReportID   string                    `json:"report_id"`
			Headline   string                    `json:"headline"`
			Verdicts   map[string]string         `json:"verdicts"`
			Candidates map[string]map[string]any `json:"candidates"`
			Examples   []map[string]any          `json:"examples"`
			Receipts   []map[string]any          `json:"receipts"`
			Budget     map[string]any            `json:"budget"`
			Identity   map[string]any            `json:"identity"`
			Report     json.RawMessage           `json:"report"`
		}
		if err := json.Unmarshal(r.body, &rep); err != nil {
			t.Fatal(err)
		}
		n := len(body["examples"].([]any))
		calls := 2 * n
		if id == "message-freetext" {
			calls = 6*n + 8 // two judgments of each answer, and of 4 judge controls
		}
		if len(rep.Verdicts) != 2 || len(rep.Candidates) != 2 || len(rep.Examples) != 2*n || len(rep.Receipts) != calls || rep.Budget == nil || rep.Headline == "" {
			t.Errorf("%s: verdicts %v, %d examples, %d receipts (want %d), budget %v", id, rep.Verdicts, len(rep.Examples), len(rep.Receipts), calls, rep.Budget)
		}
		v := ts.do(t, call{method: "POST", path: "/migration/verify", body: map[string]any{"record": rep.Report}})
		var vr migration.Verification
		if v.status != 200 || json.Unmarshal(v.body, &vr) != nil || !vr.OK || !vr.Recompute.OK || !vr.Record.SignedByThisBox {
			t.Errorf("%s: verify %d %.600s", id, v.status, v.body)
		}
		g := ts.do(t, call{method: "POST", path: "/record/verify", body: map[string]any{"record": rep.Report}})
		if g.status != 200 || !bytes.Contains(g.body, []byte(`"ok":true`)) {
			t.Errorf("%s: /record/verify %d %.300s", id, g.status, g.body)
		}
	}

	// Streamed, with a demo token: the events in order.
	tok := session(t, ts, "migration-check")
	body := migrationSample(t, ts, "ticket-label")
	body["stream"] = true
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", ts.url+"/migration/runs", bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var types []string
	for _, ev := range readEvents(t, all) {
		typ, _ := ev.m["type"].(string)
		if typ == "receipt" || typ == "example" || typ == "progress" {
			if len(types) == 0 || types[len(types)-1] != "calls" {
				types = append(types, "calls")
			}
			continue
		}
		types = append(types, typ)
	}
	if got := strings.Join(types, ","); got != "ready,calls,identity,summary,record,report,budget,done" {
		t.Errorf("stream order %s", got)
	}
}

// TestMigrationRefusals: each bad input with its status and a message
// that says what to fix; 402 from the estimate before any call; 409 for
// a second run of a demo token; 403 for another vertical's token.
func TestMigrationRefusals(t *testing.T) {
	ts := migrationServer(t, nil, nil)
	tok := session(t, ts, "migration-check")
	key, _ := createKey(t, ts, map[string]any{})
	examples := func(n int) []map[string]any {
		var out []map[string]any
		for i := range n {
			out = append(out, map[string]any{"id": fmt.Sprint(i), "input": "q", "output": "a"})
		}
		return out
	}
	base := func() map[string]any {
		return map[string]any{"task": map[string]any{"type": "exact"}, "prompt": map[string]any{"template": "{{input}}"},
			"incumbent": map[string]any{"model": "gpt-4o-mini"}, "max_output_tokens": 4, "examples": examples(10)}
	}
	for _, c := range []struct {
		name   string
		token  string
		mod    func(b map[string]any)
		status int
		says   string
	}{
		{"fewer than 10", tok, func(b map[string]any) { b["examples"] = examples(9) }, 400, "at least 10"},
		{"more than 40 with a demo token", tok, func(b map[string]any) { b["examples"] = examples(41) }, 413, "at most 40"},
		{"more than 200 with a key", key, func(b map[string]any) { b["examples"] = examples(201) }, 413, "at most 200"},
		{"unknown task type", tok, func(b map[string]any) { b["task"] = map[string]any{"type": "regex"} }, 400, "unknown type"},
		{"template without placeholder", tok, func(b map[string]any) { b["prompt"] = map[string]any{"template": "Answer."} }, 400, "placeholder"},
		{"schema outside the subset", tok, func(b map[string]any) {
			b["task"] = map[string]any{"type": "json", "schema": map[string]any{"type": "object", "allOf": []any{}}}
		}, 400, "outside the supported subset"},
		{"unknown candidate", tok, func(b map[string]any) { b["candidates"] = []string{"gpt-4o"} }, 404, "no candidate"},
		{"unknown field", tok, func(b map[string]any) { b["temperature"] = 0.2 }, 400, "temperature"},
		{"unknown field in an example", tok, func(b map[string]any) { b["examples"].([]map[string]any)[0]["answer"] = "x" }, 400, "answer"},
		{"example without output", tok, func(b map[string]any) { delete(b["examples"].([]map[string]any)[3], "output") }, 400, "examples[3].output is required"},
		{"no token", "", func(map[string]any) {}, 401, ""},
		{"another vertical", session(t, ts, "auditor"), func(map[string]any) {}, 403, ""},
	} {
		b := base()
		c.mod(b)
		r := ts.do(t, call{method: "POST", path: "/migration/runs", token: c.token, body: b})
		if r.status != c.status || (c.says != "" && !strings.Contains(r.errMsg(t), c.says)) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, r.status, r.body, c.status, c.says)
		}
	}
	r := ts.do(t, call{method: "POST", path: "/migration/verify", body: map[string]any{}})
	if r.status != 400 || !strings.Contains(r.errMsg(t), "record") {
		t.Errorf("verify without a record: %d %s", r.status, r.body)
	}
	r = ts.do(t, call{method: "POST", path: "/migration/verify", body: map[string]any{"record": map[string]any{"kind": "migration-check"}}})
	if r.status != 200 || !bytes.Contains(r.body, []byte(`"ok":false`)) {
		t.Errorf("verify of a non-record: %d %s", r.status, r.body)
	}

	// 402: 40 examples × 2,048 max output tokens is over a small budget.
	cfg := configs.Defaults()
	cfg.Limits.TokenBudget = 5000
	small := migrationServer(t, cfg, nil)
	b := base()
	b["examples"], b["max_output_tokens"] = examples(40), 2048
	r = small.do(t, call{method: "POST", path: "/migration/runs", token: session(t, small, "migration-check"), body: b})
	if r.status != http.StatusPaymentRequired || !strings.Contains(r.errMsg(t), "81920 generated tokens") {
		t.Errorf("402: %d %s", r.status, r.body)
	}
	// The demo limit is said before the budget (admission step 4, then 6).
	b["examples"] = examples(41)
	r = small.do(t, call{method: "POST", path: "/migration/runs", token: session(t, small, "migration-check"), body: b})
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.errMsg(t), "at most 40") {
		t.Errorf("41 examples over budget with a demo token: %d %s", r.status, r.body)
	}
}

// TestMigrationOneRunPerToken: a demo token's second run while its first
// is calling the model is 409, and so is a developer key's (contract
// section 8: one run at a time per token); another key runs meanwhile.
func TestMigrationOneRunPerToken(t *testing.T) {
	for _, who := range []string{"demo token", "key"} {
		t.Run(who, func(t *testing.T) {
			release, arrived := make(chan struct{}), make(chan struct{}, 1)
			var once sync.Once
			ts := migrationServer(t, nil, func() {
				select {
				case arrived <- struct{}{}:
				default:
				}
				<-release
			})
			defer once.Do(func() { close(release) })
			tok := ""
			if who == "key" {
				tok, _ = createKey(t, ts, map[string]any{})
			} else {
				tok = session(t, ts, "migration-check")
			}
			body := migrationSample(t, ts, "faq-exact")
			body["candidates"] = []string{"tiny-b"}
			first := make(chan int, 1)
			go func() {
				first <- ts.do(t, call{method: "POST", path: "/migration/runs", token: tok, body: body}).status
			}()
			select {
			case <-arrived:
			case <-time.After(time.Minute):
				t.Fatal("the first run never called the model")
			}
			if r := ts.do(t, call{method: "POST", path: "/migration/runs", token: tok, body: body}); r.status != http.StatusConflict || !strings.Contains(r.errMsg(t), "one") {
				t.Errorf("second run: %d %s", r.status, r.body)
			}
			if who == "key" {
				other, _ := createKey(t, ts, map[string]any{})
				body["candidates"] = []string{configs.Defaults().Models.LLM.ID}
				if r := ts.do(t, call{method: "POST", path: "/migration/runs", token: other, body: body}); r.status != 200 {
					t.Errorf("another key's run: %d %.300s", r.status, r.body)
				}
			}
			once.Do(func() { close(release) })
			if st := <-first; st != 200 {
				t.Errorf("first run: %d", st)
			}
		})
	}
}
