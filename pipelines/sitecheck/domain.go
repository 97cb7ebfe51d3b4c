// Package sitecheck runs the site check of POST /geo/site-check: it fetches
// a site's home page, /robots.txt and /llms.txt through the guarded
// outbound client, runs the deterministic checks of its sub-packages
// (robots, pagecheck) over them and assembles a report with fixes and a
// signed record. It also drafts review replies under the reply guard
// (replyguard) for POST /reviews/reply. Nothing here calls a model except
// the reply drafter.
package sitecheck

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"boxd/internal/problem"
)

// maxDomainLen bounds the domain field (a URL may be sent).
const maxDomainLen = 2048

// Target is a parsed domain: the host (lower case, with a port when one was
// given) and the schemes to try in order.
type Target struct {
	Host    string
	Schemes []string
}

// inputErr is a domain or name the check cannot use (problem.Invalid); its
// message says what to send instead.
func inputErr(format string, args ...any) *problem.Error {
	return problem.New(problem.Invalid, format, args...)
}

// ParseDomain reads the domain field: a host name ("example.com"), a host
// and port ("example.com:8443"), an IP literal, or an http or https URL
// whose origin is used (its path, query and fragment are ignored: the check
// reads the home page). A bare host is tried over https first, then http;
// a URL's scheme is kept. Host names must be ASCII (send an IDN in its
// xn-- form).
func ParseDomain(s string) (Target, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Target{}, inputErr(`domain is empty; send the site's domain, e.g. "example.com"`)
	}
	if len(s) > maxDomainLen {
		return Target{}, inputErr("domain is %d bytes long; send the site's domain (at most %d bytes)", len(s), maxDomainLen)
	}
	for _, r := range s {
		if r > 0x7e || r < 0x21 {
			if r > 0x7e {
				return Target{}, inputErr("domain %q has non-ASCII characters; send an internationalised name in its xn-- (punycode) form", s)
			}
			return Target{}, inputErr("domain %q contains spaces or control characters; send only the site's domain", s)
		}
	}
	schemes := []string{"https", "http"}
	hostport := s
	if i := strings.Index(s, "://"); i >= 0 {
		u, err := url.Parse(s)
		if err != nil {
			return Target{}, inputErr("domain %q is not a valid URL: %v", s, strings.TrimPrefix(err.Error(), "parse "))
		}
		scheme := strings.ToLower(u.Scheme)
		if scheme != "http" && scheme != "https" {
			return Target{}, inputErr("domain %q has scheme %q; send a domain or an http or https URL", s, u.Scheme)
		}
		if u.User != nil {
			return Target{}, inputErr("domain %q carries a user name or password; send the site's domain only", s)
		}
		if u.Host == "" {
			return Target{}, inputErr("domain %q has no host; send the site's domain, e.g. \"example.com\"", s)
		}
		schemes = []string{scheme}
		hostport = u.Host
	} else if strings.ContainsAny(s, "/?#@\\") {
		return Target{}, inputErr(`domain %q is neither a domain nor a URL; send "example.com" or "https://example.com/"`, s)
	}
	host, port := hostport, ""
	if strings.HasPrefix(hostport, "[") {
		end := strings.Index(hostport, "]")
		if end < 0 {
			return Target{}, inputErr("domain %q has an unclosed IPv6 bracket", s)
		}
		host, port = hostport[1:end], strings.TrimPrefix(hostport[end+1:], ":")
		if hostport[end+1:] != "" && !strings.HasPrefix(hostport[end+1:], ":") {
			return Target{}, inputErr("domain %q has text after the IPv6 address; send [address] or [address]:port", s)
		}
		if ip, err := netip.ParseAddr(host); err != nil || !ip.Is6() || ip.Zone() != "" {
			return Target{}, inputErr("domain %q: %q is not an IPv6 address", s, host)
		}
		host = "[" + strings.ToLower(host) + "]"
	} else if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
		host, port = hostport[:i], hostport[i+1:]
		if strings.Contains(host, ":") {
			return Target{}, inputErr("domain %q: write an IPv6 address in brackets, e.g. [2001:db8::1]", s)
		}
	}
	if port != "" || strings.HasSuffix(hostport, ":") {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return Target{}, inputErr("domain %q has port %q; a port is a number from 1 to 65535", s, port)
		}
	}
	if !strings.HasPrefix(host, "[") {
		host = strings.TrimSuffix(strings.ToLower(host), ".")
		if err := checkHostName(host); err != "" {
			return Target{}, inputErr("domain %q: %s", s, err)
		}
	}
	if port != "" {
		host += ":" + port
	}
	return Target{Host: host, Schemes: schemes}, nil
}

// checkHostName checks an ASCII host name or IPv4 literal (lower case,
// without a trailing dot), returning what is wrong or "".
func checkHostName(h string) string {
	if h == "" {
		return "the host is empty"
	}
	if len(h) > 253 {
		return "the host name is longer than 253 characters"
	}
	if ip := net.ParseIP(h); ip != nil {
		return ""
	}
	for _, label := range strings.Split(h, ".") {
		switch {
		case label == "":
			return "the host name has an empty label (two dots in a row, or a leading dot)"
		case len(label) > 63:
			return fmt.Sprintf("the label %q is longer than 63 characters", label)
		case label[0] == '-' || label[len(label)-1] == '-':
			return fmt.Sprintf("the label %q starts or ends with a hyphen", label)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Sprintf("the host name has the character %q; host names use letters, digits and hyphens", c)
			}
		}
	}
	if endsInNumber(h) {
		// "2130706433", "0177.0.0.1", "0x7f.0.0.1" and "127.1" are IPv4
		// addresses to a browser (and to inet_aton) but host names to
		// net.ParseIP; what the check would fetch then depends on the
		// resolver. Ask for the one spelling every parser reads alike.
		if a, ok := parseWHATWGIPv4(h); ok {
			return fmt.Sprintf("the host %q is an IPv4 address in number or short form (browsers read it as %s); write the address in dotted decimal, e.g. %s, or send the site's name", h, a, a)
		}
		return fmt.Sprintf("the host %q ends in a number, so browsers read it as an IPv4 address, and it is not a valid one; write the address in dotted decimal (four numbers from 0 to 255, e.g. 203.0.113.9) or send the site's name", h)
	}
	return ""
}

// endsInNumber is the WHATWG URL standard's "ends in a number" check of a
// host (ASCII, lower case, no trailing dot): its last label is all digits
// or an IPv4 number ("0x1f", "017"). Such a host is parsed as an IPv4
// address by the URL parser, never as a name.
func endsInNumber(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := ipv4Number(last)
	return ok
}

// parseWHATWGIPv4 is the WHATWG URL standard's IPv4 parser: one to four
// dot-separated numbers, each decimal, octal (a leading 0) or hex (0x); the
// last fills the remaining bytes. It returns the address in dotted decimal.
func parseWHATWGIPv4(h string) (string, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return "", false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok || (i < len(parts)-1 && n > 255) {
			return "", false
		}
		nums[i] = n
	}
	v := nums[len(nums)-1]
	if v >= 1<<(8*(5-len(nums))) {
		return "", false
	}
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String(), true
}

// ipv4Number parses one part of a WHATWG IPv4 address: "0x" or "0X" and hex
// digits (none means 0), "0" and octal digits, or decimal digits.
func ipv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		s, base = s[2:], 16
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		// A syntax error is not a number; a number too large for 64 bits
		// is one, but no valid address.
		if errors.Is(err, strconv.ErrRange) {
			return 1 << 40, true
		}
		return 0, false
	}
	return n, true
}
