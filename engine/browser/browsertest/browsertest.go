// Package browsertest opens a chromium tab for tests: skipped where
// chromium is missing, a failure in CI (make deps installs it).
package browsertest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"boxd/engine/browser"
)

// Tab opens a tab under pol in a pool of one; the test closes it.
func Tab(t testing.TB, pol browser.Policy) *browser.Tab {
	t.Helper()
	p, err := browser.NewPool(browser.Options{Slots: 1, TabTimeout: 2 * time.Minute})
	if errors.Is(err, browser.ErrNoBrowser) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (make deps installs chromium)", err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	tb, err := p.Open(context.Background(), pol)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	return tb
}

// Host serves h on addr (127.0.0.2:0 is another loopback host, so another
// origin; skipped where it cannot listen) until the test ends, and
// returns its URL and a list of what it was asked: "METHOD /path
// user-agent" for each request.
func Host(t testing.TB, addr string, h http.HandlerFunc) (base string, seen func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	var mu sync.Mutex
	var got []string
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.UserAgent())
		mu.Unlock()
		h(w, r)
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) }
}
