package domains

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"boxd/internal/problem"
	"boxd/pipelines/a11y/domains/dnstest"
	"boxd/pipelines/outbound"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"Shop.Example.COM": "shop.example.com", "shop.example.com.": "shop.example.com", " a.b ": "a.b",
		"bücher.example": "xn--bcher-kva.example",
	} {
		if got, err := Normalize(in); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for in, says := range map[string]string{
		"": "required", "https://shop.example": "host name alone", "shop.example/path": "host name alone",
		"shop.example:8443": "no port", "127.0.0.1": "an address", "[::1]": "an address", "::1": "an address",
		"localhost": "not a host name", "a..b": "not a host name", "user@shop.example": "host name alone",
		strings.Repeat("a", 64) + ".example": "not a host name",
	} {
		_, err := Normalize(in)
		if !problem.Is(err, problem.Invalid) || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: %v (want 400 saying %q)", in, err, says)
		}
	}
	if a, b := NewToken(), NewToken(); a == b || !strings.HasPrefix(a, "boxd-verify-") || len(a) != len("boxd-verify-")+32 {
		t.Errorf("tokens %q %q", a, b)
	}
}

// TestCheck: the token is found in DNS (among other TXT records), or in
// the well-known file over https through the outbound client (the
// domain resolved by the test's DNS to a loopback TLS server the client
// is allowed to reach); each miss says what was seen instead.
func TestCheck(t *testing.T) {
	zone, res := dnstest.Serve(t)
	const tok = "boxd-verify-0123"
	body := "boxd-verify-0123\n"
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case WellKnownPath:
			_, _ = w.Write([]byte(body))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	zone.SetA("example.com", netip.MustParseAddr("127.0.0.1")) // the test certificate's name
	client := outbound.New(outbound.Policy{Resolver: res, RootCAs: roots, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	v := &Verifier{Resolver: res, Client: client, WellKnownURL: func(d string) string { return "https://" + d + port + WellKnownPath }}
	ctx := context.Background()

	zone.SetTXT("_service-challenge.example.com", "v=spf1 -all", tok)
	if m, cs := v.Check(ctx, "example.com", tok); m != MethodDNS || len(cs) != 1 || !cs[0].Found {
		t.Errorf("dns: %q %+v", m, cs)
	}
	zone.SetTXT("_service-challenge.example.com", "boxd-verify-other")
	m, cs := v.Check(ctx, "example.com", tok)
	if m != MethodWellKnown || len(cs) != 2 || cs[0].Found || !strings.Contains(cs[0].Detail, "none is this key's token") || !cs[1].Found {
		t.Errorf("well-known: %q %+v", m, cs)
	}
	body = "something else"
	m, cs = v.Check(ctx, "example.com", tok)
	if m != "" || !strings.Contains(cs[1].Detail, "does not hold this key's token") {
		t.Errorf("wrong file: %q %+v", m, cs)
	}
	if m, cs := v.Check(ctx, "nowhere.example.com", tok); m != "" || !strings.Contains(cs[0].Detail, "no TXT record") || !strings.Contains(cs[1].Detail, "does not exist") {
		t.Errorf("unknown domain: %q %+v", m, cs)
	}
	// The outbound rules hold: without the loopback allowance the file
	// is not fetched.
	body = tok
	v.Client = outbound.New(outbound.Policy{Resolver: res, RootCAs: roots})
	if m, cs := v.Check(ctx, "example.com", tok); m != "" || !strings.Contains(cs[1].Detail, "loopback") {
		t.Errorf("loopback reached: %q %+v", m, cs)
	}
	if u, _ := url.Parse(For("example.com", tok).WellKnown.URL); u.String() != "https://example.com/.well-known/service-verify.txt" || For("example.com", tok).TXT.Name != "_service-challenge.example.com" {
		t.Errorf("instructions %+v", For("example.com", tok))
	}
}

func TestCovers(t *testing.T) {
	vs := []Verified{{Domain: "shop.example", Method: MethodDNS}, {Domain: "store.example", Method: MethodWellKnown}}
	for host, want := range map[string]bool{
		"shop.example": true, "www.shop.example": true, "SHOP.example.": true, "evilshop.example": false,
		"store.example": true, "www.store.example": false, "example": false, "shop.example.evil": false,
	} {
		if got := Covers(vs, host); got != want {
			t.Errorf("%s: %v", host, got)
		}
	}
}
