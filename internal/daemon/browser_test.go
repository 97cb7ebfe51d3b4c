package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"boxd/web"
	"boxd/web/guard"
)

// TestBrowserOpenAISDK runs the official openai npm client in Debian
// chromium, from a page on an allowed origin (127.0.0.1 on another port)
// against the box: the client sends seven X-Stainless-* headers, so the
// browser preflights them, and a preflight that allowed only the base set
// would block every call ("Connection error"). The chat call answers and a
// refusal reaches the page with its status and message.
func TestBrowserOpenAISDK(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	sdk, _ := filepath.Abs("testdata/openai/node_modules/openai")
	if _, statErr := os.Stat(sdk); err != nil || statErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium or the openai npm package is missing (make deps installs both): %v %v", err, statErr)
		}
		t.Skip("chromium or the openai npm package is missing; run make deps")
	}
	env := chatServer(t, nil, 2048, 2, 0)

	results := make(chan []byte, 1)
	mux := http.NewServeMux()
	mux.Handle("GET /openai/", http.StripPrefix("/openai/", http.FileServer(http.Dir(sdk))))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/browser/sdk.html")
	})
	mux.HandleFunc("POST /result", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case results <- b:
		default:
		}
	})
	page := httptest.NewServer(mux)
	defer page.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	target := page.URL + "/?" + url.Values{"box": {env.url}, "token": {env.token}}.Encode()
	// The profile is removed by hand once every chromium process is gone:
	// its helpers outlive the browser by a moment and keep writing there,
	// which t.TempDir's cleanup would report as a failure.
	profile, err := os.MkdirTemp("", "boxd-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+profile, target)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own process group: the helpers go with it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()

	var got struct {
		Finish, ChatError, LoadError string
		Tokens                       int
		WrongModel                   struct {
			Status  int
			Message string
		}
	}
	select {
	case b := <-results:
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("page result: %v: %s", err, b)
		}
	case <-ctx.Done():
		t.Fatal("the page reported nothing within 2 minutes")
	}
	if got.LoadError != "" || got.ChatError != "" || got.Finish != "length" || got.Tokens != 4 {
		t.Errorf("chat from the browser: %+v", got)
	}
	if got.WrongModel.Status != 404 || !strings.Contains(got.WrongModel.Message, "not served") {
		t.Errorf("refusal in the browser: %+v", got.WrongModel)
	}
}

// TestPreflightAllowsRequestedHeaders: an allowed origin's preflight gets
// the base headers plus those it asks for; names that are not HTTP tokens
// and names past the bound are left out; a refused origin gets 403.
func TestPreflightAllowsRequestedHeaders(t *testing.T) {
	ts := launch(t, nil, web.Probes{}, nil, nil)
	many := make([]string, guard.MaxPreflightHeaders+5)
	for i := range many {
		many[i] = "x-h" + strings.Repeat("a", i%7) + string(rune('a'+i%26))
	}
	for _, tc := range []struct {
		name, origin, asked string
		status              int
		want, not           []string
	}{
		{"sdk", "http://localhost:5173", "authorization,content-type,x-stainless-lang,x-stainless-os,x-stainless-retry-count", 204,
			[]string{"Authorization", "x-stainless-lang", "x-stainless-os", "x-stainless-retry-count"}, nil},
		{"bad names", "http://127.0.0.1:3000", "x-ok, bad name, x(y), " + strings.Repeat("n", guard.MaxPreflightHeaderName+1), 204,
			[]string{"x-ok"}, []string{"bad name", "x(y)", strings.Repeat("n", guard.MaxPreflightHeaderName+1)}},
		{"bounded", "http://localhost:1", strings.Join(many, ","), 204, []string{many[guard.MaxPreflightHeaders-1]}, []string{many[guard.MaxPreflightHeaders]}},
		{"foreign origin", "https://evil.example", "x-stainless-lang", 403, nil, []string{"x-stainless-lang"}},
	} {
		r := ts.do(t, call{method: "OPTIONS", path: "/v1/chat/completions", headers: map[string]string{
			"Origin": tc.origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": tc.asked}})
		allowed := ", " + r.header.Get("Access-Control-Allow-Headers") + ","
		if r.status != tc.status {
			t.Errorf("%s: %d %s", tc.name, r.status, r.body)
		}
		for _, h := range tc.want {
			if !strings.Contains(allowed, ", "+h+",") {
				t.Errorf("%s: %q not allowed in %q", tc.name, h, allowed)
			}
		}
		for _, h := range tc.not {
			if strings.Contains(allowed, h) {
				t.Errorf("%s: %q allowed in %q", tc.name, h, allowed)
			}
		}
	}
}
