package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"boxd/configs"
	"boxd/internal/platform"
	"boxd/internal/store"
)

// TestConnRefusedClosedCounted: a connection refused and closed at once
// (every refuser busy) is counted apart from the answered ones.
func TestConnRefusedClosedCounted(t *testing.T) {
	cfg := configs.Defaults()
	cfg.StateDir = t.TempDir()
	st, err := store.Open(context.Background(), cfg.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := New(cfg, Deps{Platform: platform.New(cfg, st, nil)}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s.metrics.connRefused(http.StatusServiceUnavailable, false)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	want := `boxd_connections_refused_total{how="closed",limit="connections"} 1`
	if !strings.Contains(rec.Body.String(), want+"\n") {
		t.Errorf("no %q in /metrics", want)
	}
}
