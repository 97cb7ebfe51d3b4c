package daemon

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"boxd/configs"
)

// refusedMetric reads boxd_connections_refused_total for one limit and
// way from /metrics ("missing" when the series is not there), over a
// connection closed after it.
func refusedMetric(t *testing.T, ts *testServer, limit, how string) string {
	t.Helper()
	once := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	r := ts.do(t, call{method: "GET", path: "/metrics", client: once})
	if r.status != 200 {
		t.Fatalf("/metrics: %d", r.status)
	}
	waitOpen(t, ts, "127.0.0.1", 0) // the connection counts until the server closes it
	series := `boxd_connections_refused_total{how="` + how + `",limit="` + limit + `"} `
	for _, line := range strings.Split(string(r.body), "\n") {
		if v, ok := strings.CutPrefix(line, series); ok {
			return v
		}
	}
	return "missing"
}

// TestListenerRefusalsCounted: connections the listener refuses (429 over
// limits.connections_per_address, 503 over limits.connections) never reach
// a handler, so boxd_http_requests_total cannot count them; they are
// counted in boxd_connections_refused_total by limit and by whether they
// were answered, every series present at 0 from the start.
func TestListenerRefusalsCounted(t *testing.T) {
	ts := hostileServer(t, nil, func(c *configs.Config) { c.Bounds.Connections = 4 })
	for _, l := range []string{"connections_per_address", "connections"} {
		for _, h := range []string{"answered", "closed"} {
			if v := refusedMetric(t, ts, l, h); v != "0" {
				t.Errorf("%s %s before any refusal: %s", l, h, v)
			}
		}
	}
	get := func(c net.Conn) int {
		_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
		status, _, _, err := readAnswer(c, 3*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return status
	}
	for range 3 {
		dialFrom(t, ts, "127.0.0.2")
	}
	waitOpen(t, ts, "127.0.0.2", 3)
	// The per-address cap is 3 of the 4: two refusals from 127.0.0.2.
	for range 2 {
		if status := get(dialFrom(t, ts, "127.0.0.2")); status != http.StatusTooManyRequests {
			t.Fatalf("fourth from one address: %d", status)
		}
	}
	held := dialFrom(t, ts, "127.0.0.3")
	waitOpen(t, ts, "127.0.0.3", 1)
	if status := get(dialFrom(t, ts, "127.0.0.4")); status != http.StatusServiceUnavailable {
		t.Fatalf("over the total: %d", status)
	}
	// /metrics needs a connection of its own: free one first.
	held.Close()
	waitOpen(t, ts, "127.0.0.3", 0)
	for _, c := range []struct{ limit, how, want string }{
		{"connections_per_address", "answered", "2"},
		{"connections", "answered", "1"},
		{"connections_per_address", "closed", "0"},
		{"connections", "closed", "0"},
	} {
		if v := refusedMetric(t, ts, c.limit, c.how); v != c.want {
			t.Errorf("%s %s: %s, want %s", c.limit, c.how, v, c.want)
		}
	}
	// A refusal closed at once (every refuser busy) is counted apart:
	// web's TestConnRefusedClosedCounted.
}
