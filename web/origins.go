package web

import (
	"net/http"
	"net/url"
	"strings"

	"boxd/problem"
)

// Allowed browser origins: the operator's front ends (origins) plus
// localhost, 127.0.0.1 and [::1] on any port, over http or https.
func (s *Server) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil {
		return false
	}
	switch strings.ToLower(u.Hostname()) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	for _, o := range s.cfg.Origins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	return false
}

// exposedHeaders are the response headers browsers may read.
const exposedHeaders = "x-service-receipt, Retry-After"

// origins refuses requests from browser origins that are not allowed (403),
// answers CORS preflights, and marks allowed responses for the browser. A
// request without Origin (server to server, curl) passes.
func (s *Server) origins(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Origin")
		if !s.originAllowed(origin) {
			writeProblem(w, problem.New(problem.Forbidden, "%s", "origin "+origin+" is not allowed; the operator lists front-end origins under origins in boxd.yaml (localhost and 127.0.0.1 are always allowed)"))
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", exposedHeaders)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
