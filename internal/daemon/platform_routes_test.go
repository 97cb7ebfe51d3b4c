package daemon

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	platformroutes "boxd/web/routes/platform"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/internal/platform"
	"boxd/internal/problem"
	"boxd/internal/records"
	"boxd/internal/store"
	"boxd/web"
	"boxd/web/api"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *clock { return &clock{t: t} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

const adminSecret = "admin-secret-for-tests-0123456789"

type call struct {
	method, path string
	body         any // string, []byte or a value to encode
	token        string
	headers      map[string]string
	client       *http.Client
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

func (r reply) errMsg(t *testing.T) string {
	t.Helper()
	m := r.json(t)
	msg, ok := m["error"].(string)
	if !ok || msg == "" || len(m) != 1 {
		t.Fatalf("error body must be {\"error\": \"...\"}, got %s", r.body)
	}
	return msg
}

func (ts *testServer) do(t *testing.T, c call) reply {
	t.Helper()
	var rd io.Reader
	switch b := c.body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(c.method, ts.url+c.path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	client := c.client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: body}
}

// fromAddr is a client whose connections come from another loopback address.
func fromAddr(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

func session(t *testing.T, ts *testServer, vertical string) string {
	t.Helper()
	r := ts.do(t, call{method: "POST", path: "/demo/session", body: map[string]string{"vertical": vertical}})
	if r.status != http.StatusOK {
		t.Fatalf("create %s session: %d %s", vertical, r.status, r.body)
	}
	return r.json(t)["token"].(string)
}

func createKey(t *testing.T, ts *testServer, spec any) (key, id string) {
	t.Helper()
	r := ts.do(t, call{method: "POST", path: "/v1/keys", body: spec, token: adminSecret})
	if r.status != http.StatusCreated {
		t.Fatalf("create key: %d %s", r.status, r.body)
	}
	m := r.json(t)
	return m["key"].(string), m["key_id"].(string)
}

// testRoutes adds routes that exercise the bearer middleware the way model
// routes will: vertical code, spend ?tokens= generated tokens, hold the
// demo-token lock until ?hold= is released.
func testRoutes(holds map[string]chan struct{}, mu *sync.Mutex) func(*Box) {
	return func(s *Box) {
		s.Server.Handle(http.MethodPost, "/test/code", func(w http.ResponseWriter, r *http.Request) {
			pr := principalOf(s, w, r, "code")
			if pr == nil {
				return
			}
			unlock, d := pr.Lock()
			if d != nil {
				api.WriteProblem(w, d)
				return
			}
			defer unlock()
			want, _ := strconv.ParseInt(r.URL.Query().Get("tokens"), 10, 64)
			res, d := pr.ReserveTokens(r.Context(), max(want, 1))
			if d != nil {
				api.WriteProblem(w, d)
				return
			}
			if h := r.URL.Query().Get("hold"); h != "" {
				mu.Lock()
				ch := holds[h]
				mu.Unlock()
				<-ch
			}
			used := min(want, res.Granted)
			_ = res.Commit(r.Context(), used)
			left, _ := pr.TokensLeft(r.Context())
			api.WriteJSON(w, http.StatusOK, map[string]int64{"used": used, "left": left})
		})
		s.Server.Handle(http.MethodGet, "/test/any", func(w http.ResponseWriter, r *http.Request) {
			if pr := principalOf(s, w, r, ""); pr != nil {
				api.WriteJSON(w, http.StatusOK, map[string]string{"caller": pr.LogID()})
			}
		})
	}
}

func platformServer(t *testing.T, cfg *configs.Config, clk *clock) *testServer {
	t.Helper()
	if cfg == nil {
		cfg = configs.Defaults()
	}
	var now func() time.Time
	if clk != nil {
		now = clk.Now
	}
	return launch(t, cfg, web.Probes{}, now, testRoutes(map[string]chan struct{}{}, &sync.Mutex{}))
}

func TestDemoSessionEveryVertical(t *testing.T) {
	clk := newClock(time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC))
	cfg := configs.Defaults()
	cfg.Limits.SessionLifetimeS = 3600
	cfg.Limits.AudioBudgetS = 300
	cfg.Limits.TokenBudget = 20000
	ts := platformServer(t, cfg, clk)
	seen := map[string]bool{}
	for _, v := range platform.Verticals {
		r := ts.do(t, call{method: "POST", path: "/demo/session", body: map[string]string{"vertical": v}})
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", v, r.status, r.body)
		}
		if r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", v, r.header.Get("Cache-Control"))
		}
		var s platformroutes.DemoSession
		if err := json.Unmarshal(r.body, &s); err != nil {
			t.Fatal(err)
		}
		if s.ExpiresAt != clk.Now().Unix()+3600 || s.Budget.SecondsAudio != 300 || s.Budget.LLMTokens != 20000 {
			t.Errorf("%s: session = %+v", v, s)
		}
		// At least 128 bits: 43 base64url characters carry 256.
		if len(strings.TrimPrefix(s.Token, "ds_")) < 22 || seen[s.Token] {
			t.Errorf("%s: weak or repeated token %q", v, s.Token)
		}
		seen[s.Token] = true
		if len(r.json(t)) != 3 {
			t.Errorf("fields: %s", r.body)
		}
	}
}

func TestDemoSessionBadInput(t *testing.T) {
	ts := platformServer(t, nil, nil)
	cases := []struct {
		name   string
		body   any
		ctype  string
		status int
		want   string
	}{
		{"unknown vertical", `{"vertical":"astrology"}`, "", 400, `unknown vertical "astrology"; use one of: clinical, sales, field, translate, code, studio, auditor, storefront-accessibility-pass, fill-and-stop, oral-assessment, migration-check, geo-audit, review-reply (the contract's walkthrough-to-quote,`},
		{"missing vertical", `{}`, "", 400, "vertical is required"},
		{"empty body", ``, "", 400, "empty body"},
		{"vertical not a string", `{"vertical":7}`, "", 400, "field vertical must be a string, not a number"},
		{"unknown field", `{"vertical":"code","plan":"x"}`, "", 400, `unknown field "plan"`},
		{"not JSON", `vertical=code`, "", 400, "not valid JSON"},
		{"array", `["code"]`, "", 400, "must be a JSON object, not an array"},
		{"two objects", `{"vertical":"code"}{"vertical":"code"}`, "", 400, "data after its JSON object"},
		{"truncated", `{"vertical":"co`, "", 400, "middle of its JSON"},
		{"too large", `{"vertical":"code","x":"` + strings.Repeat("a", 5000) + `"}`, "", 413, "larger than 4096 bytes"},
		{"form post", `vertical=code`, "application/x-www-form-urlencoded", 415, "Content-Type: application/json"},
		{"JSON sent as a form (curl -d)", `{"vertical":"code"}`, "application/x-www-form-urlencoded", 415, "curl -d sends application/x-www-form-urlencoded"},
		{"text/plain", `{"vertical":"code"}`, "text/plain", 415, "Content-Type"},
		{"multipart", `{"vertical":"code"}`, "multipart/form-data; boundary=x", 415, "Content-Type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", ts.url+"/demo/session", strings.NewReader(tc.body.(string)))
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			r := reply{status: resp.StatusCode, body: body}
			if r.status != tc.status || !strings.Contains(r.errMsg(t), tc.want) {
				t.Errorf("%d %s, want %d containing %q", r.status, body, tc.status, tc.want)
			}
		})
	}
	if r := ts.do(t, call{method: "GET", path: "/demo/session"}); r.status != 405 {
		t.Errorf("GET /demo/session = %d", r.status)
	}
}

func TestDemoSessionPerAddressLimit(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	clk := newClock(t0)
	cfg := configs.Defaults()
	cfg.Limits.SessionsPerAddressPerHour = 3
	ts := platformServer(t, cfg, clk)
	for i := range 3 {
		session(t, ts, "code")
		if i < 2 {
			clk.Advance(10 * time.Minute)
		}
	}
	clk.Advance(10 * time.Minute) // t0+30m
	r := ts.do(t, call{method: "POST", path: "/demo/session", body: map[string]string{"vertical": "code"}})
	if r.status != 429 || !strings.Contains(r.errMsg(t), "this address created 3 demo sessions in the last hour") {
		t.Fatalf("4th session: %d %s", r.status, r.body)
	}
	// Retry-After: until the oldest (t0) leaves the hour window.
	if got := r.header.Get("Retry-After"); got != "1800" {
		t.Errorf("Retry-After = %q, want 1800", got)
	}
	// Another address is not limited by this one.
	if r := ts.do(t, call{method: "POST", path: "/demo/session", body: map[string]string{"vertical": "code"}, client: fromAddr("127.0.0.2")}); r.status != 200 {
		t.Errorf("other address: %d %s", r.status, r.body)
	}
	clk.Set(t0.Add(time.Hour + time.Second))
	if r := ts.do(t, call{method: "POST", path: "/demo/session", body: map[string]string{"vertical": "code"}}); r.status != 200 {
		t.Errorf("after the window: %d %s", r.status, r.body)
	}
}

func TestDemoSessionTotalLimit(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	clk := newClock(t0)
	cfg := configs.Defaults()
	cfg.Limits.SessionsPerHour = 2
	ts := platformServer(t, cfg, clk)
	session(t, ts, "code")
	clk.Advance(5 * time.Minute)
	if r := ts.do(t, call{method: "POST", path: "/demo/session", body: map[string]string{"vertical": "code"}, client: fromAddr("127.0.0.3")}); r.status != 200 {
		t.Fatalf("second: %d", r.status)
	}
	r := ts.do(t, call{method: "POST", path: "/demo/session", body: map[string]string{"vertical": "code"}, client: fromAddr("127.0.0.4")})
	if r.status != 429 || r.header.Get("Retry-After") != "3300" || !strings.Contains(r.errMsg(t), "limit 2") {
		t.Errorf("over the total: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
}

func TestDemoSessionLiveCap(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.LiveCap = 1
	ts := platformServer(t, cfg, nil)
	tok := session(t, ts, "clinical")
	pr, d := ts.deps.Platform.Authenticate(context.Background(), tok, "clinical")
	if d != nil {
		t.Fatal(d)
	}
	release, d := pr.AcquireLive()
	if d != nil {
		t.Fatal(d)
	}
	for _, v := range []string{"clinical", "sales", "field", "translate"} {
		r := ts.do(t, call{method: "POST", path: "/demo/session", body: map[string]string{"vertical": v}})
		if r.status != 429 || r.header.Get("Retry-After") != "30" {
			t.Errorf("%s with the live cap full: %d Retry-After %q", v, r.status, r.header.Get("Retry-After"))
		}
	}
	session(t, ts, "code") // not a live vertical
	if got := ts.Server.Health().LiveSessions; got != 1 {
		t.Errorf("healthz live_sessions = %d", got)
	}
	release()
	session(t, ts, "clinical")
}

func TestBearerAuth(t *testing.T) {
	clk := newClock(time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC))
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	cfg.Limits.SessionLifetimeS = 600
	ts := platformServer(t, cfg, clk)
	code := session(t, ts, "code")
	clinical := session(t, ts, "clinical")
	clinicalKey, _ := createKey(t, ts, map[string]any{"verticals": []string{"clinical"}})
	allKey, _ := createKey(t, ts, map[string]any{})
	revokedKey, revokedID := createKey(t, ts, map[string]any{})
	if r := ts.do(t, call{method: "DELETE", path: "/v1/keys/" + revokedID, token: adminSecret}); r.status != 200 {
		t.Fatal(r.status)
	}
	cases := []struct {
		name   string
		token  string
		header string
		status int
		want   string
	}{
		{"no token", "", "", 401, "missing token"},
		{"not bearer", "", "Basic abc", 401, "must be Bearer"},
		{"unknown demo token", "ds_nope", "", 401, "unknown demo session token (demo sessions live in memory and end when the box restarts); create a session"},
		{"unknown key", "dk_nope", "", 401, "unknown developer key"},
		{"revoked key", revokedKey, "", 401, "was revoked"},
		{"token for another vertical", clinical, "", 403, "this demo token is for the clinical vertical; this route needs a code token"},
		{"key not allowed the vertical", clinicalKey, "", 403, "not allowed the code vertical (allowed: clinical)"},
		{"demo token", code, "", 200, ""},
		{"key for all verticals", allKey, "", 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := call{method: "POST", path: "/test/code", token: tc.token}
			if tc.header != "" {
				c.headers = map[string]string{"Authorization": tc.header}
			}
			r := ts.do(t, c)
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tc.status)
			}
			if tc.want != "" && !strings.Contains(r.errMsg(t), tc.want) {
				t.Errorf("error %s lacks %q", r.body, tc.want)
			}
		})
	}
	// Routes open to any vertical accept the clinical token.
	if r := ts.do(t, call{method: "GET", path: "/test/any", token: clinical}); r.status != 200 {
		t.Errorf("any-vertical route: %d", r.status)
	}
	// Expiry: 401 once expires_at passes.
	clk.Advance(601 * time.Second)
	r := ts.do(t, call{method: "POST", path: "/test/code", token: code})
	if r.status != 401 || !strings.Contains(r.errMsg(t), "expired") {
		t.Errorf("expired token: %d %s", r.status, r.body)
	}
}

func TestBudgets(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	cfg.Limits.TokenBudget = 10
	ts := platformServer(t, cfg, nil)
	tok := session(t, ts, "code")
	r := ts.do(t, call{method: "POST", path: "/test/code?tokens=7", token: tok})
	if r.status != 200 || r.json(t)["left"].(float64) != 3 {
		t.Fatalf("spend 7: %d %s", r.status, r.body)
	}
	// The cap: a call asking for more gets what is left.
	r = ts.do(t, call{method: "POST", path: "/test/code?tokens=50", token: tok})
	if r.status != 200 || r.json(t)["used"].(float64) != 3 {
		t.Fatalf("spend the rest: %d %s", r.status, r.body)
	}
	r = ts.do(t, call{method: "POST", path: "/test/code?tokens=1", token: tok})
	if msg := r.errMsg(t); r.status != 402 || msg != "token budget used up" {
		t.Errorf("used up: %d %q", r.status, msg)
	}
	key, _ := createKey(t, ts, map[string]any{"daily_llm_tokens": 5})
	ts.do(t, call{method: "POST", path: "/test/code?tokens=5", token: key})
	r = ts.do(t, call{method: "POST", path: "/test/code?tokens=1", token: key})
	if msg := r.errMsg(t); r.status != 402 || !strings.HasSuffix(msg, "for today") {
		t.Errorf("key used up: %d %q", r.status, msg)
	}
}

func TestConcurrentCallsCannotOverspend(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	holds := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	var mu sync.Mutex
	ts := launch(t, cfg, web.Probes{}, nil, testRoutes(holds, &mu))
	key, _ := createKey(t, ts, map[string]any{"daily_llm_tokens": 100})
	results := make(chan reply, 2)
	go func() { results <- ts.do(t, call{method: "POST", path: "/test/code?tokens=80&hold=a", token: key}) }()
	time.Sleep(100 * time.Millisecond)
	go func() { results <- ts.do(t, call{method: "POST", path: "/test/code?tokens=80&hold=b", token: key}) }()
	time.Sleep(100 * time.Millisecond)
	close(holds["a"])
	close(holds["b"])
	total := 0.0
	for range 2 {
		r := <-results
		if r.status == 200 {
			total += r.json(t)["used"].(float64)
		}
	}
	if total != 100 {
		t.Errorf("two concurrent calls spent %v of a 100-token budget", total)
	}
}

func TestDemoTokenRunsOneAtATime(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	holds := map[string]chan struct{}{"x": make(chan struct{}), "k": make(chan struct{})}
	var mu sync.Mutex
	ts := launch(t, cfg, web.Probes{}, nil, testRoutes(holds, &mu))
	tok := session(t, ts, "code")
	first := make(chan reply, 1)
	go func() { first <- ts.do(t, call{method: "POST", path: "/test/code?tokens=1&hold=x", token: tok}) }()
	time.Sleep(100 * time.Millisecond)
	r := ts.do(t, call{method: "POST", path: "/test/code?tokens=1", token: tok})
	if r.status != 409 || !strings.Contains(r.errMsg(t), "already has a run in progress") {
		t.Errorf("second run: %d %s", r.status, r.body)
	}
	close(holds["x"])
	if r := <-first; r.status != 200 {
		t.Errorf("first run: %d", r.status)
	}
	if r := ts.do(t, call{method: "POST", path: "/test/code?tokens=1", token: tok}); r.status != 200 {
		t.Errorf("after the first finished: %d %s", r.status, r.body)
	}
	// Keys are not limited to one run.
	key, _ := createKey(t, ts, map[string]any{})
	held := make(chan reply, 1)
	go func() { held <- ts.do(t, call{method: "POST", path: "/test/code?tokens=1&hold=k", token: key}) }()
	time.Sleep(100 * time.Millisecond)
	if r := ts.do(t, call{method: "POST", path: "/test/code?tokens=1", token: key}); r.status != 200 {
		t.Errorf("key second run: %d", r.status)
	}
	close(holds["k"])
	<-held
}

func TestKeyRequestRate(t *testing.T) {
	clk := newClock(time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC))
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	ts := platformServer(t, cfg, clk)
	key, id := createKey(t, ts, map[string]any{"requests_per_minute": 2})
	ts.do(t, call{method: "GET", path: "/test/any", token: key})
	clk.Advance(20 * time.Second)
	ts.do(t, call{method: "GET", path: "/test/any", token: key})
	r := ts.do(t, call{method: "GET", path: "/test/any", token: key})
	if r.status != 429 || r.header.Get("Retry-After") != "40" || !strings.Contains(r.errMsg(t), "limit 2") {
		t.Fatalf("third request: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	clk.Advance(41 * time.Second)
	if r := ts.do(t, call{method: "GET", path: "/test/any", token: key}); r.status != 200 {
		t.Errorf("after the window: %d", r.status)
	}
	rec := ts.do(t, call{method: "GET", path: "/v1/keys/" + id, token: adminSecret}).json(t)
	if got := rec["today"].(map[string]any)["requests"]; got != 3.0 {
		t.Errorf("requests counted today = %v, want 3 (refused ones are not)", got)
	}
}

func TestKeyDailyRollover(t *testing.T) {
	clk := newClock(time.Date(2026, 11, 21, 23, 59, 50, 0, time.UTC))
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	ts := platformServer(t, cfg, clk)
	key, id := createKey(t, ts, map[string]any{"daily_llm_tokens": 5, "verticals": "all"})
	ts.do(t, call{method: "POST", path: "/test/code?tokens=5", token: key})
	if r := ts.do(t, call{method: "POST", path: "/test/code?tokens=1", token: key}); r.status != 402 {
		t.Fatalf("before midnight: %d", r.status)
	}
	clk.Set(time.Date(2026, 11, 22, 0, 0, 1, 0, time.UTC))
	if r := ts.do(t, call{method: "POST", path: "/test/code?tokens=2", token: key}); r.status != 200 {
		t.Fatalf("after UTC midnight: %d %s", r.status, r.body)
	}
	var rec platform.KeyRecord
	if err := json.Unmarshal(ts.do(t, call{method: "GET", path: "/v1/keys/" + id, token: adminSecret}).body, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Today.Day != "2026-11-22" || rec.Today.LLMTokens != 2 || rec.Today.LLMTokensLeft != 3 || rec.Today.Requests != 1 {
		t.Errorf("today = %+v", rec.Today)
	}
	if len(rec.History) != 30 || rec.History[0].Day != "2026-11-21" || rec.History[0].LLMTokens != 5 || rec.History[0].Requests != 2 ||
		rec.History[29].Day != "2026-10-23" || rec.History[1].LLMTokens != 0 {
		t.Errorf("history = %+v ... %+v", rec.History[0], rec.History[29])
	}
}

func TestAdminRoutes(t *testing.T) {
	none := platformServer(t, nil, nil)
	for _, c := range []call{{method: "POST", path: "/v1/keys", body: "{}"}, {method: "GET", path: "/v1/keys/key_x"}, {method: "DELETE", path: "/v1/keys/key_x"}} {
		c.token = adminSecret
		if r := none.do(t, c); r.status != 503 || !strings.Contains(r.errMsg(t), "no admin secret is configured") {
			t.Errorf("%s %s without a configured secret: %d %s", c.method, c.path, r.status, r.body)
		}
	}

	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	ts := platformServer(t, cfg, nil)
	for _, tc := range []struct {
		name   string
		c      call
		status int
	}{
		{"missing secret", call{method: "POST", path: "/v1/keys", body: "{}"}, 401},
		{"wrong secret", call{method: "POST", path: "/v1/keys", body: "{}", token: adminSecret + "x"}, 401},
		{"demo token", call{method: "GET", path: "/v1/keys/key_x", token: "ds_x"}, 401},
		{"from a browser", call{method: "POST", path: "/v1/keys", body: "{}", token: adminSecret, headers: map[string]string{"Origin": "http://localhost:3000"}}, 403},
	} {
		if r := ts.do(t, tc.c); r.status != tc.status {
			t.Errorf("%s: %d %s", tc.name, r.status, r.body)
		} else {
			r.errMsg(t)
		}
	}

	// Create with defaults (empty body too).
	for _, body := range []any{nil, map[string]any{}} {
		r := ts.do(t, call{method: "POST", path: "/v1/keys", body: body, token: adminSecret})
		if r.status != 201 || r.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		var kc platform.KeyCreated
		_ = json.Unmarshal(r.body, &kc)
		want := platform.LimitsView{Verticals: "all", DailyLLMTokens: 200000, DailyAudioSeconds: 1800, RequestsPerMinute: 60, ConcurrentLiveSessions: 2}
		if !strings.HasPrefix(kc.Key, "dk_") || kc.Plan != "free" || kc.Created == 0 || fmt.Sprint(kc.Limits) != fmt.Sprint(want) {
			t.Errorf("created = %+v", kc)
		}
	}
	r := ts.do(t, call{method: "POST", path: "/v1/keys", token: adminSecret, body: map[string]any{
		"label": "scribe app", "verticals": []string{"clinical", "code", "clinical"}, "daily_llm_tokens": 5_000_000, "daily_audio_seconds": 28800, "plan": "pilot"}})
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	created := r.json(t)
	id := created["key_id"].(string)
	if fmt.Sprint(created["limits"].(map[string]any)["verticals"]) != "[clinical code]" || created["label"] != "scribe app" || created["plan"] != "pilot" {
		t.Errorf("created = %v", created)
	}
	// Read: no key in the record.
	g := ts.do(t, call{method: "GET", path: "/v1/keys/" + id, token: adminSecret})
	if g.status != 200 || bytes.Contains(g.body, []byte(created["key"].(string))) {
		t.Fatalf("get: %d %s", g.status, g.body)
	}
	rec := g.json(t)
	for _, f := range []string{"key_id", "label", "plan", "created", "revoked", "revoked_at", "limits", "today", "history"} {
		if _, ok := rec[f]; !ok {
			t.Errorf("record lacks %s", f)
		}
	}
	if rec["revoked"] != false || rec["revoked_at"] != nil {
		t.Errorf("fresh key: revoked %v at %v", rec["revoked"], rec["revoked_at"])
	}
	// Revoke: immediate, idempotent.
	d := ts.do(t, call{method: "DELETE", path: "/v1/keys/" + id, token: adminSecret})
	if d.status != 200 || string(bytes.TrimSpace(d.body)) != `{"key_id":"`+id+`","revoked":true}` {
		t.Errorf("revoke: %d %s", d.status, d.body)
	}
	if r := ts.do(t, call{method: "GET", path: "/test/any", token: created["key"].(string)}); r.status != 401 {
		t.Errorf("revoked key still works: %d", r.status)
	}
	if d := ts.do(t, call{method: "DELETE", path: "/v1/keys/" + id, token: adminSecret}); d.status != 200 {
		t.Errorf("revoke twice: %d", d.status)
	}
	rec = ts.do(t, call{method: "GET", path: "/v1/keys/" + id, token: adminSecret}).json(t)
	if rec["revoked"] != true || rec["revoked_at"] == nil {
		t.Errorf("revoked record: %v %v", rec["revoked"], rec["revoked_at"])
	}
	for _, c := range []call{{method: "GET", path: "/v1/keys/key_unknown"}, {method: "DELETE", path: "/v1/keys/key_unknown"}} {
		c.token = adminSecret
		if r := ts.do(t, c); r.status != 404 || !strings.Contains(r.errMsg(t), "no developer key") {
			t.Errorf("%s unknown: %d", c.method, r.status)
		}
	}
}

func TestKeyCreationBadInput(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	ts := platformServer(t, cfg, nil)
	cases := []struct {
		body string
		want string
	}{
		{`{"daily_llm_tokens": 5000001}`, "daily_llm_tokens is 5000001; use 0 to 5000000"},
		{`{"daily_audio_seconds": 28801}`, "daily_audio_seconds is 28801; use 0 to 28800"},
		{`{"daily_llm_tokens": -1}`, "use 0 to"},
		{`{"daily_llm_tokens": 1.5}`, "field daily_llm_tokens must be a whole number"},
		{`{"daily_llm_tokens": "100"}`, "field daily_llm_tokens must be a whole number, not a string"},
		{`{"verticals": ["clinical", "astrology"]}`, `unknown vertical "astrology"`},
		{`{"verticals": "some"}`, `use "all" or an array`},
		{`{"verticals": []}`, "verticals is empty"},
		{`{"verticals": [1]}`, "array of vertical ids"},
		{`{"plan": "Gold Plan"}`, `plan "Gold Plan"`},
		{`{"label": 5}`, "field label must be a string"},
		{`{"label": "` + strings.Repeat("x", 201) + `"}`, "label is 201 characters"},
		{`{"requests_per_minute": 0}`, "requests_per_minute is 0"},
		{`{"owner": "me"}`, `unknown field "owner"`},
	}
	for _, tc := range cases {
		r := ts.do(t, call{method: "POST", path: "/v1/keys", body: tc.body, token: adminSecret})
		if r.status != 400 || !strings.Contains(r.errMsg(t), tc.want) {
			t.Errorf("%s: %d %s, want 400 with %q", tc.body, r.status, r.body, tc.want)
		}
	}
	keys, _ := ts.deps.Platform.Store().ListKeys(context.Background())
	if len(keys) != 0 {
		t.Errorf("refused creations stored %d keys", len(keys))
	}
}

func TestOrigins(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Origins = []string{"https://scribe.clinic.example"}
	ts := platformServer(t, cfg, nil)
	cases := []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"https://scribe.clinic.example", true},
		{"http://localhost:3000", true},
		{"https://localhost", true},
		{"http://127.0.0.1:5173", true},
		{"https://evil.example", false},
		{"https://scribe.clinic.example.evil.example", false},
		{"http://scribe.clinic.example", false},
		{"null", false},
		{"http://localhost.evil.example", false},
	}
	for _, tc := range cases {
		c := call{method: "GET", path: "/healthz"}
		if tc.origin != "" {
			c.headers = map[string]string{"Origin": tc.origin}
		}
		r := ts.do(t, c)
		if tc.ok {
			if r.status != 200 {
				t.Errorf("%q refused: %d", tc.origin, r.status)
			}
			if tc.origin != "" && (r.header.Get("Access-Control-Allow-Origin") != tc.origin || r.header.Get("Access-Control-Expose-Headers") != "x-service-receipt, Retry-After") {
				t.Errorf("%q: CORS headers %v", tc.origin, r.header)
			}
		} else if r.status != 403 || !strings.Contains(r.errMsg(t), "is not allowed") {
			t.Errorf("%q allowed: %d", tc.origin, r.status)
		}
	}
	// Preflight.
	r := ts.do(t, call{method: "OPTIONS", path: "/demo/session", headers: map[string]string{
		"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}})
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(r.header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight: %d %v", r.status, r.header)
	}
	if r := ts.do(t, call{method: "OPTIONS", path: "/demo/session", headers: map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}}); r.status != 403 {
		t.Errorf("preflight from a refused origin: %d", r.status)
	}
}

func TestSigningKeyAndRestartSurvival(t *testing.T) {
	state := t.TempDir()
	cfg := configs.Defaults()
	cfg.StateDir = state
	cfg.AdminSecret = configs.Secret(adminSecret)
	ts := platformServer(t, cfg, nil)
	sk := ts.do(t, call{method: "GET", path: "/attest/signing-key"}).json(t)
	pub, _ := sk["pubkey"].(string)
	if sk["scheme"] != "ed25519" || len(pub) != 64 || sk["key_id"] != attest.KeyID(mustHex(t, pub)) {
		t.Fatalf("signing key = %v", sk)
	}
	key, id := createKey(t, ts, map[string]any{"daily_llm_tokens": 10})
	ts.do(t, call{method: "POST", path: "/test/code?tokens=4", token: key})
	ts.stop()
	<-ts.done
	ts.done <- nil

	cfg2 := configs.Defaults()
	cfg2.StateDir = state
	cfg2.AdminSecret = configs.Secret(adminSecret)
	ts2 := platformServer(t, cfg2, nil)
	if got := ts2.do(t, call{method: "GET", path: "/attest/signing-key"}).json(t)["pubkey"]; got != pub {
		t.Errorf("signing key changed across a restart: %v vs %s", got, pub)
	}
	rec := ts2.do(t, call{method: "GET", path: "/v1/keys/" + id, token: adminSecret}).json(t)
	if rec["today"].(map[string]any)["llm_tokens"] != 4.0 {
		t.Errorf("usage lost across a restart: %v", rec["today"])
	}
	r := ts2.do(t, call{method: "POST", path: "/test/code?tokens=10", token: key})
	if r.status != 200 || r.json(t)["used"].(float64) != 6 {
		t.Errorf("key after restart: %d %s", r.status, r.body)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b := make([]byte, len(s)/2)
	if _, err := fmt.Sscanf(s, "%x", &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReceipts(t *testing.T) {
	cfg := configs.Defaults()
	ts := platformServer(t, cfg, nil)
	dev := "key_0123"
	signed, err := ts.deps.Receipts.Issue(context.Background(), attest.ModelCall{
		ID: "chatcmpl-abc", Model: "model-27b", WeightsRoot: strings.Repeat("1f", 32),
		RequestHash: attest.HashText("req"), OutputHash: attest.HashText("out"),
		Params: map[string]string{"temperature": "0.2"}, Usage: attest.NewUsage(12, 30), KeyID: &dev,
	}, "gemma-3-27b-it")
	if err != nil {
		t.Fatal(err)
	}
	r := ts.do(t, call{method: "GET", path: "/receipts/chatcmpl-abc"})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	m := r.json(t)
	for _, f := range []string{"id", "model", "weights_root", "request_hash", "output_hash", "provider", "gateway", "proof", "checks", "status", "upstream_model", "usage", "cost", "receipt", "key_id"} {
		if _, ok := m[f]; !ok {
			t.Errorf("record lacks %s", f)
		}
	}
	prov := m["provider"].(map[string]any)
	if prov["pubkey"] != nil || prov["sig"] != nil || prov["miner_id"] != nil {
		t.Errorf("provider = %v, want nulls", prov)
	}
	if m["status"] != "attested" || m["key_id"] != dev || m["upstream_model"] != "gemma-3-27b-it" || m["cost"] != nil ||
		m["gateway"].(map[string]any)["pubkey"] != ts.deps.Key.PublicKeyHex() || m["gateway"].(map[string]any)["sig"] != signed.Sig ||
		m["usage"].(map[string]any)["total_tokens"] != 42.0 || m["proof"].(map[string]any)["verified"] != true {
		t.Errorf("record = %s", r.body)
	}
	names := []string{}
	for _, c := range m["checks"].([]any) {
		cm := c.(map[string]any)
		names = append(names, cm["name"].(string))
		if cm["ok"] != true {
			t.Errorf("check %v failed", cm)
		}
	}
	if strings.Join(names, ",") != "commitment,signature,key_pinned,metering" {
		t.Errorf("checks = %v", names)
	}
	if bytes.Contains(r.body, []byte(`"req"`)) {
		t.Error("receipt record holds text")
	}
	if r := ts.do(t, call{method: "GET", path: "/receipts/chatcmpl-nope"}); r.status != 404 {
		t.Errorf("unknown receipt: %d", r.status)
	}

	// Checks are recomputed on read: tamper with the stored row.
	db, err := sql.Open("sqlite", filepath.Join(cfg.StateDir, store.File))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE receipts SET body = replace(body, '"completion_tokens":"30"', '"completion_tokens":"3"') WHERE id = 'chatcmpl-abc'`); err != nil {
		t.Fatal(err)
	}
	m = ts.do(t, call{method: "GET", path: "/receipts/chatcmpl-abc"}).json(t)
	if m["status"] != "unverified" || m["proof"].(map[string]any)["verified"] != false {
		t.Errorf("tampered receipt: status %v proof %v", m["status"], m["proof"])
	}
}

func TestRecordVerifyRoute(t *testing.T) {
	ts := platformServer(t, nil, nil)
	b := attest.NewRecord("site-check", "rec_1", nil)
	b.AddText("input", "example.com", nil)
	b.AddText("finding", "robots.txt blocks GPTBot", map[string]any{"crawler": "GPTBot", "allowed": false})
	rec, err := b.Sign(ts.deps.Key, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(rec)

	ok := ts.do(t, call{method: "POST", path: "/record/verify", body: map[string]json.RawMessage{"record": raw}})
	var v records.Check
	if err := json.Unmarshal(ok.body, &v); err != nil || ok.status != 200 || !v.OK || !v.SignedByThisBox || v.Entries != 2 {
		t.Fatalf("valid record: %d %s", ok.status, ok.body)
	}
	asString, _ := json.Marshal(map[string]string{"record": string(raw)})
	if r := ts.do(t, call{method: "POST", path: "/record/verify", body: asString}); r.json(t)["ok"] != true {
		t.Errorf("record as a string: %s", r.body)
	}

	tampered := bytes.Replace(raw, []byte("robots.txt blocks GPTBot"), []byte("robots.txt allows GPTBot"), 1)
	r := ts.do(t, call{method: "POST", path: "/record/verify", body: map[string]json.RawMessage{"record": tampered}})
	_ = json.Unmarshal(r.body, &v)
	if r.status != 200 || v.OK || v.FirstBadEntry == nil || *v.FirstBadEntry != 2 || !strings.Contains(v.Problem, "entry 2: text changed") {
		t.Errorf("tampered: %s", r.body)
	}

	other := attest.NewKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	b2 := attest.NewRecord("site-check", "rec_2", nil)
	b2.AddText("input", "x", nil)
	foreign, _ := b2.Sign(other, time.Now())
	fr, _ := json.Marshal(foreign)
	r = ts.do(t, call{method: "POST", path: "/record/verify", body: map[string]json.RawMessage{"record": fr}})
	_ = json.Unmarshal(r.body, &v)
	if v.OK || v.SignedByThisBox || !strings.Contains(v.Problem, "signer") {
		t.Errorf("foreign signer: %s", r.body)
	}

	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{}`, 400}, {`{"record": null}`, 400}, {`{"rec": {}}`, 400}, {`nope`, 400},
		{`{"record": "` + strings.Repeat("a", records.VerifyBodyLimit) + `"}`, 413},
	} {
		if r := ts.do(t, call{method: "POST", path: "/record/verify", body: tc.body}); r.status != tc.status {
			t.Errorf("%.40s: %d, want %d", tc.body, r.status, tc.status)
		} else {
			r.errMsg(t)
		}
	}
	if r := ts.do(t, call{method: "POST", path: "/record/verify", body: `{"record": {"format": "x"}}`}); r.status != 200 || r.json(t)["ok"] != false {
		t.Errorf("malformed record: %d %s", r.status, r.body)
	}
}

// TestKeyReadsItsOwnRecord: GET /v1/keys/self answers a developer key its
// own record (the admin's view of it), a demo token 403 saying why, and no
// token 401; the admin route for the same id still needs the secret.
func TestKeyReadsItsOwnRecord(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	ts := platformServer(t, cfg, nil)
	key, id := createKey(t, ts, map[string]any{"label": "scribe app", "daily_llm_tokens": 5000})
	r := ts.do(t, call{method: "GET", path: "/v1/keys/self", token: key})
	if r.status != 200 || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("self: %d %s", r.status, r.body)
	}
	admin := ts.do(t, call{method: "GET", path: "/v1/keys/" + id, token: adminSecret})
	var self, byAdmin map[string]any
	decodeInto(t, r, &self)
	decodeInto(t, admin, &byAdmin)
	if self["key_id"] != id || self["label"] != "scribe app" || fmt.Sprint(self["limits"]) != fmt.Sprint(byAdmin["limits"]) {
		t.Errorf("self %s\nadmin %s", r.body, admin.body)
	}
	if r := ts.do(t, call{method: "GET", path: "/v1/keys/self", token: session(t, ts, "code")}); r.status != 403 || !strings.Contains(r.errMsg(t), "not a key") {
		t.Errorf("a demo token: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "GET", path: "/v1/keys/self"}); r.status != 401 {
		t.Errorf("no token: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "GET", path: "/v1/keys/" + id, token: key}); r.status != 401 {
		t.Errorf("a key reading the admin route: %d %s", r.status, r.body)
	}
}

// TestWrongKindOfCredential: an OpenAI-style sk- key and the admin secret
// sent where a key or demo token belongs are named as what they are, with
// what to send instead.
func TestWrongKindOfCredential(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	ts := platformServer(t, cfg, nil)
	for _, tc := range []struct{ token, want string }{
		{"sk-proj-abc123", "OpenAI-style key (sk-…)"},
		{adminSecret, "the admin secret opens the admin routes only"},
		{"nonsense", "unknown demo session token"},
	} {
		r := ts.do(t, call{method: "GET", path: "/v1/models", token: tc.token})
		if r.status != 401 || !strings.Contains(r.errMsg(t), tc.want) || (tc.want != "unknown demo session token" && !strings.Contains(r.errMsg(t), "dk_ developer key")) {
			t.Errorf("%.8s…: %d %s", tc.token, r.status, r.body)
		}
	}
}

// principalOf resolves the caller of a route of vertical ("" for any) from
// the bearer token, writing the refusal when there is one.
func principalOf(s *Box, w http.ResponseWriter, r *http.Request, vertical string) *platform.Principal {
	token, ok := api.BearerToken(r)
	if !ok {
		api.WriteProblem(w, problem.New(problem.Unauthorized, "%s", "the Authorization header must be Bearer <demo session token or dk_ developer key>"))
		return nil
	}
	pr, d := s.deps.Platform.Authenticate(r.Context(), token, vertical)
	if d != nil {
		api.WriteProblem(w, d)
		return nil
	}
	return pr
}
