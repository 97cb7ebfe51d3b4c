package daemon

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"boxd/configs"
	"boxd/engine/browser"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/chat"
	"boxd/web"

	"boxd/pipelines/a11y"
	"boxd/pipelines/a11y/axe"
)

// a11yServer runs the server with the rule engine from the npm package
// make deps installs and the WCAG table from the test data.
func a11yServer(t *testing.T) *testServer {
	t.Helper()
	return a11yServerWith(t, nil, nil)
}

// a11yServerWith is a11yServer with cfg (nil: the defaults) and more
// set-up after the server is made.
func a11yServerWith(t *testing.T, cfg *configs.Config, extra func(*Box)) *testServer {
	t.Helper()
	e, err := axe.Load("../../pipelines/a11y/axe/npm/node_modules/axe-core")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return start(t, cfg, web.Probes{}, func(s *Box) {
		s.A11y.Axe, s.A11y.AxeErr = e, nil
		if dir := os.Getenv("BOXD_TEST_DATA"); dir != "" {
			s.A11y.Criteria, _ = axe.LoadCriteria(dir)
		}
		if s.A11y.Browser == nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(s.A11y.BrowserErr)
			}
			t.Skip(s.A11y.BrowserErr)
		}
		if extra != nil {
			extra(s)
		}
	})
}

// sseTypes lists the types of a stream's events, less progress events
// (a run sends them when silent for api.RunProgress, as a slow machine's is).
func sseTypes(body []byte) []string {
	var types []string
	for _, line := range strings.Split(string(body), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			i := strings.Index(d, `"type":"`)
			if typ := strings.SplitN(d[i+8:], `"`, 2)[0]; typ != "progress" {
				types = append(types, typ)
			}
		}
	}
	return types
}

// TestA11yAudit: POST /a11y/audit on the shop sample answers the audit:
// findings ranked with the unreachable add-to-cart first, the summary,
// checked with the rule engine's version and hash, not_checked, and a
// signed record that /record/verify accepts; the same streamed sends
// start, page, names, errors, findings, result, budget, done.
func TestA11yAudit(t *testing.T) {
	ts := a11yServer(t)
	tok := session(t, ts, "storefront-accessibility-pass")
	r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: tok, body: map[string]any{"sample_id": "shop-with-issues"}})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	out := r.json(t)
	fs := out["findings"].([]any)
	first := fs[0].(map[string]any)
	checked := out["checked"].(map[string]any)
	if len(fs) < 6 || first["priority"] != "P1" || checked["rule_engine"].(map[string]any)["version"] != "4.14.1" || len(out["not_checked"].([]any)) == 0 || out["receipt_events"] == nil {
		t.Fatalf("audit %s", r.body)
	}
	if v := ts.do(t, call{method: "POST", path: "/record/verify", body: map[string]any{"record": out["record"]}}); v.status != 200 || !strings.Contains(string(v.body), `"ok":true`) {
		t.Errorf("record verify: %d %s", v.status, v.body)
	}
	tok2 := session(t, ts, "storefront-accessibility-pass")
	sr := ts.do(t, call{method: "POST", path: "/a11y/audit", token: tok2, body: map[string]any{"sample_id": "clean-shop", "stream": true, "mobile": true}})
	types := sseTypes(sr.body)
	if sr.status != 200 || strings.Join(types, " ") != "start page names errors result budget done" {
		t.Errorf("stream %d: %v", sr.status, types)
	}
	// mobile: the page is laid out and shot at 390 x 844.
	shot := regexp.MustCompile(`"screenshot_png_b64":"([^"]+)"`).FindSubmatch(sr.body)
	if shot == nil {
		t.Fatal("no screenshot in the page event")
	}
	raw, err := base64.StdEncoding.DecodeString(string(shot[1]))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.DecodeConfig(bytes.NewReader(raw))
	if err != nil || img.Width != 390 || img.Height != 844 || !strings.Contains(string(sr.body), `"width":390,"height":844`) {
		t.Errorf("mobile screenshot %+v %v", img, err)
	}
}

// TestA11yRefusals: the body's rules and who may audit what, each with
// its status; info and samples need no token.
func TestA11yRefusals(t *testing.T) {
	ts := a11yServer(t)
	tok := session(t, ts, "storefront-accessibility-pass")
	yes := true
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
		want   string
	}{
		{"nothing", map[string]any{}, 400, "exactly one of"},
		{"two sources", map[string]any{"html": "<p>x</p>", "synthetic": true, "sample_id": "clean-shop"}, 400, "exactly one of"},
		{"html too long", map[string]any{"html": strings.Repeat("a", 400_001), "synthetic": &yes}, 413, "at most 400000"},
		{"unknown sample", map[string]any{"sample_id": "shop"}, 404, "no sample"},
		{"urls on a demo session", map[string]any{"urls": []string{"https://shop.example/"}}, 403, "a demo session may audit the samples and pasted HTML only"},
		{"six urls", map[string]any{"urls": []string{"a", "b", "c", "d", "e", "f"}}, 400, "at most 5"},
	} {
		r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: tok, body: c.body})
		if r.status != c.status || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%s: %d %s; want %d with %q", c.name, r.status, r.body, c.status, c.want)
		}
	}
	if r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: session(t, ts, "clinical"), body: map[string]any{"sample_id": "clean-shop"}}); r.status != 403 {
		t.Errorf("another vertical: %d", r.status)
	}
	info := ts.do(t, call{method: "GET", path: "/a11y/info"})
	if info.status != 200 || !strings.Contains(string(info.body), `"available":true`) || !strings.Contains(string(info.body), "European Accessibility Act") {
		t.Errorf("info %d %s", info.status, info.body)
	}
	// not_checked is the audit's own list: 2.5.8 and 2.2.2 are checked
	// now, so it does not say they are not.
	var in struct {
		NotChecked []string `json:"not_checked"`
	}
	if err := json.Unmarshal(info.body, &in); err != nil || !slices.Equal(in.NotChecked, a11y.NotChecked()) ||
		strings.Contains(strings.Join(in.NotChecked, "\n"), "2.5.8") || strings.Contains(strings.Join(in.NotChecked, "\n"), "2.2.2 Pause, Stop, Hide: not checked") {
		t.Errorf("info not_checked %v (%v)", in.NotChecked, err)
	}
	if s := ts.do(t, call{method: "GET", path: "/a11y/samples"}); s.status != 200 || !strings.Contains(string(s.body), "product-page") {
		t.Errorf("samples %d", s.status)
	}
}

// TestA11yUnavailable: without the rule engine (a11y.axe_dir empty of it)
// the audit is 503 naming the setting, and /a11y/info says why.
func TestA11yUnavailable(t *testing.T) {
	cfg := configs.Defaults()
	cfg.A11y.AxeDir = t.TempDir()
	ts := start(t, cfg, web.Probes{}, nil)
	tok := session(t, ts, "storefront-accessibility-pass")
	r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: tok, body: map[string]any{"sample_id": "clean-shop"}})
	if r.status != 503 || !strings.Contains(string(r.body), "a11y.axe_dir") {
		t.Errorf("no rule engine: %d %s", r.status, r.body)
	}
	info := ts.do(t, call{method: "GET", path: "/a11y/info"})
	if !strings.Contains(string(info.body), `"available":false`) || !strings.Contains(string(info.body), "axe.min.js") {
		t.Errorf("info %s", info.body)
	}
}

// TestA11yJudgeRoute: with a model that reads images, an audit with the
// judge on needs about 4,200 tokens a page left (402 below, naming the
// way out: judge false), and its model calls' receipts are served: in
// receipt_events, the x-service-receipt header and GET /receipts/{id}.
// With judge: false the same caller, out of tokens, is audited.
func TestA11yJudgeRoute(t *testing.T) {
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{
		Path: testmodels.Generated(t, testmodels.ChatFile), Projector: testmodels.Generated(t, testmodels.VisionFile), ContextLength: 4096, Parallel: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	ts := a11yServerWith(t, nil, func(s *Box) {
		s.Chat = &chat.Service{Engine: e, ModelID: "tiny-chat", WeightsRoot: strings.Repeat("ab", 32), Upstream: e.Info().Name, Provider: s.deps.Key.ID(), Receipts: s.deps.Receipts}
		s.A11y.Chat = s.Chat
	})
	yes := true
	page := `<!doctype html><html lang="en"><head><title>Shoe</title></head><body><main><h1>Shoe</h1>
<img alt="Red running shoe" width="48" height="48" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="></main></body></html>`
	tok := session(t, ts, "storefront-accessibility-pass")
	r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: tok, body: map[string]any{"html": page, "synthetic": &yes}})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	out := r.json(t)
	rcpts := out["receipt_events"].([]any)
	if out["model_calls"] != 1.0 || len(rcpts) != 1 || out["checked"].(map[string]any)["images_judged"] != 1.0 {
		t.Fatalf("judged audit %s", r.body)
	}
	id := rcpts[0].(map[string]any)["id"].(string)
	if r.header.Get("x-service-receipt") != id {
		t.Errorf("x-service-receipt %q, want %s", r.header.Get("x-service-receipt"), id)
	}
	if g := ts.do(t, call{method: "GET", path: "/receipts/" + id}); g.status != 200 {
		t.Errorf("receipt %s: %d", id, g.status)
	}
	// Out of tokens: 402 with the judge on, an audit with it off.
	pr, perr := ts.deps.Platform.Authenticate(context.Background(), tok, "")
	if perr != nil {
		t.Fatal(perr)
	}
	res, d := pr.ReserveTokens(context.Background(), 1<<40)
	if d != nil {
		t.Fatal(d)
	}
	_ = res.Commit(context.Background(), res.Granted)
	if r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: tok, body: map[string]any{"html": page, "synthetic": &yes}}); r.status != 402 || !strings.Contains(string(r.body), "judge") {
		t.Errorf("no budget, judge on: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: tok, body: map[string]any{"html": page, "synthetic": &yes, "judge": false}}); r.status != 200 || !strings.Contains(string(r.body), "judge is false") {
		t.Errorf("no budget, judge off: %d %.300s", r.status, r.body)
	}
}

// TestA11yOneAtATime: the audit's own refusals of load: a demo token with
// an audit running gets 409; a key over its request rate 429 with
// Retry-After; with every browser busy and the queue full, 503 with
// Retry-After, and the audit that waited in the queue still runs.
func TestA11yOneAtATime(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	var pool *browser.Pool
	ts := a11yServerWith(t, cfg, func(s *Box) {
		p, err := browser.NewPool(browser.Options{Slots: 1, MaxWaiting: 1})
		if err != nil {
			t.Fatal(err)
		}
		s.A11y.Browser, pool = p, p
	})
	body := map[string]any{"sample_id": "clean-shop", "judge": false}
	// 409: the token's run is in progress.
	tok := session(t, ts, "storefront-accessibility-pass")
	pr, perr := ts.deps.Platform.Authenticate(context.Background(), tok, "")
	if perr != nil {
		t.Fatal(perr)
	}
	unlock, lerr := pr.Lock()
	if lerr != nil {
		t.Fatal(lerr)
	}
	if r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: tok, body: body}); r.status != 409 {
		t.Errorf("a second audit on one token: %d %s", r.status, r.body)
	}
	unlock()
	// 429: a key allowed one request a minute.
	key, _ := createKey(t, ts, map[string]any{"requests_per_minute": 1})
	if r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: key, body: body}); r.status != 200 {
		t.Fatalf("the key's first audit: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: key, body: body}); r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Errorf("the key's second audit in a minute: %d %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	// 503: the one browser held, one audit waiting, the next refused.
	held, err := pool.Open(context.Background(), browser.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan reply, 1)
	go func() {
		waited <- ts.do(t, call{method: "POST", path: "/a11y/audit", token: session(t, ts, "storefront-accessibility-pass"), body: body})
	}()
	time.Sleep(300 * time.Millisecond)
	r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: session(t, ts, "storefront-accessibility-pass"), body: body})
	if r.status != 503 || r.header.Get("Retry-After") != "60" || !strings.Contains(string(r.body), "queue is full") {
		t.Errorf("the queue full: %d %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	held.Close()
	if w := <-waited; w.status != 200 {
		t.Errorf("the audit that waited: %d %s", w.status, w.body)
	}
}
