package guard

import (
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
)

// Bodies is the state of the request-body bounds (BodyDeadlines): the
// bytes of bodies held by requests still running.
type Bodies struct {
	floor time.Duration // body_read_floor_s
	rate  int64         // body_read_min_bytes_per_s

	mu        sync.Mutex
	bodyLimit int64 // limits.body_memory_mb in bytes
	bodyHeld  int64 // bytes of bodies read by requests still running
}

// NewBodies reads the body bounds of cfg (limits.body_*).
func NewBodies(cfg *configs.Config) *Bodies {
	b := cfg.Bounds
	return &Bodies{
		bodyLimit: int64(max(b.BodyMemoryMB, 1)) << 20,
		floor:     time.Duration(max(b.BodyReadFloorS, 1)) * time.Second,
		rate:      int64(max(b.BodyReadMinBytesPerS, 1)),
	}
}

// --- Request bodies -------------------------------------------------------

// BodyDeadlines bounds the time every request body may take to arrive:
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
func BodyDeadlines(b *Bodies) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
				next.ServeHTTP(w, r)
				return
			}
			rc := http.NewResponseController(w)
			tb := &timedBody{ReadCloser: r.Body, rc: rc, start: time.Now(), floor: b.floor, rate: b.rate, declared: r.ContentLength, bounds: b}
			defer tb.giveBack()
			if err := tb.set(tb.deadline()); err != nil { // not a connection (a test recorder): no deadline
				tb.rc = nil
			}
			r.Body = tb
			next.ServeHTTP(w, r)
		})
	}
}

// take counts n more bytes of one request's body (which holds held
// already): false when the bodies held would go over the limit and other
// requests hold some of them.
func (b *Bodies) take(held, n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bodyHeld+n > b.bodyLimit && b.bodyHeld > held {
		return false
	}
	b.bodyHeld += n
	return true
}

// give returns n bytes of bodies to the limit.
func (b *Bodies) give(n int64) {
	b.mu.Lock()
	b.bodyHeld -= n
	b.mu.Unlock()
}

// Held is the bytes of request bodies counted now (tests, metrics).
func (b *Bodies) Held() int64 {
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
	bounds   *Bodies
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

// LimitListener bounds open connections per client network (an IPv4
// address, an IPv6 /64: platform.Network) and in all. A connection over a
// bound is answered 429 (per network) or 503 (in all) with a JSON error and
// closed, by at most refusers goroutines at once, each within a second;
// beyond that it is closed at once. Hijacked connections (WebSockets) count
// until they close.
type LimitListener struct {
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

// LimitConns bounds ln's connections by cfg (limits.connections,
// limits.connections_per_address); counted counts each refusal (nil: none).
func LimitConns(ln net.Listener, cfg *configs.Config, log *slog.Logger, counted func(status int, answered bool)) *LimitListener {
	nofile := fileLimit()
	total := connTotal(cfg.Bounds.Connections, nofile)
	perNet := min(max(cfg.Bounds.ConnectionsPerAddress, 1), max(total*3/4, 1))
	log.Info("connection limits", "per_address", perNet, "total", total, "file_limit", nofile)
	if counted == nil {
		counted = func(int, bool) {}
	}
	return &LimitListener{Listener: ln, perNet: perNet, total: total, log: log, byNet: map[string]int{}, refusers: make(chan struct{}, refusers),
		counted: counted}
}

func (l *LimitListener) Accept() (net.Conn, error) {
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

func (l *LimitListener) release(network string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n--
	if l.byNet[network]--; l.byNet[network] <= 0 {
		delete(l.byNet, network)
	}
}

// Open is the connections held in all and by network (tests).
func (l *LimitListener) Open(network string) (total, byNet int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n, l.byNet[network]
}

// refuse answers c status with {"error": msg} after reading its request
// head (so the answer is one an HTTP client reads), then closes it; when
// refusers are all busy it closes c at once. Refusals are logged at most
// once a minute, with their count.
func (l *LimitListener) refuse(c net.Conn, status int, msg string) {
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
	l       *LimitListener
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
