// Package cluster groups speaker embeddings into speakers: average-linkage
// agglomerative clustering on cosine distance with a distance threshold and
// bounds on the number of clusters. Both diarizers use it: classical
// (feature-statistics embeddings of speech segments) and neural (WeSpeaker
// embeddings).
package cluster

import (
	"math"
)

// Agglomerative clusters vecs and returns a label per vector, labels
// 0..k-1 numbered in order of first appearance (vecs[0] is always 0).
//
// The algorithm is average-linkage (UPGMA) agglomerative clustering on
// cosine distance, 1 - cos(a, b), which runs from 0 (same direction)
// through 1 (orthogonal) to 2 (opposite). Every vector starts as its own
// cluster; the two clusters nearest each other are merged, again and
// again, down to one cluster, which records the dendrogram. The distance
// between clusters A and B is the weighted mean of the distances between
// their members, sum w_a w_b d(a, b) / (W_A W_B), with weights[i] the
// weight of vecs[i] (such as its speech duration, so that long segments
// count for more than short ones); nil weights weigh every vector 1, and
// a weight that is not a positive finite number counts as 1e-6.
//
// threshold decides how many clusters there are: the dendrogram is cut
// after the merges made at a distance below threshold, so clusters end up
// further apart than threshold (on average over their members). A
// threshold of 0 merges nothing, 2 or more merges everything. The count
// k is then bounded: when k > max the cut moves up the dendrogram until
// there are max clusters (the closest clusters keep merging); when k < min
// the cut moves down until there are min clusters (the last merges are
// undone), but never past one cluster per vector. min < 1 counts as 1 and
// max < 1 means no upper bound.
//
// A zero vector or one with a non-finite component has no direction: it is
// at distance 0 from other such vectors and 1 from every other vector.
// Empty input returns an empty (non-nil) slice. Time is about O(n²) and
// memory n² float64s for n vectors.
func Agglomerative(vecs [][]float32, weights []float64, threshold float64, min, max int) []int {
	n := len(vecs)
	if n == 0 {
		return []int{}
	}
	merges := dendrogram(vecs, weights)
	// merges are in the order made; average linkage never merges at a
	// smaller distance than before (no inversions), so the merges below
	// threshold are a prefix.
	below := 0
	for _, m := range merges {
		if !(m.dist < threshold) {
			break
		}
		below++
	}
	k := n - below
	if max >= 1 && k > max {
		k = max
	}
	if min < 1 {
		min = 1
	}
	if k < min {
		k = min
	}
	if k > n {
		k = n
	}
	return cut(n, merges[:n-k])
}

// merge is one step of the dendrogram: cluster b merged into cluster a
// (both named by a member's index) at distance dist.
type merge struct {
	a, b int
	dist float64
}

// dendrogram merges clusters down to one and returns the n-1 merges in
// the order made. It keeps each active cluster's nearest neighbour
// (average linkage is reducible, so a merge can only move neighbours
// further away or onto the merged cluster), which makes the usual case
// about O(n²).
func dendrogram(vecs [][]float32, weights []float64) []merge {
	n := len(vecs)
	unit := normalise(vecs)
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
		if weights != nil && i < len(weights) {
			w[i] = weights[i]
			if !(w[i] > 0) || math.IsInf(w[i], 0) {
				w[i] = 1e-6
			}
		}
	}
	d := make([]float64, n*n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			v := distance(unit[i], unit[j])
			d[i*n+j], d[j*n+i] = v, v
		}
	}
	active := make([]bool, n)
	for i := range active {
		active[i] = true
	}
	nn := make([]int, n)
	nnd := make([]float64, n)
	nearest := func(i int) {
		nn[i], nnd[i] = -1, math.Inf(1)
		row := d[i*n : (i+1)*n]
		for j, v := range row {
			if j != i && active[j] && v < nnd[i] {
				nn[i], nnd[i] = j, v
			}
		}
	}
	for i := range n {
		nearest(i)
	}
	merges := make([]merge, 0, n-1)
	for len(merges) < n-1 {
		a := -1
		for i := range n {
			if active[i] && nn[i] >= 0 && (a < 0 || nnd[i] < nnd[a]) {
				a = i
			}
		}
		b := nn[a]
		if b < a {
			a, b = b, a
		}
		merges = append(merges, merge{a, b, d[a*n+b]})
		active[b] = false
		wa, wb := w[a], w[b]
		for k := range n {
			if !active[k] || k == a {
				continue
			}
			v := (wa*d[a*n+k] + wb*d[b*n+k]) / (wa + wb)
			d[a*n+k], d[k*n+a] = v, v
		}
		w[a] = wa + wb
		nearest(a)
		for k := range n {
			if !active[k] || k == a {
				continue
			}
			switch {
			case nn[k] == a || nn[k] == b:
				nearest(k)
			case d[k*n+a] < nnd[k]:
				nn[k], nnd[k] = a, d[k*n+a]
			}
		}
	}
	return merges
}

// cut applies merges to n singletons and labels the clusters in order of
// first appearance.
func cut(n int, merges []merge) []int {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, m := range merges {
		parent[find(m.b)] = find(m.a)
	}
	labels := make([]int, n)
	ids := map[int]int{}
	for i := range n {
		r := find(i)
		l, ok := ids[r]
		if !ok {
			l = len(ids)
			ids[r] = l
		}
		labels[i] = l
	}
	return labels
}

// normalise returns unit-length float64 copies of vecs; nil for a vector
// without a direction (zero, or with a non-finite component).
func normalise(vecs [][]float32) [][]float64 {
	out := make([][]float64, len(vecs))
	for i, v := range vecs {
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if !(ss > 0) || math.IsInf(ss, 0) {
			continue
		}
		u := make([]float64, len(v))
		s := 1 / math.Sqrt(ss)
		for j, x := range v {
			u[j] = float64(x) * s
		}
		out[i] = u
	}
	return out
}

// distance is the cosine distance of unit vectors a and b (see normalise
// for nil); vectors of different lengths are compared on their common
// prefix.
func distance(a, b []float64) float64 {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil || b == nil:
		return 1
	}
	var dot float64
	for i := range min(len(a), len(b)) {
		dot += a[i] * b[i]
	}
	return math.Max(0, math.Min(2, 1-dot))
}
