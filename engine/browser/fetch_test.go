package browser_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/engine/browser/browsertest"
)

// hostFetcher fetches for a tab with net/http, one hop, refusing the
// hosts in deny before any connection (as outbound refuses non-public
// addresses), and marks every request it sends.
type hostFetcher struct {
	deny string
	mu   sync.Mutex
	got  []string
}

func (f *hostFetcher) Fetch(ctx context.Context, method, url, accept string) (browser.Fetched, error) {
	f.mu.Lock()
	f.got = append(f.got, method+" "+url)
	f.mu.Unlock()
	if strings.Contains(url, f.deny) {
		return browser.Fetched{}, errors.New("refused: a private address")
	}
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return browser.Fetched{}, err
	}
	req.Header.Set("User-Agent", "the-fetcher")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return browser.Fetched{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return browser.Fetched{Status: resp.StatusCode, Header: resp.Header, Body: body}, err
}

// TestFetchedThroughTheFetcher: a read-only page with a fetcher connects
// to nothing itself: every request the servers see carries the fetcher's
// mark. A same-origin redirect to another origin's image loads (the
// browser follows it and asks the fetcher again); an image on a host the
// fetcher refuses fails and is counted; a script's request to another
// origin is refused before the fetcher; the page's own data loads.
func TestFetchedThroughTheFetcher(t *testing.T) {
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewGray(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	other, otherSeen := browsertest.Host(t, "127.0.0.2:0", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(pic.Bytes())
	})
	denied, deniedSeen := browsertest.Host(t, "127.0.0.3:0", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(pic.Bytes())
	})
	page := `<!doctype html><title>shop</title>
<img id="a" src="/redir.png"><img id="b" src="` + denied + `/pic.png">
<script>
fetch("/data.json").then(r => r.json()).then(j => { document.title = "got " + j.n; });
fetch("` + other + `/track").catch(() => {});
</script>`
	site, siteSeen := browsertest.Host(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(page))
		case "/redir.png":
			http.Redirect(w, r, other+"/pic.png", http.StatusFound)
		case "/data.json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"n": 7}`))
		default:
			http.NotFound(w, r)
		}
	})
	f := &hostFetcher{deny: strings.TrimPrefix(denied, "http://")}
	tab := browsertest.Tab(t, browser.Policy{Network: browser.ReadOnly, Origins: []string{site}, Fetch: f, Subresources: true})
	if err := tab.Do(chromedp.Navigate(site+"/"), chromedp.Poll[chromedp.Void](`document.title.startsWith("got")`, chromedp.WithPollingTimeout(5*time.Second)),
		chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(tab.Context(), chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	widths, err := chromedp.Run(tab.Context(), chromedp.Evaluate[[]int](`[document.getElementById("a").naturalWidth, document.getElementById("b").naturalWidth]`))
	if err != nil {
		t.Fatal(err)
	}
	if title != "got 7" || len(widths) != 2 || widths[0] != 4 || widths[1] != 0 {
		t.Errorf("title %q, image widths %v (want the redirected image shown, the refused one not)", title, widths)
	}
	for _, s := range append(append(siteSeen(), otherSeen()...), deniedSeen()...) {
		if !strings.HasSuffix(s, " the-fetcher") {
			t.Errorf("the browser connected itself: %s", s)
		}
	}
	if got := strings.Join(otherSeen(), ","); !strings.Contains(got, "GET /pic.png") || strings.Contains(got, "/track") {
		t.Errorf("the other origin saw %s", got)
	}
	if d := deniedSeen(); len(d) != 0 {
		t.Errorf("the refused host saw %v", d)
	}
	var track, refusedPic bool
	for _, r := range tab.Refused() {
		track = track || strings.HasSuffix(r.URL, "/track") && strings.Contains(r.Why, "not the audited one")
		refusedPic = refusedPic || strings.HasPrefix(r.URL, denied) && strings.HasPrefix(r.Why, "not fetched: refused")
	}
	if !track || !refusedPic {
		t.Errorf("refused %+v", tab.Refused())
	}
}
