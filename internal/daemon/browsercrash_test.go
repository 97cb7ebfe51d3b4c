package daemon

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"boxd/engine/browser"
	"boxd/pipelines/fill"
)

// delayedHog is a page that loads cleanly and, ms after, builds a DOM of
// about a GiB: the renderer dies under the browser's memory bound while
// the route's own actions (the audit's rules, the filler's scan) run on
// it, not while the page loads.
func delayedHog(ms int) string {
	return strings.Replace(hogTemplate, "DELAY", strconv.Itoa(ms), 1)
}

const hogTemplate = `<!doctype html><html lang="en"><title>Order form</title><main><h1>Order</h1>
<form><label for="n">Name</label><input id="n" name="name"><button>Send</button></form></main>
<script>setTimeout(() => { for (let i = 0; i < 64; i++) { const d = document.createElement("div");
d.textContent = String(i).repeat(16 << 20 >> String(i).length) + "."; document.body.appendChild(d); } }, DELAY);</script>`

// crashBound is the browsers' memory bound in these tests (MiB): small, so
// the page's DOM crashes its renderer within a second or two.
const crashBound = 384

// TestA11yBrowserCrashIs422: a page that crashes the browser in the
// middle of its audit answers 422 naming the memory bound, not 500, and
// the next audit on the same box runs.
func TestA11yBrowserCrashIs422(t *testing.T) {
	if testing.Short() {
		t.Skip("browser crash test")
	}
	ts := a11yServerWith(t, nil, func(s *Box) {
		p, err := browser.NewPool(browser.Options{Slots: 1, TabTimeout: 2 * time.Minute, MemoryMB: crashBound})
		if err != nil {
			t.Fatal(err)
		}
		s.A11y.Browser = p
	})
	r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: session(t, ts, "storefront-accessibility-pass"), body: map[string]any{"html": delayedHog(150), "synthetic": true, "judge": false}})
	if r.status != 422 || !strings.Contains(r.errMsg(t), "crashed the browser") || !strings.Contains(r.errMsg(t), "384 MiB") {
		t.Errorf("an audit whose page crashes the browser: %d %.400s", r.status, r.body)
	}
	r = ts.do(t, call{method: "POST", path: "/a11y/audit", token: session(t, ts, "storefront-accessibility-pass"), body: map[string]any{"sample_id": "clean-shop", "judge": false}})
	if r.status != 200 {
		t.Errorf("the next audit: %d %.300s", r.status, r.body)
	}
}

// TestFillBrowserCrashIs422: a form whose page crashes the browser while
// the filler reads it answers 422 naming the memory bound, not 500, and
// the next run on the same box fills its form.
func TestFillBrowserCrashIs422(t *testing.T) {
	if testing.Short() {
		t.Skip("browser crash test")
	}
	ts := fillServer(t, nil, func(s *Box) {
		p, err := browser.NewPool(browser.Options{Slots: 1, TabTimeout: 2 * time.Minute, MemoryMB: crashBound})
		if err != nil {
			t.Fatal(err)
		}
		s.Fill.Browser = p
	})
	body := map[string]any{"target": map[string]string{"html": delayedHog(0)}, "sources": []any{map[string]any{"name": "note.txt", "text": "Name: Ana Silva"}}}
	r := ts.do(t, call{method: "POST", path: "/fill/run", token: session(t, ts, fill.Vertical), body: body})
	if r.status != 422 || !strings.Contains(r.errMsg(t), "crashed the browser") || !strings.Contains(r.errMsg(t), "384 MiB") {
		t.Errorf("a fill whose form crashes the browser: %d %.400s", r.status, r.body)
	}
	r = ts.do(t, call{method: "POST", path: "/fill/run", token: session(t, ts, fill.Vertical), body: map[string]any{"sample_id": "clinic-intake"}})
	if r.status != 200 {
		t.Errorf("the next run: %d %.300s", r.status, r.body)
	}
}
