// Package web is boxd's API surface: the HTTP server and its lifecycle, the
// routes of the contract, middleware (metrics, logging, and later auth,
// origins and budgets), and JSON, SSE and WebSocket encoding. It parses and
// authorises requests and hands typed work to the pipelines; it never runs
// models itself.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"boxd/pipelines/llmcall"
	"boxd/web/api"
	"boxd/web/guard"

	"boxd/configs"
	"boxd/internal/ids"
	"boxd/internal/platform"
	"boxd/internal/problem"
	"boxd/internal/version"
)

// Probes tell the server what the rest of the process is doing. A nil func
// reads as false or 0.
type Probes struct {
	LLMReady func() bool
	// LLMError says why the loaded chat model cannot serve chat (a model
	// without a chat template); "" when it can or none is loaded.
	LLMError func() string
	ASRReady func() bool
	// Diarizer names what pass 2 diarizes with ("" when it cannot:
	// /healthz diarize false).
	Diarizer     string
	LiveSessions func() int
	Queue        func() int
	// RandomWeights names the loaded models whose weights are random
	// (generated test models: the quick start's); /healthz lists them.
	RandomWeights []string
}

// Deps are what the server core needs: route families are mounted on its
// API afterwards (the composition root, internal/daemon, does that).
type Deps struct {
	Probes   Probes
	Platform *platform.Platform
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// ChatSequences is the chat model's parallel sequences (the demo
	// sessions' share of it is computed from it); nil: the setting.
	ChatSequences func() int
}

// Server serves the API on one listener.
type Server struct {
	cfg     *configs.Config
	probes  Probes
	api     *api.API
	log     *slog.Logger
	started time.Time
	mux     *http.ServeMux
	metrics *metrics
	bodies  *guard.Bodies
	conns   atomic.Pointer[guard.LimitListener] // set by Serve
	handler http.Handler

	// OnDrain, when set, runs once as the server starts to drain (boxd
	// serve sends STOPPING=1 to systemd there).
	OnDrain func()

	mu      sync.Mutex
	methods map[string][]string // path -> methods, for 405 answers
}

// New builds a server for cfg: the transport (mux, guards, metrics,
// health, drain). Families declare their routes on API(); Serve runs it.
func New(cfg *configs.Config, deps Deps, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	if deps.Platform == nil {
		panic("web.New: Deps.Platform is required")
	}
	now := deps.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{cfg: cfg, probes: deps.Probes, log: log, mux: http.NewServeMux(), methods: map[string][]string{}, started: now()}
	s.api = api.New(s, api.Options{Config: cfg, Platform: deps.Platform, Log: log, Now: now, ChatSequences: deps.ChatSequences})
	if s.probes.LiveSessions == nil {
		s.probes.LiveSessions = deps.Platform.LiveSessions
	}
	s.metrics = newMetrics(s, deps.Platform)
	s.bodies = guard.NewBodies(cfg)
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/{$}"}, s.home)
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/healthz"}, s.healthz)
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/metrics"}, s.metrics.serve)
	s.mux.HandleFunc("/", s.notFound)
	chain := []func(http.Handler) http.Handler{
		guard.BodyDeadlines(s.bodies),
		s.observe,
		guard.SDKErrors,
		guard.Strict(s.mux, s.notFound),
		guard.Bypass(s.api.SocketUpgrade, s.mux),
		guard.Hosts(guard.HostPolicyOf(cfg)),
		guard.Origins(guard.OriginPolicyOf(cfg)),
	}
	var h http.Handler = s.mux
	for i := len(chain) - 1; i >= 0; i-- {
		h = chain[i](h)
	}
	s.handler = h
	return s
}

// API is where route families declare their routes.
func (s *Server) API() *api.API { return s.api }

// LLMMeter counts the chat model's calls in /metrics (chat and live lanes
// hand it to llmcall).
func (s *Server) LLMMeter() llmcall.Meter { return s.metrics.llm }

// Conns is the connection limiter Serve put on its listener (nil before
// Serve).
func (s *Server) Conns() *guard.LimitListener { return s.conns.Load() }

// Bodies is the request-body bounds' state (the bytes held now).
func (s *Server) Bodies() *guard.Bodies { return s.bodies }

// Started is when the server was built (the models list's created time).
func (s *Server) Started() time.Time { return s.started }

// Handle registers a handler for "METHOD /path" (Go's pattern syntax):
// api.Mux, which every declaration goes through.
func (s *Server) Handle(method, path string, h http.HandlerFunc) {
	s.mu.Lock()
	s.methods[path] = append(s.methods[path], method)
	s.mu.Unlock()
	s.mux.HandleFunc(method+" "+path, h)
}

// home is GET /: a short plain page saying what answers here, as
// `curl localhost:8445` to ollama says "Ollama is running".
func (s *Server) home(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, "boxd %s is running (API contract %s).\n\n", version.Version, version.Contract)
	fmt.Fprint(w, "  GET /healthz    what is loaded and ready (JSON)\n"+
		"  GET /metrics    Prometheus metrics\n"+
		"  /v1/...         the OpenAI-style API: point an OpenAI client's base URL at http://<this box>/v1\n\n"+
		"The API, route by route, is in README.md (/usr/share/doc/boxd/README.md on a packaged box).\n")
}

// ServeHTTP lets tests and embedders use the server as a handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Draining reports whether the server has begun its graceful stop.
func (s *Server) Draining() bool { return s.api.Draining() }

// ErrGraceExpired is returned by Serve when requests were still running at
// the end of the grace period and had to be cut.
var ErrGraceExpired = errors.New("shutdown grace period expired")

// Serve answers requests on ln until ctx ends, then drains: the listener
// closes at once, idle connections close, and in-flight requests get
// shutdown_grace_s seconds to finish before they are cut.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	limited := guard.LimitConns(ln, s.cfg, s.log, s.metrics.connRefused)
	s.conns.Store(limited)
	ln = guard.JSONCanned(limited) // net/http's own error answers as JSON
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}

	s.api.BeginDrain()
	if s.OnDrain != nil {
		s.OnDrain()
	}
	grace := time.Duration(s.cfg.ShutdownGraceS) * time.Second
	s.log.Info("draining", "grace_s", s.cfg.ShutdownGraceS, "live_sessions", s.api.Sessions())
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-errc // Serve returns ErrServerClosed once Shutdown begins
	if err == nil && s.api.WaitSessions(sctx) {
		s.log.Info("drained")
		return nil
	}
	// The grace is over: live sessions still running send their error
	// event and close (they get a moment to write it), then every
	// connection is cut.
	s.api.CutNow()
	wctx, wcancel := context.WithTimeout(context.Background(), cutWait)
	defer wcancel()
	s.api.WaitSessions(wctx)
	_ = srv.Close()
	return fmt.Errorf("%w after %s: in-flight requests were cut", ErrGraceExpired, grace)
}

// cutWait is how long live sessions get to send their closing error event
// once the shutdown grace is over.
const cutWait = 2 * time.Second

// Listen opens the configured address. A non-loopback address is refused
// unless allow_non_loopback is set, and is logged when it is.
func Listen(ctx context.Context, cfg *configs.Config, log *slog.Logger) (net.Listener, error) {
	if err := CheckListen(ctx, cfg); err != nil {
		return nil, err
	}
	loopback, err := isLoopback(ctx, cfg.Listen)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && !cfg.AllowNonLoopback {
		ln.Close()
		return nil, fmt.Errorf("listen %s: bound %s, which is not loopback; set allow_non_loopback to serve other machines", cfg.Listen, tcp)
	}
	if !loopback {
		log.Warn("listening on a non-loopback address because allow_non_loopback is true; other machines can reach the API", "addr", ln.Addr().String())
	}
	return ln, nil
}

// ProbeListen binds the listen address and lets it go at once, so that
// boxd serve reports a port another process holds before it loads models
// or writes anything (it binds again, for good, once it is ready to
// serve; a process that takes the port in between is reported then).
func ProbeListen(ctx context.Context, cfg *configs.Config) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		hint := ""
		if errors.Is(err, syscall.EADDRINUSE) {
			hint = fmt.Sprintf("; another process serves this port (another boxd, or ollama? `ss -ltnp` shows which): stop it, or set listen (%s) to a free port", cfg.Source("listen"))
		}
		return fmt.Errorf("listen %s: %w%s", cfg.Listen, err, hint)
	}
	return ln.Close()
}

// CheckListen refuses a listen address that is not loopback unless
// allow_non_loopback is set; it binds nothing, so boxd serve checks it
// before any side effect.
func CheckListen(ctx context.Context, cfg *configs.Config) error {
	loopback, err := isLoopback(ctx, cfg.Listen)
	if err != nil {
		return err
	}
	if !loopback && !cfg.AllowNonLoopback {
		return fmt.Errorf("listen %s (%s): not a loopback address; boxd serves only this machine unless allow_non_loopback is true", cfg.Listen, cfg.Source("listen"))
	}
	return nil
}

// isLoopback reports whether every address host:port can bind is loopback.
func isLoopback(ctx context.Context, hostport string) (bool, error) {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false, fmt.Errorf("listen %q: %w", hostport, err)
	}
	if host == "" {
		return false, nil // all interfaces
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return ip.IsLoopback(), nil
	}
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return false, fmt.Errorf("listen %q: resolve %s: %w", hostport, host, err)
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return false, nil
		}
	}
	return len(addrs) > 0, nil
}

// notFound answers every request no route matched: 405 with Allow when the
// path exists under another method, else 404.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var methods []string
	s.mu.Lock()
	for pattern, ms := range s.methods {
		if pathMatches(pattern, r.URL.Path) {
			for _, m := range ms {
				if !contains(methods, m) {
					methods = append(methods, m)
				}
			}
		}
	}
	s.mu.Unlock()
	if len(methods) > 0 {
		if contains(methods, http.MethodGet) && !contains(methods, http.MethodHead) {
			methods = append(methods, http.MethodHead)
		}
		sort.Strings(methods)
		w.Header().Set("Allow", strings.Join(methods, ", "))
		api.WriteProblem(w, problem.New(problem.MethodNotAllowed, "%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(methods, " or ")))
		return
	}
	// An OpenAI client whose base URL lacks /v1 asks for /chat/completions.
	v1 := false
	s.mu.Lock()
	for pattern := range s.methods {
		v1 = v1 || strings.HasPrefix(pattern, "/v1/") && pathMatches(pattern, "/v1"+r.URL.Path)
	}
	s.mu.Unlock()
	if v1 && !strings.HasPrefix(r.URL.Path, "/v1/") {
		api.WriteProblem(w, problem.New(problem.NotFound, "no route %s %s; did you mean /v1%s? An OpenAI client's base URL is this box's address with /v1 (http://localhost:8445/v1)", r.Method, r.URL.Path, r.URL.Path))
		return
	}
	api.WriteProblem(w, problem.New(problem.NotFound, "no route %s %s; the API is listed in README.md", r.Method, r.URL.Path))
}

// pathMatches reports whether path matches a route pattern's path as the
// mux reads it: a "{name}" segment matches any one non-empty segment, a
// final "{name...}" or a trailing "/" matches the rest of the path.
func pathMatches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if last := ps[len(ps)-1]; last == "" || (strings.HasPrefix(last, "{") && strings.HasSuffix(last, "...}")) {
		if len(xs) < len(ps) {
			return false
		}
		ps, xs = ps[:len(ps)-1], xs[:len(ps)-1]
	}
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if p == "{$}" { // the end of the path: "/{$}" is "/" only
			if xs[i] != "" {
				return false
			}
			continue
		}
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			if xs[i] == "" {
				return false
			}
		} else if p != xs[i] {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// newRequestID returns 16 random hex characters.
func newRequestID() string { return ids.New("", 8) }
