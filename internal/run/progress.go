package run

import (
	"cmp"
	"time"
)

// TypeProgress is the progress event: where a long run stands, sent on a
// stream that has been silent for the progress interval (web sends it
// after 5 s without an event), so a client waiting on a model call or a
// slow page still hears from the run.
const TypeProgress = "progress"

// StageStarting is a run's stage before its pipeline names one.
const StageStarting = "starting"

// ProgressBody is a progress event's fields: the run's current stage, the
// milliseconds since the run began (the envelope's at_ms) and since the
// stage began, the tokens its model calls have generated so far, and the
// units of the stage done of its total (unit "" with 0 of 0 when the
// stage counts none).
type ProgressBody struct {
	Stage     string `json:"stage"`
	ElapsedMS int64  `json:"elapsed_ms"`
	StageMS   int64  `json:"stage_ms"`
	Tokens    int64  `json:"tokens"`
	Done      int    `json:"done"`
	Total     int    `json:"total"`
	Unit      string `json:"unit"`
}

// Progress is how a pipeline tells its run where it stands (*Emitter is
// one). Setting it emits nothing: the emitter reports it when the run is
// silent.
type Progress interface {
	// Stage names the stage the run is in now; its units start again
	// from none.
	Stage(name string)
	// Units says done of total units (pages, fields, documents...) of the
	// stage are done.
	Units(unit string, done, total int)
	// AddTokens counts tokens a model call generated (a negative n
	// corrects an estimate).
	AddTokens(n int64)
}

// ProgressOf is ev's Progress when it keeps one (an *Emitter, or any
// event sink that implements Progress), else one that keeps nothing: a
// pipeline given an event sink calls ProgressOf(ev).Stage(...) without
// knowing what it was given.
func ProgressOf(ev any) Progress {
	if p, ok := ev.(Progress); ok && p != nil {
		return p
	}
	return noProgress{}
}

type noProgress struct{}

func (noProgress) Stage(string)           {}
func (noProgress) Units(string, int, int) {}
func (noProgress) AddTokens(int64)        {}

// progressState is an emitter's progress, under its pmu.
type progressState struct {
	stage       string
	stageAt     time.Time // on the run's clock
	tokens      int64
	unit        string
	done, total int
}

// Stage sets the run's stage; its units start again from none.
func (e *Emitter) Stage(name string) {
	now := e.now()
	e.pmu.Lock()
	defer e.pmu.Unlock()
	e.progress.stage, e.progress.stageAt = name, now
	e.progress.unit, e.progress.done, e.progress.total = "", 0, 0
}

// Units sets the stage's units done of total.
func (e *Emitter) Units(unit string, done, total int) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	e.progress.unit, e.progress.done, e.progress.total = unit, done, total
}

// AddTokens counts generated tokens (never below zero in all).
func (e *Emitter) AddTokens(n int64) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	e.progress.tokens = max(0, e.progress.tokens+n)
}

// ProgressNow is the run's progress as a progress event would say it.
func (e *Emitter) ProgressNow() ProgressBody {
	now := e.now()
	e.pmu.Lock()
	defer e.pmu.Unlock()
	p := e.progress
	b := ProgressBody{Stage: cmp.Or(p.stage, StageStarting), ElapsedMS: now.Sub(e.start).Milliseconds(), Tokens: p.tokens, Done: p.done, Total: p.total, Unit: p.unit}
	if !p.stageAt.IsZero() {
		b.StageMS = now.Sub(p.stageAt).Milliseconds()
	}
	return b
}

// ticker is the goroutine that reports progress after silence.
type ticker struct {
	stop    chan struct{}
	done    chan struct{}
	stopped bool
}

// ReportEvery makes the emitter send a progress event whenever no event
// has been emitted for every (measured on the wall clock, not the run's),
// until the run ends or the emitter closes: a busy run sends none, a
// silent one is never silent longer than every. every <= 0, or a second
// call, does nothing.
func (e *Emitter) ReportEvery(every time.Duration) {
	if every <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tick != nil || e.closed || e.ended {
		return
	}
	e.tick = &ticker{stop: make(chan struct{}), done: make(chan struct{})}
	e.last = time.Now()
	go e.report(e.tick, every)
}

// stopTicker stops the progress reports; e.mu is held.
func (e *Emitter) stopTicker() {
	if e.tick != nil && !e.tick.stopped {
		e.tick.stopped = true
		close(e.tick.stop)
	}
}

func (e *Emitter) report(tk *ticker, every time.Duration) {
	defer close(tk.done)
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-tk.stop:
			return
		case <-t.C:
		}
		e.mu.Lock()
		if e.closed || e.ended {
			e.mu.Unlock()
			return
		}
		wait := every - time.Since(e.last)
		if wait <= 0 {
			b := e.ProgressNow()
			e.queueLocked(Event{Type: TypeProgress, AtMS: b.ElapsedMS, Body: b})
			wait = every
		}
		e.mu.Unlock()
		t.Reset(wait)
	}
}
