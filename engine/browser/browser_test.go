package browser

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func newPool(t *testing.T, slots int) *Pool {
	t.Helper()
	p, err := NewPool(Options{Slots: slots, TabTimeout: 60 * time.Second})
	if errors.Is(err, ErrNoBrowser) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (make deps installs chromium)", err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recorder is a loopback server that counts every request it gets.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newRecorder(t *testing.T, page string) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, q.Method+" "+q.URL.Path)
		r.mu.Unlock()
		if q.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(page))
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// leaky is a page that tries every way of sending something: an image, a
// POST by fetch, a beacon, a form submitted by script, a WebSocket.
func leaky(target string) string {
	return `<!doctype html><title>leaky</title>
<img src="` + target + `/pixel.png">
<form id="f" method="post" action="` + target + `/submit"><input name="card" value="4111111111111111"></form>
<script>
fetch("` + target + `/api", {method: "POST", body: "secret"}).catch(() => {});
navigator.sendBeacon("` + target + `/beacon", "secret");
try { new WebSocket("` + strings.Replace(target, "http", "ws", 1) + `/ws"); } catch (e) {}
setTimeout(() => document.getElementById("f").submit(), 50);
</script>`
}

// TestOfflineNothingLeaves: pasted HTML loads with no network: the page's
// script runs, and of its image, fetch POST, beacon, form submission and
// WebSocket not one request reaches the loopback server; each is refused
// and counted (the script's own requests among them, so it ran).
func TestOfflineNothingLeaves(t *testing.T) {
	p := newPool(t, 1)
	rec := newRecorder(t, "")
	tab, err := p.Open(context.Background(), Policy{Network: Offline})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if err := tab.LoadHTML(leaky(rec.URL)); err != nil {
		t.Fatal(err)
	}
	if err := tab.Do(chromedp.Sleep(700 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if got := rec.requests(); len(got) != 0 {
		t.Errorf("requests left the browser: %v", got)
	}
	refused := map[string]bool{}
	for _, r := range tab.Refused() {
		refused[r.Method+" "+r.URL[strings.LastIndex(r.URL, "/"):]] = true
	}
	for _, want := range []string{"GET /pixel.png", "POST /api", "POST /beacon", "POST /submit", "GET /ws"} {
		if !refused[want] {
			t.Errorf("%s was not refused and counted: %v", want, tab.Refused())
		}
	}
}

// TestReadOnlyOrigin: a page on the audited origin loads and may GET from
// it; its POST, and its GET to another origin, are refused and never
// reach either server.
func TestReadOnlyOrigin(t *testing.T) {
	p := newPool(t, 1)
	other := newRecorder(t, "")
	site := newRecorder(t, `<!doctype html><title>shop</title><script>
fetch("/data.json").then(() => { document.title = "got"; });
fetch("/cart", {method: "POST", body: "item=1"}).catch(() => {});
fetch("`+other.URL+`/track").catch(() => {});
</script>`)
	tab, err := p.Open(context.Background(), Policy{Network: ReadOnly, Origins: []string{site.URL}, Fetch: ClientFetcher{}})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if err := tab.Do(chromedp.Navigate(site.URL+"/"), chromedp.Sleep(500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(site.requests(), ",")
	if !strings.Contains(got, "GET /") || !strings.Contains(got, "GET /data.json") || strings.Contains(got, "POST") {
		t.Errorf("the site saw %s", got)
	}
	if o := other.requests(); len(o) != 0 {
		t.Errorf("another origin saw %v", o)
	}
	var post, track bool
	for _, r := range tab.Refused() {
		post = post || r.Method == "POST" && strings.HasSuffix(r.URL, "/cart")
		track = track || strings.HasSuffix(r.URL, "/track") && strings.Contains(r.Why, "not the audited one")
	}
	if !post || !track {
		t.Errorf("refused %+v", tab.Refused())
	}
}

// TestPoolBoundsTabs: with one slot, a second tab waits for the first to
// close (its context ending the wait first), then opens; with one caller
// already waiting (MaxWaiting 1), another is refused at once with ErrBusy.
func TestPoolBoundsTabs(t *testing.T) {
	p := newPool(t, 1)
	p.o.MaxWaiting = 1
	a, err := p.Open(context.Background(), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	waited := make(chan error, 1)
	go func() { _, err := p.Open(ctx, Policy{}); waited <- err }()
	time.Sleep(50 * time.Millisecond)
	if _, err := p.Open(context.Background(), Policy{}); !errors.Is(err, ErrBusy) {
		t.Errorf("a third caller with one waiting: %v", err)
	}
	if err := <-waited; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a second tab with the slot taken: %v", err)
	}
	a.Close()
	b, err := p.Open(context.Background(), Policy{})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	if err := b.LoadHTML("<title>two</title>"); err != nil {
		t.Error(err)
	}
	b.Close()
}
