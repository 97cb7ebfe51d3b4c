package main

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestExtendWhile: slow start-up work keeps extending the start timeout
// until it is done, and not after.
func TestExtendWhile(t *testing.T) {
	var calls atomic.Int64
	stop := extendWhile(5*time.Millisecond, func() { calls.Add(1) })
	time.Sleep(60 * time.Millisecond)
	stop()
	n := calls.Load()
	if n < 2 {
		t.Errorf("%d extensions during 60 ms of work every 5 ms", n)
	}
	time.Sleep(30 * time.Millisecond)
	if calls.Load() != n {
		t.Error("extended after the work was done")
	}
	// The first extension goes out at once: the one before it may be
	// nearly spent.
	var once atomic.Int64
	extendWhile(time.Hour, func() { once.Add(1) })()
	if once.Load() != 1 {
		t.Errorf("%d extensions for work shorter than the interval, want 1 at the start", once.Load())
	}
}
