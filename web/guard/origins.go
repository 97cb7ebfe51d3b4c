package guard

import (
	"net/http"
	"net/url"
	"strings"

	"boxd/configs"
	"boxd/web/api"

	"golang.org/x/net/http/httpguts"

	"boxd/internal/problem"
)

// Allowed browser origins: the operator's front ends (origins) plus
// localhost, 127.0.0.1 and [::1] on any port, over http or https.
func (p OriginPolicy) Allowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil {
		return false
	}
	switch strings.ToLower(u.Hostname()) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	for _, o := range p.Origins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	return false
}

// exposedHeaders are the response headers browsers may read.
const exposedHeaders = "x-service-receipt, Retry-After"

// baseAllowHeaders are the request headers an allowed origin may always
// send.
const baseAllowHeaders = "Authorization, Content-Type, Accept, Last-Event-ID"

// Bounds on the request headers a preflight may ask for.
const (
	MaxPreflightHeaders    = 64
	MaxPreflightHeaderName = 128
)

// allowHeaders is a preflight's Access-Control-Allow-Headers for an
// allowed origin: the base set plus every header the preflight asks for
// (Access-Control-Request-Headers), as the official OpenAI JS SDK sends
// seven X-Stainless-* headers and other clients their own. The origin is
// already one the operator allows, so its headers are too. A name that is
// not an HTTP token, or a list over the bounds, is left out.
func allowHeaders(requested []string) string {
	out := baseAllowHeaders
	n := 0
	for _, v := range requested {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" || len(name) > MaxPreflightHeaderName || !httpguts.ValidHeaderFieldName(name) {
				continue
			}
			if n++; n > MaxPreflightHeaders {
				return out
			}
			out += ", " + name
		}
	}
	return out
}

// Origins refuses requests from browser origins that are not allowed (403),
// answers CORS preflights, and marks allowed responses for the browser. A
// request without Origin (server to server, curl) passes.
func Origins(p OriginPolicy) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			origin := r.Header.Get("Origin")
			if origin == "" {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Add("Vary", "Origin")
			if !p.Allowed(origin) {
				api.WriteProblem(w, problem.New(problem.Forbidden, "%s", "origin "+origin+" is not allowed; the operator lists front-end origins under origins in boxd.yaml (localhost and 127.0.0.1 are always allowed)"))
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", exposedHeaders)
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Add("Vary", "Access-Control-Request-Method")
				h.Add("Vary", "Access-Control-Request-Headers")
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
				h.Set("Access-Control-Allow-Headers", allowHeaders(r.Header.Values("Access-Control-Request-Headers")))
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// OriginPolicy is the front-end origins the operator allows (origins in
// boxd.yaml); localhost and 127.0.0.1 are always allowed.
type OriginPolicy struct{ Origins []string }

// OriginPolicyOf is the Origin policy of cfg.
func OriginPolicyOf(cfg *configs.Config) OriginPolicy { return OriginPolicy{Origins: cfg.Origins} }
