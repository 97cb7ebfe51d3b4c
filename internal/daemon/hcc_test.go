package daemon

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/chat"
	"boxd/pipelines/codes"
	"boxd/pipelines/hcc"
	"boxd/web"
)

// TestHCCReadChart: the scanned sample read into a note and a review
// through the real server with the tiny chat model and the real code
// tables: every line is numbered with its element, page and box, the
// record verifies at /record/verify; every refusal has its status and
// says what to fix, and without a chat model the route is 503.
func TestHCCReadChart(t *testing.T) {
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("BOXD_TEST_DATA is not set (the Makefile sets it)")
		}
		t.Skip("BOXD_TEST_DATA is not set; run through make")
	}
	tables, err := codes.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 4096, Parallel: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	ts := start(t, nil, web.Probes{}, func(s *Box) {
		s.Chat = &chat.Service{Engine: e, ModelID: "model-27b", WeightsRoot: strings.Repeat("ab", 32), Upstream: e.Info().Name, Provider: s.deps.Key.ID(), Receipts: s.deps.Receipts}
		s.HCC.Chat, s.HCC.Codes = s.Chat, tables
	})
	tok := session(t, ts, "clinical")
	r := ts.do(t, call{method: "POST", path: "/hcc/read-chart", token: tok, body: map[string]any{"sample": "scanned-chart"}})
	if r.status != 200 {
		t.Fatalf("read-chart: %d %s", r.status, r.body)
	}
	var out hcc.Result
	decodeInto(t, r, &out)
	if len(out.Receipts) != 1 || r.header.Get("x-service-receipt") != out.Receipts[0] {
		t.Errorf("x-service-receipt %q, receipts %v", r.header.Get("x-service-receipt"), out.Receipts)
	}
	if out.Document == nil || len(out.Lines) < 5 || out.Lines[1].Element == "" || out.Lines[1].BBox[2] == 0 || len(out.Note) != 4 ||
		out.Review.Diagnoses == nil || out.Rejected == nil || len(out.Receipts) != 1 || out.Record == nil {
		t.Fatalf("result: %s", r.body)
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(r.body, &raw)
	if v := ts.do(t, call{method: "POST", path: "/record/verify", body: map[string]any{"record": raw["record"]}}); v.status != 200 || v.json(t)["ok"] != true {
		t.Errorf("record verify: %d %s", v.status, v.body)
	}
	for _, c := range []struct {
		name   string
		token  string
		body   any
		status int
		says   string
	}{
		{"no token", "", map[string]any{"sample": "scanned-chart"}, 401, "Bearer"},
		{"bad base64", tok, `{"file_b64": "!!!", "synthetic": true}`, 400, "file_b64"},
		{"unknown type", tok, map[string]any{"file_b64": base64.StdEncoding.EncodeToString([]byte("plain words")), "synthetic": true}, 415, "not a PDF"},
		{"unknown sample", tok, map[string]any{"sample": "nope"}, 404, "scanned-chart"},
		{"unknown field", tok, map[string]any{"sample": "scanned-chart", "charts": true}, 400, "charts"},
	} {
		if r := ts.do(t, call{method: "POST", path: "/hcc/read-chart", token: c.token, body: c.body}); r.status != c.status || !strings.Contains(string(r.body), c.says) {
			t.Errorf("%s: %d %s; want %d saying %q", c.name, r.status, r.body, c.status, c.says)
		}
	}
	plain := start(t, nil, web.Probes{}, nil)
	ptok := session(t, plain, "clinical")
	if r := plain.do(t, call{method: "POST", path: "/hcc/read-chart", token: ptok, body: map[string]any{"sample": "scanned-chart"}}); r.status != 503 || !strings.Contains(string(r.body), "chat model") {
		t.Errorf("no chat model: %d %s", r.status, r.body)
	}
}
