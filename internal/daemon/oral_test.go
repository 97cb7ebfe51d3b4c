package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"boxd/configs"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/chat"
	"boxd/pipelines/oral"
	"boxd/web"
)

func oralServer(t *testing.T, cfg *configs.Config) *testServer {
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
		tweak: func(s *Box) {
			s.Chat = &chat.Service{Engine: e, ModelID: cfg.Models.LLM.ID, WeightsRoot: strings.Repeat("ab", 32), Upstream: "tiny-chat.gguf", Provider: s.deps.Key.ID(), Receipts: s.deps.Receipts, Meter: s.Server.LLMMeter()}
		}})
}

// TestOralRoutes: info, samples and rubrics without a token; a sample
// scored as JSON and as a stream (events in order); the examiner's
// review; the bundle verified at /oral/verify and each record at
// /record/verify; the examiner prompt.
func TestOralRoutes(t *testing.T) {
	ts := oralServer(t, nil)
	for _, p := range []string{"/oral/info", "/oral/samples", "/oral/samples/stats-weak", "/oral/rubrics/intro-stats-viva", "/oral/rubrics/support-specialist-interview"} {
		if r := ts.do(t, call{method: "GET", path: p}); r.status != 200 {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
	if r := ts.do(t, call{method: "GET", path: "/oral/rubrics/nope"}); r.status != 404 || !strings.Contains(r.errMsg(t), "intro-stats-viva") {
		t.Errorf("unknown rubric: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "GET", path: "/oral/samples/nope"}); r.status != 404 {
		t.Errorf("unknown sample: %d %s", r.status, r.body)
	}
	tok := session(t, ts, "oral-assessment")
	r := ts.do(t, call{method: "POST", path: "/oral/score", token: tok, body: map[string]any{"sample_id": "stats-weak", "names": []string{"Tom"}}})
	if r.status != 200 {
		t.Fatalf("score: %d %s", r.status, r.body)
	}
	var ans struct {
		Ready    oral.Ready       `json:"ready"`
		Draft    oral.Draft       `json:"draft"`
		Receipts []map[string]any `json:"receipts"`
		Budget   map[string]any   `json:"budget"`
	}
	if err := json.Unmarshal(r.body, &ans); err != nil {
		t.Fatal(err)
	}
	if len(ans.Draft.Scores) != 5 || len(ans.Receipts) != 5 || ans.Budget == nil || !ans.Draft.RecordCheck.OK || len(ans.Ready.Leading) != 2 || bytes.Contains(r.body, []byte("Tom")) {
		t.Fatalf("answer: %.800s", r.body)
	}
	var ds []map[string]any
	for _, sc := range ans.Draft.Scores {
		ds = append(ds, map[string]any{"criterion": sc.Criterion, "action": "confirm"})
	}
	ds[1] = map[string]any{"criterion": ans.Draft.Scores[1].Criterion, "action": "override", "level": 0, "reason": "line 6 repeats the examiner's wrong claim"}
	rv := ts.do(t, call{method: "POST", path: "/oral/review", token: tok, body: map[string]any{"draft": ans.Draft.Record, "examiner": "J. Okafor", "decisions": ds}})
	var review oral.ReviewAnswer
	if rv.status != 200 || json.Unmarshal(rv.body, &review) != nil || !review.Check.OK || review.Overrides != 1 || review.MaxTotal != 20 {
		t.Fatalf("review: %d %.600s", rv.status, rv.body)
	}
	want := 0
	for i, sc := range ans.Draft.Scores {
		if i != 1 {
			want += sc.Level
		}
	}
	if review.FinalTotal != want {
		t.Errorf("final total %d, want %d (the decisions')", review.FinalTotal, want)
	}
	v := ts.do(t, call{method: "POST", path: "/oral/verify", body: map[string]any{"bundle": review.Bundle}})
	if v.status != 200 || !bytes.Contains(v.body, []byte(`"ok":true`)) || !bytes.Contains(v.body, []byte(fmt.Sprintf(`"final_total":"%d"`, want))) {
		t.Errorf("verify: %d %.600s", v.status, v.body)
	}
	for _, rec := range []any{review.Bundle.Draft, review.Bundle.Review} {
		if g := ts.do(t, call{method: "POST", path: "/record/verify", body: map[string]any{"record": rec}}); g.status != 200 || !bytes.Contains(g.body, []byte(`"ok":true`)) {
			t.Errorf("/record/verify: %d %.300s", g.status, g.body)
		}
	}
	p := ts.do(t, call{method: "POST", path: "/oral/prompt", token: tok, body: map[string]any{"rubric_id": "intro-stats-viva",
		"transcript": "Examiner: Hello Maria, how would you describe the spread?\nCandidate: I would use the standard deviation.\nExaminer: The answer is the median, right?"}})
	var pr oral.Prompt
	if p.status != 200 || json.Unmarshal(p.body, &pr) != nil || len(pr.Leading) != 1 || pr.Leading[0].N != 3 || len(pr.Pending) == 0 || bytes.Contains(p.body, []byte("Maria")) {
		t.Errorf("prompt: %d %s", p.status, p.body)
	}

	// Streamed: ready, a receipt and a score per criterion, draft, budget, done.
	key, _ := createKey(t, ts, map[string]any{})
	raw, _ := json.Marshal(map[string]any{"sample_id": "support-weak", "stream": true})
	req, _ := http.NewRequest("POST", ts.url+"/oral/score", bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var types []string
	for _, ev := range readEvents(t, all) {
		typ, _ := ev.m["type"].(string)
		if typ != "progress" {
			types = append(types, typ)
		}
	}
	if got := strings.Join(types, ","); got != "ready,receipt,score,receipt,score,receipt,score,receipt,score,draft,budget,done" {
		t.Errorf("stream %s", got)
	}
}

// TestOralRefusals: every route's bad input with its status and a message
// that says what to fix.
func TestOralRefusals(t *testing.T) {
	ts := oralServer(t, nil)
	tok := session(t, ts, "oral-assessment")
	lines := func(n, chars int) []map[string]string {
		var out []map[string]string
		for i := range n {
			role := "candidate"
			if i%2 == 0 {
				role = "examiner"
			}
			out = append(out, map[string]string{"role": role, "text": strings.Repeat("a", chars)})
		}
		return out
	}
	rubric := map[string]any{"criteria": []any{}}
	var crit []any
	for i := range 13 {
		crit = append(crit, map[string]any{"id": fmt.Sprint("c", i), "title": "T", "max_level": 1, "levels": []any{map[string]any{"level": 0, "descriptor": "no"}, map[string]any{"level": 1, "descriptor": "yes"}}})
	}
	rubric["criteria"] = crit
	for _, c := range []struct {
		name   string
		path   string
		token  string
		body   any
		status int
		says   string
	}{
		{"401 lines", "/oral/score", tok, map[string]any{"rubric_id": "intro-stats-viva", "lines": lines(401, 5)}, 413, "at most 400"},
		{"60,001 characters", "/oral/score", tok, map[string]any{"rubric_id": "intro-stats-viva", "lines": lines(301, 200)}, 413, "at most 60000"},
		{"13 criteria", "/oral/score", tok, map[string]any{"rubric": rubric, "lines": lines(2, 5)}, 413, "at most 12"},
		{"no rubric", "/oral/score", tok, map[string]any{"lines": lines(2, 5)}, 400, "rubric_id"},
		{"unknown rubric", "/oral/score", tok, map[string]any{"rubric_id": "x", "lines": lines(2, 5)}, 404, "intro-stats-viva"},
		{"unknown sample", "/oral/score", tok, map[string]any{"sample_id": "x"}, 404, "GET /oral/samples"},
		{"bad role", "/oral/score", tok, map[string]any{"rubric_id": "intro-stats-viva", "lines": []any{map[string]string{"role": "judge", "text": "x"}}}, 400, "examiner or candidate"},
		{"minor without consent", "/oral/score", tok, map[string]any{"sample_id": "stats-weak", "minor": true}, 400, "consent_basis"},
		{"unknown field", "/oral/score", tok, map[string]any{"sample_id": "stats-weak", "student": "x"}, 400, "student"},
		{"no token", "/oral/score", "", map[string]any{"sample_id": "stats-weak"}, 401, ""},
		{"another vertical", "/oral/score", session(t, ts, "auditor"), map[string]any{"sample_id": "stats-weak"}, 403, ""},
		{"review without draft", "/oral/review", tok, map[string]any{"examiner": "x", "decisions": []any{}}, 400, "draft is required"},
		{"review of a forged draft", "/oral/review", tok, map[string]any{"draft": map[string]any{"format": "service.record.v1", "kind": "oral-draft"}, "examiner": "x", "decisions": []any{}}, 400, "not a draft this box signed"},
		{"verify without bundle", "/oral/verify", "", map[string]any{}, 400, "bundle"},
		{"prompt with unknown rubric", "/oral/prompt", tok, map[string]any{"rubric_id": "x"}, 404, "intro-stats-viva"},
	} {
		r := ts.do(t, call{method: "POST", path: c.path, token: c.token, body: c.body})
		if r.status != c.status || (c.says != "" && !strings.Contains(r.errMsg(t), c.says)) {
			t.Errorf("%s: %d %.300s, want %d saying %q", c.name, r.status, r.body, c.status, c.says)
		}
	}
	// 402: less left than the rubric's calls may take.
	cfg := configs.Defaults()
	cfg.Limits.TokenBudget = 300
	small := oralServer(t, cfg)
	if r := small.do(t, call{method: "POST", path: "/oral/score", token: session(t, small, "oral-assessment"), body: map[string]any{"sample_id": "stats-weak"}}); r.status != http.StatusPaymentRequired || !strings.Contains(r.errMsg(t), "one call per criterion") {
		t.Errorf("402: %d %s", r.status, r.body)
	}
}
