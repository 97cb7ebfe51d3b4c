package run

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// sink records the events an emitter delivers.
type sink struct {
	mu  sync.Mutex
	evs []Event
}

func (s *sink) send(ev Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evs = append(s.evs, ev)
	return nil
}

func (s *sink) events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.evs...)
}

func count(evs []Event, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// TestProgressAfterSilence: a run silent for longer than the interval
// hears progress events carrying its stage, tokens and units; the last
// event is the ending one, and nothing follows it (the reports stop at
// End, before Close).
func TestProgressAfterSilence(t *testing.T) {
	var s sink
	e := NewEmitter(s.send, nil, 0)
	e.ReportEvery(50 * time.Millisecond)
	e.Emit("stage", map[string]string{"stage": "model"})
	e.Stage("model")
	e.Units("fields", 2, 7)
	e.AddTokens(40)
	e.AddTokens(2)
	time.Sleep(300 * time.Millisecond) // a silent stage
	if !e.End(TypeDone, nil) {
		t.Fatal("End did not end")
	}
	tick := e.tick
	select { // the reports stopped at End, before Close
	case <-tick.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the progress reports did not stop at End")
	}
	time.Sleep(120 * time.Millisecond)
	e.Close()
	evs := s.events()
	if n := count(evs, TypeProgress); n < 1 {
		t.Fatalf("no progress event in a 300 ms silent stage: %v", evs)
	}
	if last := evs[len(evs)-1]; last.Type != TypeDone {
		t.Fatalf("the last event is %q, want done", last.Type)
	}
	for _, ev := range evs {
		if ev.Type != TypeProgress {
			continue
		}
		b := ev.Body.(ProgressBody)
		if b.Stage != "model" || b.Tokens != 42 || b.Done != 2 || b.Total != 7 || b.Unit != "fields" || b.ElapsedMS != ev.AtMS || b.ElapsedMS < 40 || b.StageMS > b.ElapsedMS {
			t.Errorf("progress %+v at %d", b, ev.AtMS)
		}
	}
}

// TestProgressNotWhileBusy: a run that emits more often than the interval
// sends no progress event; once it falls silent it does.
func TestProgressNotWhileBusy(t *testing.T) {
	var s sink
	e := NewEmitter(s.send, nil, 0)
	defer e.Close()
	e.ReportEvery(250 * time.Millisecond)
	for range 100 {
		e.Emit("page", nil)
		time.Sleep(5 * time.Millisecond)
	}
	if n := count(s.events(), TypeProgress); n != 0 {
		t.Fatalf("%d progress events while the run emitted every 5 ms", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for count(s.events(), TypeProgress) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if count(s.events(), TypeProgress) == 0 {
		t.Fatal("no progress event once the run fell silent")
	}
}

// TestProgressOff: without ReportEvery, or with an interval of 0 (stream:
// false answers, live sessions), a silent run sends no progress event;
// Close stops the reports of a run that never ended.
func TestProgressOff(t *testing.T) {
	for _, every := range []time.Duration{-1, 0} {
		var s sink
		e := NewEmitter(s.send, nil, 0)
		e.ReportEvery(every)
		e.Stage("pages")
		time.Sleep(150 * time.Millisecond)
		e.End(TypeDone, nil)
		e.Close()
		if n := count(s.events(), TypeProgress); n != 0 || e.tick != nil {
			t.Errorf("interval %v: %d progress events", every, n)
		}
	}
	var s sink
	e := NewEmitter(s.send, nil, 0)
	e.ReportEvery(20 * time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	e.Close() // no End: Close waits for the reports to stop
	n := len(s.events())
	time.Sleep(60 * time.Millisecond)
	if n == 0 || len(s.events()) != n {
		t.Fatalf("%d events at Close, %d after", n, len(s.events()))
	}
	e.ReportEvery(20 * time.Millisecond) // after Close: nothing starts
	if e.tick.stopped != true {
		t.Fatal("a report started after Close")
	}
}

// TestProgressDeadSink: once the sink failed, the reports neither block
// nor keep Close waiting.
func TestProgressDeadSink(t *testing.T) {
	e := NewEmitter(func(Event) error { return errors.New("gone") }, nil, 1)
	e.ReportEvery(10 * time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	<-e.Failed()
	done := make(chan struct{})
	go func() { e.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung on a dead sink")
	}
}

// TestProgressFields: the progress a pipeline sets, on the run's clock:
// a new stage starts its units again, tokens add up (a correction never
// takes them below zero), and ProgressOf finds an emitter's progress and
// gives a sink without one a progress that keeps nothing.
func TestProgressFields(t *testing.T) {
	t0 := time.Unix(1000, 0)
	now := t0
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	e := NewEmitter(func(Event) error { return nil }, clock, 0)
	defer e.Close()
	if got := e.ProgressNow(); got != (ProgressBody{Stage: StageStarting}) {
		t.Fatalf("a new run's progress %+v", got)
	}
	p := ProgressOf(e)
	advance(2 * time.Second)
	p.Stage("pages")
	p.Units("pages", 1, 3)
	p.AddTokens(5)
	advance(1500 * time.Millisecond)
	if got, want := e.ProgressNow(), (ProgressBody{Stage: "pages", ElapsedMS: 3500, StageMS: 1500, Tokens: 5, Done: 1, Total: 3, Unit: "pages"}); got != want {
		t.Fatalf("progress %+v, want %+v", got, want)
	}
	p.Stage("schema")
	p.AddTokens(-9)
	if got, want := e.ProgressNow(), (ProgressBody{Stage: "schema", ElapsedMS: 3500}); got != want {
		t.Fatalf("after a new stage %+v, want %+v", got, want)
	}
	var other struct{ sink }
	np := ProgressOf(&other)
	np.Stage("x")
	np.Units("pages", 1, 2)
	np.AddTokens(3)
	if _, ok := np.(noProgress); !ok {
		t.Fatalf("ProgressOf a sink without progress: %T", np)
	}
	if _, ok := ProgressOf(nil).(noProgress); !ok {
		t.Fatal("ProgressOf(nil) must keep nothing")
	}
}
