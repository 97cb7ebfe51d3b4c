// Package api is what route families are built with: declared admission
// (credentials, bodies, verticals, the synthetic rule, one-run locks,
// budgets, busy gates and slots, in one fixed order: Declare), runs on
// the one transport (JSON through a collector or server-sent events:
// Run), the one table from problem kinds to HTTP statuses and WebSocket
// close codes (WriteProblem), body decoding and JSON writers. A family
// package declares its routes on an *API and never writes a status of
// its own; the web core serves what was declared and knows no family.
package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"boxd/configs"
	"boxd/internal/platform"
	"boxd/internal/problem"
	"boxd/internal/window"
)

// Mux is where declared routes are registered: the web core's server.
type Mux interface {
	Handle(method, path string, h http.HandlerFunc)
}

// Options are what admission needs from the box.
type Options struct {
	Config   *configs.Config
	Platform *platform.Platform
	Log      *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// ChatSequences is the chat model's parallel sequences (the demo
	// sessions' share is computed from it); nil or 0: models.llm.parallel.
	ChatSequences func() int
}

// API declares routes on a Mux and admits their requests. Its exported
// fields are read-only after New.
type API struct {
	Config   *configs.Config
	Platform *platform.Platform
	Log      *slog.Logger
	Now      func() time.Time

	mux           Mux
	chatSequences func() int

	// Verifications is the box-wide bound on verifications running at
	// once (limits.record_verifications), shared by every verify route.
	Verifications *Gate

	adminLimit int             // wrong admin secrets per network per minute
	adminFails *window.Limiter // wrong admin secrets by network

	// demoShare is the demo tokens' share of the chat model (a gate).
	demoShare *Gate

	life lifecycle

	mu       sync.Mutex
	declared []Route
	sockets  []string // paths of socket routes
}

// New builds the API that declares on mux.
func New(mux Mux, o Options) *API {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Config == nil || o.Platform == nil {
		panic("api.New: Options.Config and Options.Platform are required")
	}
	b := o.Config.Bounds
	a := &API{Config: o.Config, Platform: o.Platform, Log: o.Log, Now: o.Now, mux: mux, chatSequences: o.ChatSequences,
		Verifications: NewGate(max(b.RecordVerifications, 1), "verifications"),
		adminLimit:    max(b.AdminFailuresPerMinute, 1), adminFails: window.New(time.Minute),
		life: newLifecycle()}
	a.demoShare = a.newDemoShare()
	return a
}

// Declared lists every route declared so far (for the docs and the
// admission order test).
func (s *API) Declared() []Route {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Route(nil), s.declared...)
}

// Handle declares a route whose handler writes its own answer through
// this package's writers (a page, a file, a socket): it is admitted like
// every route (credentials, then the run), reading no body.
func (s *API) Handle(r Route, h http.HandlerFunc) {
	Declare(s, Declared[struct{}]{Route: r, Serve: func(a *Admitted, _ *struct{}) { h(a.W, a.R) }})
}

// --- Busy -------------------------------------------------------------------

// Gate is a box-wide busy limit: at most its limit of runs at once. Busy
// is decided here and only here in admission (step 7, Gate.take): a run
// that finds no slot free waits at most BusyWait for one, then is refused
// 503 with Retry-After naming what the box serves at once. The demo
// tokens' share of the chat model is a gate too, whose limit follows the
// model's sequences and the setting.
type Gate struct {
	state *gateState // shared by the gates Named and Says make
	what  string
	says  string // the refusal, when not the default one
}

type gateState struct {
	mu    sync.Mutex
	n     int           // slots taken
	freed chan struct{} // closed when one is given back (nil: nobody waits)
	limit func() int
	// refusal, when set, is the busy answer for limit (the demo share's).
	refusal func(limit int) *problem.Error
}

// BusyWait is the one wait before a busy refusal: long enough that a
// client's next call is not refused because the previous one's slot is
// given back a moment after its answer was sent.
const BusyWait = 2 * time.Second

// NewGate is a gate of n slots; what names what is served (in the 503).
func NewGate(n int, what string) *Gate {
	n = max(n, 1)
	return &Gate{state: &gateState{limit: func() int { return n }}, what: what}
}

// Named is a gate sharing g's slots whose refusals name what.
func (g *Gate) Named(what string) *Gate { return &Gate{state: g.state, what: what} }

// Says is a gate sharing g's slots whose refusal is msg (a sentence that
// says what runs one at a time and to retry after Retry-After).
func (g *Gate) Says(msg string) *Gate { return &Gate{state: g.state, what: g.what, says: msg} }

// Cap is the gate's limit now.
func (g *Gate) Cap() int { return g.state.limit() }

// Hold takes a slot without waiting (false when none is free); tests hold
// slots with it to see the busy answer.
func (g *Gate) Hold() (release func(), ok bool) {
	st := g.state
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.n >= st.limit() {
		return nil, false
	}
	st.n++
	return sync.OnceFunc(st.give), true
}

func (st *gateState) give() {
	st.mu.Lock()
	st.n--
	if st.freed != nil {
		close(st.freed)
		st.freed = nil
	}
	st.mu.Unlock()
}

// take holds a slot until release, waiting up to BusyWait for one.
func (g *Gate) take(ctx context.Context) (release func(), err *problem.Error) {
	st := g.state
	wait := time.NewTimer(BusyWait)
	defer wait.Stop()
	for {
		st.mu.Lock()
		limit := st.limit()
		if st.n < limit {
			st.n++
			st.mu.Unlock()
			return sync.OnceFunc(st.give), nil
		}
		if st.freed == nil {
			st.freed = make(chan struct{})
		}
		freed := st.freed
		st.mu.Unlock()
		select {
		case <-freed:
		case <-wait.C:
			switch {
			case st.refusal != nil:
				return nil, st.refusal(limit)
			case g.says != "":
				return nil, problem.New(problem.Busy, "%s", g.says).Retry(time.Second)
			}
			return nil, problem.New(problem.Busy, "the box is serving %d %s at once, its limit; retry after the time in Retry-After", limit, g.what).Retry(time.Second)
		case <-ctx.Done():
			return nil, problem.Wrap(problem.Unavailable, ctx.Err(), "the request ended while it waited for a free slot (%s)", g.what)
		}
	}
}

// --- Demo tokens' share of the chat model -----------------------------------

// demoCallRetry is the Retry-After of a chat refused over the demo share.
const demoCallRetry = 2 * time.Second

// demoCallLimit is how many chat completions demo tokens together may run
// at once: limits.demo_model_calls, or, when 0, the chat model's parallel
// sequences less one (at least 1), so that a developer key always finds a
// sequence free of demo tokens' streams.
func (s *API) demoCallLimit() (limit, sequences int) {
	sequences = s.Config.Models.LLM.Parallel
	if s.chatSequences != nil && s.chatSequences() > 0 {
		sequences = s.chatSequences()
	}
	sequences = max(sequences, 1)
	if n := s.Config.Bounds.DemoModelCalls; n > 0 {
		return n, sequences
	}
	return max(1, sequences-1), sequences
}

// newDemoShare is the gate of the demo tokens' shared chat slots (taken
// after the token's own, limits.demo_concurrent_calls).
func (s *API) newDemoShare() *Gate {
	return &Gate{what: "demo chat completions", state: &gateState{
		limit: func() int { n, _ := s.demoCallLimit(); return n },
		refusal: func(limit int) *problem.Error {
			_, sequences := s.demoCallLimit()
			return problem.New(problem.Busy, "demo sessions together run %d chat completions at once, their share of the chat model's %d sequences (limits.demo_model_calls); the rest are kept for developer keys; retry after the time in Retry-After",
				limit, sequences).Retry(demoCallRetry)
		}}}
}

// --- Admin secret -----------------------------------------------------------

// adminLockout refuses (429 with Retry-After) every admin request from a
// network that sent limits.admin_failures_per_minute wrong secrets within
// the last minute, the right secret included: were it let through, the
// answers would still tell a guesser which guess was right.
func (s *API) adminLockout(network string, now time.Time) *problem.Error {
	if v := s.adminFails.Check(network, s.adminLimit, now); !v.OK {
		return problem.New(problem.RateLimited, "%d wrong admin secrets from this address within a minute, the limit; admin requests from it are refused until the time in Retry-After", v.Count).Retry(v.RetryAfter)
	}
	return nil
}

// adminFailed counts a wrong admin secret from network and logs it, at
// most twice per network per minute: the first failure in the window, and
// the one that reaches the limit (with the count).
func (s *API) adminFailed(network, route string, now time.Time) {
	s.adminFails.Record(network, now)
	switch n := s.adminFails.Count(network, now); n {
	case 1:
		s.Log.Warn("admin secret refused", "route", route, "network_hmac", NetworkHMAC(network))
	case s.adminLimit:
		s.Log.Warn("admin secret refused repeatedly; admin requests from this network get 429 for up to a minute", "route", route, "network_hmac", NetworkHMAC(network), "failures_last_minute", n)
	}
}

// logKey keys the network hashes in logs: an unkeyed hash of an IPv4
// address is undone by trying all 2^32. It changes at every start, so
// logs of one run can be correlated, not reversed.
var logKey = func() (k [32]byte) {
	_, _ = rand.Read(k[:])
	return k
}()

// NetworkHMAC names a client network in logs without writing the address.
func NetworkHMAC(network string) string {
	mac := hmac.New(sha256.New, logKey[:])
	mac.Write([]byte(network))
	return hex.EncodeToString(mac.Sum(nil)[:8])
}

// --- JSON -------------------------------------------------------------------

// WriteJSON writes v as a JSON body with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// ErrorBody is the error shape of every route: {"error": "..."}, a sentence
// that says what to fix.
type ErrorBody struct {
	Error string `json:"error"`
}

// WriteError writes {"error": msg} with status: for answers that are not
// a problem kind's (a transport's own: 405, 421, 426).
func WriteError(w http.ResponseWriter, status int, msg string) {
	WriteJSON(w, status, ErrorBody{Error: msg})
}
