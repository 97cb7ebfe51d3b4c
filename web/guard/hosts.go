package guard

import (
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"boxd/configs"
	"boxd/internal/problem"
	"boxd/web/api"
)

// The Host check (docs/decisions.md, "Hostile clients"). A web page on
// another site can point its own name at 127.0.0.1 (DNS rebinding) and then
// read this box's public GET routes as same-origin requests; its requests
// still carry that name in Host. So a request must name the box: localhost,
// a loopback address ([::1] too), the listen address's host, any IP
// address when the box serves the network (allow_non_loopback: an address
// cannot be rebound), or a name in allowed_hosts; the port is not checked
// (the name is what a rebinding page controls). Everything else gets 421
// Misdirected Request, a live socket an error event and close 4403 (as a
// refused Origin). A request without Host (HTTP/1.0) is allowed: browsers
// always send one.

// Hosts refuses requests whose Host names another host (421). WebSocket
// upgrades of the live route do not pass here (Bypass): the live route checks
// the Host after the upgrade.
func Hosts(p HostPolicy) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if msg := p.Refusal(r.Host); msg != "" {
				api.WriteProblem(w, problem.New(problem.Misdirected, "%s", msg))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// HostPolicy is who a Host header may name: the listen address's host,
// loopback names, any IP address when the box serves the network, and
// the operator's allowed_hosts.
type HostPolicy struct {
	Listen           string
	AllowNonLoopback bool
	AllowedHosts     []string
}

// Refusal is "" when host (a Host header) names this box, else the
// refusal, naming the hosts allowed and the setting.
func (p HostPolicy) Refusal(host string) string {
	if p.allowed(host) {
		return ""
	}
	shown := host
	if len(shown) > 100 {
		shown = shown[:100] + "…"
	}
	allowed := []string{"localhost", "127.0.0.1", "[::1]"}
	if h := p.listenHost(); h != "" && !slices.Contains(allowed, h) {
		allowed = append(allowed, h)
	}
	if p.AllowNonLoopback {
		allowed = append(allowed, "any IP address of this box")
	}
	configured := "none yet"
	if len(p.AllowedHosts) > 0 {
		configured = strings.Join(p.AllowedHosts, ", ")
	}
	return "Host " + strconv.Quote(shown) + " does not name this box: use " + strings.Join(allowed, ", ") +
		" (any port), or a name the operator lists under allowed_hosts in boxd.yaml (" + configured + ")"
}

// hostAllowed reports whether a Host header names this box.
func (p HostPolicy) allowed(hostport string) bool {
	if hostport == "" {
		return true
	}
	name, ok := hostName(hostport)
	if !ok {
		return false
	}
	if name == "localhost" {
		return true
	}
	if ip, err := netip.ParseAddr(name); err == nil && ip.Zone() == "" {
		return ip.IsLoopback() || p.AllowNonLoopback
	}
	if h := p.listenHost(); h != "" && name == h {
		return true
	}
	for _, a := range p.AllowedHosts {
		if strings.EqualFold(strings.TrimSuffix(a, "."), name) {
			return true
		}
	}
	return false
}

// listenHost is the listen address's host in lower case ("" for all
// interfaces, :8445).
func (p HostPolicy) listenHost() string {
	h, _, err := net.SplitHostPort(p.Listen)
	if err != nil {
		return ""
	}
	switch h = strings.ToLower(h); h {
	case "", "0.0.0.0", "::":
		return ""
	}
	return h
}

// hostName is a Host header's host without its port, in lower case,
// without a final dot and without the brackets of an IPv6 address; ok is
// false when the header is malformed.
func hostName(hostport string) (string, bool) {
	h, port := hostport, ""
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return "", false
		}
		h, port = h[1:end], h[end+1:]
		if _, err := netip.ParseAddr(h); err != nil {
			return "", false
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h, port = h[:i], h[i:]
	}
	if port != "" {
		if port[0] != ':' {
			return "", false
		}
		for _, c := range port[1:] {
			if c < '0' || c > '9' {
				return "", false
			}
		}
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	return h, h != ""
}

// Bypass sends the requests match picks straight to to, past the rest of
// the chain: WebSocket upgrades of the live route, which must get the
// upgrade and then an error event and a close code for a refused Host or
// Origin (contract section 7), not an HTTP status a browser reports as a
// failed connection with no reason. The route checks Host and Origin
// itself after the upgrade, with the same policies.
func Bypass(match func(*http.Request) bool, to http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if match(r) {
				to.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// HostPolicyOf is the Host policy of cfg.
func HostPolicyOf(cfg *configs.Config) HostPolicy {
	return HostPolicy{Listen: cfg.Listen, AllowNonLoopback: cfg.AllowNonLoopback, AllowedHosts: cfg.AllowedHosts}
}
