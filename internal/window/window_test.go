package window

import (
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// step is one call on a limiter: Allow (or Check, with check) of key at
// t0+at, and what it must answer.
type step struct {
	at    time.Duration
	key   string
	check bool // Check instead of Allow
	ok    bool
	count int
	retry time.Duration
}

func TestLimiter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window time.Duration
		limit  int
		steps  []step
	}{
		{"under the limit", time.Minute, 3, []step{
			{at: 0, key: "a", ok: true, count: 0},
			{at: time.Second, key: "a", ok: true, count: 1},
			{at: 2 * time.Second, key: "a", ok: true, count: 2},
		}},
		{"refused until the oldest leaves", time.Minute, 2, []step{
			{at: 0, key: "a", ok: true},
			{at: 10 * time.Second, key: "a", ok: true, count: 1},
			{at: 20 * time.Second, key: "a", ok: false, count: 2, retry: 40 * time.Second},
			{at: 59 * time.Second, key: "a", ok: false, count: 2, retry: time.Second},
			// At exactly t0+window the first event has left the window.
			{at: time.Minute, key: "a", ok: true, count: 1},
			{at: time.Minute + time.Second, key: "a", ok: false, count: 2, retry: 9 * time.Second},
		}},
		{"refusals do not count", time.Hour, 1, []step{
			{at: 0, key: "a", ok: true},
			{at: time.Minute, key: "a", ok: false, count: 1, retry: 59 * time.Minute},
			{at: 2 * time.Minute, key: "a", ok: false, count: 1, retry: 58 * time.Minute},
			{at: time.Hour, key: "a", ok: true},
		}},
		{"keys are separate", time.Hour, 1, []step{
			{at: 0, key: "10.0.0.1", ok: true},
			{at: 0, key: "10.0.0.2", ok: true},
			{at: time.Second, key: "10.0.0.1", ok: false, count: 1, retry: time.Hour - time.Second},
			{at: time.Second, key: "", ok: true},
		}},
		{"check records nothing", time.Minute, 1, []step{
			{at: 0, key: "a", check: true, ok: true},
			{at: 0, key: "a", check: true, ok: true},
			{at: 0, key: "a", ok: true},
			{at: 0, key: "a", check: true, ok: false, count: 1, retry: time.Minute},
		}},
		{"limit zero", time.Minute, 0, []step{
			{at: 0, key: "a", ok: false, count: 0, retry: time.Minute},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(tc.window)
			for i, s := range tc.steps {
				var v Verdict
				if s.check {
					v = l.Check(s.key, tc.limit, t0.Add(s.at))
				} else {
					v = l.Allow(s.key, tc.limit, t0.Add(s.at))
				}
				want := Verdict{OK: s.ok, Count: s.count, RetryAfter: s.retry}
				if v != want {
					t.Errorf("step %d (%q at +%v): %+v, want %+v", i, s.key, s.at, v, want)
				}
			}
		})
	}
}

func TestRecordCountsOverTheLimit(t *testing.T) {
	l := New(time.Hour)
	for range 3 {
		l.Record("a", t0)
	}
	// A limit lowered under what is held: the count says how many.
	if v := l.Check("a", 2, t0.Add(time.Minute)); v.OK || v.Count != 3 || v.RetryAfter != 59*time.Minute {
		t.Errorf("%+v", v)
	}
	if n := l.Count("a", t0.Add(time.Hour-1)); n != 3 {
		t.Errorf("count before the window ends = %d", n)
	}
	if n := l.Count("a", t0.Add(time.Hour)); n != 0 {
		t.Errorf("count once the window ended = %d", n)
	}
}

// TestForgetsEmptiedKeys: memory holds only keys with events in the last
// windows, however many keys came and went.
func TestForgetsEmptiedKeys(t *testing.T) {
	for _, tc := range []struct {
		name  string
		touch func(l *Limiter, now time.Time) // called one window and a bit later
		keys  int
	}{
		{"the same key again", func(l *Limiter, now time.Time) { l.Allow("k0", 1, now) }, 1},
		{"another key", func(l *Limiter, now time.Time) { l.Allow("other", 1, now) }, 1},
		{"a check only", func(l *Limiter, now time.Time) { l.Check("other", 1, now) }, 0},
		{"a count only", func(l *Limiter, now time.Time) { l.Count("k1", now) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(time.Minute)
			for i := range 1000 {
				l.Record("k"+string(rune('0'+i%10))+string(rune(i)), t0)
			}
			l.Allow("k0", 1, t0)
			if l.Keys() != 1001 {
				t.Fatalf("keys = %d", l.Keys())
			}
			tc.touch(l, t0.Add(time.Minute+time.Second))
			if l.Keys() != tc.keys {
				t.Errorf("keys after the window = %d, want %d", l.Keys(), tc.keys)
			}
		})
	}
}

func TestConcurrent(t *testing.T) {
	l := New(time.Minute)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 50 {
		wg.Go(func() {
			for range 10 {
				if l.Allow("shared", 100, t0).OK {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if allowed != 100 {
		t.Errorf("allowed %d of 500 under a limit of 100", allowed)
	}
}
