// Package platform holds the contract's platform resources and rules,
// without HTTP: demo sessions (in memory), developer keys and their daily
// usage (in the store), budgets and reservations, request-rate and session
// limits, live-session caps, and the one-run-at-a-time lock of demo tokens.
// web turns its answers into statuses and bodies; pipelines see principals
// through small interfaces of their own.
package platform

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"

	"boxd/configs"
	"boxd/web/store"
)

// Verticals are the demo-session verticals of contract section 1.
var Verticals = []string{
	"clinical", "sales", "field", "translate",
	"code", "studio",
	"auditor", "walkthrough-to-quote", "expert-to-sop", "storefront-accessibility-pass",
	"fill-and-stop", "oral-assessment", "virtual-staging", "migration-check",
	"geo-audit", "review-reply",
}

// liveVerticals take live audio (section 6) and count against the live cap.
var liveVerticals = map[string]bool{"clinical": true, "sales": true, "field": true, "translate": true}

// IsVertical reports whether v is a known vertical.
func IsVertical(v string) bool {
	for _, x := range Verticals {
		if x == v {
			return true
		}
	}
	return false
}

// IsLiveVertical reports whether v is a live audio vertical.
func IsLiveVertical(v string) bool { return liveVerticals[v] }

// Denial is a refusal with the contract's HTTP status, the WebSocket close
// code for the same case, a message that tells the caller what to do, and
// Retry-After when waiting helps.
type Denial struct {
	Status     int
	Close      int
	Message    string
	RetryAfter time.Duration
}

func (d *Denial) Error() string { return d.Message }

// CloseCode is the WebSocket close code of the refusal (4402, 4409, …).
func (d *Denial) CloseCode() int { return d.Close }

// RetryAfterSeconds is Retry-After as whole seconds, at least 1.
func (d *Denial) RetryAfterSeconds() int {
	s := int(math.Ceil(d.RetryAfter.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}

func deny(status, closeCode int, format string, args ...any) *Denial {
	return &Denial{Status: status, Close: closeCode, Message: fmt.Sprintf(format, args...)}
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
	creations []creation // demo sessions created in the last hour
	live      int        // live sessions (sockets and replays) on the box
	liveByKey map[string]int
	rate      map[string][]time.Time // per key: request times in the last minute
	reserved  map[string]int64       // per key: tokens reserved by running calls
	// Keys revoked while the box runs, and what to call when one is: a
	// revocation reaches live sessions and replays already open with it.
	revoked  map[string]time.Time
	watchers map[string]map[*revokeWatch]struct{}
	// When a watched key was last read from the store, to notice a
	// revocation made by another process (`boxd keys revoke`).
	revokeChecked map[string]time.Time
}

// revocationCheckEvery bounds how often a running session's key is read
// again from the store.
const revocationCheckEvery = 2 * time.Second

type revokeWatch struct{ fn func(msg string) }

type creation struct {
	network string
	at      time.Time
}

// New makes a platform over an open store. now may be nil (time.Now).
func New(cfg *configs.Config, st *store.Store, now Clock) *Platform {
	if now == nil {
		now = time.Now
	}
	return &Platform{
		cfg: cfg, store: st, now: now,
		sessions:      map[[32]byte]*Session{},
		liveByKey:     map[string]int{},
		rate:          map[string][]time.Time{},
		reserved:      map[string]int64{},
		revoked:       map[string]time.Time{},
		watchers:      map[string]map[*revokeWatch]struct{}{},
		revokeChecked: map[string]time.Time{},
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
func (p *Platform) CreateSession(vertical, remoteAddr string) (token string, s *Session, d *Denial) {
	if !IsVertical(vertical) {
		return "", nil, deny(http.StatusBadRequest, 4400, "unknown vertical %q; use one of: %s", vertical, strings.Join(Verticals, ", "))
	}
	now := p.now()
	network := Network(remoteAddr)

	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked(now)

	var mine []time.Time
	for _, c := range p.creations {
		if c.network == network {
			mine = append(mine, c.at)
		}
	}
	if len(mine) >= p.cfg.Limits.SessionsPerAddressPerHour {
		d := deny(http.StatusTooManyRequests, 4429, "this address created %d demo sessions in the last hour (limit %d); retry after the time in Retry-After, or use a developer key",
			len(mine), p.cfg.Limits.SessionsPerAddressPerHour)
		d.RetryAfter = mine[0].Add(time.Hour).Sub(now)
		return "", nil, d
	}
	if len(p.creations) >= p.cfg.Limits.SessionsPerHour {
		d := deny(http.StatusTooManyRequests, 4429, "the box created %d demo sessions in the last hour (limit %d); retry after the time in Retry-After",
			len(p.creations), p.cfg.Limits.SessionsPerHour)
		d.RetryAfter = p.creations[0].at.Add(time.Hour).Sub(now)
		return "", nil, d
	}
	if IsLiveVertical(vertical) && p.live >= p.cfg.Limits.LiveCap {
		d := deny(http.StatusTooManyRequests, 4429, "all %d live sessions are in use; retry in 30 seconds", p.cfg.Limits.LiveCap)
		d.RetryAfter = 30 * time.Second
		return "", nil, d
	}

	token = "ds_" + randomToken()
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
	p.creations = append(p.creations, creation{network: network, at: now})
	return token, s, nil
}

// sweepLocked forgets creations older than an hour and expired sessions
// that nothing holds.
func (p *Platform) sweepLocked(now time.Time) {
	cut := 0
	for cut < len(p.creations) && !p.creations[cut].at.After(now.Add(-time.Hour)) {
		cut++
	}
	p.creations = p.creations[cut:]
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

// randomToken is 256 random bits, base64url.
func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("platform: no randomness: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("platform: no randomness: %v", err))
	}
	return hex.EncodeToString(b)
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
func storeDenial(err error) *Denial {
	return &Denial{Status: http.StatusInternalServerError, Close: 1011, Message: "the key store failed: " + err.Error()}
}
