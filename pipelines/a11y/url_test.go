package a11y

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"boxd/engine/browser/browsertest"
	"boxd/internal/problem"
	"boxd/pipelines/a11y/domains"
	"boxd/pipelines/a11y/domains/dnstest"
	"boxd/pipelines/outbound"
)

// portOf keeps a host's ":port" (the tests name hosts through their DNS).
func portOf(base string, seen func() []string) (string, func() []string) {
	return base[strings.LastIndex(base, ":"):], seen
}

// TestURLAudit: two pages of a verified origin (resolved by the test's
// DNS to loopback, which the outbound rules are told to allow); the page
// that loads is audited (an image from another origin fetched through
// the outbound client; one on a host whose address the rules refuse is
// not fetched), the one that answers 404 is a page_error; every request
// the servers see comes from the outbound client, none from chromium;
// nothing but GET. An unverified origin is 403 before any browser opens.
func TestURLAudit(t *testing.T) {
	s := service(t)
	zone, res := dnstest.Serve(t)
	zone.SetA("shop.example", netip.MustParseAddr("127.0.0.1"))
	zone.SetA("cdn.example", netip.MustParseAddr("127.0.0.2"))
	zone.SetA("intranet.example", netip.MustParseAddr("127.0.0.3"))
	pic := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = w.Write([]byte(`<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>`))
	}
	cdnPort, cdnSeen := portOf(browsertest.Host(t, "127.0.0.2:0", pic))
	inPort, inSeen := portOf(browsertest.Host(t, "127.0.0.3:0", pic))
	page := `<!doctype html><html lang="en"><head><title>Shop</title></head><body><main><h1>Shop</h1>
<img src="http://cdn.example` + cdnPort + `/logo.svg" alt="Shop logo"><img src="http://intranet.example` + inPort + `/secret.svg" alt="">
<form method="post" action="/cart"><label>Quantity <input name="qty"></label><button>Add to cart</button></form></main></body></html>`
	shopPort, shopSeen := portOf(browsertest.Host(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	}))
	client := outbound.New(outbound.Policy{Resolver: res, UserAgent: "boxd-test",
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("127.0.0.2/32")}})
	s.Fetch = Outbound{Client: client}
	base := "http://shop.example" + shopPort
	req := Request{URLs: []string{base + "/", base + "/gone"}}
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Audit(context.Background(), req, &events{}, Caller{Verified: []domains.Verified{{Domain: "other.example", Method: domains.MethodDNS}}}); !problem.Is(err, problem.Forbidden) || !strings.Contains(err.Error(), "POST /a11y/domains") {
		t.Errorf("an unverified origin: %v", err)
	}
	if n := len(shopSeen()); n != 0 {
		t.Fatalf("the unverified audit reached the site %d times", n)
	}
	ev := &events{}
	out, err := s.Audit(context.Background(), req, ev, Caller{Verified: []domains.Verified{{Domain: "shop.example", Method: domains.MethodDNS}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Checked.Pages != 1 || out.Summary.Pages != 1 || out.Record == nil {
		t.Errorf("checked %+v summary %+v", out.Checked, out.Summary)
	}
	if got := strings.Join(ev.types, " "); !strings.HasPrefix(got, "start page names errors page_error ") || !strings.HasSuffix(got, " result") {
		t.Errorf("events %s", got)
	}
	if nc := strings.Join(out.NotChecked, "\n"); !strings.Contains(nc, base+"/gone answered 404") {
		t.Errorf("not_checked %s", nc)
	}
	for _, seen := range [][]string{shopSeen(), cdnSeen()} {
		for _, r := range seen {
			if !strings.HasPrefix(r, "GET ") || !strings.HasSuffix(r, " boxd-test") {
				t.Errorf("a request not from the outbound client, or not a GET: %s", r)
			}
		}
	}
	if got := strings.Join(cdnSeen(), ","); !strings.Contains(got, "GET /logo.svg") {
		t.Errorf("the other origin's image was not fetched: %s", got)
	}
	if got := inSeen(); len(got) != 0 {
		t.Errorf("a refused address was reached: %v", got)
	}
	if !strings.Contains(strings.Join(shopSeen(), ","), "GET /gone") {
		t.Errorf("the shop saw %v", shopSeen())
	}
}

// TestURLRequestChecks: URLs are http(s), without credentials, on one
// origin; at most five.
func TestURLRequestChecks(t *testing.T) {
	for _, urls := range [][]string{
		{"ftp://shop.example/"}, {"https://user:pw@shop.example/"}, {"https://shop.example/", "https://other.example/"},
		{"https://shop.example/", "http://shop.example/"}, {"https://shop.example/", "https://shop.example:8443/"}, {"/relative"},
		{"https://a.example/1", "https://a.example/2", "https://a.example/3", "https://a.example/4", "https://a.example/5", "https://a.example/6"},
	} {
		r := Request{URLs: urls}
		if err := r.Validate(); !problem.Is(err, problem.Invalid) {
			t.Errorf("%v: %v", urls, err)
		}
	}
	r := Request{URLs: []string{"https://Shop.example/a", "https://shop.example/b?x=1"}}
	if err := r.Validate(); err != nil {
		t.Errorf("one origin: %v", err)
	}
}
