package daemon

import (
	"context"
	"testing"
	"time"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/internal/platform"
	"boxd/internal/receipts"
	"boxd/internal/store"
	"boxd/web"
)

// testDeps builds the server's dependencies over a fresh state directory.
// now may be nil (real time).
func testDeps(t testing.TB, cfg *configs.Config, probes web.Probes, now func() time.Time) Deps {
	t.Helper()
	if cfg.StateDir == "" || cfg.StateDir == configs.Defaults().StateDir {
		cfg.StateDir = t.TempDir()
	}
	key, _, err := attest.LoadOrCreateKey(cfg.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), cfg.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return Deps{Probes: probes, Platform: platform.New(cfg, st, now), Key: key, Receipts: receipts.New(key, st, cfg, now)}
}
