package cluster

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// blobs returns count vectors around each centre (in order centre 0's,
// then centre 1's, ... unless shuffled by the caller), spread by noise.
func blobs(r *rand.Rand, centres [][]float32, count int, noise float64) ([][]float32, []int) {
	var vecs [][]float32
	var truth []int
	for c, centre := range centres {
		for range count {
			v := make([]float32, len(centre))
			for j := range v {
				v[j] = centre[j] + float32(noise*r.NormFloat64())
			}
			vecs = append(vecs, v)
			truth = append(truth, c)
		}
	}
	return vecs, truth
}

// samePartition says whether labels a and b group the vectors alike.
func samePartition(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	ab, ba := map[int]int{}, map[int]int{}
	for i := range a {
		if x, ok := ab[a[i]]; ok && x != b[i] {
			return false
		}
		if x, ok := ba[b[i]]; ok && x != a[i] {
			return false
		}
		ab[a[i]], ba[b[i]] = b[i], a[i]
	}
	return true
}

func count(labels []int) int {
	k := 0
	for _, l := range labels {
		k = max(k, l+1)
	}
	return k
}

// firstAppearance checks labels are numbered 0.. in order of first use.
func firstAppearance(t *testing.T, labels []int) {
	t.Helper()
	next := 0
	for i, l := range labels {
		switch {
		case l == next:
			next++
		case l > next || l < 0:
			t.Fatalf("label %d at %d before label %d appeared: %v", l, i, next, labels)
		}
	}
}

func axis(dim, i int) []float32 {
	v := make([]float32, dim)
	v[i] = 1
	return v
}

func TestAgglomerativeFindsClusters(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name      string
		centres   [][]float32
		count     int
		noise     float64
		threshold float64
		min, max  int
	}{
		{"two speakers", [][]float32{axis(8, 0), axis(8, 1)}, 20, 0.1, 0.5, 1, 8},
		{"three speakers", [][]float32{axis(16, 0), axis(16, 5), axis(16, 9)}, 15, 0.15, 0.5, 1, 8},
		{"five speakers, unbounded", [][]float32{axis(8, 0), axis(8, 1), axis(8, 2), axis(8, 3), axis(8, 4)}, 6, 0.1, 0.5, 0, 0},
		{"one speaker", [][]float32{{1, 1, 1, 1}}, 30, 0.05, 0.3, 1, 4},
		// opposite directions are at distance 2
		{"opposite", [][]float32{{1, 2, 3}, {-1, -2, -3}}, 10, 0.05, 1, 1, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vecs, truth := blobs(r, tc.centres, tc.count, tc.noise)
			perm := r.Perm(len(vecs))
			sv, st := make([][]float32, len(vecs)), make([]int, len(vecs))
			for i, p := range perm {
				sv[i], st[i] = vecs[p], truth[p]
			}
			got := Agglomerative(sv, nil, tc.threshold, tc.min, tc.max)
			if !samePartition(got, st) {
				t.Fatalf("labels %v\nwant partition %v", got, st)
			}
			firstAppearance(t, got)
		})
	}
}

func TestAgglomerativeBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	three := [][]float32{axis(6, 0), axis(6, 1), axis(6, 2)}
	vecs, truth := blobs(r, three, 10, 0.1)
	tests := []struct {
		name      string
		threshold float64
		min, max  int
		want      int
	}{
		{"natural", 0.5, 1, 16, 3},
		{"max below natural", 0.5, 1, 2, 2},
		{"max one", 0.5, 1, 1, 1},
		{"min above natural", 0.5, 5, 8, 5},
		{"min = max", 0.5, 4, 4, 4},
		{"threshold zero merges nothing", 0, 1, 0, 30},
		{"threshold zero, max", 0, 1, 7, 7},
		{"threshold two merges all", 2.5, 1, 4, 1},
		{"threshold two, min", 2.5, 3, 4, 3},
		{"min beyond vectors", 0.5, 100, 200, 30},
		{"min below one", 2.5, -3, 4, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Agglomerative(vecs, nil, tc.threshold, tc.min, tc.max)
			if len(got) != len(vecs) {
				t.Fatalf("%d labels for %d vectors", len(got), len(vecs))
			}
			if k := count(got); k != tc.want {
				t.Fatalf("%d clusters, want %d: %v", k, tc.want, got)
			}
			firstAppearance(t, got)
			if tc.want == 2 {
				// the two nearest true clusters merged: each true
				// cluster stays whole
				for c := range 3 {
					var ls []int
					for i, tr := range truth {
						if tr == c {
							ls = append(ls, got[i])
						}
					}
					slices.Sort(ls)
					if ls[0] != ls[len(ls)-1] {
						t.Fatalf("true cluster %d split: %v", c, got)
					}
				}
			}
		})
	}
}

func TestAgglomerativeLabelOrder(t *testing.T) {
	a, b, c := []float32{1, 0, 0}, []float32{0, 1, 0}, []float32{0, 0, 1}
	tests := []struct {
		vecs [][]float32
		want []int
	}{
		{[][]float32{c, a, c, b, a}, []int{0, 1, 0, 2, 1}},
		{[][]float32{b, b, a, c, a, b}, []int{0, 0, 1, 2, 1, 0}},
		{[][]float32{a, b, c}, []int{0, 1, 2}},
	}
	for _, tc := range tests {
		if got := Agglomerative(tc.vecs, nil, 0.5, 1, 8); !slices.Equal(got, tc.want) {
			t.Errorf("Agglomerative(%v) = %v, want %v", tc.vecs, got, tc.want)
		}
	}
}

func TestAgglomerativeWeights(t *testing.T) {
	at := func(deg float64) []float32 {
		r := deg * math.Pi / 180
		return []float32{float32(math.Cos(r)), float32(math.Sin(r))}
	}
	// a1 (0°) and a2 (10°) merge first; x (48°) then lies 0.257 from b
	// (90°) and, on average, 0.272 from {a1, a2} (0.331 from a1, 0.212
	// from a2).
	vecs := [][]float32{at(0), at(10), at(90), at(48)}
	if got := Agglomerative(vecs, nil, 0, 2, 2); !slices.Equal(got, []int{0, 0, 1, 1}) {
		t.Fatalf("unweighted: %v, want x with b", got)
	}
	// weighing a2 far above a1 brings {a1, a2} to 0.212 from x
	w := []float64{0.01, 10, 1, 1}
	if got := Agglomerative(vecs, w, 0, 2, 2); !slices.Equal(got, []int{0, 0, 1, 0}) {
		t.Fatalf("weighted: %v, want x with a", got)
	}
	// bad weights do not panic or poison distances
	bad := []float64{math.NaN(), -1, math.Inf(1), 0}
	if got := Agglomerative(vecs, bad, 0, 2, 2); len(got) != 4 || count(got) != 2 {
		t.Fatalf("bad weights: %v", got)
	}
	// a short weights slice: missing weights count as 1
	if got := Agglomerative(vecs, []float64{1}, 0, 2, 2); !slices.Equal(got, []int{0, 0, 1, 1}) {
		t.Fatalf("short weights: %v", got)
	}
}

func TestAgglomerativeDegenerate(t *testing.T) {
	zero := []float32{0, 0, 0}
	nan := []float32{float32(math.NaN()), 1, 0}
	a, b := []float32{1, 0, 0}, []float32{0, 1, 0}
	tests := []struct {
		name      string
		vecs      [][]float32
		threshold float64
		min, max  int
		want      []int
	}{
		{"empty", nil, 0.5, 1, 4, []int{}},
		{"one vector", [][]float32{a}, 0.5, 1, 4, []int{0}},
		{"one vector, min 3", [][]float32{a}, 0.5, 3, 4, []int{0}},
		{"one zero vector", [][]float32{zero}, 0.5, 1, 4, []int{0}},
		{"zero vectors together", [][]float32{zero, zero, zero}, 0.5, 1, 4, []int{0, 0, 0}},
		{"zero vectors apart from others", [][]float32{a, zero, a, zero, b}, 0.5, 1, 4, []int{0, 1, 0, 1, 2}},
		{"non-finite like zero", [][]float32{a, nan, zero}, 0.5, 1, 4, []int{0, 1, 1}},
		{"empty vectors", [][]float32{{}, {}}, 0.5, 1, 4, []int{0, 0}},
		{"identical", [][]float32{a, a, a, a}, 0.5, 1, 4, []int{0, 0, 0, 0}},
		{"identical, min 2", [][]float32{a, a, a, a}, 0.5, 2, 4, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Agglomerative(tc.vecs, nil, tc.threshold, tc.min, tc.max)
			if got == nil {
				t.Fatal("nil labels")
			}
			if tc.want == nil {
				if len(got) != len(tc.vecs) || count(got) != tc.min {
					t.Fatalf("got %v, want %d clusters", got, tc.min)
				}
				firstAppearance(t, got)
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func BenchmarkAgglomerative1000(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	var centres [][]float32
	for i := range 4 {
		centres = append(centres, axis(64, i))
	}
	vecs, _ := blobs(r, centres, 250, 0.2)
	for b.Loop() {
		Agglomerative(vecs, nil, 0.5, 1, 8)
	}
}
