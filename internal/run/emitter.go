package run

import (
	"sync"
	"time"
)

// DefaultQueue is how many events an Emitter holds for a slow sink before
// Emit waits for it.
const DefaultQueue = 256

// Emitter delivers a run's events to its sink in order, from one
// goroutine, stamping each with at_ms on the run's clock. Emit never calls
// the sink itself, so a pipeline holding its own locks cannot deadlock on
// a slow client; the queue is bounded (Emit waits when it is full, and
// returns at once once the sink has failed).
//
// End emits the run's ending event (done, or the error that ends it):
// nothing emitted after it is delivered. Close flushes what is queued and
// waits for the sink.
//
// An emitter also keeps the run's progress (stage, tokens generated,
// units done of total: see progress.go) and, once ReportEvery is called,
// emits it as a progress event whenever the run has been silent that
// long.
type Emitter struct {
	send  func(Event) error
	now   func() time.Time
	start time.Time

	events chan Event
	sent   chan struct{} // closed when the sender has stopped

	mu     sync.Mutex // emit order, closed, ended, last
	closed bool
	ended  bool
	last   time.Time // wall time of the last event queued (progress silence)

	pmu      sync.Mutex // the progress state
	progress progressState
	tick     *ticker // nil until ReportEvery

	errMu  sync.Mutex // not mu: Emit holds mu while it waits on the queue
	err    error      // the sink's error, once it failed
	failed chan struct{}
}

// NewEmitter starts an emitter; send is called in order from one
// goroutine, and an error from it stops delivery (the peer went away:
// Failed closes). now is the clock (nil: time.Now); at_ms counts from
// the emitter's start.
func NewEmitter(send func(Event) error, now func() time.Time, queue int) *Emitter {
	if now == nil {
		now = time.Now
	}
	if queue <= 0 {
		queue = DefaultQueue
	}
	e := &Emitter{send: send, now: now, events: make(chan Event, queue), sent: make(chan struct{}), failed: make(chan struct{})}
	e.start = now()
	go e.sender()
	return e
}

// Start is the run's time zero.
func (e *Emitter) Start() time.Time { return e.start }

// AtMS is the run clock now.
func (e *Emitter) AtMS() int64 { return e.now().Sub(e.start).Milliseconds() }

// Emit queues an event. It is dropped after End or Close, or once the
// sink failed.
func (e *Emitter) Emit(typ string, body any) { e.emit(typ, body, false) }

// End emits the run's last event; later events are dropped. It reports
// whether this call ended the run (false when it had already ended).
func (e *Emitter) End(typ string, body any) bool { return e.emit(typ, body, true) }

func (e *Emitter) emit(typ string, body any, last bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || e.ended {
		return false
	}
	e.ended = last
	if last {
		e.stopTicker()
	}
	e.queueLocked(Event{Type: typ, AtMS: e.AtMS(), Body: body})
	return true
}

// queueLocked hands ev to the sender; e.mu is held.
func (e *Emitter) queueLocked(ev Event) {
	e.last = time.Now()
	select {
	case e.events <- ev:
	case <-e.sent: // the sink failed
	}
}

// Ended reports whether End was called.
func (e *Emitter) Ended() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ended
}

// Failed is closed when the sink returned an error (the peer went away).
func (e *Emitter) Failed() <-chan struct{} { return e.failed }

// Err is the sink's error, nil while it has not failed.
func (e *Emitter) Err() error {
	e.errMu.Lock()
	defer e.errMu.Unlock()
	return e.err
}

// Close delivers what is queued and stops; later events are dropped. It
// returns once the sink is no longer called.
func (e *Emitter) Close() {
	e.mu.Lock()
	if !e.closed {
		e.closed = true
		close(e.events)
	}
	e.stopTicker()
	tick := e.tick
	e.mu.Unlock()
	<-e.sent
	if tick != nil {
		<-tick.done
	}
}

func (e *Emitter) sender() {
	defer close(e.sent)
	for ev := range e.events {
		if err := e.send(ev); err != nil {
			e.errMu.Lock()
			e.err = err
			e.errMu.Unlock()
			close(e.failed)
			// Drain so that Emit never blocks on a dead sink.
			go func() {
				for range e.events {
				}
			}()
			return
		}
	}
}
