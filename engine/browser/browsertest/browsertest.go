// Package browsertest opens a chromium tab for tests: skipped where
// chromium is missing, a failure in CI (make deps installs it).
package browsertest

import (
	"context"
	"errors"
	"os"
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
