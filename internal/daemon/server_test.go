package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"boxd/configs"
	"boxd/internal/version"
	"boxd/web"
	"boxd/web/api"
)

// testServer runs a real server on a random loopback port until the test
// ends (or until stop is called).
type testServer struct {
	*Box
	url  string
	stop context.CancelFunc
	done chan error
}

func start(t *testing.T, cfg *configs.Config, probes web.Probes, extra func(*Box)) *testServer {
	t.Helper()
	return launch(t, cfg, probes, nil, extra)
}

func launch(t *testing.T, cfg *configs.Config, probes web.Probes, now func() time.Time, extra func(*Box), wrap ...func(net.Listener) net.Listener) *testServer {
	t.Helper()
	return newTestBox(t, boxOptions{cfg: cfg, probes: probes, now: now, tweak: extra, wrap: wrap})
}

// boxOptions say how a test's box differs from the defaults.
type boxOptions struct {
	cfg    *configs.Config // nil: configs.Defaults()
	probes web.Probes
	now    func() time.Time // nil: real time
	// deps changes what the command would load (models, transcriber,
	// verticals) before the box is built.
	deps func(*Deps)
	// tweak runs between the services' build and the mount (stand-ins,
	// knobs such as LiveDebounce and ReplyTokens).
	tweak func(*Box)
	log   io.Writer // the box's log (nil: discarded)
	wrap  []func(net.Listener) net.Listener
}

// newTestBox is the one way the route tests build the assembled box:
// a fresh state directory, the composition root's New, and the server on
// a random loopback port until the test ends.
func newTestBox(t *testing.T, o boxOptions) *testServer {
	t.Helper()
	b, cfg := buildBox(t, o)
	return serve(t, b, cfg, o.wrap...)
}

// buildBox builds the box of o without serving it (fuzz targets send
// requests straight to its handler).
func buildBox(tb testing.TB, o boxOptions) (*Box, *configs.Config) {
	tb.Helper()
	cfg := o.cfg
	if cfg == nil {
		cfg = configs.Defaults()
	}
	cfg.Listen = "127.0.0.1:0"
	deps := testDeps(tb, cfg, o.probes, o.now)
	deps.Now = o.now
	if o.deps != nil {
		o.deps(&deps)
	}
	logw := o.log
	if logw == nil {
		logw = io.Discard
	}
	var tweaks []func(*Box)
	if o.tweak != nil {
		tweaks = append(tweaks, o.tweak)
	}
	return New(cfg, deps, slog.New(slog.NewTextHandler(logw, nil)), tweaks...), cfg
}

// smallSendBuffers makes every accepted connection's kernel send buffer
// a fixed few KiB (SO_SNDBUF, which also stops Linux growing it), so a
// client that never reads blocks the server's writes after a few KiB on
// any machine: loopback otherwise grows it to megabytes, enough for a
// fast machine to finish a whole stream nobody reads.
type smallSendBuffers struct{ net.Listener }

func withSmallSendBuffers(ln net.Listener) net.Listener { return smallSendBuffers{ln} }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// serve runs s on cfg's listen address until the test ends, then stops it
// and waits for Serve to return.
func serve(t *testing.T, b *Box, cfg *configs.Config, wrap ...func(net.Listener) net.Listener) *testServer {
	t.Helper()
	ln, err := web.Listen(context.Background(), cfg, b.log)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wrap {
		ln = w(ln)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{Box: b, url: "http://" + ln.Addr().String(), stop: cancel, done: make(chan error, 1)}
	go func() { ts.done <- b.Server.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ts.done:
		case <-time.After(40 * time.Second):
			t.Error("server did not stop")
		}
	})
	return ts
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestHealthzFieldsAndTypes(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.SessionsPerAddressPerHour = 7
	cfg.Limits.SessionsPerHour = 9
	ts := start(t, cfg, web.Probes{
		LLMReady:     func() bool { return true },
		LiveSessions: func() int { return 2 },
		Queue:        func() int { return 3 },
	}, nil)
	resp, body := get(t, ts.url+"/healthz")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("cache control %q", cc)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"ok": true, "asr": false, "llm": true, "live_sessions": 2.0, "queue": 3.0,
		"llm_route": "direct", "version": "0.1.0", "diarize": true, "diarizer": "boxd-classical-1",
		"demo_sessions": map[string]any{"per_address_per_hour": 7.0, "per_hour": 9.0},
	}
	if len(got) != len(want) {
		t.Errorf("fields: got %d %v, want %d", len(got), keys(got), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("missing %s", k)
			continue
		}
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		if string(gj) != string(wj) {
			t.Errorf("%s = %s, want %s", k, gj, wj)
		}
	}
	// Integers are JSON integers, not floats.
	if !strings.Contains(string(body), `"live_sessions":2,`) {
		t.Errorf("live_sessions not an integer in %s", body)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestHealthzWithoutModels(t *testing.T) {
	ts := start(t, nil, web.Probes{}, nil)
	_, body := get(t, ts.url+"/healthz")
	var h web.Health
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatal(err)
	}
	// Every box diarizes: without a diarizer model, with the model-free
	// boxd-classical-1.
	if !h.OK || h.LLM || h.ASR || !h.Diarize || h.Diarizer != "boxd-classical-1" || h.LiveSessions != 0 || h.Queue != 0 {
		t.Errorf("health = %+v", h)
	}
	if h.DemoSessions.PerAddressPerHour != 1000 || h.DemoSessions.PerHour != 1000 {
		t.Errorf("demo sessions = %+v", h.DemoSessions)
	}
}

func TestUnknownRoutesAndMethodsAnswerJSON(t *testing.T) {
	ts := start(t, nil, web.Probes{}, nil)
	cases := []struct {
		method, path string
		status       int
		allow        string
		msg          string
	}{
		{http.MethodGet, "/nope", http.StatusNotFound, "", "no route GET /nope"},
		{http.MethodPost, "/retrieval/info", http.StatusMethodNotAllowed, "GET, HEAD", "POST is not allowed on /retrieval/info"},
		{http.MethodPost, "/healthz", http.StatusMethodNotAllowed, "GET, HEAD", "POST is not allowed on /healthz"},
		{http.MethodDelete, "/metrics", http.StatusMethodNotAllowed, "GET, HEAD", "use GET or HEAD"},
		// Paths with a {param} segment: the method is wrong, not the path.
		{http.MethodPost, "/receipts/rcpt_1", http.StatusMethodNotAllowed, "GET, HEAD", "POST is not allowed on /receipts/rcpt_1"},
		{http.MethodPut, "/v1/keys/key_1", http.StatusMethodNotAllowed, "DELETE, GET, HEAD", "use DELETE or GET or HEAD"},
		{http.MethodDelete, "/demo/recordings/clinic-1/events", http.StatusMethodNotAllowed, "GET, HEAD", "DELETE is not allowed"},
		{http.MethodGet, "/v1/keys", http.StatusMethodNotAllowed, "POST", "use POST"},
		// A {param} matches one non-empty segment only.
		{http.MethodPost, "/receipts/", http.StatusNotFound, "", "no route POST /receipts/"},
		{http.MethodPost, "/receipts/a/b", http.StatusNotFound, "", "no route POST /receipts/a/b"},
		{http.MethodGet, "/demo/recordings/x/other", http.StatusNotFound, "", "no route"},
		// A "{path...}" pattern matches the rest of the path.
		{http.MethodPost, "/studio/media/a/b.png", http.StatusMethodNotAllowed, "GET, HEAD", "POST is not allowed on /studio/media/a/b.png"},
		{http.MethodDelete, "/studio/jobs/job_1", http.StatusMethodNotAllowed, "GET, HEAD", "use GET or HEAD"},
		{http.MethodPost, "/studio/mediax", http.StatusNotFound, "", "no route"},
		// "/" is GET only, and matches nothing below it.
		{http.MethodPost, "/", http.StatusMethodNotAllowed, "GET, HEAD", "use GET or HEAD"},
		{http.MethodGet, "/x", http.StatusNotFound, "", "no route GET /x"},
		// An OpenAI base URL without /v1 gets the hint.
		{http.MethodPost, "/chat/completions", http.StatusNotFound, "", "did you mean /v1/chat/completions? An OpenAI client's base URL"},
		{http.MethodGet, "/models", http.StatusNotFound, "", "did you mean /v1/models?"},
		{http.MethodGet, "/keys/key_1", http.StatusNotFound, "", "did you mean /v1/keys/key_1?"},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(tc.method, ts.url+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e api.ErrorBody
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s %s: body is not JSON: %v", tc.method, tc.path, err)
		}
		if resp.StatusCode != tc.status || !strings.Contains(e.Error, tc.msg) || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d %q allow %q", tc.method, tc.path, resp.StatusCode, e.Error, resp.Header.Get("Allow"))
		}
	}
}

// TestHomePage: GET / is a short plain page naming boxd, its version and
// where to go (as ollama's "Ollama is running"), not a JSON 404.
func TestHomePage(t *testing.T) {
	ts := start(t, nil, web.Probes{}, nil)
	resp, body := get(t, ts.url+"/")
	text := string(body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") ||
		!strings.HasPrefix(text, "boxd "+version.Version+" is running") || !strings.Contains(text, "/healthz") || !strings.Contains(text, "/metrics") || !strings.Contains(text, "/v1") || !strings.Contains(text, "README.md") {
		t.Errorf("GET /: %d %q\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), text)
	}
}

func TestMetricsCountRequestsByRouteAndStatus(t *testing.T) {
	ts := start(t, nil, web.Probes{LLMReady: func() bool { return true }, Queue: func() int { return 4 }}, nil)
	for range 3 {
		get(t, ts.url+"/healthz")
	}
	get(t, ts.url+"/does/not/exist/123")
	_, body := get(t, ts.url+"/metrics")
	text := string(body)
	for _, want := range []string{
		`boxd_http_requests_total{code="200",route="GET /healthz"} 3`,
		`boxd_http_requests_total{code="404",route="unmatched"} 1`,
		`boxd_model_loaded{model="llm"} 1`,
		`boxd_model_loaded{model="asr"} 0`,
		`boxd_queue_depth 4`,
		`boxd_live_sessions 0`,
		`boxd_demo_sessions 0`,
		`boxd_build_info{version="0.1.0"} 1`,
		`boxd_http_request_duration_seconds_count{route="GET /healthz"} 3`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, "/does/not/exist") {
		t.Error("raw paths must not become labels")
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cases := []struct {
		addr  string
		allow bool
		ok    bool
	}{
		{"127.0.0.1:0", false, true},
		{"localhost:0", false, true},
		{"0.0.0.0:0", false, false},
		{":0", false, false},
		{"0.0.0.0:0", true, true},
	}
	for _, tc := range cases {
		cfg := configs.Defaults()
		cfg.Listen, cfg.AllowNonLoopback = tc.addr, tc.allow
		ln, err := web.Listen(context.Background(), cfg, log)
		if tc.ok != (err == nil) {
			t.Errorf("%s allow=%v: err = %v", tc.addr, tc.allow, err)
		}
		if err != nil && !strings.Contains(err.Error(), "allow_non_loopback") {
			t.Errorf("%s: error does not say how to allow it: %v", tc.addr, err)
		}
		if ln != nil {
			ln.Close()
		}
	}
}

func TestDrainLetsInFlightRequestsFinish(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	ts := start(t, nil, web.Probes{}, func(s *Box) {
		s.Server.Handle(http.MethodGet, "/test/slow", func(w http.ResponseWriter, r *http.Request) {
			close(entered)
			<-release
			api.WriteJSON(w, http.StatusOK, map[string]bool{"finished": true})
		})
	})
	drained := make(chan struct{})
	ts.Server.OnDrain = func() { close(drained) }

	type result struct {
		status int
		body   string
		err    error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := http.Get(ts.url + "/test/slow")
		if err != nil {
			res <- result{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		res <- result{status: resp.StatusCode, body: string(b)}
	}()
	<-entered
	ts.stop()
	<-drained
	if !ts.Server.Draining() || ts.Server.Health().OK {
		t.Error("health must report ok=false while draining")
	}
	// The listener is closed: new connections are refused.
	deadline := time.Now().Add(2 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(ts.url, "http://"), 200*time.Millisecond)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("new connections still accepted while draining")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-ts.done:
		t.Fatal("Serve returned before the in-flight request finished")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	r := <-res
	if r.err != nil || r.status != http.StatusOK || !strings.Contains(r.body, `"finished":true`) {
		t.Fatalf("in-flight request: %+v", r)
	}
	if err := <-ts.done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	ts.done <- nil // for Cleanup
}

func TestDrainCutsRequestsAfterGrace(t *testing.T) {
	cfg := configs.Defaults()
	cfg.ShutdownGraceS = 1
	entered := make(chan struct{})
	ts := start(t, cfg, web.Probes{}, func(s *Box) {
		s.Server.Handle(http.MethodGet, "/test/stuck", func(w http.ResponseWriter, r *http.Request) {
			close(entered)
			<-r.Context().Done() // ends only when the connection is cut
		})
	})
	go func() {
		resp, err := http.Get(ts.url + "/test/stuck")
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	began := time.Now()
	ts.stop()
	err := <-ts.done
	if !errors.Is(err, web.ErrGraceExpired) {
		t.Fatalf("Serve = %v, want web.ErrGraceExpired", err)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("stop took %s with a 1 s grace", d)
	}
	ts.done <- nil
}

func TestHeadHealthz(t *testing.T) {
	ts := start(t, nil, web.Probes{}, nil)
	resp, err := http.Head(ts.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD /healthz = %d", resp.StatusCode)
	}
}
