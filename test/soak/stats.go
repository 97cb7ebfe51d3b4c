package soak

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Sample is one reading of the box during the soak.
type Sample struct {
	At    time.Duration // since the load began (0 before it)
	Phase string        // PhaseStart, PhaseIdleBefore, PhaseLoad or PhaseIdleAfter
	Probe
	LiveDone int // live sessions finished so far (priming included)
	ChatDone int // chat streams finished so far (priming included)
	Verified int // receipts fetched back and verified so far
}

// Phases of a sample.
const (
	PhaseStart      = "start"       // idle after start-up (without a priming round)
	PhaseIdleBefore = "idle-before" // idle after the priming round
	PhaseLoad       = "load"
	PhaseIdleAfter  = "idle-after"
)

// median of xs (the mean of the middle two for an even count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Thirds returns the median of the first third and of the last third of
// xs (a third is at least one value): the level a series starts and ends
// at after warm-up, robust to one sample that caught a burst (a GC cycle,
// every stream in flight at once).
func Thirds(xs []float64) (first, last float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	k := max(1, len(xs)/3)
	return median(xs[:k]), median(xs[len(xs)-k:])
}

// Limits are the pass thresholds (see the package documentation for why
// each is what it is).
type Limits struct {
	RSSGrowth     float64 // at most this fraction (0.05: 5 %)
	Goroutines    int     // loaded: last third's median over the first third's, at most this many more
	FDs           int     // loaded: the same for open descriptors
	IdleGoroutine int     // idle after the load over idle before it
	IdleFDs       int
}

// DefaultLimits are the pass rule made exact.
var DefaultLimits = Limits{RSSGrowth: 0.05, Goroutines: 8, FDs: 4, IdleGoroutine: 0, IdleFDs: 0}

// Check is one pass figure.
type Check struct {
	Name      string
	From, To  float64
	Growth    string // as measured
	Allowed   string
	OK        bool
	Evaluated bool // enough samples to judge
	Required  bool // a soak without it fails (the idle checks need a priming round)
}

// Verdicts judges the samples: the loaded samples after warm-up (first
// third against last third) and the idle sample after the load against
// the one before it.
func Verdicts(samples []Sample, warmup time.Duration, lim Limits) []Check {
	var rss, gor, fds []float64
	var start, before, after *Sample
	for i := range samples {
		s := &samples[i]
		switch {
		case s.Phase == PhaseStart:
			start = s
		case s.Phase == PhaseIdleBefore:
			before = s
		case s.Phase == PhaseIdleAfter:
			after = s
		case s.Phase == PhaseLoad && s.At >= warmup:
			rss = append(rss, float64(s.RSS))
			gor = append(gor, float64(s.Goroutines))
			fds = append(fds, float64(s.FDs))
		}
	}
	enough := len(rss) >= 2
	var out []Check
	f, l := Thirds(rss)
	g := 0.0
	if f > 0 {
		g = (l - f) / f
	}
	out = append(out, Check{Name: "RSS after warm-up (MiB, median of first third → last third)", From: f / (1 << 20), To: l / (1 << 20),
		Growth: fmt.Sprintf("%+.2f %%", 100*g), Allowed: fmt.Sprintf("≤ %+.0f %%", 100*lim.RSSGrowth), OK: enough && g <= lim.RSSGrowth, Evaluated: enough, Required: true})
	f, l = Thirds(gor)
	out = append(out, Check{Name: "goroutines under load (median of first third → last third)", From: f, To: l,
		Growth: fmt.Sprintf("%+.1f", l-f), Allowed: fmt.Sprintf("≤ +%d", lim.Goroutines), OK: enough && l-f <= float64(lim.Goroutines), Evaluated: enough, Required: true})
	f, l = Thirds(fds)
	out = append(out, Check{Name: "open files under load (median of first third → last third)", From: f, To: l,
		Growth: fmt.Sprintf("%+.1f", l-f), Allowed: fmt.Sprintf("≤ +%d", lim.FDs), OK: enough && l-f <= float64(lim.FDs), Evaluated: enough, Required: true})
	// Goroutines idle: against the idle sample after priming, or without
	// one after start-up (no goroutine of boxd starts lazily and stays).
	// Descriptors idle: only after priming (SQLite's connection pool keeps
	// up to two connections it opened under load).
	prior := before
	if prior == nil {
		prior = start
	}
	var b, a Sample
	if prior != nil && after != nil {
		b, a = *prior, *after
	}
	gok := prior != nil && after != nil
	fok := before != nil && after != nil
	out = append(out,
		Check{Name: "goroutines idle (before the load → after it)", From: float64(b.Goroutines), To: float64(a.Goroutines),
			Growth: fmt.Sprintf("%+d", a.Goroutines-b.Goroutines), Allowed: fmt.Sprintf("≤ +%d", lim.IdleGoroutine), OK: gok && a.Goroutines-b.Goroutines <= lim.IdleGoroutine, Evaluated: gok, Required: true},
		Check{Name: "open files idle (after priming → after the load)", From: float64(b.FDs), To: float64(a.FDs),
			Growth: fmt.Sprintf("%+d", a.FDs-b.FDs), Allowed: fmt.Sprintf("≤ +%d", lim.IdleFDs), OK: fok && a.FDs-b.FDs <= lim.IdleFDs, Evaluated: fok})
	return out
}

// Table writes the samples as a fixed-width table.
func Table(samples []Sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%8s  %-11s %9s %6s %5s %10s %5s %6s %6s %8s\n", "t (s)", "phase", "RSS MiB", "gorout", "fds", "store KiB", "live", "live#", "chat#", "receipts")
	for _, s := range samples {
		fmt.Fprintf(&b, "%8.0f  %-11s %9.1f %6d %5d %10.1f %5d %6d %6d %8d\n", s.At.Seconds(), s.Phase, float64(s.RSS)/(1<<20), s.Goroutines, s.FDs,
			float64(s.StoreBytes)/1024, s.LiveNow, s.LiveDone, s.ChatDone, s.Verified)
	}
	return b.String()
}

// ChecksTable writes the pass figures.
func ChecksTable(checks []Check) string {
	var b strings.Builder
	for _, c := range checks {
		verdict := "pass"
		switch {
		case !c.Evaluated && c.Required:
			verdict = "FAIL (too few samples to judge)"
		case !c.Evaluated:
			verdict = "not judged (no priming round)"
		case !c.OK:
			verdict = "FAIL"
		}
		fmt.Fprintf(&b, "%-62s %10.1f → %10.1f  %10s  (%s)  %s\n", c.Name, c.From, c.To, c.Growth, c.Allowed, verdict)
	}
	return b.String()
}
