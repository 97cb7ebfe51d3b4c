package llm

import (
	"context"
	"slices"
	"testing"
	"time"

	"boxd/engine/models/testmodels"
)

// simulate runs steps decode steps of tokens each through a tuner whose
// machine takes cost(threads) per step, and returns the thread count at
// the end and the simulated time when it ended.
func simulate(t *tuner, start time.Time, steps, tokens int, cost func(threads int) time.Duration) (int, time.Time) {
	now := start
	for range steps {
		d := cost(t.threads(now))
		now = now.Add(d)
		t.observe(tokens, d, now)
	}
	return t.counts[t.cur], now
}

// TestTunerKeepsEveryCPUOnAnIdleMachine: where more threads are faster,
// the tuner probes fewer now and then and stays with all of them, the
// probes costing well under a tenth of the time.
func TestTunerKeepsEveryCPUOnAnIdleMachine(t *testing.T) {
	start := time.Unix(0, 0)
	tu := newTuner(2, start)
	idle := func(k int) time.Duration {
		return map[int]time.Duration{2: 10 * time.Millisecond, 1: 18 * time.Millisecond}[k]
	}
	cur, end := simulate(tu, start, 3000, 1, idle)
	if cur != 2 {
		t.Fatalf("idle: tuned to %d threads", cur)
	}
	if ideal := 3000 * 10 * time.Millisecond; end.Sub(start) > ideal*105/100 {
		t.Errorf("idle: %v for 3000 steps, ideal %v: probes cost over 5%%", end.Sub(start), ideal)
	}
}

// TestTunerMovesToFewerThreadsUnderLoad: where all the CPUs are slower
// (busy machine), the tuner moves to one thread within seconds, and back
// to two when the load goes.
func TestTunerMovesToFewerThreadsUnderLoad(t *testing.T) {
	start := time.Unix(0, 0)
	tu := newTuner(2, start)
	busy := func(k int) time.Duration {
		return map[int]time.Duration{2: 1000 * time.Millisecond, 1: 150 * time.Millisecond}[k]
	}
	cur, end := simulate(tu, start, 20, 1, busy)
	if cur != 1 {
		t.Fatalf("busy: still %d threads after %v", cur, end.Sub(start))
	}
	idle := func(k int) time.Duration {
		return map[int]time.Duration{2: 10 * time.Millisecond, 1: 18 * time.Millisecond}[k]
	}
	cur, end2 := simulate(tu, end, 1000, 1, idle)
	if cur != 2 {
		t.Fatalf("load gone: still %d threads after %v", cur, end2.Sub(end))
	}
}

// TestTunerCandidatesAndBuckets: the counts tried are all the CPUs halved
// down to one; a step of another batch size is not compared with decode
// steps (a 512-token prompt step is not "slower threads"); one CPU has
// nothing to tune.
func TestTunerCandidatesAndBuckets(t *testing.T) {
	now := time.Unix(0, 0)
	if tu := newTuner(16, now); !slices.Equal(tu.counts, []int{16, 8, 4, 2, 1}) {
		t.Errorf("16 CPUs: %v", tu.counts)
	}
	if tu := newTuner(6, now); !slices.Equal(tu.counts, []int{6, 3, 1}) {
		t.Errorf("6 CPUs: %v", tu.counts)
	}
	if newTuner(1, now) != nil {
		t.Error("one CPU tuned")
	}
	tu := newTuner(2, now)
	for range 40 { // decode steps at two threads, 10 ms
		k := tu.threads(now)
		d := 10 * time.Millisecond
		if k == 1 {
			d = 18 * time.Millisecond
		}
		now = now.Add(d)
		tu.observe(1, d, now)
	}
	now = now.Add(2 * time.Second)
	// A probe begins; its step is a long prompt batch, with no times of
	// its size to compare: no switch.
	if k := tu.threads(now); k != 1 {
		t.Fatalf("no probe after 2 s: %d", k)
	}
	tu.observe(512, time.Millisecond, now)
	if tu.counts[tu.cur] != 2 || tu.probing >= 0 {
		t.Errorf("a prompt step switched the count or left a probe open: cur %d probing %d", tu.counts[tu.cur], tu.probing)
	}
	if bucket(1) != 1 || bucket(3) != 4 || bucket(512) != 512 || bucket(513) != 1024 {
		t.Error("buckets")
	}
}

// TestTunedEngineDecodesAsFixed: an engine whose threads are tuned (and
// made to probe another count within each answer) writes the same greedy text as
// one with a fixed count: the thread count changes how the work is split,
// not what is computed.
func TestTunedEngineDecodesAsFixed(t *testing.T) {
	open := func(tune bool) *Engine {
		e, err := Open(context.Background(), EngineOptions{Options: Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 1024, Parallel: 1, Threads: 2, TuneThreads: tune}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		return e
	}
	fixed, tuned := open(false), open(true)
	if tuned.dec.tune == nil || fixed.dec.tune != nil {
		t.Fatal("TuneThreads did not choose the tuner")
	}
	for range 3 {
		a := run(t, fixed, "The roof inspection found", Request{MaxTokens: 48})
		tuned.dec.tune.lastProbe = time.Time{} // a probe at the next step: another count mid-answer
		b := run(t, tuned, "The roof inspection found", Request{MaxTokens: 48})
		if a.Text != b.Text {
			t.Fatalf("tuned %q, fixed %q", b.Text, a.Text)
		}
	}
	if tuned.dec.switches < 3 {
		t.Errorf("the tuned engine changed its thread count %d times in 3 answers: the test decoded nothing with another count", tuned.dec.switches)
	}
}
