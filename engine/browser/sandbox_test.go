package browser_test

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/engine/browser/browsertest"
)

// The package's tests run in a network namespace whose only resolver
// and hosts are a recorder: the run fails when anything reaches it.
func TestMain(m *testing.M) { browsertest.SandboxMain(m) }

// settle waits for the recorder to have seen what was sent, then reports
// and forgets it.
func settle(rec *browsertest.Recorder, d time.Duration) []string {
	time.Sleep(d)
	got := rec.Seen()
	rec.Reset()
	return got
}

// TestRecorderSees: the recorder is not blind: a name looked up from
// this process is answered and noted, and so is the request that
// follows; and a chromium started without the sandbox's switches (as
// boxd started it before) is seen looking up the names a page hints at.
// Without this, 0 below could mean a recorder that sees nothing.
func TestRecorderSees(t *testing.T) {
	rec := browsertest.Sandboxed(t)
	rec.Reset()
	addrs, err := net.LookupHost("selfcheck.example.test")
	if err != nil || !slices.Contains(addrs, browsertest.CanaryIP) {
		t.Fatalf("look-up through the recorder: %v %v", addrs, err)
	}
	resp, err := http.Get("http://selfcheck.example.test/probe")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if udp, err := net.Dial("udp", "203.0.113.9:3478"); err == nil {
		_, _ = udp.Write([]byte("x"))
		udp.Close()
	}
	got := strings.Join(settle(rec, 300*time.Millisecond), "\n")
	for _, want := range []string{"dns selfcheck.example.test A", "tcp " + browsertest.CanaryIP + ":80", "http GET selfcheck.example.test /probe", "udp 203.0.113.9:3478"} {
		if !strings.Contains(got, want) {
			t.Errorf("the recorder did not note %q; it saw:\n%s", want, got)
		}
	}

	// The control: chromium with chromedp's defaults only.
	binary, err := browser.NewPool(browser.Options{})
	if err != nil {
		t.Skip(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(binary.Binary()), chromedp.NoSandbox, chromedp.Flag("disable-gpu", true))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	page := `<link rel="dns-prefetch" href="//control-hint.example.test"><link rel="preconnect" href="https://control-pre.example.test"><img src="http://control-img.example.test/x.png">`
	err = chromedp.Do(ctx, chromedp.Navigate("data:text/html,"+page), chromedp.Sleep(1500*time.Millisecond))
	cancel()
	acancel()
	if err != nil {
		t.Fatal(err)
	}
	got = strings.Join(settle(rec, 500*time.Millisecond), "\n")
	if !strings.Contains(got, "dns control-") {
		t.Errorf("an unsandboxed chromium's look-ups were not seen: %q", got)
	}
	t.Logf("an unsandboxed chromium, one page: %d things reached the recorder", strings.Count(got, "\n")+1)
}

// leakPages use every channel a page has below the request policy:
// link hints (also rewritten from what is typed), WebRTC, WebTransport,
// CSS, beacons, popups, workers, sockets, and a page left idle for the
// browser's own background services. Names are under example.test (the
// recorder answers them all), addresses are the recorder's canary.
func leakPages() map[string]string {
	ip := browsertest.CanaryIP
	return map[string]string{
		"hints": `<link rel="dns-prefetch" href="//hint.example.test"><link rel="preconnect" href="https://pre.example.test">
<link rel="preconnect" href="http://` + ip + `:8080"><link rel="prefetch" href="https://prefetch.example.test/x">
<link rel="prerender" href="https://prerender.example.test/"><link rel="preload" as="image" href="https://preload.example.test/i.png">
<link rel="modulepreload" href="https://module.example.test/m.js">
<script type="speculationrules">{"prefetch": [{"source": "list", "urls": ["https://spec.example.test/a"]}], "prerender": [{"source": "list", "urls": ["https://spec2.example.test/b"]}]}</script>`,
		"typed hints": `<input id="v" value=""><script>
const v = document.getElementById("v");
function hint(kind) { for (const rel of ["dns-prefetch", "preconnect", "prefetch"]) { const l = document.createElement("link"); l.rel = rel; l.href = "https://" + (v.value || "empty") + "." + kind + ".example.test/"; document.head.appendChild(l); } }
v.addEventListener("input", () => hint("input")); v.addEventListener("change", () => hint("change")); v.addEventListener("blur", () => hint("blur"));
v.focus(); v.value = "ana-silva-1984"; v.dispatchEvent(new Event("input")); v.dispatchEvent(new Event("change")); v.blur();
</script>`,
		"webrtc": `<script>
(async () => {
  for (const servers of [[{urls: "stun:` + ip + `:3478"}], [{urls: "stun:stun.example.test:3478"}], [{urls: "turn:` + ip + `:443?transport=tcp", username: "u", credential: "c"}], [{urls: "turns:turn.example.test:443", username: "u", credential: "c"}], []]) {
    try { const pc = new RTCPeerConnection({iceServers: servers}); pc.createDataChannel("x"); await pc.setLocalDescription(await pc.createOffer()); } catch (e) {}
  }
})();
</script>`,
		"webtransport and sockets": `<script>
try { new WebTransport("https://` + ip + `:4433/x") } catch (e) {}
try { new WebTransport("https://wt.example.test:4433/x") } catch (e) {}
try { new WebSocket("wss://ws.example.test/x") } catch (e) {}
try { new WebSocket("ws://` + ip + `:9/x") } catch (e) {}
try { new EventSource("https://sse.example.test/x") } catch (e) {}
</script>`,
		"css": `<style>@import url("https://import.example.test/a.css");
@font-face { font-family: f; src: url("https://font.example.test/f.woff2") } p { font-family: f }
body { background: url("http://` + ip + `/bg.png"); cursor: url("https://cursor.example.test/c.cur"), auto }
div { background-image: image-set("https://set.example.test/1x.png" 1x) }</style><p>x</p><div>y</div>`,
		"beacons": `<a id="a" href="#x" ping="https://ping.example.test/p">x</a><script>
navigator.sendBeacon("https://beacon.example.test/b", "secret");
fetch("https://keepalive.example.test/k", {method: "POST", body: "s", keepalive: true}).catch(() => {});
new Image().src = "http://` + ip + `/img?s=1";
document.getElementById("a").click();
</script><video poster="https://poster.example.test/p.png"></video><svg><image href="https://svg.example.test/i.png"/></svg>`,
		"popups": `<a id="b" target="_blank" href="https://blank.example.test/">x</a><script>
window.open("https://popup.example.test/?s=1"); window.open("http://` + ip + `/popup");
document.getElementById("b").click();
</script><iframe src="https://frame.example.test/"></iframe>`,
		"workers": `<script>
const src = 'fetch("https://worker.example.test/w", {method: "POST", body: "s"}).catch(() => {}); try { new WebSocket("wss://wsw.example.test/") } catch (e) {}';
try { new Worker(URL.createObjectURL(new Blob([src], {type: "text/javascript"}))) } catch (e) {}
try { new SharedWorker(URL.createObjectURL(new Blob([src], {type: "text/javascript"}))) } catch (e) {}
try { new Worker("data:text/javascript," + encodeURIComponent(src)) } catch (e) {}
navigator.serviceWorker && navigator.serviceWorker.register("https://sw.example.test/sw.js").catch(() => {});
</script>`,
		"navigation": `<meta http-equiv="refresh" content="1; url=https://refresh.example.test/"><form id="f" method="post" action="https://form.example.test/post"><input name="a" value="b"></form><script>setTimeout(() => document.getElementById("f").submit(), 300)</script>`,
		"idle":       `<p>A plain page, left open for the browser's own services.</p>`,
	}
}

// TestNetworkSandbox: under the recorder, a page using every channel in
// leakPages (each in its own browser, with no network), and read-only
// pages fetched through a fetcher whose answers hint at other hosts,
// reach nothing: no DNS query, no connection, no datagram.
func TestNetworkSandbox(t *testing.T) {
	rec := browsertest.Sandboxed(t)
	rec.Reset()
	t.Run("offline", func(t *testing.T) {
		for name, body := range leakPages() {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
				if err := tab.LoadHTML(`<!doctype html><html><head><title>x</title></head><body>` + body + `</body></html>`); err != nil && !strings.Contains(err.Error(), "net::") {
					t.Logf("load: %v", err)
				}
				wait := 2 * time.Second
				if name == "idle" {
					wait = 8 * time.Second
				}
				if err := tab.Do(chromedp.Sleep(wait)); err != nil {
					t.Logf("wait: %v", err)
				}
				var sunk []string
				for _, r := range tab.Refused() {
					if r.Type == "Other" {
						sunk = append(sunk, r.Method+" "+r.URL)
					}
				}
				t.Logf("refused by the sandbox's proxy: %d of the page's, %d of the browser's own services; the page's: %v", len(sunk), len(tab.Background()), sunk)
			})
		}
	})
	t.Run("read-only through a fetcher", func(t *testing.T) {
		site := "http://shop.example.test"
		f := fetcherFunc(func(method, u string) (browser.Fetched, error) {
			body := `<!doctype html><title>shop</title>` + leakPages()["hints"] + leakPages()["webrtc"] + leakPages()["css"]
			return browser.Fetched{Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte(body)}, nil
		})
		tab := browsertest.Tab(t, browser.Policy{Network: browser.ReadOnly, Origins: []string{site}, Fetch: f, Subresources: true})
		if err := tab.Do(chromedp.Navigate(site+"/"), chromedp.Sleep(2*time.Second)); err != nil {
			t.Fatal(err)
		}
	})
	if got := settle(rec, 500*time.Millisecond); len(got) != 0 {
		t.Errorf("%d things reached the recorder:\n%s", len(got), strings.Join(got, "\n"))
	}
}

type fetcherFunc func(method, url string) (browser.Fetched, error)

func (f fetcherFunc) Fetch(_ context.Context, method, url, _ string) (browser.Fetched, error) {
	return f(method, url)
}
