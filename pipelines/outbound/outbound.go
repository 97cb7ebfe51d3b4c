// Package outbound is the one HTTP client boxd uses to fetch from the
// network (site checks, audits, accessibility passes). It refuses private,
// loopback, link-local, metadata and other non-public addresses unless the
// operator allows them, checks the address actually dialled (so DNS cannot
// be used to slip past the check, and every redirect hop is checked
// again), bounds time, redirects and body size, and turns every failure
// into an *Error whose message says what went wrong in words a caller can
// act on.
package outbound

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
)

// Policy configures a Client.
type Policy struct {
	// AllowPrivate lets the client reach every address (an operator's
	// self-hosted tests); the default refuses non-public ones.
	AllowPrivate bool
	// Allow lists prefixes reachable even when AllowPrivate is false.
	Allow []netip.Prefix
	// RootCAs, when set, replaces the system roots (tests, internal CAs).
	RootCAs *x509.CertPool
	// Timeout bounds one fetch, redirects and body included (default 15 s).
	Timeout time.Duration
	// MaxRedirects (default 5).
	MaxRedirects int
	// UserAgent is sent with every request.
	UserAgent string
	// Resolver replaces the system resolver (tests).
	Resolver *net.Resolver
}

// Client fetches under a Policy. It is safe for concurrent use.
type Client struct {
	p  Policy
	hc *http.Client
}

// MaxHeaderBytes bounds the response headers of every fetch.
const MaxHeaderBytes = 64 << 10

// Kinds of failure.
const (
	KindBadURL     = "bad_url"
	KindRefused    = "refused_address"
	KindDNS        = "dns"
	KindConnect    = "connect"
	KindTLS        = "tls"
	KindTimeout    = "timeout"
	KindTooLarge   = "too_large"
	KindRedirects  = "redirects"
	KindHTTP       = "http"
	KindCanceled   = "canceled"
	defaultTimeout = 15 * time.Second
)

// Error is a failed fetch.
type Error struct {
	Kind string
	URL  string
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// refusal is returned by the dialer's address check.
type refusal struct {
	addr   netip.Addr
	reason string
}

func (r *refusal) Error() string { return fmt.Sprintf("%s is %s", r.addr, r.reason) }

// New makes a client.
func New(p Policy) *Client {
	if p.Timeout <= 0 {
		p.Timeout = defaultTimeout
	}
	if p.MaxRedirects <= 0 {
		p.MaxRedirects = 5
	}
	c := &Client{p: p}
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: c.control, Resolver: p.Resolver}
	tr := &http.Transport{
		Proxy:                 nil, // an environment proxy would dial for us, past the address check
		DialContext:           dialer.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: p.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: p.Timeout,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
		// Bodies have their own limits; headers get one too (the default
		// is 10 MiB).
		MaxResponseHeaderBytes: MaxHeaderBytes,
	}
	c.hc = &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > p.MaxRedirects {
				return &Error{Kind: KindRedirects, URL: req.URL.Redacted(), Msg: fmt.Sprintf("more than %d redirects", p.MaxRedirects)}
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return &Error{Kind: KindBadURL, URL: req.URL.Redacted(), Msg: fmt.Sprintf("a redirect to %s: only http and https are followed", req.URL.Scheme)}
			}
			if req.URL.User != nil {
				// net/http would send them as Basic credentials on the next hop.
				return &Error{Kind: KindBadURL, URL: req.URL.Redacted(), Msg: fmt.Sprintf("a redirect to %s carries a user name or password: such URLs are not fetched", req.URL.Redacted())}
			}
			return nil
		},
	}
	return c
}

// control runs for every connection with the address about to be
// dialled (after DNS), for the first request and every redirect.
func (c *Client) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &refusal{reason: "not an IP address"}
	}
	if why := c.Refuses(ap.Addr()); why != "" {
		return &refusal{addr: ap.Addr(), reason: why}
	}
	return nil
}

// Refuses says why addr may not be reached ("" when it may).
func (c *Client) Refuses(addr netip.Addr) string {
	addr = addr.Unmap()
	for _, p := range c.p.Allow {
		if p.Contains(addr) {
			return ""
		}
	}
	if c.p.AllowPrivate {
		return ""
	}
	return NonPublic(addr)
}

// special are ranges that are not public unicast beyond what netip
// classifies: RFC 6890 and friends.
var special = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "in 0.0.0.0/8 (this network)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address (100.64.0.0/10)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address (192.0.2.0/24)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address (198.18.0.0/15)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address (198.51.100.0/24)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address (203.0.113.0/24)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address (240.0.0.0/4)"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address (2001:db8::/32)"},
	{netip.MustParsePrefix("100::/64"), "a discard address (100::/64)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local NAT64 address (64:ff9b:1::/48)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a deprecated 6to4 relay address (192.88.99.0/24)"},
	{netip.MustParsePrefix("2001:2::/48"), "a benchmarking address (2001:2::/48)"},
	{netip.MustParsePrefix("2001:10::/28"), "a deprecated ORCHID address (2001:10::/28)"},
	{netip.MustParsePrefix("fec0::/10"), "a deprecated site-local address (fec0::/10)"},
	// IPv4-compatible (RFC 4291, deprecated) and IPv4-translated (RFC
	// 2765) forms: not routed on the Internet, and a stack that tunnels
	// them would reach the IPv4 address inside, so neither is fetched.
	// (:: and ::1, inside ::/96, are named earlier.)
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible IPv6 address (::/96, deprecated)"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "an IPv4-translated IPv6 address (::ffff:0:0:0/96)"},
}

// NonPublic says why addr is not a public unicast address ("" when it is):
// loopback, private (RFC 1918, unique local), link-local (including cloud
// metadata at 169.254.169.254), unspecified, multicast, broadcast and the
// special ranges; NAT64, 6to4 and Teredo addresses are judged by the IPv4
// address they carry.
func NonPublic(addr netip.Addr) string {
	addr = addr.Unmap()
	switch {
	case !addr.IsValid():
		return "not an address"
	case addr.IsLoopback():
		return "a loopback address"
	case addr == netip.MustParseAddr("169.254.169.254") || addr == netip.MustParseAddr("fd00:ec2::254"):
		return "the cloud metadata address"
	case addr.IsPrivate():
		return "a private address"
	case addr.IsLinkLocalUnicast():
		return "a link-local address"
	case addr.IsUnspecified():
		return "the unspecified address"
	case addr.IsMulticast(), addr.IsLinkLocalMulticast(), addr.IsInterfaceLocalMulticast():
		return "a multicast address"
	case addr == netip.MustParseAddr("255.255.255.255"):
		return "the broadcast address"
	}
	for _, s := range special {
		if s.prefix.Contains(addr) {
			return s.why
		}
	}
	if addr.Is6() {
		b := addr.As16()
		var v4 netip.Addr
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(addr): // NAT64
			v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case netip.MustParsePrefix("2002::/16").Contains(addr): // 6to4
			v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		case netip.MustParsePrefix("2001::/32").Contains(addr): // Teredo: client address inverted
			v4 = netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		}
		if v4.IsValid() {
			if why := NonPublic(v4); why != "" {
				return why + " inside an IPv6 address"
			}
		}
	}
	return ""
}

// Response is a fetched resource.
type Response struct {
	URL         string // after redirects
	Status      int
	ContentType string
	Header      http.Header
	Body        []byte
	Redirects   []string // every URL that redirected, in order
	Elapsed     time.Duration
	// Truncated is set by GetPrefix when the body was longer than its limit.
	Truncated bool
}

// Get fetches rawURL (http or https), reading at most limit bytes of body:
// a longer body is an error of kind too_large.
func (c *Client) Get(ctx context.Context, rawURL string, limit int64) (*Response, error) {
	return c.get(ctx, http.MethodGet, rawURL, pageAccept, limit, false, true)
}

// pageAccept is the Accept header of Get.
const pageAccept = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8"

// Hop fetches rawURL once with method (GET or HEAD), following no
// redirect: a 3xx comes back as it is, its Location for the caller to
// check and fetch in turn (a browser that fetches through the client
// follows the redirect itself, and its own policy sees the next URL).
// accept, when not "", is sent as the Accept header. The address is
// checked as for Get; the body is read up to limit (too_large beyond).
func (c *Client) Hop(ctx context.Context, method, rawURL, accept string, limit int64) (*Response, error) {
	if method != http.MethodGet && method != http.MethodHead {
		return nil, &Error{Kind: KindBadURL, URL: rawURL, Msg: fmt.Sprintf("only GET and HEAD are fetched, not %s", method)}
	}
	return c.get(ctx, method, rawURL, accept, limit, false, false)
}

// GetPrefix fetches rawURL like Get but keeps the first limit bytes of a
// longer body, setting Truncated (robots.txt parsers read a prefix).
func (c *Client) GetPrefix(ctx context.Context, rawURL string, limit int64) (*Response, error) {
	return c.get(ctx, http.MethodGet, rawURL, pageAccept, limit, true, true)
}

// get fetches rawURL with method; prefix keeps the first limit bytes of
// a longer body; follow follows redirects (each checked).
func (c *Client) get(ctx context.Context, method, rawURL, accept string, limit int64, prefix, follow bool) (*Response, error) {
	u, uerr := fetchable(rawURL)
	if uerr != nil {
		return nil, uerr
	}
	ctx, cancel := context.WithTimeout(ctx, c.p.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, &Error{Kind: KindBadURL, URL: rawURL, Msg: err.Error(), Err: err}
	}
	if c.p.UserAgent != "" {
		req.Header.Set("User-Agent", c.p.UserAgent)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	start := time.Now()
	var redirects []string
	hc := *c.hc
	inner := hc.CheckRedirect
	hc.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if !follow {
			return http.ErrUseLastResponse
		}
		redirects = append(redirects, via[len(via)-1].URL.String())
		return inner(r, via)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, c.classify(ctx, rawURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, c.classify(ctx, rawURL, err)
	}
	truncated := false
	if int64(len(body)) > limit && prefix {
		body, truncated = body[:limit], true
	}
	if int64(len(body)) > limit {
		return nil, &Error{Kind: KindTooLarge, URL: resp.Request.URL.String(), Msg: fmt.Sprintf("%s is larger than %d bytes", resp.Request.URL, limit)}
	}
	return &Response{
		URL: resp.Request.URL.String(), Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
		Header: resp.Header, Body: body, Redirects: redirects, Elapsed: time.Since(start), Truncated: truncated,
	}, nil
}

// Post sends body to rawURL with header and returns the response for the
// caller to read and close (an API call: the endpoint audit's probes). The
// address is checked when dialled, as for Get; no redirect is followed (a
// 3xx comes back as it is: a POST is not re-sent elsewhere); ctx bounds
// the whole exchange and the policy's timeout the wait for the headers.
// Failures are *Error.
func (c *Client) Post(ctx context.Context, rawURL string, header http.Header, body []byte) (*http.Response, error) {
	u, uerr := fetchable(rawURL)
	if uerr != nil {
		return nil, uerr
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Kind: KindBadURL, URL: rawURL, Msg: err.Error(), Err: err}
	}
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if c.p.UserAgent != "" {
		req.Header.Set("User-Agent", c.p.UserAgent)
	}
	hc := *c.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return nil, c.classify(ctx, rawURL, err)
	}
	return resp, nil
}

// fetchable parses rawURL: http or https with a host, no credentials.
func fetchable(rawURL string) (*url.URL, *Error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Error{Kind: KindBadURL, URL: rawURL, Msg: fmt.Sprintf("%q is not an http or https URL", rawURL)}
	}
	if u.User != nil {
		return nil, &Error{Kind: KindBadURL, URL: rawURL, Msg: "URLs with user names or passwords are not fetched"}
	}
	return u, nil
}

// classify turns a transport error into an *Error with a message.
func (c *Client) classify(ctx context.Context, rawURL string, err error) *Error {
	var oe *Error
	if errors.As(err, &oe) {
		return oe
	}
	var ref *refusal
	if errors.As(err, &ref) {
		return &Error{Kind: KindRefused, URL: rawURL, Err: err,
			Msg: fmt.Sprintf("refused to fetch %s: %s; boxd only fetches public addresses (an operator can allow others with outbound.allow_private or outbound.allow_cidrs)", rawURL, ref.Error())}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		msg := fmt.Sprintf("%s does not resolve (DNS: %s)", dnsErr.Name, dnsErr.Err)
		if dnsErr.IsNotFound {
			msg = fmt.Sprintf("%s does not exist (DNS: no such host)", dnsErr.Name)
		}
		return &Error{Kind: KindDNS, URL: rawURL, Msg: msg, Err: err}
	}
	var certErr *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	var unknownCA x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.As(err, &certErr), errors.As(err, &hostErr), errors.As(err, &unknownCA), errors.As(err, &invalid):
		return &Error{Kind: KindTLS, URL: rawURL, Msg: fmt.Sprintf("the TLS certificate of %s is not valid: %s", hostOf(rawURL), tlsReason(err)), Err: err}
	case strings.Contains(err.Error(), "server response headers exceeded"):
		return &Error{Kind: KindTooLarge, URL: rawURL, Msg: fmt.Sprintf("the response headers of %s are larger than %d bytes", hostOf(rawURL), MaxHeaderBytes), Err: err}
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return &Error{Kind: KindTLS, URL: rawURL, Msg: fmt.Sprintf("TLS with %s failed: the server answered plain http on an https URL", hostOf(rawURL)), Err: err}
	case errors.As(err, &recordErr), strings.Contains(err.Error(), "tls: "):
		return &Error{Kind: KindTLS, URL: rawURL, Msg: fmt.Sprintf("TLS with %s failed: %s", hostOf(rawURL), tlsReason(err)), Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) || isTimeout(err) {
		return &Error{Kind: KindTimeout, URL: rawURL, Msg: fmt.Sprintf("%s did not answer within %s", hostOf(rawURL), c.p.Timeout), Err: err}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Kind: KindCanceled, URL: rawURL, Msg: "the request was cancelled", Err: err}
	}
	if errors.Is(err, syscall.EPERM) {
		// Under boxd.service the kernel refuses connections to anything
		// but loopback (IPAddressDeny=any) with EPERM: say how to open it.
		return &Error{Kind: KindConnect, URL: rawURL, Err: err, Msg: fmt.Sprintf("could not connect to %s: this box's network is closed to everything but loopback (boxd.service: IPAddressDeny=any); the operator opens it with the drop-in /usr/share/doc/boxd/examples/network.conf (README, The network)", hostOf(rawURL))}
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return &Error{Kind: KindConnect, URL: rawURL, Msg: fmt.Sprintf("could not connect to %s: %s", hostOf(rawURL), opErr.Err), Err: err}
	}
	return &Error{Kind: KindHTTP, URL: rawURL, Msg: fmt.Sprintf("fetching %s failed: %v", rawURL, err), Err: err}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func tlsReason(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}

func hostOf(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		return u.Host
	}
	return rawURL
}

// PolicyFromSettings builds a policy from the outbound.* settings: allow
// private addresses, address ranges allowed even when private (CIDR
// strings), and a PEM file of extra certificate authorities trusted besides
// the system's ("" for none).
func PolicyFromSettings(allowPrivate bool, cidrs []string, caFile, userAgent string) (Policy, error) {
	p := Policy{AllowPrivate: allowPrivate, UserAgent: userAgent}
	for _, c := range cidrs {
		pfx, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return Policy{}, fmt.Errorf("outbound.allow_cidrs: %q is not a CIDR range: %w", c, err)
		}
		p.Allow = append(p.Allow, pfx.Masked())
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return Policy{}, fmt.Errorf("outbound.ca_file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return Policy{}, fmt.Errorf("outbound.ca_file: %s holds no PEM certificate", caFile)
		}
		p.RootCAs = pool
	}
	return p, nil
}
