package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"boxd/configs"
	"boxd/internal/platform"
	"boxd/internal/problem"
	"boxd/internal/window"
)

// What the box bounds against hostile or broken clients (README "Security
// bounds", docs/decisions.md "Hostile clients"):
//
//   - a request body must arrive within limits.body_read_floor_s plus its
//     size at limits.body_read_min_bytes_per_s (bodyDeadlines; 408);
//   - the bytes of request bodies held at once, in all, within
//     limits.body_memory_mb (bodyDeadlines; 503 busy);
//   - slots (busy limits, one run per demo token, live and model-call
//     slots) are taken only once a body has arrived (admit);
//   - chat completions demo tokens run at once, together
//     (limits.demo_model_calls; 503 busy);
//   - connections per client network and in all (limitListener; 429, 503);
//   - POST /record/verify requests at once (declareGated; 503 busy);
//   - wrong admin secrets per client network per minute (admitAdmin; 429).

// bounds is the per-server state of those limits.
type bounds struct {
	floor time.Duration // body_read_floor_s
	rate  int64         // body_read_min_bytes_per_s

	verify chan struct{} // record verifications running

	adminLimit int             // wrong admin secrets per network per minute
	adminFails *window.Limiter // wrong admin secrets by network

	conns atomic.Pointer[limitListener] // set by Serve

	mu        sync.Mutex
	bodyLimit int64         // limits.body_memory_mb in bytes
	bodyHeld  int64         // bytes of bodies read by requests still running
	demoCalls int           // chat completions of demo tokens running
	demoFreed chan struct{} // closed when one ends (nil: nobody waits)
}

func newBounds(cfg *configs.Config) *bounds {
	b := cfg.Bounds
	return &bounds{
		bodyLimit:  int64(max(b.BodyMemoryMB, 1)) << 20,
		floor:      time.Duration(max(b.BodyReadFloorS, 1)) * time.Second,
		rate:       int64(max(b.BodyReadMinBytesPerS, 1)),
		verify:     make(chan struct{}, max(b.RecordVerifications, 1)),
		adminLimit: max(b.AdminFailuresPerMinute, 1),
		adminFails: window.New(time.Minute),
	}
}

// --- Request bodies -------------------------------------------------------

// bodyDeadlines bounds the time every request body may take to arrive:
// the connection's read deadline is set to floor + Content-Length / rate
// from the moment the handler starts (a chunked body starts with the floor
// and earns 1/rate seconds per byte that arrives), and cleared once the
// body has been read to its end, so a stream that answers for minutes is
// not cut. A body still arriving at the deadline fails its read with a
// problem.Timeout (408 through writeProblem) and the connection closes. A
// request without a body, and a WebSocket upgrade, are left alone.
//
// The bytes a body brings are also counted against limits.body_memory_mb,
// for all requests together, as they arrive (not as declared: a body that
// is declared and never sent holds nothing) and until the request's
// handler returns (the body, or what was decoded from it, lives that
// long). A read that would go over it fails with 503 busy, unless the
// request is the only one holding bytes, so that any body within its
// route's limit can still be served on an idle box.

// http.Server.ReadTimeout would do the first part but also cut streams and
// sockets, whose requests stay open long after their bodies.
func (s *Server) bodyDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		tb := &timedBody{ReadCloser: r.Body, rc: rc, start: time.Now(), floor: s.bounds.floor, rate: s.bounds.rate, declared: r.ContentLength, bounds: s.bounds}
		defer tb.giveBack()
		if err := tb.set(tb.deadline()); err != nil { // not a connection (a test recorder): no deadline
			tb.rc = nil
		}
		r.Body = tb
		next.ServeHTTP(w, r)
	})
}

// take counts n more bytes of one request's body (which holds held
// already): false when the bodies held would go over the limit and other
// requests hold some of them.
func (b *bounds) take(held, n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bodyHeld+n > b.bodyLimit && b.bodyHeld > held {
		return false
	}
	b.bodyHeld += n
	return true
}

// give returns n bytes of bodies to the limit.
func (b *bounds) give(n int64) {
	b.mu.Lock()
	b.bodyHeld -= n
	b.mu.Unlock()
}

// bodiesHeld is the bytes of request bodies counted now (tests, metrics).
func (b *bounds) bodiesHeld() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bodyHeld
}

// timedBody is a request body read under a deadline that grows with the
// bytes expected (Content-Length) or received (chunked).
type timedBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	start    time.Time
	floor    time.Duration
	rate     int64 // bytes per second
	declared int64 // Content-Length; -1 when unknown
	read     int64
	setAt    time.Time // the deadline set last
	done     bool      // read to its end or failed: the deadline is cleared
	bounds   *bounds
	held     int64 // bytes counted against limits.body_memory_mb
	over     bool  // a read went over it
}

// giveBack returns the request's bytes to limits.body_memory_mb.
func (b *timedBody) giveBack() {
	b.bounds.give(b.held)
	b.held = 0
}

// deadline is start + floor + max(declared, read) / rate (at most a day
// after the floor: a Content-Length of exabytes must not overflow).
func (b *timedBody) deadline() time.Time {
	secs := min(float64(max(b.declared, b.read))/float64(b.rate), 86400)
	return b.start.Add(b.floor + time.Duration(secs*float64(time.Second)))
}

func (b *timedBody) set(t time.Time) error {
	b.setAt = t
	if b.rc == nil {
		return nil
	}
	return b.rc.SetReadDeadline(t)
}

func (b *timedBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, b.busy()
	}
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if n > 0 {
		if !b.bounds.take(b.held, int64(n)) {
			b.over = true
			return 0, b.busy()
		}
		b.held += int64(n)
	}
	if b.rc == nil {
		return n, err
	}
	switch {
	case err == nil:
		// A chunked body earns time as it arrives (at most a second's
		// worth of bytes between resets, to keep the calls few).
		if d := b.deadline(); !b.done && b.declared < 0 && d.Sub(b.setAt) >= time.Second {
			_ = b.set(d)
		}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return n, b.timeout()
	case !b.done:
		// The end (or a failure): later reads on the connection (the
		// server's check for a closed client while a stream runs) must
		// not inherit the deadline.
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// busy is the refusal of a body read over limits.body_memory_mb.
func (b *timedBody) busy() *problem.Error {
	return problem.New(problem.Busy, "the box holds %d MiB of request bodies, its limit (limits.body_memory_mb); retry after the time in Retry-After",
		b.bounds.bodyLimit>>20).Retry(time.Second)
}

func (b *timedBody) timeout() *problem.Error {
	want := "its end"
	if b.declared >= 0 {
		want = strconv.FormatInt(b.declared, 10) + " bytes"
	}
	return problem.New(problem.Timeout, "the request body did not arrive in time: %d bytes of %s in %s; send bodies at %d bytes per second or faster",
		b.read, want, time.Since(b.start).Round(100*time.Millisecond), b.rate)
}

// --- Connections ------------------------------------------------------------

// fdReserve is the file descriptors the connection limit leaves to the rest
// of the process (model files, SQLite and its WAL, the listener, logs, the
// GPU driver); each connection is counted twice (its socket and one file an
// upload or an outbound fetch may open for it).
const fdReserve = 256

// connTotal is the connection limit: the setting, capped (and, for 0,
// given) by the file limit; at least 16.
func connTotal(setting int, nofile uint64) int {
	derived := 16
	if nofile > fdReserve+32 {
		derived = int(min((nofile-fdReserve)/2, 1<<30))
	}
	if setting > 0 && setting < derived {
		return setting
	}
	return derived
}

// fileLimit is the soft RLIMIT_NOFILE (Go raises it to the hard limit at
// start); 0 when it cannot be read.
func fileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return rl.Cur
}

// limitListener bounds open connections per client network (an IPv4
// address, an IPv6 /64: platform.Network) and in all. A connection over a
// bound is answered 429 (per network) or 503 (in all) with a JSON error and
// closed, by at most refusers goroutines at once, each within a second;
// beyond that it is closed at once. Hijacked connections (WebSockets) count
// until they close.
type limitListener struct {
	net.Listener
	perNet, total int
	log           *slog.Logger

	mu    sync.Mutex
	n     int
	byNet map[string]int

	refusers chan struct{}
	refused  atomic.Int64 // since the last log line
	lastLog  atomic.Int64 // unix nanoseconds

	// counted counts each refusal in /metrics (metrics.go).
	counted func(status int, answered bool)
}

const (
	refusers    = 64
	refuseWait  = time.Second
	refusalBody = 64 << 10
)

func (s *Server) limitConns(ln net.Listener) net.Listener {
	nofile := fileLimit()
	total := connTotal(s.cfg.Bounds.Connections, nofile)
	perNet := min(max(s.cfg.Bounds.ConnectionsPerAddress, 1), max(total*3/4, 1))
	s.log.Info("connection limits", "per_address", perNet, "total", total, "file_limit", nofile)
	l := &limitListener{Listener: ln, perNet: perNet, total: total, log: s.log, byNet: map[string]int{}, refusers: make(chan struct{}, refusers),
		counted: s.metrics.connRefused}
	s.bounds.conns.Store(l)
	return l
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		network := platform.Network(c.RemoteAddr().String())
		l.mu.Lock()
		switch {
		case l.n >= l.total:
			l.mu.Unlock()
			l.refuse(c, http.StatusServiceUnavailable, fmt.Sprintf("the box holds %d connections, its limit (limits.connections); retry shortly", l.total))
		case l.byNet[network] >= l.perNet:
			l.mu.Unlock()
			l.refuse(c, http.StatusTooManyRequests, fmt.Sprintf("this address holds %d connections to the box, its limit (limits.connections_per_address); close some or retry shortly", l.perNet))
		default:
			l.n++
			l.byNet[network]++
			l.mu.Unlock()
			return &limitedConn{Conn: c, l: l, network: network}, nil
		}
	}
}

func (l *limitListener) release(network string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n--
	if l.byNet[network]--; l.byNet[network] <= 0 {
		delete(l.byNet, network)
	}
}

// open is the connections held in all and by network (tests).
func (l *limitListener) open(network string) (total, byNet int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n, l.byNet[network]
}

// refuse answers c status with {"error": msg} after reading its request
// head (so the answer is one an HTTP client reads), then closes it; when
// refusers are all busy it closes c at once. Refusals are logged at most
// once a minute, with their count.
func (l *limitListener) refuse(c net.Conn, status int, msg string) {
	n := l.refused.Add(1)
	now := time.Now().UnixNano()
	if last := l.lastLog.Load(); now-last >= int64(time.Minute) && l.lastLog.CompareAndSwap(last, now) {
		l.refused.Add(-n)
		l.log.Warn("connections refused over the connection limits", "refused", n, "per_address", l.perNet, "total", l.total)
	}
	select {
	case l.refusers <- struct{}{}:
		l.counted(status, true)
	default:
		l.counted(status, false)
		_ = c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusers }()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(refuseWait))
		readHead(c)
		body := fmt.Sprintf("{\"error\":%s}\n", strconv.Quote(msg))
		_, _ = fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
			status, http.StatusText(status), len(body), body)
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c, refusalBody)) // let the answer arrive before the close
	}()
}

// readHead reads up to the end of a request head ("\r\n\r\n"), at most 8
// KiB, until the connection's deadline.
func readHead(c net.Conn) {
	buf := make([]byte, 8<<10)
	n := 0
	for n < len(buf) {
		k, err := c.Read(buf[n:])
		n += k
		for i := max(0, n-k-3); i+4 <= n; i++ {
			if string(buf[i:i+4]) == "\r\n\r\n" {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// limitedConn releases its place when closed (once).
type limitedConn struct {
	net.Conn
	l       *limitListener
	network string
	once    sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.network) })
	return err
}

// CloseWrite keeps net/http's graceful close (half-close, then wait).
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps sendfile and splice for responses copied from files.
func (c *limitedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}

// --- Gated routes -----------------------------------------------------------

// declareGated is declare for a route whose requests hold one of slots
// (a box-wide busy limit: record verifications, form fills) until the
// answer is written. The slot is taken in admission's step 7, once the
// body has arrived whole (admit): when every slot is taken the request
// gets 503 (busy) with Retry-After at once. A body still arriving holds
// no slot, only its connection and the bytes it sent (limits.body_memory_mb
// bounds those in all), so clients that declare large bodies and send
// them slowly or not at all cannot keep others from the route.
func declareGated[Req any](s *Server, slots chan struct{}, what string, d Declared[Req]) {
	d.gate, d.gateWhat = slots, what
	declare(s, d)
}

// --- Demo tokens' share of the chat model -----------------------------------

// demoCallRetry is the Retry-After of a chat refused over the demo share;
// demoCallWait is how long a demo chat waits for the share first (a
// client's next call must not be refused because the previous one's
// share is given back a moment after its answer was sent).
const (
	demoCallRetry = 2 * time.Second
	demoCallWait  = 2 * time.Second
)

// demoCallLimit is how many chat completions demo tokens together may run
// at once: limits.demo_model_calls, or, when 0, the chat model's parallel
// sequences less one (at least 1), so that a developer key always finds a
// sequence free of demo tokens' streams.
func (s *Server) demoCallLimit() (limit, sequences int) {
	sequences = s.cfg.Models.LLM.Parallel
	if e, ok := s.chat.Engine.(interface{ Parallel() int }); ok && e.Parallel() > 0 {
		sequences = e.Parallel()
	}
	sequences = max(sequences, 1)
	if n := s.cfg.Bounds.DemoModelCalls; n > 0 {
		return n, sequences
	}
	return max(1, sequences-1), sequences
}

// demoCallShare takes one of the demo tokens' shared chat slots (after the
// token's own, limits.demo_concurrent_calls), waiting up to demoCallWait
// for one: 503 busy with Retry-After when demo tokens together still run
// their share.
func (s *Server) demoCallShare(ctx context.Context) (release func(), d *problem.Error) {
	limit, sequences := s.demoCallLimit()
	b := s.bounds
	wait := time.NewTimer(demoCallWait)
	defer wait.Stop()
	for {
		b.mu.Lock()
		if b.demoCalls < limit {
			b.demoCalls++
			b.mu.Unlock()
			return sync.OnceFunc(func() {
				b.mu.Lock()
				b.demoCalls--
				if b.demoFreed != nil {
					close(b.demoFreed)
					b.demoFreed = nil
				}
				b.mu.Unlock()
			}), nil
		}
		if b.demoFreed == nil {
			b.demoFreed = make(chan struct{})
		}
		freed := b.demoFreed
		b.mu.Unlock()
		select {
		case <-freed:
		case <-wait.C:
			return nil, problem.New(problem.Busy, "demo sessions together run %d chat completions at once, their share of the chat model's %d sequences (limits.demo_model_calls); the rest are kept for developer keys; retry after the time in Retry-After",
				limit, sequences).Retry(demoCallRetry)
		case <-ctx.Done():
			return nil, problem.Wrap(problem.Unavailable, ctx.Err(), "the request ended while it waited for the demo sessions' share of the chat model")
		}
	}
}

// --- Admin secret -----------------------------------------------------------

// adminLockout refuses (429 with Retry-After) every admin request from a
// network that sent limits.admin_failures_per_minute wrong secrets within
// the last minute, the right secret included: were it let through, the
// answers would still tell a guesser which guess was right.
func (s *Server) adminLockout(network string, now time.Time) *problem.Error {
	b := s.bounds
	if v := b.adminFails.Check(network, b.adminLimit, now); !v.OK {
		return problem.New(problem.RateLimited, "%d wrong admin secrets from this address within a minute, the limit; admin requests from it are refused until the time in Retry-After", v.Count).Retry(v.RetryAfter)
	}
	return nil
}

// adminFailed counts a wrong admin secret from network and logs it, at
// most twice per network per minute: the first failure in the window, and
// the one that reaches the limit (with the count).
func (s *Server) adminFailed(network, route string, now time.Time) {
	b := s.bounds
	b.adminFails.Record(network, now)
	switch n := b.adminFails.Count(network, now); n {
	case 1:
		s.log.Warn("admin secret refused", "route", route, "network_hmac", networkHMAC(network))
	case b.adminLimit:
		s.log.Warn("admin secret refused repeatedly; admin requests from this network get 429 for up to a minute", "route", route, "network_hmac", networkHMAC(network), "failures_last_minute", n)
	}
}

// networkHMAC names a client network in logs without writing the address
// (keyed like the studio report logs).
func networkHMAC(network string) string {
	mac := hmac.New(sha256.New, logKey[:])
	mac.Write([]byte(network))
	return hex.EncodeToString(mac.Sum(nil)[:8])
}
