// Package browser runs pages in Debian's chromium, driven over the
// DevTools protocol by github.com/chromedp/chromedp, for the routes that
// need a real browser (accessibility audits, form fill). Each tab is its
// own chromium process with a fresh profile, under a pool's bound on how
// many run at once, a deadline and a JavaScript heap bound; a tab whose
// browser crashed fails and the next starts clean. Every request a page
// makes passes the tab's network policy first (the Fetch domain pauses it):
// offline pages reach nothing, read-only pages reach their allowed origins
// with GET and HEAD alone, through the policy's fetcher, and whatever is
// refused is counted, never sent. Below the policy, the browser is walled
// off the network (sandbox.go): it resolves no name, its only proxy is a
// sink in this process, WebRTC has no route, and its background services
// are off.
package browser

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// ErrNoBrowser: chromium is not installed (make deps installs it; on a
// box, apt-get install chromium).
var ErrNoBrowser = errors.New("browser: chromium is not installed (apt-get install chromium)")

// ErrBusy: every tab is in use and as many callers as the pool lets wait
// are waiting (Options.MaxWaiting).
var ErrBusy = errors.New("browser: every tab is in use and the queue is full")

// ErrCrashed: the tab's page crashed (out of memory, or a renderer
// fault).
var ErrCrashed = errors.New("browser: the page crashed")

// Network says what a tab's page may fetch.
type Network int

const (
	// Offline: nothing leaves the browser (pasted HTML, samples): every
	// http, https and WebSocket request is refused.
	Offline Network = iota
	// ReadOnly: GET and HEAD to the allowed origins; every other method,
	// and every request elsewhere, is refused.
	ReadOnly
)

// Policy is a tab's network policy.
type Policy struct {
	Network Network
	// Origins are the origins (scheme://host[:port]) a ReadOnly page may
	// reach.
	Origins []string
	// Width and Height set the tab's viewport (0: the pool's): a phone's
	// 390 × 844 for a mobile audit. The page is laid out at exactly that
	// size (device metrics are emulated: a headless window is never
	// narrower than 500 pixels).
	Width, Height int
	// Mobile emulates a phone's screen: the page's viewport meta tag is
	// honoured as a phone honours it.
	Mobile bool
	// Fetch fetches every request the policy lets out in the browser's
	// stead (its answer fulfils the paused request): the browser itself
	// resolves no name and connects nowhere (sandbox.go), so a ReadOnly
	// tab without a fetcher reaches nothing. The fetcher's address rules
	// (outbound's: no private, loopback or link-local address) hold for
	// every hop: a redirect comes back to the browser, which asks again
	// and is checked again.
	Fetch Fetcher
	// Subresources lets a ReadOnly page with a Fetch load images, style
	// sheets, scripts, fonts and media from other origins, by GET through
	// the fetcher; navigations, scripts' requests, beacons and pings to
	// other origins stay refused.
	Subresources bool
	// Release, when set, is asked about each request the policy would
	// refuse: when it takes the request (its method, URL and body), the
	// request is answered by the tab with a short page instead of being
	// refused: a held Submit released to the box itself, which nothing
	// else reaches. Release decides how many it takes.
	Release func(method, url string, body []byte) bool
}

// Fetcher fetches one request for a tab: one hop, no redirect followed.
type Fetcher interface {
	Fetch(ctx context.Context, method, url, accept string) (Fetched, error)
}

// Fetched is a fetcher's answer.
type Fetched struct {
	Status int
	Header http.Header
	Body   []byte
}

// subresource are the resource types a page loads to show itself.
var subresource = map[network.ResourceType]bool{
	network.ResourceTypeImage: true, network.ResourceTypeStylesheet: true, network.ResourceTypeScript: true,
	network.ResourceTypeFont: true, network.ResourceTypeMedia: true, network.ResourceTypeTextTrack: true, network.ResourceTypeManifest: true,
}

// Refused is a request the policy refused: it never left the browser.
type Refused struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	// Type is the resource type (Document for a navigation or a form's
	// submission, XHR, Fetch, Ping, Image, …; WebSocket).
	Type string `json:"type"`
	Why  string `json:"why"`
}

// Sends says whether the refused request would have sent something: a
// navigation or form submission, a script's request, a beacon or ping, a
// WebSocket (not an image, a style sheet or a favicon).
func (r Refused) Sends() bool {
	switch r.Type {
	case "Document", "XHR", "Fetch", "Ping", "WebSocket", "EventSource":
		return true
	}
	return r.Method != "GET" && r.Method != "HEAD"
}

// Options configure a pool.
type Options struct {
	// Binary is chromium's path ("": chromium or chromium-browser on the
	// PATH).
	Binary string
	// Slots is how many tabs run at once (0: 2); more wait their turn.
	Slots int
	// MaxWaiting bounds the callers waiting for a slot (0: 4 per slot);
	// one more is refused with ErrBusy.
	MaxWaiting int
	// TabTimeout bounds a tab's life (0: 60 s).
	TabTimeout time.Duration
	// HeapMB bounds a page's JavaScript heap (0: 256).
	HeapMB int
	// MemoryMB bounds the memory each of the browser's processes may
	// allocate (0: 1024; -1: no bound): memory.go.
	MemoryMB int
	// Width and Height are the viewport (0: 1280 × 900).
	Width, Height int
	// Log receives the one warning a pool gives when chromium cannot run
	// its own sandbox here (nil: slog.Default()).
	Log *slog.Logger
}

// Pool starts tabs.
type Pool struct {
	o       Options
	slot    chan struct{}
	waiting atomic.Int64
	limit   *memoryLimit // nil: no memory bound (MemoryMB -1)
	// own: chromium runs its own sandbox (ownsandbox.go); ownWhy says why
	// not.
	own    bool
	ownWhy string
}

// NewPool finds chromium and makes a pool; ErrNoBrowser when there is
// none.
func NewPool(o Options) (*Pool, error) {
	if o.Binary == "" {
		for _, name := range []string{"chromium", "chromium-browser"} {
			if p, err := exec.LookPath(name); err == nil {
				o.Binary = p
				break
			}
		}
	}
	if o.Binary == "" {
		return nil, ErrNoBrowser
	}
	if _, err := exec.LookPath(o.Binary); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoBrowser, err)
	}
	if o.Slots <= 0 {
		o.Slots = 2
	}
	if o.MaxWaiting <= 0 {
		o.MaxWaiting = 4 * o.Slots
	}
	if o.TabTimeout <= 0 {
		o.TabTimeout = 60 * time.Second
	}
	if o.HeapMB <= 0 {
		o.HeapMB = 256
	}
	if o.Width <= 0 || o.Height <= 0 {
		o.Width, o.Height = 1280, 900
	}
	p := &Pool{o: o, slot: make(chan struct{}, o.Slots)}
	if o.MemoryMB == 0 {
		p.o.MemoryMB = DefaultMemoryMB
	}
	if p.o.MemoryMB > 0 {
		l, err := newMemoryLimit(p.o.MemoryMB)
		if err != nil {
			return nil, err
		}
		p.limit = l
	}
	p.own, p.ownWhy = ownSandbox(os.Geteuid(), userNamespaces)
	if !p.own {
		log := o.Log
		if log == nil {
			log = slog.Default()
		}
		noSandboxLogged.Do(func() {
			log.Warn("chromium runs without its own sandbox (--no-sandbox); boxd's network walls still hold", "why", p.ownWhy)
		})
	}
	return p, nil
}

// Viewport is the size of a tab opened with no size of its own.
func (p *Pool) Viewport() (width, height int) { return p.o.Width, p.o.Height }

// Binary is the chromium the pool runs.
func (p *Pool) Binary() string { return p.o.Binary }

// Tab is one page in its own browser.
type Tab struct {
	ctx     context.Context
	cancel  context.CancelFunc
	release func()
	policy  Policy

	memoryMB int // the pool's MemoryMB (-1: none), for the crash's message

	mu      sync.Mutex
	refused []Refused
	crashed bool
	held    bool   // every request refused (Hold)
	doc     string // the page LoadHTML serves at DocURL
	sandbox *sandbox
	// background are the connections the browser's own services tried
	// (refused by the sandbox): not the page's doing.
	background []Refused
}

// DocURL is where LoadHTML's page lives: a name that resolves nowhere, so
// that the page's relative links are requests the policy sees (under
// about:blank they would be about: URLs no policy sees).
const DocURL = "https://page.boxd.invalid/"

// SelectorJS is a JavaScript function expression, (el) => selector: a CSS
// selector that finds el again in the page, its id when the id is unique,
// else its path of tag:nth-of-type(i) steps from the root. Page scripts
// that report elements (a11y, fill) define their selector with it, so
// every report's selectors are the same for the same element.
const SelectorJS = `(el) => { if (el.id && document.querySelectorAll("#" + CSS.escape(el.id)).length === 1) return "#" + CSS.escape(el.id);
    const p = []; for (let e = el; e && e.nodeType === 1 && e !== document.documentElement; e = e.parentElement) {
      let i = 1; for (let s = e.previousElementSibling; s; s = s.previousElementSibling) if (s.tagName === e.tagName) i++;
      p.unshift(e.tagName.toLowerCase() + ":nth-of-type(" + i + ")"); } return p.join(" > "); }`

// Open starts a browser with a fresh profile and one tab under pol, once
// a slot is free (ctx ends the wait). The tab lives until Close or the
// pool's TabTimeout.
func (p *Pool) Open(ctx context.Context, pol Policy) (*Tab, error) {
	select {
	case p.slot <- struct{}{}:
	default:
		if p.waiting.Add(1) > int64(p.o.MaxWaiting) {
			p.waiting.Add(-1)
			return nil, ErrBusy
		}
		select {
		case p.slot <- struct{}{}:
			p.waiting.Add(-1)
		case <-ctx.Done():
			p.waiting.Add(-1)
			return nil, ctx.Err()
		}
	}
	release := sync.OnceFunc(func() { <-p.slot })
	sb, err := newSandbox()
	if err != nil {
		release()
		return nil, fmt.Errorf("browser: %w", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(p.o.Binary),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("renderer-process-limit", "1"),
		chromedp.Flag("js-flags", fmt.Sprintf("--max-old-space-size=%d", p.o.HeapMB)),
		chromedp.WindowSize(cmp.Or(pol.Width, p.o.Width), cmp.Or(pol.Height, p.o.Height)),
	)
	if !p.own {
		opts = append(opts, chromedp.NoSandbox) // ownsandbox.go: root, or no user namespaces
	}
	opts = append(opts, sb.options()...)
	opts = append(opts, chromedp.ModifyCmdFunc(p.limit.apply))
	tctx, tcancel := context.WithTimeout(context.WithoutCancel(ctx), p.o.TabTimeout)
	actx, acancel := chromedp.NewExecAllocator(tctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	t := &Tab{ctx: bctx, policy: pol, release: release, sandbox: sb, memoryMB: p.o.MemoryMB}
	sb.tab.Store(t)
	t.cancel = func() {
		bcancel()
		acancel()
		tcancel()
		sb.close()
	}
	// Listen sees each event in order, on the reader's goroutine, before
	// the command that follows it returns: a paused request is answered
	// from its own goroutine (a command may not wait on the reader).
	if err := chromedp.Listen(bctx, t.listen); err != nil {
		t.Close()
		return nil, fmt.Errorf("browser: start chromium: %w", err)
	}
	if err := chromedp.ListenBrowser(bctx, t.listen); err != nil {
		t.Close()
		return nil, fmt.Errorf("browser: start chromium: %w", err)
	}
	ws := []*network.BlockPattern{{URLPattern: "ws://*:*/*", Block: true}, {URLPattern: "wss://*:*/*", Block: true}}
	if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
		t.Close()
		return nil, fmt.Errorf("browser: start chromium: %w", err)
	}
	for _, step := range []func() error{
		func() error {
			_, err := chromedp.Call(bctx, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: ws})
			return err
		},
		func() error { _, err := chromedp.Call(bctx, inspector.Enable, cdp.Empty{}); return err },
		func() error {
			_, err := chromedp.Call(bctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
				Width: int64(cmp.Or(pol.Width, p.o.Width)), Height: int64(cmp.Or(pol.Height, p.o.Height)), DeviceScaleFactor: 1, Mobile: pol.Mobile})
			return err
		},
		func() error {
			// On the browser, not the page: a popup (window.open, a
			// target=_blank link or form), a cross-site frame or a worker
			// is a target of its own, whose requests a page-level Fetch
			// would never see.
			_, err := chromedp.CallBrowser(bctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}}})
			return err
		},
	} {
		if err := step(); err != nil {
			t.Close()
			return nil, fmt.Errorf("browser: set the network policy: %w", err)
		}
	}
	return t, nil
}

// listen answers each paused request by the policy, and notes crashes and
// the requests the network layer refuses itself (WebSockets).
func (t *Tab) listen(ev any) {
	switch e := ev.(type) {
	case *fetch.EventRequestPaused:
		t.mu.Lock()
		doc, held := t.doc, t.held
		t.mu.Unlock()
		if e.Request.URL == DocURL && e.Request.Method == "GET" && !held && doc != "" {
			go func() {
				_, _ = chromedp.CallBrowser(t.ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: 200,
					ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: "text/html; charset=utf-8"}}, Body: []byte(doc)})
			}()
			return
		}
		why := t.refuse(e.Request.Method, e.Request.URL, e.ResourceType)
		if why != "" && t.policy.Release != nil {
			var body []byte
			for _, pd := range e.Request.PostDataEntries {
				body = append(body, pd.Bytes...)
			}
			if t.policy.Release(e.Request.Method, e.Request.URL, body) {
				go func() {
					_, _ = chromedp.CallBrowser(t.ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: 200,
						ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: "text/html; charset=utf-8"}}, Body: []byte("<!doctype html><title>Sent</title><p>Sent to the box's demo endpoint.</p>")})
				}()
				return
			}
		}
		if why != "" {
			t.note(Refused{Method: e.Request.Method, URL: e.Request.URL, Type: string(e.ResourceType), Why: why})
		}
		go func() {
			switch {
			case why != "":
				_, _ = chromedp.CallBrowser(t.ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
			case isHTTP(e.Request.URL):
				t.fetchFor(e)
			default: // data:, blob: and about: URLs, which the browser answers itself
				_, _ = chromedp.CallBrowser(t.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
			}
		}()
	case *inspector.EventTargetCrashed:
		t.mu.Lock()
		t.crashed = true
		t.mu.Unlock()
		// The tab is done for: end its browser now, so that whatever
		// the page had taken is freed at once and every action still
		// waiting on it fails now, not at the tab's timeout (Err
		// tells them it crashed).
		go t.cancel()
	case *network.EventWebSocketCreated:
		t.mu.Lock()
		t.refused = append(t.refused, Refused{Method: "GET", URL: e.URL, Type: "WebSocket", Why: "WebSockets do not leave the browser"})
		t.mu.Unlock()
	}
}

// note counts a request that did not leave the browser.
func (t *Tab) note(r Refused) {
	t.mu.Lock()
	t.refused = append(t.refused, r)
	t.mu.Unlock()
}

func isHTTP(raw string) bool {
	return strings.HasPrefix(raw, "http://") || strings.HasPrefix(raw, "https://")
}

// fetchFor fetches a paused request through the policy's fetcher and
// answers the browser with what came back; a fetch that fails (an
// address the outbound rules refuse, a timeout) fails the request and is
// counted.
func (t *Tab) fetchFor(e *fetch.EventRequestPaused) {
	accept := ""
	if v, ok := e.Request.Headers["Accept"].(string); ok {
		accept = v
	}
	got, err := t.policy.Fetch.Fetch(t.ctx, e.Request.Method, e.Request.URL, accept)
	if err != nil {
		t.note(Refused{Method: e.Request.Method, URL: e.Request.URL, Type: string(e.ResourceType), Why: "not fetched: " + err.Error()})
		_, _ = chromedp.CallBrowser(t.ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonAccessDenied})
		return
	}
	var hs []*fetch.HeaderEntry
	for k, vs := range got.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Content-Encoding", "Transfer-Encoding", "Connection", "Keep-Alive":
			continue // the body comes decoded and whole
		}
		for _, v := range vs {
			hs = append(hs, &fetch.HeaderEntry{Name: k, Value: v})
		}
	}
	_, _ = chromedp.CallBrowser(t.ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: int64(got.Status),
		ResponseHeaders: hs, Body: got.Body})
}

// refuse says why the policy refuses a request ("" when it may go).
func (t *Tab) refuse(method, raw string, typ network.ResourceType) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the URL does not parse"
	}
	switch u.Scheme {
	case "data", "blob", "about":
		return ""
	}
	t.mu.Lock()
	held := t.held
	t.mu.Unlock()
	if held {
		return "held: the page may send nothing now (a form submitted to test it)"
	}
	if t.policy.Network == Offline {
		return "this page loads with no network"
	}
	if method != "GET" && method != "HEAD" {
		return "only GET and HEAD leave the browser"
	}
	if t.policy.Fetch == nil {
		return "the tab has no fetcher: the browser connects nowhere itself"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "only http and https are fetched"
	}
	origin := strings.ToLower(u.Scheme + "://" + u.Host)
	for _, o := range t.policy.Origins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return ""
		}
	}
	if t.policy.Subresources && subresource[typ] {
		return ""
	}
	return "the origin " + origin + " is not the audited one"
}

// Hold refuses every request until Release, whatever the policy: a form
// submitted to test its errors must not be sent, even by GET to the
// audited origin.
func (t *Tab) Hold() {
	t.mu.Lock()
	t.held = true
	t.mu.Unlock()
}

// Release ends Hold.
func (t *Tab) Release() {
	t.mu.Lock()
	t.held = false
	t.mu.Unlock()
}

// Refused are the requests the policy refused so far.
func (t *Tab) Refused() []Refused {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Refused(nil), t.refused...)
}

// Background are the connections the browser's own services tried so
// far (update checks and the like), each refused by the sandbox; the
// page's own attempts are in Refused.
func (t *Tab) Background() []Refused {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Refused(nil), t.background...)
}

// Context is the tab's chromedp context, for chromedp.Run and
// chromedp.Call with typed results.
func (t *Tab) Context() context.Context { return t.ctx }

// Do runs actions in the tab; when the page crashed (out of memory, or a
// renderer fault), a problem.Unprocessable holding ErrCrashed (memory.go).
func (t *Tab) Do(actions ...chromedp.Action[chromedp.Void]) error {
	err := chromedp.Do(t.ctx, actions...)
	if e := t.Err(err); e != err { // crashed
		return e
	}
	if err != nil {
		return fmt.Errorf("browser: %w", err)
	}
	return nil
}

// LoadHTML shows html as the page, served by the tab itself at DocURL
// (under the Offline policy nothing it references loads).
func (t *Tab) LoadHTML(html string) error {
	t.mu.Lock()
	t.doc = html
	t.mu.Unlock()
	return t.Do(chromedp.Navigate(DocURL))
}

// Close ends the tab's browser (its profile is removed with it) and
// frees its slot.
func (t *Tab) Close() {
	if t.cancel != nil {
		t.cancel()
	}
	if t.release != nil {
		t.release()
	}
}
