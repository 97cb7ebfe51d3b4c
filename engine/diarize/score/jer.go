package score

import (
	"maps"
	"slices"
	"sort"
)

// step is dscore's frame step for JER, 10 ms.
const step = 0.010

// jerFile returns the Jaccard error rate in percent of each reference
// speaker of one file, as dscore's metrics.jer, and how many reference
// and system speakers the file has. Turns become frames as dscore's
// turns_to_frames makes them: frame i is at time step·i for i below
// int(last UEM offset/step); a turn [on, off) covers the frames from
// searchsorted(on) to searchsorted(off); only frames in the UEM count.
func jerFile(refBy, sysBy map[string][]span, uem []span) (jers []float64, nref, nsys int) {
	end := 0.0
	for _, r := range uem {
		end = max(end, r[1])
	}
	n := int(end / step)
	// index is numpy's searchsorted(step*arange(n), x).
	index := func(x float64) float64 {
		return float64(sort.Search(n, func(i int) bool { return step*float64(i) >= x }))
	}
	toFrames := func(s []span) []span {
		f := make([]span, len(s))
		for i, x := range s {
			f[i] = span{index(x[0]), index(x[1])}
		}
		return merge(f, true)
	}
	keep := toFrames(uem)
	speakers := func(by map[string][]span) (out [][]span) {
		for _, name := range slices.Sorted(maps.Keys(by)) {
			out = append(out, intersect(toFrames(by[name]), keep))
		}
		return out
	}
	ref, sys := speakers(refBy), speakers(sysBy)
	nref, nsys = len(ref), len(sys)
	if nref == 0 {
		return nil, nref, nsys
	}
	cost := make([][]float64, nref)
	for r := range cost {
		cost[r] = make([]float64, nsys)
		for s := range nsys {
			inter := length(intersect(ref[r], sys[s]))
			cost[r][s] = 1 // also for 0/0, two speakers without frames, NaN in dscore
			if union := length(ref[r]) + length(sys[s]) - inter; union > 0 {
				cost[r][s] = 1 - inter/union
			}
		}
	}
	jers = make([]float64, nref)
	for r, s := range assign(cost) {
		jers[r] = 100 // unmapped, or no system speakers at all
		if s >= 0 {
			jers[r] = 100 * cost[r][s]
		}
	}
	return jers, nref, nsys
}

// jerOf is dscore's JER of files (one or all) from jerFile's figures: the
// mean over reference speakers; 100 when there are speakers on only one
// side, 0 when on neither.
func jerOf(jers []float64, nref, nsys int) float64 {
	switch {
	case nref > 0 && nsys > 0:
		var s float64
		for _, v := range jers {
			s += v
		}
		return s / float64(len(jers))
	case nref > 0 || nsys > 0:
		return 100
	}
	return 0
}
