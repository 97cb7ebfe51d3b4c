package threadtune

import (
	"slices"
	"testing"
	"time"
)

// simulate runs steps decode steps of tokens each through a tuner whose
// machine takes cost(threads) per step, and returns the thread count at
// the end and the simulated time when it ended.
func simulate(t *Tuner, start time.Time, steps, tokens int, cost func(threads int) time.Duration) (int, time.Time) {
	now := start
	for range steps {
		d := cost(t.Threads(now))
		now = now.Add(d)
		t.Observe(tokens, d, now)
	}
	return t.counts[t.cur], now
}

// TestTunerKeepsEveryCPUOnAnIdleMachine: where more threads are faster,
// the tuner probes fewer now and then and stays with all of them, the
// probes costing well under a tenth of the time.
func TestTunerKeepsEveryCPUOnAnIdleMachine(t *testing.T) {
	start := time.Unix(0, 0)
	tu := New(2, start)
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
	tu := New(2, start)
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
	if tu := New(16, now); !slices.Equal(tu.counts, []int{16, 8, 4, 2, 1}) {
		t.Errorf("16 CPUs: %v", tu.counts)
	}
	if tu := New(6, now); !slices.Equal(tu.counts, []int{6, 3, 1}) {
		t.Errorf("6 CPUs: %v", tu.counts)
	}
	if New(1, now) != nil {
		t.Error("one CPU tuned")
	}
	tu := New(2, now)
	for range 40 { // decode steps at two threads, 10 ms
		k := tu.Threads(now)
		d := 10 * time.Millisecond
		if k == 1 {
			d = 18 * time.Millisecond
		}
		now = now.Add(d)
		tu.Observe(1, d, now)
	}
	now = now.Add(2 * time.Second)
	// A probe begins; its step is a long prompt batch, with no times of
	// its size to compare: no switch.
	if k := tu.Threads(now); k != 1 {
		t.Fatalf("no probe after 2 s: %d", k)
	}
	tu.Observe(512, time.Millisecond, now)
	if tu.counts[tu.cur] != 2 || tu.probing >= 0 {
		t.Errorf("a prompt step switched the count or left a probe open: cur %d probing %d", tu.counts[tu.cur], tu.probing)
	}
	if bucket(1) != 1 || bucket(3) != 4 || bucket(512) != 512 || bucket(513) != 1024 {
		t.Error("buckets")
	}
}

// TestTunerProbeNow: a fresh tuner decodes with all the CPUs until its
// schedule says to probe; ProbeNow makes the very next step a probe of
// another count, after which the probe ends as usual.
func TestTunerProbeNow(t *testing.T) {
	now := time.Unix(0, 0)
	tu := New(4, now)
	for range 3 {
		k := tu.Threads(now)
		if k != 4 {
			t.Fatalf("fresh tuner probed: %d threads", k)
		}
		now = now.Add(10 * time.Millisecond)
		tu.Observe(1, 10*time.Millisecond, now)
	}
	tu.ProbeNow()
	if k := tu.Threads(now); k != 2 {
		t.Fatalf("after ProbeNow: %d threads, want the probe's 2", k)
	}
	for range probeSteps { // as fast as the current count: no switch
		now = now.Add(10 * time.Millisecond)
		tu.Observe(1, 10*time.Millisecond, now)
	}
	if k := tu.Threads(now); k != 4 {
		t.Errorf("after the probe: %d threads, want 4", k)
	}
}
