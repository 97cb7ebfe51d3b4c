package api

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"boxd/configs"
	"boxd/internal/problem"
)

// TestKindTableCoversEveryKind: every problem kind has a status and a
// close code, and the statuses are the contract's.
func TestKindTableCoversEveryKind(t *testing.T) {
	want := map[problem.Kind]int{problem.Invalid: 400, problem.Unauthorized: 401, problem.Budget: 402,
		problem.Forbidden: 403, problem.NotFound: 404, problem.Conflict: 409, problem.TooLarge: 413,
		problem.RateLimited: 429, problem.Upstream: 502, problem.Busy: 503, problem.Timeout: 408}
	for _, k := range problem.Kinds() {
		a, ok := answers[k]
		if !ok || a.status == 0 || a.close == 0 {
			t.Errorf("kind %v has no answer", k)
		}
		if w, ok := want[k]; ok && a.status != w {
			t.Errorf("kind %v: status %d, want %d", k, a.status, w)
		}
	}
	for k, code := range map[problem.Kind]int{problem.Invalid: 4400, problem.Unauthorized: 4401, problem.Budget: 4402,
		problem.Forbidden: 4403, problem.Conflict: 4409, problem.RateLimited: 4429, problem.Unavailable: 1011, problem.ShuttingDown: 1001} {
		if answers[k].close != code {
			t.Errorf("kind %v: close %d, want %d", k, answers[k].close, code)
		}
	}
}

// TestSSEHeartbeat: a started stream that stays silent gets comment lines
// at least every heartbeat; none before the first event (a refusal there
// is still a status) and nothing after the ending event.
func TestSSEHeartbeat(t *testing.T) {
	old := SSEHeartbeat
	SSEHeartbeat = 60 * time.Millisecond
	t.Cleanup(func() { SSEHeartbeat = old })
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	{
		mux.HandleFunc("GET /test/sse", func(w http.ResponseWriter, r *http.Request) {
			sse := NewSSE(w)
			defer sse.Close()
			time.Sleep(200 * time.Millisecond) // silent before the first event: no heartbeat
			_ = sse.Send(map[string]string{"type": "ready"})
			time.Sleep(400 * time.Millisecond)
			_ = sse.End(map[string]string{"type": "done"})
			time.Sleep(200 * time.Millisecond)
			if err := sse.Send(map[string]string{"type": "late"}); err == nil {
				t.Error("send after the ending event must fail")
			}
		})
		mux.HandleFunc("GET /test/sse-refused", func(w http.ResponseWriter, r *http.Request) {
			sse := NewSSE(w)
			defer sse.Close()
			time.Sleep(200 * time.Millisecond)
			sse.Fail(problem.New(problem.Budget, "token budget used up"), map[string]string{"type": "error"})
		})
	}
	resp, err := http.Get(ts.URL + "/test/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) < 4 || lines[0] != `data: {"type":"ready"}` || lines[len(lines)-1] != `data: {"type":"done"}` {
		t.Fatalf("stream: %q", lines)
	}
	beats := 0
	for _, l := range lines[1 : len(lines)-1] {
		if l != ": keep-alive" {
			t.Fatalf("unexpected line between the events: %q", l)
		}
		beats++
	}
	if beats < 2 {
		t.Fatalf("%d heartbeats in 400 ms at a 60 ms heartbeat: %q", beats, lines)
	}

	resp2, err := http.Get(ts.URL + "/test/sse-refused")
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	var e ErrorBody
	if err := json.NewDecoder(resp2.Body).Decode(&e); resp2.StatusCode != http.StatusPaymentRequired || err != nil || !strings.Contains(e.Error, "used up") {
		t.Fatalf("refusal before the first event: %d %q %v", resp2.StatusCode, e.Error, err)
	}
}

// TestDemoModelCallsSetting: the share follows limits.demo_model_calls
// when set, and is the sequences less one (at least one) when 0.
func TestDemoModelCallsSetting(t *testing.T) {
	ts := &API{Config: configs.Defaults()}
	for _, tc := range []struct {
		setting, parallel, want int
	}{{0, 4, 3}, {0, 1, 1}, {0, 2, 1}, {2, 4, 2}, {6, 4, 6}} {
		ts.Config.Bounds.DemoModelCalls, ts.Config.Models.LLM.Parallel = tc.setting, tc.parallel
		if got, _ := ts.demoCallLimit(); got != tc.want {
			t.Errorf("setting %d, %d sequences: share %d, want %d", tc.setting, tc.parallel, got, tc.want)
		}
	}
}
