// Package domains is the accessibility audit's domain verification
// (contract 2, section 4): a developer key asks for a challenge token for
// a domain, publishes it as a DNS TXT record at
// _service-challenge.<domain> or as the body of
// https://<domain>/.well-known/service-verify.txt, and asks for a check;
// once the token is found, the key may audit that domain's pages. The
// well-known file is fetched through the outbound rules (public addresses
// only, every redirect re-checked); DNS is asked through the resolver.
package domains

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"boxd/internal/problem"
	"boxd/pipelines/outbound"
)

// Where the token is published.
const (
	TXTPrefix     = "_service-challenge."
	WellKnownPath = "/.well-known/service-verify.txt"
	// MethodDNS and MethodWellKnown name how a domain was verified.
	MethodDNS       = "dns"
	MethodWellKnown = "well-known"
)

// hostNames is IDNA's lookup profile with DNS's label lengths and
// letters, digits and hyphens only.
var hostNames = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.VerifyDNSLength(true), idna.StrictDomainName(true))

// Normalize checks a domain as a caller sends it and returns its ASCII,
// lower-case form: a host name of at least two labels (IDNA names
// converted), no scheme, port, path or address.
func Normalize(s string) (string, error) {
	d := strings.TrimSuffix(strings.TrimSpace(s), ".")
	switch {
	case d == "":
		return "", problem.New(problem.Invalid, "domain is required, like shop.example.com")
	case !utf8.ValidString(d):
		// IDNA would read the bad bytes as U+FFFD and give a name that is
		// not one itself (xn--zn7c).
		return "", problem.New(problem.Invalid, "domain %q is not valid UTF-8: send the host name as text, like shop.example.com", s)
	case strings.Contains(d, "://") || strings.ContainsAny(d, "/?#@"):
		return "", problem.New(problem.Invalid, "domain %q must be a host name alone, like shop.example.com: no scheme, path or user", s)
	case strings.Contains(d, ":") || strings.HasPrefix(d, "["):
		if _, err := netip.ParseAddr(strings.Trim(d, "[]")); err == nil {
			return "", problem.New(problem.Invalid, "domain %q is an address: a domain name is verified, not an address", s)
		}
		return "", problem.New(problem.Invalid, "domain %q must have no port: the verification covers the host on every port", s)
	}
	if _, err := netip.ParseAddr(d); err == nil {
		return "", problem.New(problem.Invalid, "domain %q is an address: a domain name is verified, not an address", s)
	}
	a, err := hostNames.ToASCII(d)
	if err != nil || len(a) > 253 || !strings.Contains(a, ".") || slices.Contains(strings.Split(a, "."), "") {
		return "", problem.New(problem.Invalid, "domain %q is not a host name: two or more labels of 1 to 63 letters, digits or hyphens, like shop.example.com", s)
	}
	return strings.ToLower(a), nil
}

// NewToken is a fresh challenge token.
func NewToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "boxd-verify-" + hex.EncodeToString(b)
}

// Instructions say where to publish token for domain.
type Instructions struct {
	TXT       TXT       `json:"dns_txt"`
	WellKnown WellKnown `json:"well_known"`
}

// TXT is the DNS record to publish.
type TXT struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// WellKnown is the file to publish.
type WellKnown struct {
	URL  string `json:"url"`
	Body string `json:"body"`
}

// For says where token is published for domain.
func For(domain, token string) Instructions {
	return Instructions{TXT: TXT{Name: TXTPrefix + domain, Value: token}, WellKnown: WellKnown{URL: "https://" + domain + WellKnownPath, Body: token}}
}

// TXTResolver looks up TXT records (*net.Resolver is one).
type TXTResolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
}

// Getter fetches a URL under the outbound rules (*outbound.Client).
type Getter interface {
	Get(ctx context.Context, rawURL string, limit int64) (*outbound.Response, error)
}

// Verifier checks published challenges.
type Verifier struct {
	Resolver TXTResolver // nil: net.DefaultResolver
	Client   Getter      // nil: the well-known file is not checked
	// WellKnownURL is where domain's file is read (nil: https on 443;
	// tests serve it on another port).
	WellKnownURL func(domain string) string
}

// Check is what one method found.
type Check struct {
	Method string `json:"method"`
	Where  string `json:"where"`
	Found  bool   `json:"found"`
	Detail string `json:"detail"`
}

// Check looks for token by DNS, then by the well-known file; method is
// the first that found it ("" when none did, each check saying what it
// saw instead).
func (v *Verifier) Check(ctx context.Context, domain, token string) (method string, checks []Check) {
	dns := v.dns(ctx, domain, token)
	checks = append(checks, dns)
	if dns.Found {
		return MethodDNS, checks
	}
	wk := v.wellKnown(ctx, domain, token)
	checks = append(checks, wk)
	if wk.Found {
		return MethodWellKnown, checks
	}
	return "", checks
}

func (v *Verifier) dns(ctx context.Context, domain, token string) Check {
	name := TXTPrefix + domain
	c := Check{Method: MethodDNS, Where: name}
	var r TXTResolver = net.DefaultResolver
	if v.Resolver != nil {
		r = v.Resolver
	}
	recs, err := r.LookupTXT(ctx, name)
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		c.Detail = "no TXT record at " + name
		return c
	case err != nil:
		c.Detail = fmt.Sprintf("the DNS lookup of %s failed: %v", name, err)
		return c
	}
	for _, rec := range recs {
		if strings.TrimSpace(rec) == token {
			c.Found, c.Detail = true, "the TXT record holds the token"
			return c
		}
	}
	c.Detail = fmt.Sprintf("%d TXT record(s) at %s, none is this key's token", len(recs), name)
	return c
}

func (v *Verifier) wellKnown(ctx context.Context, domain, token string) Check {
	u := "https://" + domain + WellKnownPath
	if v.WellKnownURL != nil {
		u = v.WellKnownURL(domain)
	}
	c := Check{Method: MethodWellKnown, Where: u}
	if v.Client == nil {
		c.Detail = "this box makes no outbound fetches"
		return c
	}
	resp, err := v.Client.Get(ctx, u, 4096)
	switch {
	case err != nil:
		c.Detail = err.Error()
		return c
	case resp.Status != 200:
		c.Detail = fmt.Sprintf("%s answered %d", u, resp.Status)
		return c
	}
	if fu, err := url.Parse(resp.URL); err != nil || fu.Scheme != "https" || !strings.EqualFold(fu.Hostname(), domain) {
		c.Detail = fmt.Sprintf("%s redirected to %s: the file must be served by %s itself over https", u, resp.URL, domain)
		return c
	}
	if strings.TrimSpace(string(resp.Body)) != token {
		c.Detail = "the file does not hold this key's token (its whole body must be the token)"
		return c
	}
	c.Found, c.Detail = true, "the file holds the token"
	return c
}

// Verified is a domain that was verified, and how.
type Verified struct {
	Domain string
	Method string
}

// Covers says whether host may be audited under the verified domains: the
// domain itself, or (verified by DNS, which proves the zone) a name under
// it.
func Covers(verified []Verified, host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if a, err := hostNames.ToASCII(host); err == nil {
		host = strings.ToLower(a)
	}
	for _, v := range verified {
		if host == v.Domain || v.Method == MethodDNS && strings.HasSuffix(host, "."+v.Domain) {
			return true
		}
	}
	return false
}
