// Package threadtune chooses the thread count llama.cpp decodes with on
// the CPU, measuring rather than guessing.
//
// Decode threads on a busy machine. ggml's CPU threads meet at a barrier
// in every layer of every step; when other work holds some of the CPUs, a
// thread the kernel has descheduled stalls the others at the barrier,
// where they spin. So all the CPUs, the right count on an idle machine,
// can be several times slower than fewer on a busy one (measured on 2
// CPUs beside 2 busy processes: decode at 0.9 tokens/s with 2 threads;
// an embedding batch 7.7× slower with 2 threads than with 1). With its
// Threads option left at 0 the engine (engine/llm) does not guess: a
// Tuner measures. It decodes with the current count, and from time to
// time decodes two steps with the next count of a short list (all CPUs,
// halved down to 1); a count whose steps are clearly faster than the
// current count's recent steps of the same batch size becomes the current
// one. An idle machine keeps all its CPUs (a probe costs two steps a
// second at most); a busy one moves to fewer within seconds, and back
// when the load goes.
package threadtune

import "time"

// Tuner chooses a thread count for each step. It is used by one
// goroutine (the engine's loop): call Threads before each step and
// Observe after it.
type Tuner struct {
	counts []int // candidates, the first the most (all CPUs)
	cur    int   // index into counts

	// ewma is the current count's recent step time per batch size bucket.
	ewma map[int]float64

	probing    int // index of the count being probed, -1: none
	probeLeft  int // probe steps still to run
	probeSum   float64
	probeN     int
	nextProbe  int // counts[nextProbe] is probed next (never cur)
	lastProbe  time.Time
	sinceProbe int
}

// Probe schedule: at least probeEvery steps and probeGap apart, or
// probeMaxGap apart whatever the steps; probeSteps steps each; a count
// wins when its steps take under switchRatio of the current count's.
const (
	probeEvery  = 16
	probeGap    = time.Second
	probeMaxGap = 5 * time.Second
	probeSteps  = 2
	switchRatio = 0.85
	ewmaWeight  = 0.2
)

// New returns a Tuner that tunes between max threads and fewer, starting
// at max; nil when there is nothing to choose (one CPU).
func New(max int, now time.Time) *Tuner {
	if max <= 1 {
		return nil
	}
	var counts []int
	for n := max; n >= 1; n /= 2 {
		counts = append(counts, n) // ends at 1
	}
	return &Tuner{counts: counts, ewma: map[int]float64{}, probing: -1, nextProbe: 1, lastProbe: now}
}

// bucket groups steps whose cost is alike: the batch's token count, in
// powers of two.
func bucket(tokens int) int {
	b := 1
	for b < tokens {
		b *= 2
	}
	return b
}

// Threads is the count the next step, about to start at now, decodes
// with.
func (t *Tuner) Threads(now time.Time) int {
	if t.probing < 0 && t.ewma != nil {
		gap := now.Sub(t.lastProbe)
		if (t.sinceProbe >= probeEvery && gap >= probeGap) || gap >= probeMaxGap {
			t.probing, t.probeLeft, t.probeSum, t.probeN = t.nextProbe, probeSteps, 0, 0
		}
	}
	if t.probing >= 0 {
		return t.counts[t.probing]
	}
	return t.counts[t.cur]
}

// Observe records the step just decoded, ending at now: its batch's
// tokens and how long it took.
func (t *Tuner) Observe(tokens int, took time.Duration, now time.Time) {
	b, d := bucket(tokens), took.Seconds()
	if t.probing < 0 {
		if old, ok := t.ewma[b]; ok {
			t.ewma[b] = old + ewmaWeight*(d-old)
		} else {
			t.ewma[b] = d
		}
		t.sinceProbe++
		return
	}
	base, ok := t.ewma[b]
	if !ok { // nothing to compare with at this size: measure the current count first
		t.endProbe(now)
		return
	}
	t.probeSum += d / base
	t.probeN++
	t.probeLeft--
	if t.probeLeft > 0 {
		return
	}
	if t.probeSum/float64(t.probeN) < switchRatio {
		t.cur = t.probing
		clear(t.ewma) // the new count's own times from here on
	}
	t.endProbe(now)
}

func (t *Tuner) endProbe(now time.Time) {
	t.probing, t.sinceProbe, t.lastProbe = -1, 0, now
	// The next count to try: the next in the list that is not current.
	for {
		t.nextProbe = (t.nextProbe + 1) % len(t.counts)
		if t.nextProbe != t.cur {
			break
		}
	}
}

// ProbeNow makes the next step probe another count, whatever the probe
// schedule says (tests: another count within one answer).
func (t *Tuner) ProbeNow() {
	t.lastProbe = time.Time{}
}
