package web

import (
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
	"boxd/problem"
	"boxd/web/platform"
	"boxd/window"
)

// What the box bounds against hostile or broken clients (README "Security
// bounds", docs/decisions.md "Hostile clients"):
//
//   - a request body must arrive within limits.body_read_floor_s plus its
//     size at limits.body_read_min_bytes_per_s (bodyDeadlines; 408);
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
}

func newBounds(cfg *configs.Config) *bounds {
	b := cfg.Bounds
	return &bounds{
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
// http.Server.ReadTimeout would do the first part but also cut streams and
// sockets, whose requests stay open long after their bodies.
func (s *Server) bodyDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		tb := &timedBody{ReadCloser: r.Body, rc: rc, start: time.Now(), floor: s.bounds.floor, rate: s.bounds.rate, declared: r.ContentLength}
		if err := tb.set(tb.deadline()); err != nil { // not a connection (a test recorder): no deadline
			next.ServeHTTP(w, r)
			return
		}
		r.Body = tb
		next.ServeHTTP(w, r)
	})
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
}

// deadline is start + floor + max(declared, read) / rate (at most a day
// after the floor: a Content-Length of exabytes must not overflow).
func (b *timedBody) deadline() time.Time {
	secs := min(float64(max(b.declared, b.read))/float64(b.rate), 86400)
	return b.start.Add(b.floor + time.Duration(secs*float64(time.Second)))
}

func (b *timedBody) set(t time.Time) error {
	b.setAt = t
	return b.rc.SetReadDeadline(t)
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
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
	l := &limitListener{Listener: ln, perNet: perNet, total: total, log: s.log, byNet: map[string]int{}, refusers: make(chan struct{}, refusers)}
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
	default:
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

// declareGated is declare for a public route whose requests hold one of
// slots from before the body is read until the answer is written: when
// every slot is taken the request gets 503 (busy) with Retry-After at once,
// before its body is read, so the bodies in memory are bounded by the
// slots. It comes ahead of admission (a public route has no credentials to
// check first).
func declareGated[Req any](s *Server, slots chan struct{}, what string, d Declared[Req]) {
	s.mu.Lock()
	s.declared = append(s.declared, d.Route)
	s.mu.Unlock()
	s.Handle(d.Method, d.Path, func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		default:
			writeProblem(w, problem.New(problem.Busy, "the box is serving %d %s at once, its limit; retry after the time in Retry-After", cap(slots), what).Retry(time.Second))
			return
		}
		admit(s, d, w, r)
	})
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
