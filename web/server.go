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

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/internal/ids"
	"boxd/internal/platform"
	"boxd/internal/problem"
	"boxd/internal/receipts"
	"boxd/internal/scratch"
	"boxd/internal/version"
	"boxd/pipelines/a11y"
	"boxd/pipelines/a11y/domains"
	"boxd/pipelines/chat"
	"boxd/pipelines/codes"
	"boxd/pipelines/docreader"
	"boxd/pipelines/fill"
	"boxd/pipelines/hcc"
	"boxd/pipelines/live"
	"boxd/pipelines/outbound"
	"boxd/pipelines/retrieval"
	"boxd/pipelines/sitecheck"
)

// Probes tell the server what the rest of the process is doing. A nil func
// reads as false or 0.
type Probes struct {
	LLMReady func() bool
	// LLMError says why the loaded chat model cannot serve chat (a model
	// without a chat template); "" when it can or none is loaded.
	LLMError     func() string
	ASRReady     func() bool
	DiarizeReady func() bool
	LiveSessions func() int
	Queue        func() int
	// RandomWeights names the loaded models whose weights are random
	// (generated test models: the quick start's); /healthz lists them.
	RandomWeights []string
}

// Deps are what the server serves from.
type Deps struct {
	Probes   Probes
	Platform *platform.Platform
	Key      *attest.Key
	Receipts *receipts.Book
	// Chat serves chat completions; nil serves none (502 on the route).
	Chat *chat.Service
	// Outbound fetches for site checks; nil builds one from the outbound.*
	// settings.
	Outbound *outbound.Client
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// LiveVerticals are the live audio verticals /ws/live and replays run,
	// by id; a vertical missing here closes 1011.
	LiveVerticals map[string]*live.Vertical
	// Transcribe starts speech recognition for a live session; nil closes
	// live sockets with 1011 (no models.asr.path).
	Transcribe live.StartTranscriber
	// LiveModels name the models in live ready events (LLM defaults to the
	// chat model id).
	LiveModels live.Models
	// Retrieval serves /retrieval/*; nil serves verify and info only (no
	// embedding model: index and search answer 503).
	Retrieval *retrieval.Service
	// Codes are the ICD-10-CM and RxNorm tables (data_dir); nil: the
	// chart reader (/hcc/read-chart) answers 503.
	Codes *codes.Tables
	// Resolver looks up the accessibility audit's DNS challenges (nil:
	// the system's resolver).
	Resolver *net.Resolver
}

// Server serves the API on one listener.
type Server struct {
	cfg      *configs.Config
	probes   Probes
	platform *platform.Platform
	key      *attest.Key
	receipts *receipts.Book
	chat     *chat.Service
	// retrieval serves /retrieval/* (never nil after New).
	retrieval *retrieval.Service
	// docreader serves /docreader/* (MuPDF and, started on first use,
	// Tesseract).
	docreader *docreader.Service
	hcc       *hcc.Service
	a11y      *a11y.Service
	// a11yDomains verifies the domains URL audits may visit.
	a11yDomains *domains.Registry
	// fill serves /fill/* and keeps its runs (fillErr: why it has no
	// browser).
	fill     *fill.Service
	fillErr  error
	fillGate chan struct{} // /fill/run requests in flight
	// sitecheck is nil when the outbound settings could not be applied
	// (outboundErr says why).
	sitecheck   *sitecheck.Checker
	replyTokens int // tokens per drafted review reply (0: the default)
	// liveDebounce is how long live lanes wait for more sentences (0: the
	// session default).
	liveDebounce time.Duration
	outboundErr  error
	now          func() time.Time
	started      time.Time
	log          *slog.Logger
	mux          *http.ServeMux
	metrics      *metrics
	handler      http.Handler
	bounds       *bounds // against hostile clients (limits.go)

	// Live audio (routes_live.go).
	liveVerticals map[string]*live.Vertical
	transcribe    live.StartTranscriber
	liveModels    live.Models

	draining atomic.Bool
	// Live sessions (sockets and replays) across a drain: drain closes as
	// draining begins (a session then stops and writes its final lanes),
	// cut when the grace period is over (a session not done by then is
	// ended with an error event). Sockets are hijacked connections, which
	// http.Server.Shutdown neither waits for nor closes, so Serve waits
	// for sessions itself.
	drain, cut chan struct{}
	sessions   sessionCount
	// OnDrain, when set, runs once as the server starts to drain (boxd
	// serve sends STOPPING=1 to systemd there).
	OnDrain func()

	mu       sync.Mutex
	methods  map[string][]string // path -> methods, for 405 answers
	declared []Route             // every route declared through declare
}

// New builds a server for cfg. Routes are registered here; Serve runs it.
func New(cfg *configs.Config, deps Deps, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, probes: deps.Probes, platform: deps.Platform, key: deps.Key, receipts: deps.Receipts,
		chat: deps.Chat, now: deps.Now, log: log, mux: http.NewServeMux(), methods: map[string][]string{},
		liveVerticals: deps.LiveVerticals, transcribe: deps.Transcribe, liveModels: deps.LiveModels,
		drain: make(chan struct{}), cut: make(chan struct{})}
	if s.now == nil {
		s.now = time.Now
	}
	s.started = s.now()
	if s.chat == nil {
		s.chat = &chat.Service{ModelID: cfg.Models.LLM.ID}
	}
	s.docreader = &docreader.Service{Key: deps.Key, Log: s.log, Chat: s.chat, MaxPages: cfg.DocReader.MaxPages}
	s.hcc = &hcc.Service{Reader: s.docreader, Chat: s.chat, Codes: deps.Codes, Key: deps.Key, Log: s.log, Now: s.now}
	s.a11y = s.newA11y()
	s.newFill()
	s.retrieval = deps.Retrieval
	if s.retrieval == nil {
		s.retrieval = &retrieval.Service{}
	}
	if s.retrieval.Key == nil {
		s.retrieval.Key = deps.Key
	}
	if s.retrieval.Receipts == nil && deps.Receipts != nil {
		s.retrieval.Receipts = deps.Receipts
	}
	if s.liveModels.LLM == "" {
		s.liveModels.LLM = s.chat.ModelID
	}
	if s.platform == nil || s.key == nil || s.receipts == nil {
		panic("web.New: Deps.Platform, Deps.Key and Deps.Receipts are required")
	}
	if s.probes.LiveSessions == nil {
		s.probes.LiveSessions = s.platform.LiveSessions
	}
	ob := deps.Outbound
	if ob == nil {
		p, err := outbound.PolicyFromSettings(cfg.Outbound.AllowPrivate, cfg.Outbound.AllowCIDRs, cfg.Outbound.CAFile, "boxd-sitecheck/"+version.Version)
		if err != nil {
			s.outboundErr = err
		} else {
			ob = outbound.New(p)
		}
	}
	if ob != nil {
		s.sitecheck = &sitecheck.Checker{Client: ob, Key: s.key, Now: s.now}
		s.a11y.Fetch = a11y.Outbound{Client: ob}
	}
	ver := &domains.Verifier{}
	if ob != nil {
		ver.Client = ob
	}
	if deps.Resolver != nil {
		ver.Resolver = deps.Resolver
	}
	s.a11yDomains = &domains.Registry{Store: s.platform.Store(), Verifier: ver, Now: s.now}
	s.metrics = newMetrics(s)
	if s.chat != nil && s.chat.Meter == nil {
		s.chat.Meter = s.metrics.llm // chat and live lanes count their tokens in /metrics
	}
	s.bounds = newBounds(cfg)
	// The files of requests a boxd that crashed or was killed left
	// behind go now (package scratch).
	if n, err := scratch.Prepare(""); err != nil {
		log.Warn("the scratch directory is not ready", "err", err)
	} else if n > 0 {
		log.Info("scratch files of stopped boxd processes removed (uploads, fill sources, browser profiles)", "directories", n)
	}
	s.routes()
	s.platformRoutes()
	s.chatRoutes()
	s.responsesRoutes()
	s.siteCheckRoutes()
	s.liveRoutes()
	s.demoRoutes()
	s.studioRoutes()
	s.retrievalRoutes()
	s.docreaderRoutes()
	s.hccRoutes()
	s.a11yRoutes()
	s.fillRoutes()
	s.peerRoutes()
	s.mux.HandleFunc("/", s.notFound)
	s.handler = s.bodyDeadlines(s.observe(s.sdkErrors(s.strict(s.sockets(s.hosts(s.origins(s.mux)))))))
	return s
}

// Handle registers a handler for "METHOD /path" (Go's pattern syntax). It
// is how route families join the server.
func (s *Server) Handle(method, path string, h http.HandlerFunc) {
	s.mu.Lock()
	s.methods[path] = append(s.methods[path], method)
	s.mu.Unlock()
	s.mux.HandleFunc(method+" "+path, h)
}

func (s *Server) routes() {
	s.Handle(http.MethodGet, "/{$}", s.home)
	s.Handle(http.MethodGet, "/healthz", s.healthz)
	s.Handle(http.MethodGet, "/metrics", s.metrics.serve)
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
func (s *Server) Draining() bool { return s.draining.Load() }

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
	ln = s.limitConns(ln)
	ln = jsonCanned(ln) // net/http's own error answers as JSON (canned.go)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}

	s.draining.Store(true)
	close(s.drain)
	if s.OnDrain != nil {
		s.OnDrain()
	}
	grace := time.Duration(s.cfg.ShutdownGraceS) * time.Second
	s.log.Info("draining", "grace_s", s.cfg.ShutdownGraceS, "live_sessions", s.sessions.n())
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-errc // Serve returns ErrServerClosed once Shutdown begins
	if err == nil && s.sessions.wait(sctx) {
		s.log.Info("drained")
		return nil
	}
	// The grace is over: live sessions still running send their error
	// event and close (they get a moment to write it), then every
	// connection is cut.
	close(s.cut)
	wctx, wcancel := context.WithTimeout(context.Background(), cutWait)
	defer wcancel()
	s.sessions.wait(wctx)
	_ = srv.Close()
	return fmt.Errorf("%w after %s: in-flight requests were cut", ErrGraceExpired, grace)
}

// cutWait is how long live sessions get to send their closing error event
// once the shutdown grace is over.
const cutWait = 2 * time.Second

// sessionCount counts running live sessions; wait returns once there are
// none.
type sessionCount struct {
	mu    sync.Mutex
	count int
	zero  chan struct{} // closed while count is 0; nil means closed
}

func (c *sessionCount) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.count == 0 {
		c.zero = make(chan struct{})
	}
	c.count++
}

func (c *sessionCount) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count--
	if c.count == 0 {
		close(c.zero)
	}
}

func (c *sessionCount) n() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count
}

// wait reports whether the count reached 0 before ctx ended.
func (c *sessionCount) wait(ctx context.Context) bool {
	c.mu.Lock()
	zero := c.zero
	c.mu.Unlock()
	if zero == nil {
		return true
	}
	select {
	case <-zero:
		return true
	case <-ctx.Done():
		return false
	}
}

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
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(methods, " or ")))
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
		writeProblem(w, problem.New(problem.NotFound, "no route %s %s; did you mean /v1%s? An OpenAI client's base URL is this box's address with /v1 (http://localhost:8445/v1)", r.Method, r.URL.Path, r.URL.Path))
		return
	}
	writeProblem(w, problem.New(problem.NotFound, "no route %s %s; the API is listed in README.md", r.Method, r.URL.Path))
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
