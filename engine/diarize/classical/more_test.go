package classical

import (
	"math"
	"math/rand/v2"
	"testing"

	"boxd/engine/diarize/cluster"
)

// TestMoreSpeakers: two voices whose segments lie about 0.32 apart
// (between SplitThreshold and Threshold) and a third far from both come
// out as three speakers when each has enough speech, and as two when the
// close pair is short.
func TestMoreSpeakers(t *testing.T) {
	th := math.Acos(1 - 0.32)
	centres := [][]float32{{1, 0, 0}, {float32(math.Cos(th)), float32(math.Sin(th)), 0}, {0, 0, 1}}
	r := rand.New(rand.NewPCG(1, 2))
	var vecs [][]float32
	var truth []int
	for i := range 30 {
		c := i % 3
		v := make([]float32, 3)
		for j := range v {
			v[j] = centres[c][j] + float32(0.01*r.NormFloat64())
		}
		vecs, truth = append(vecs, v), append(truth, c)
	}
	for _, tc := range []struct {
		name    string
		seconds float64 // per segment of the close pair
		want    int
	}{{"long", 2, 3}, {"short", 0.5, 2}} {
		w := make([]float64, len(vecs))
		for i, c := range truth {
			w[i] = 2
			if c < 2 {
				w[i] = tc.seconds
			}
		}
		first := cluster.Agglomerative(vecs, w, Threshold, 1, 4)
		if n := count(first); n != 2 {
			t.Fatalf("%s: Threshold alone gives %d clusters; the test needs 2", tc.name, n)
		}
		got := moreSpeakers(vecs, w, first, 4)
		if n := count(got); n != tc.want {
			t.Errorf("%s: %d speakers, want %d", tc.name, n, tc.want)
		}
		if got := moreSpeakers(vecs, w, first, 2); count(got) != 2 {
			t.Errorf("%s: max 2 gave %d speakers", tc.name, count(got))
		}
	}
}

func count(labels []int) int {
	seen := map[int]bool{}
	for _, l := range labels {
		seen[l] = true
	}
	return len(seen)
}
