package score

import (
	"cmp"
	"slices"
)

// span is a stretch [lo, hi) of time (or of frame indices).
type span = [2]float64

// merge sorts s and merges spans that overlap, and with touching those
// that only touch too, dropping empty spans. merge(s, false) is
// intervaltree's merge_overlaps, which dscore uses on UEM regions and a
// speaker's turns; merge(s, true) makes a set of times.
func merge(s []span, touching bool) []span {
	s = slices.Clone(s)
	slices.SortFunc(s, func(a, b span) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	var out []span
	for _, x := range s {
		if n := len(out); n > 0 && (x[0] < out[n-1][1] || touching && x[0] == out[n-1][1]) {
			out[n-1][1] = max(out[n-1][1], x[1])
		} else if x[1] > x[0] {
			out = append(out, x)
		}
	}
	return out
}

// subtract returns a minus b, both merged sets.
func subtract(a, b []span) []span {
	var out []span
	j := 0
	for _, x := range a {
		lo := x[0]
		for j < len(b) && b[j][1] <= lo {
			j++
		}
		for k := j; k < len(b) && b[k][0] < x[1]; k++ {
			if b[k][0] > lo {
				out = append(out, span{lo, b[k][0]})
			}
			lo = max(lo, b[k][1])
		}
		if x[1] > lo {
			out = append(out, span{lo, x[1]})
		}
	}
	return out
}

// intersect returns a ∩ b, both merged sets.
func intersect(a, b []span) []span {
	var out []span
	for i, j := 0, 0; i < len(a) && j < len(b); {
		if lo, hi := max(a[i][0], b[j][0]), min(a[i][1], b[j][1]); hi > lo {
			out = append(out, span{lo, hi})
		}
		if a[i][1] < b[j][1] {
			i++
		} else {
			j++
		}
	}
	return out
}

func length(a []span) float64 {
	var n float64
	for _, x := range a {
		n += x[1] - x[0]
	}
	return n
}

// covered returns where at least k of spans s are active.
func covered(s []span, k int) []span {
	type ev struct{ t, d float64 }
	var evs []ev
	for _, x := range s {
		if x[1] > x[0] {
			evs = append(evs, ev{x[0], 1}, ev{x[1], -1})
		}
	}
	slices.SortFunc(evs, func(a, b ev) int { return cmp.Compare(a.t, b.t) })
	var out []span
	n, lo := 0.0, 0.0
	for i := 0; i < len(evs); {
		t, was := evs[i].t, n >= float64(k)
		for ; i < len(evs) && evs[i].t == t; i++ {
			n += evs[i].d
		}
		if now := n >= float64(k); now && !was {
			lo = t
		} else if was && !now {
			out = append(out, span{lo, t})
		}
	}
	return out
}
