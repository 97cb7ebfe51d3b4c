package api

import (
	"context"
	"sync"
	"sync/atomic"
)

// lifecycle is what long runs (live sockets, replays) need of the
// server's graceful stop: drain closes as draining begins (a session then
// stops and writes its final lanes), cut when the grace period is over (a
// session not done by then is ended with an error event). Sockets are
// hijacked connections, which http.Server.Shutdown neither waits for nor
// closes, so the server waits for sessions itself (Sessions).
type lifecycle struct {
	draining   atomic.Bool
	drain, cut chan struct{}
	drainOnce  sync.Once
	cutOnce    sync.Once
	sessions   sessionCount
}

func newLifecycle() lifecycle {
	return lifecycle{drain: make(chan struct{}), cut: make(chan struct{})}
}

// Draining reports whether the server has begun its graceful stop.
func (s *API) Draining() bool { return s.life.draining.Load() }

// Drain is closed as the server begins to drain.
func (s *API) Drain() <-chan struct{} { return s.life.drain }

// Cut is closed when the grace period is over.
func (s *API) Cut() <-chan struct{} { return s.life.cut }

// BeginDrain starts the graceful stop (the web core calls it).
func (s *API) BeginDrain() {
	s.life.drainOnce.Do(func() {
		s.life.draining.Store(true)
		close(s.life.drain)
	})
}

// CutNow ends the grace period (the web core calls it).
func (s *API) CutNow() { s.life.cutOnce.Do(func() { close(s.life.cut) }) }

// SessionStarted counts a long run the graceful stop waits for; call the
// returned func when it ends.
func (s *API) SessionStarted() (done func()) {
	s.life.sessions.add()
	return sync.OnceFunc(s.life.sessions.done)
}

// Sessions is how many long runs are running.
func (s *API) Sessions() int { return s.life.sessions.n() }

// WaitSessions reports whether every long run ended before ctx did.
func (s *API) WaitSessions(ctx context.Context) bool { return s.life.sessions.wait(ctx) }

// sessionCount counts running sessions; wait returns once there are none.
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
