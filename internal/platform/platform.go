// Package platform holds the contract's platform resources and rules,
// without HTTP: demo sessions (in memory), developer keys and their daily
// usage (in the store), budgets and reservations, request-rate and session
// limits, live-session caps, and the one-run-at-a-time lock of demo tokens.
// web turns its answers into statuses and bodies; pipelines see principals
// through small interfaces of their own.
package platform

import (
	"boxd/internal/problem"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"

	"boxd/configs"
	"boxd/internal/families"
	"boxd/internal/ids"
	"boxd/internal/store"
	"boxd/internal/window"
)

// Verticals are the demo-session verticals of contract section 1, in the
// order messages list them (the families table).
var Verticals = families.IDs()

// IsVertical reports whether v is a known vertical.
func IsVertical(v string) bool { return families.Known(v) }

// IsLiveVertical reports whether v is a live audio vertical (section 6):
// its sessions count against the live cap.
func IsLiveVertical(v string) bool { return families.IsLive(v) }

// deny is a refusal: problem kinds carry what web maps to the HTTP status
// and the WebSocket close code.
func deny(k problem.Kind, format string, args ...any) *problem.Error {
	return problem.New(k, format, args...)
}

// Clock tells the time; tests move it.
type Clock func() time.Time

// Key defaults of the free plan and the caps (contract section 8).
const (
	DefaultDailyLLMTokens         = 200_000
	DefaultDailyAudioSeconds      = 1_800
	DefaultRequestsPerMinute      = 60
	DefaultConcurrentLiveSessions = 2
	MaxDailyLLMTokens             = 5_000_000
	MaxDailyAudioSeconds          = 8 * 3600
	MaxRequestsPerMinute          = 100_000
	MaxConcurrentLiveSessions     = 256
	HistoryDays                   = 30
)

// Platform is the state behind the platform routes.
type Platform struct {
	cfg   *configs.Config
	store *store.Store
	now   Clock

	mu        sync.Mutex
	reserveMu sync.Mutex // serialises budget reservations (read left, then reserve)
	sessions  map[[32]byte]*Session
	perNet    *window.Limiter // demo sessions created in the last hour, per client network
	perBox    *window.Limiter // and on the box (one key, "")
	live      int             // live sessions (sockets and replays) on the box
	liveByKey map[string]int
	rate      *window.Limiter  // per key: requests in the last minute
	reserved  map[string]int64 // per key: tokens reserved by running calls
	// Keys revoked while the box runs, and what to call when one is: a
	// revocation reaches live sessions and replays already open with it.
	revoked  map[string]time.Time
	watchers map[string]map[*revokeWatch]struct{}
	// When a watched key was last read from the store, to notice a
	// revocation made by another process (`boxd keys revoke`).
	revokeChecked map[string]time.Time
	// While sessions watch keys, one goroutine reads the watched keys from
	// the store every revokePoll, so that an idle session (no audio, no
	// model call) also ends within revocationCheckEvery of a revocation
	// made by another process.
	revokePoll time.Duration
	polling    bool
}

// revocationCheckEvery bounds how often a running session's key is read
// again from the store.
const revocationCheckEvery = 2 * time.Second

type revokeWatch struct{ fn func(msg string) }

// New makes a platform over an open store. now may be nil (time.Now).
func New(cfg *configs.Config, st *store.Store, now Clock) *Platform {
	if now == nil {
		now = time.Now
	}
	return &Platform{
		cfg: cfg, store: st, now: now,
		sessions:      map[[32]byte]*Session{},
		liveByKey:     map[string]int{},
		perNet:        window.New(time.Hour),
		perBox:        window.New(time.Hour),
		rate:          window.New(time.Minute),
		reserved:      map[string]int64{},
		revoked:       map[string]time.Time{},
		watchers:      map[string]map[*revokeWatch]struct{}{},
		revokeChecked: map[string]time.Time{},
		revokePoll:    revocationCheckEvery / 2,
	}
}

// Now is the platform's clock.
func (p *Platform) Now() time.Time { return p.now() }

// Day is the UTC day of t as YYYY-MM-DD: key budgets are per UTC day.
func Day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// Session is a demo session. It lives in memory only; whatever a pipeline
// keeps on it (transcripts) goes when it expires.
type Session struct {
	ID       string // short hash of the token, for logs
	Vertical string
	Created  time.Time
	Expires  time.Time

	tokensLeft  int64
	audioLeftMS int64
	reserved    int64
	busy        bool
	liveOpen    bool
	callSlots   chan struct{} // model calls running (AcquireCall)
	callWaiting int           // calls waiting for a slot
}

// Network groups client addresses for per-address limits (demo sessions,
// studio reports): IPv4 addresses singly, IPv6 by /64 (one host usually
// holds a whole /64).
func Network(remoteAddr string) string {
	host := remoteAddr
	if ap, err := netip.ParseAddrPort(remoteAddr); err == nil {
		host = ap.Addr().String()
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return host
	}
	a = a.Unmap()
	if a.Is6() {
		pfx, _ := a.Prefix(64)
		return pfx.String()
	}
	return a.String()
}

// CreateSession makes a demo session for vertical, from a client at
// remoteAddr (host:port), under the per-address, total and live limits.
func (p *Platform) CreateSession(vertical, remoteAddr string) (token string, s *Session, d *problem.Error) {
	if !IsVertical(vertical) {
		return "", nil, deny(problem.Invalid, "unknown vertical %q; use one of: %s", vertical, families.Choices())
	}
	now := p.now()
	network := Network(remoteAddr)

	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked(now)

	if v := p.perNet.Check(network, p.cfg.Limits.SessionsPerAddressPerHour, now); !v.OK {
		d := deny(problem.RateLimited, "this address created %d demo sessions in the last hour (limit %d); retry after the time in Retry-After, or use a developer key",
			v.Count, p.cfg.Limits.SessionsPerAddressPerHour)
		d.RetryAfter = v.RetryAfter
		return "", nil, d
	}
	if v := p.perBox.Check("", p.cfg.Limits.SessionsPerHour, now); !v.OK {
		d := deny(problem.RateLimited, "the box created %d demo sessions in the last hour (limit %d); retry after the time in Retry-After",
			v.Count, p.cfg.Limits.SessionsPerHour)
		d.RetryAfter = v.RetryAfter
		return "", nil, d
	}
	if IsLiveVertical(vertical) && p.live >= p.cfg.Limits.LiveCap {
		d := deny(problem.RateLimited, "all %d live sessions are in use; retry in 30 seconds", p.cfg.Limits.LiveCap)
		d.RetryAfter = 30 * time.Second
		return "", nil, d
	}

	token = ids.Token("ds_", 32)
	sum := sha256.Sum256([]byte(token))
	s = &Session{
		ID:          hex.EncodeToString(sum[:4]),
		Vertical:    vertical,
		Created:     now,
		Expires:     now.Add(time.Duration(p.cfg.Limits.SessionLifetimeS) * time.Second),
		tokensLeft:  int64(p.cfg.Limits.TokenBudget),
		audioLeftMS: int64(p.cfg.Limits.AudioBudgetS) * 1000,
	}
	p.sessions[sum] = s
	p.perNet.Record(network, now)
	p.perBox.Record("", now)
	return token, s, nil
}

// sweepLocked forgets expired sessions that nothing holds (the creation
// limiters forget old creations themselves).
func (p *Platform) sweepLocked(now time.Time) {
	for k, s := range p.sessions {
		if !now.Before(s.Expires) && !s.busy && !s.liveOpen {
			delete(p.sessions, k)
		}
	}
}

// Budget reports a session's remaining budget (seconds of audio and
// generated tokens).
func (s *Session) Budget() (seconds, tokens int64) {
	return s.audioLeftMS / 1000, s.tokensLeft
}

// LiveSessions is the number of live sessions (sockets and replays) open.
func (p *Platform) LiveSessions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live
}

// DemoSessions is the number of unexpired demo sessions in memory.
func (p *Platform) DemoSessions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	n := 0
	for _, s := range p.sessions {
		if now.Before(s.Expires) {
			n++
		}
	}
	return n
}

// Store is the platform's database.
func (p *Platform) Store() *store.Store { return p.store }

// keyVerticals renders a key's verticals for messages.
func keyVerticals(v []string) string {
	if v == nil {
		return "all"
	}
	c := append([]string(nil), v...)
	sort.Strings(c)
	return strings.Join(c, ", ")
}

// ctxErr turns a store error into a 500-class denial.
func storeDenial(err error) *problem.Error {
	return problem.Wrap(problem.Internal, err, "the key store failed: %v", err)
}
