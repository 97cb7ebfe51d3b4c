package daemon

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"boxd/configs"
	"boxd/pipelines/a11y"
	"boxd/pipelines/a11y/domains/dnstest"
	"boxd/pipelines/outbound"
)

// TestA11yDomainsAndURLAudit: a developer key asks for a challenge (the
// same token twice), an audit of the unverified shop is 403 naming the
// fix, a check before publishing says what it saw, the TXT record
// published verifies it by DNS, the list shows it, and the shop's pages
// are then audited, streamed in the contract's order and signed. A demo
// session may not use the domain routes; another key's verification does
// not cover this one.
func TestA11yDomainsAndURLAudit(t *testing.T) {
	zone, res := dnstest.Serve(t)
	zone.SetA("shop.example", netip.MustParseAddr("127.0.0.1"))
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><title>Shop</title></head><body><main><h1>Shop</h1>
<img src="/logo.png"><a href="/cart">Cart</a></main></body></html>`))
	}))
	defer shop.Close()
	port := shop.URL[strings.LastIndex(shop.URL, ":"):]
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	ts := a11yServerWith(t, cfg, func(s *Box) {
		ob := outbound.New(outbound.Policy{Resolver: res, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
		s.A11y.Fetch = a11y.Outbound{Client: ob}
		s.A11yDomains.Verifier.Resolver = res
		s.A11yDomains.Verifier.Client = ob
	})
	key, _ := createKey(t, ts, map[string]any{})
	other, _ := createKey(t, ts, map[string]any{})
	demo := session(t, ts, "storefront-accessibility-pass")

	for _, c := range []struct {
		name, path, token string
		body              any
		status            int
		want              string
	}{
		{"demo session", "/a11y/domains", demo, map[string]any{"domain": "shop.example"}, 403, "needs a developer key"},
		{"no token", "/a11y/domains", "", map[string]any{"domain": "shop.example"}, 401, "Bearer"},
		{"no domain", "/a11y/domains", key, map[string]any{}, 400, "domain is required"},
		{"a URL", "/a11y/domains", key, map[string]any{"domain": "https://shop.example/"}, 400, "host name alone"},
		{"an address", "/a11y/domains", key, map[string]any{"domain": "10.0.0.1"}, 400, "an address"},
		{"unknown field", "/a11y/domains", key, map[string]any{"domain": "shop.example", "txt": true}, 400, "txt"},
		{"check before asking", "/a11y/domains/check", key, map[string]any{"domain": "shop.example"}, 404, "POST /a11y/domains"},
	} {
		r := ts.do(t, call{method: "POST", path: c.path, token: c.token, body: c.body})
		if r.status != c.status || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%s: %d %s; want %d with %q", c.name, r.status, r.body, c.status, c.want)
		}
	}
	ask := ts.do(t, call{method: "POST", path: "/a11y/domains", token: key, body: map[string]any{"domain": "Shop.Example"}})
	if ask.status != 200 {
		t.Fatalf("ask: %d %s", ask.status, ask.body)
	}
	m := ask.json(t)
	tok := m["token"].(string)
	pub := m["publish"].(map[string]any)
	if m["domain"] != "shop.example" || m["verified"] != false || pub["dns_txt"].(map[string]any)["name"] != "_service-challenge.shop.example" ||
		pub["well_known"].(map[string]any)["url"] != "https://shop.example/.well-known/service-verify.txt" || !regexp.MustCompile(`^boxd-verify-[0-9a-f]{32}$`).MatchString(tok) {
		t.Errorf("ask %s", ask.body)
	}
	if again := ts.do(t, call{method: "POST", path: "/a11y/domains", token: key, body: map[string]any{"domain": "shop.example"}}); again.json(t)["token"] != tok {
		t.Errorf("asking again gave another token: %s", again.body)
	}
	audit := map[string]any{"urls": []string{"http://shop.example" + port + "/", "http://shop.example" + port + "/cart"}}
	if r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: key, body: audit}); r.status != 403 || !strings.Contains(string(r.body), "POST /a11y/domains") {
		t.Errorf("unverified audit: %d %s", r.status, r.body)
	}
	ck := ts.do(t, call{method: "POST", path: "/a11y/domains/check", token: key, body: map[string]any{"domain": "shop.example"}})
	if ck.status != 200 || ck.json(t)["verified"] != false || !strings.Contains(string(ck.body), "no TXT record at _service-challenge.shop.example") || !strings.Contains(string(ck.body), `"next"`) {
		t.Errorf("check unpublished: %d %s", ck.status, ck.body)
	}
	zone.SetTXT("_service-challenge.shop.example", tok)
	ck = ts.do(t, call{method: "POST", path: "/a11y/domains/check", token: key, body: map[string]any{"domain": "shop.example"}})
	if ck.status != 200 || ck.json(t)["verified"] != true || ck.json(t)["method"] != "dns" {
		t.Fatalf("check published: %d %s", ck.status, ck.body)
	}
	list := ts.do(t, call{method: "GET", path: "/a11y/domains", token: key})
	if list.status != 200 || !strings.Contains(string(list.body), `"domain":"shop.example","verified":true,"method":"dns"`) {
		t.Errorf("list %d %s", list.status, list.body)
	}
	if l := ts.do(t, call{method: "GET", path: "/a11y/domains", token: other}); l.status != 200 || string(l.body) != `{"domains":[]}`+"\n" {
		t.Errorf("another key's list %d %q", l.status, l.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: other, body: audit}); r.status != 403 {
		t.Errorf("another key audited a domain it did not verify: %d %s", r.status, r.body)
	}
	audit["stream"] = true
	r := ts.do(t, call{method: "POST", path: "/a11y/audit", token: key, body: audit})
	types := strings.Join(sseTypes(r.body), " ")
	if r.status != 200 || !regexp.MustCompile(`^start (page names errors ){2}(finding )+result budget done$`).MatchString(types) {
		t.Errorf("stream %d: %s\n%.2000s", r.status, types, r.body)
	}
	if !strings.Contains(string(r.body), `"pages":2`) || !strings.Contains(string(r.body), "Images must have alternative text") {
		t.Errorf("the audit did not cover both pages: %.3000s", r.body)
	}
}
