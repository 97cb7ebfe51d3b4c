// Package window holds Limiter, a keyed sliding-window rate limit: at most
// a given number of events per key in any window of fixed length (requests
// per developer key per minute, demo sessions per client network per hour,
// studio reports per network per hour). When an event is refused, Retry-After
// is the time until the key's oldest event leaves the window. Keys whose
// window has emptied are forgotten, so memory is bounded by the events of
// the last two windows.
package window

import (
	"sync"
	"time"
)

// Limiter counts events per key over a sliding window. It is safe for
// concurrent use. Times passed to it should not go backwards.
type Limiter struct {
	window time.Duration

	mu     sync.Mutex
	events map[string][]time.Time // per key: event times in the window, oldest first
	swept  time.Time              // when every key was last pruned
}

// New makes a limiter over windows of length d.
func New(d time.Duration) *Limiter {
	return &Limiter{window: d, events: map[string][]time.Time{}}
}

// Window is the limiter's window length.
func (l *Limiter) Window() time.Duration { return l.window }

// Verdict is the answer for one key at one time.
type Verdict struct {
	// OK is true when another event fits under the limit.
	OK bool
	// Count is the key's events in the window (not counting one Allow
	// records).
	Count int
	// RetryAfter, when !OK, is how long until the oldest event leaves the
	// window (the whole window when a limit of 0 leaves no room at all).
	RetryAfter time.Duration
}

// Check reports whether key may have another event at now under limit
// events per window, without recording one. An event at or before
// now - window has left the window.
func (l *Limiter) Check(key string, limit int, now time.Time) Verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checkLocked(key, limit, now)
}

// Record counts an event of key at now, whatever the limit: use it after
// Check when the event may still fail before it counts.
func (l *Limiter) Record(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pruneLocked(key, now)
	l.events[key] = append(l.events[key], now)
}

// Allow is Check, then Record when the event is allowed.
func (l *Limiter) Allow(key string, limit int, now time.Time) Verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.checkLocked(key, limit, now)
	if v.OK {
		l.events[key] = append(l.events[key], now)
	}
	return v
}

// Count is key's events in the window at now.
func (l *Limiter) Count(key string, now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pruneLocked(key, now))
}

// Keys is how many keys the limiter holds events for (a key whose window
// emptied may be held until the next sweep, at most one window later).
func (l *Limiter) Keys() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

func (l *Limiter) checkLocked(key string, limit int, now time.Time) Verdict {
	ev := l.pruneLocked(key, now)
	if len(ev) < limit {
		return Verdict{OK: true, Count: len(ev)}
	}
	if len(ev) == 0 {
		return Verdict{RetryAfter: l.window}
	}
	return Verdict{Count: len(ev), RetryAfter: ev[0].Add(l.window).Sub(now)}
}

// pruneLocked drops key's events that left the window and returns the
// rest; once a window has passed since the last sweep it prunes every key.
// A key left with no events is forgotten.
func (l *Limiter) pruneLocked(key string, now time.Time) []time.Time {
	if l.events == nil {
		l.events = map[string][]time.Time{}
	}
	if now.Sub(l.swept) >= l.window {
		for k := range l.events {
			l.dropLocked(k, now)
		}
		l.swept = now
	}
	return l.dropLocked(key, now)
}

func (l *Limiter) dropLocked(key string, now time.Time) []time.Time {
	ev, ok := l.events[key]
	if !ok {
		return nil
	}
	cut := 0
	for cut < len(ev) && !ev[cut].After(now.Add(-l.window)) {
		cut++
	}
	if cut == len(ev) {
		delete(l.events, key)
		return nil
	}
	ev = ev[cut:]
	l.events[key] = ev
	return ev
}
