package classical

import (
	"math"
	"slices"
)

// span is frames [start, end).
type span struct{ start, end int }

func (s span) frames() int      { return s.end - s.start }
func (s span) seconds() float64 { return float64(s.end-s.start) / frameRate }

// Speech detection (see the package comment).
const (
	floorPercentile  = 0.10
	speechPercentile = 0.95
	lowestFloorDB    = -70
	quietestSpeechDB = -55
	minDynamicDB     = 10
	thresholdShare   = 0.30 // of the distance from floor to speech level
	minMarginDB      = 6
	bridgeFrames     = 25 // pauses shorter than this are bridged
	minSpeechFrames  = 12 // bursts shorter than this are dropped
	padFrames        = 5
)

// levels returns the noise floor and the speech level of f in dB.
func levels(f *features) (floor, level float64) {
	if f.n == 0 {
		return lowestFloorDB, lowestFloorDB
	}
	sorted := slices.Clone(f.db)
	slices.Sort(sorted)
	at := func(p float64) float64 { return float64(sorted[int(p*float64(len(sorted)-1))]) }
	return max(at(floorPercentile), lowestFloorDB), at(speechPercentile)
}

// detectSpeech returns the speech in f as sorted, disjoint spans.
func detectSpeech(f *features) []span {
	if f.n == 0 {
		return nil
	}
	floor, level := levels(f)
	if level < quietestSpeechDB || level-floor < minDynamicDB {
		return nil
	}
	threshold := floor + max(minMarginDB, thresholdShare*(level-floor))
	var raw []span
	for t := 0; t < f.n; {
		if float64(f.db[t]) <= threshold {
			t++
			continue
		}
		s := span{start: t}
		for t < f.n && float64(f.db[t]) > threshold {
			t++
		}
		s.end = t
		raw = append(raw, s)
	}
	// bridge short pauses, then drop short bursts, then pad
	var bridged []span
	for _, s := range raw {
		if n := len(bridged); n > 0 && s.start-bridged[n-1].end < bridgeFrames {
			bridged[n-1].end = s.end
			continue
		}
		bridged = append(bridged, s)
	}
	var out []span
	for _, s := range bridged {
		if s.frames() < minSpeechFrames {
			continue
		}
		s.start, s.end = max(0, s.start-padFrames), min(f.n, s.end+padFrames)
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = s.end
			continue
		}
		out = append(out, s)
	}
	return out
}

// Speaker-change detection and segmentation (see the package comment).
const (
	bicWindow   = 100 // frames each side
	bicLambda   = 1.0
	minChange   = 100 // frames between changes
	maxSegment  = 150 // frames; longer segments are cut into pieces
	varianceEps = 1e-3
)

// splitChanges cuts speech spans at speaker changes and into pieces of at
// most maxSegment frames.
func splitChanges(f *features, speech []span) []span {
	// prefix sums of the cepstra and their squares
	sum := make([]float64, (f.n+1)*nCeps)
	sq := make([]float64, (f.n+1)*nCeps)
	for t := range f.n {
		c := f.frame(t)
		for k := range nCeps {
			v := float64(c[k])
			sum[(t+1)*nCeps+k] = sum[t*nCeps+k] + v
			sq[(t+1)*nCeps+k] = sq[t*nCeps+k] + v*v
		}
	}
	// logDet is the sum of log variances of frames [a, b).
	logDet := func(a, b int) float64 {
		n := float64(b - a)
		var s float64
		for k := range nCeps {
			m := (sum[b*nCeps+k] - sum[a*nCeps+k]) / n
			v := (sq[b*nCeps+k]-sq[a*nCeps+k])/n - m*m
			s += math.Log(max(v, varianceEps))
		}
		return s
	}
	penalty := bicLambda * 0.5 * 2 * nCeps * math.Log(2*float64(bicWindow))
	var out []span
	for _, s := range speech {
		cuts := []int{s.start}
		if s.frames() >= 2*bicWindow {
			score := make([]float64, s.frames())
			for t := s.start + bicWindow; t <= s.end-bicWindow; t++ {
				a, b := t-bicWindow, t+bicWindow
				score[t-s.start] = float64(bicWindow)*(logDet(a, b)-logDet(a, t)/2-logDet(t, b)/2) - penalty
			}
			cuts = append(cuts, peaks(score, s.start)...)
		}
		cuts = append(cuts, s.end)
		for i := 1; i < len(cuts); i++ {
			out = append(out, pieces(span{cuts[i-1], cuts[i]})...)
		}
	}
	return out
}

// peaks returns offset plus the positions of the positive local maxima of
// score, greedily from the highest, at least minChange apart and from the
// ends.
func peaks(score []float64, offset int) []int {
	idx := make([]int, 0, len(score))
	for i, v := range score {
		if v > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := -cmpFloat(score[a], score[b]); c != 0 {
			return c
		}
		return a - b
	})
	var picked []int
	for _, i := range idx {
		if i < minChange/2 || len(score)-i < minChange/2 {
			continue
		}
		ok := true
		for _, p := range picked {
			if abs(p-i) < minChange {
				ok = false
				break
			}
		}
		if ok {
			picked = append(picked, i)
		}
	}
	slices.Sort(picked)
	for i := range picked {
		picked[i] += offset
	}
	return picked
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// pieces cuts s into the fewest equal pieces of at most maxSegment frames.
func pieces(s span) []span {
	n := (s.frames() + maxSegment - 1) / maxSegment
	if n <= 1 {
		return []span{s}
	}
	out := make([]span, n)
	for i := range n {
		out[i] = span{s.start + i*s.frames()/n, s.start + (i+1)*s.frames()/n}
	}
	return out
}

// Embedding layout (see the package comment).
const (
	embedBias  = 3.0             // the constant component
	stdWeight  = 1.0             // weight of the log standard deviations
	embedWidth = 1 + 2*nCeps + 1 // constant, means, deviations, pitch
)

// Pitch in the embedding (see the package comment).
const (
	// pitchAngle is the angle, in radians per unit of natural-log F0,
	// by which a segment's pitch turns the constant component: a factor
	// of two in F0 (an octave, about a male and a female voice) is 1.39
	// rad, 13% (two semitones) 0.25 rad.
	pitchAngle = 2.0
	// minVoiced is the voiced frames (0.2 s) a segment needs for a pitch
	// of its own; with fewer it gets the recording's (angle 0).
	minVoiced = 20
)

// embed returns an embedding per segment.
func embed(f *features, segs []span) [][]float32 {
	// the recording's speech statistics
	var n float64
	gm, gs := make([]float64, nCeps), make([]float64, nCeps)
	for _, s := range segs {
		for t := s.start; t < s.end; t++ {
			for k, v := range f.frame(t) {
				gm[k] += float64(v)
				gs[k] += float64(v) * float64(v)
			}
		}
		n += float64(s.frames())
	}
	for k := range nCeps {
		gm[k] /= n
		gs[k] = math.Sqrt(max(gs[k]/n-gm[k]*gm[k], varianceEps))
	}
	pmed := pitchMedian(f, segs)
	out := make([][]float32, len(segs))
	m, v := make([]float64, nCeps), make([]float64, nCeps)
	var lf []float64
	for i, s := range segs {
		clear(m)
		clear(v)
		for t := s.start; t < s.end; t++ {
			for k, x := range f.frame(t) {
				m[k] += float64(x)
				v[k] += float64(x) * float64(x)
			}
		}
		e := make([]float32, embedWidth)
		e[0] = embedBias
		ns := float64(s.frames())
		for k := range nCeps {
			mean := m[k] / ns
			sd := math.Sqrt(max(v[k]/ns-mean*mean, varianceEps))
			e[1+k] = float32((mean - gm[k]) / gs[k])
			e[1+nCeps+k] = float32(stdWeight * math.Log(sd/gs[k]))
		}
		lf = logF0(f, s, lf[:0])
		if len(lf) >= minVoiced {
			th := max(-math.Pi/2, min(math.Pi/2, pitchAngle*(median(lf)-pmed)))
			e[0] = float32(embedBias * math.Cos(th))
			e[1+2*nCeps] = float32(embedBias * math.Sin(th))
		}
		out[i] = e
	}
	return out
}

// logF0 appends the log F0 of the voiced frames of s to dst.
func logF0(f *features, s span, dst []float64) []float64 {
	for t := s.start; t < s.end; t++ {
		if v := f.f0[t]; v > 0 {
			dst = append(dst, math.Log(float64(v)))
		}
	}
	return dst
}

// pitchMedian returns the median log F0 of the voiced frames of segs, 0
// when there are none.
func pitchMedian(f *features, segs []span) float64 {
	var all []float64
	for _, s := range segs {
		all = logF0(f, s, all)
	}
	if len(all) == 0 {
		return 0
	}
	return median(all)
}

// median returns the median of x, reordering x.
func median(x []float64) float64 {
	slices.Sort(x)
	n := len(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}
