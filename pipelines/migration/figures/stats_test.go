package figures

import (
	"math"
	"slices"
	"testing"
)

// z975 is qnorm(0.975), written out so the expected intervals below do not
// depend on the quantile function under test.
const z975 = 1.959963984540054

// wilsonByHand is the textbook Wilson score interval
// (p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n), written in a
// different arrangement from Wilson so that a slip in either shows up.
func wilsonByHand(k, n float64) Interval {
	p := k / n
	z2 := z975 * z975
	centre := (k + z2/2) / (n + z2)
	half := z975 * n / (n + z2) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return Interval{max(centre-half, 0), min(centre+half, 1)}
}

func TestWilsonKnownValues(t *testing.T) {
	z2 := z975 * z975
	tests := []struct {
		name string
		k, n int
		want Interval
	}{
		// k = 0: Lo = 0, Hi = z²/(n + z²).
		{"0/10", 0, 10, Interval{0, z2 / (10 + z2)}},
		// k = n: Lo = n/(n + z²), Hi = 1.
		{"10/10", 10, 10, Interval{10 / (10 + z2), 1}},
		// k = n/2: centred on 1/2, half-width z·sqrt(n/4 + z²/4)/(n + z²).
		{"5/10", 5, 10, Interval{
			0.5 - z975*math.Sqrt(10.0/4+z2/4)/(10+z2),
			0.5 + z975*math.Sqrt(10.0/4+z2/4)/(10+z2),
		}},
		{"0/1", 0, 1, Interval{0, z2 / (1 + z2)}},
		{"1/1", 1, 1, Interval{1 / (1 + z2), 1}},
		{"3/17", 3, 17, wilsonByHand(3, 17)},
		{"37/40", 37, 40, wilsonByHand(37, 40)},
		{"199/200", 199, 200, wilsonByHand(199, 200)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Wilson(tc.k, tc.n)
			if math.Abs(got.Lo-tc.want.Lo) > 1e-12 || math.Abs(got.Hi-tc.want.Hi) > 1e-12 {
				t.Errorf("Wilson(%d, %d) = %+v, want %+v", tc.k, tc.n, got, tc.want)
			}
		})
	}
}

func TestClopperPearsonKnownValues(t *testing.T) {
	tests := []struct {
		name string
		k, n int
		want Interval
	}{
		// k = 0: Hi solves (1−p)^n = 0.025, so Hi = 1 − 0.025^(1/n).
		{"0/10", 0, 10, Interval{0, 1 - math.Pow(0.025, 0.1)}},
		// k = n: Lo solves p^n = 0.025.
		{"10/10", 10, 10, Interval{math.Pow(0.025, 0.1), 1}},
		{"0/1", 0, 1, Interval{0, 0.975}},
		{"1/1", 1, 1, Interval{0.025, 1}},
		// n = 2, k = 1: Lo solves 1 − (1−p)² = 0.025, Hi solves p² = 0.975.
		{"1/2", 1, 2, Interval{1 - math.Sqrt(0.975), math.Sqrt(0.975)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ClopperPearson(tc.k, tc.n)
			if math.Abs(got.Lo-tc.want.Lo) > 1e-12 || math.Abs(got.Hi-tc.want.Hi) > 1e-12 {
				t.Errorf("ClopperPearson(%d, %d) = %+v, want %+v", tc.k, tc.n, got, tc.want)
			}
		})
	}
}

func TestIntervalsContainEstimateAndAreMonotone(t *testing.T) {
	for _, f := range []struct {
		name     string
		interval func(k, n int) Interval
	}{{"Wilson", Wilson}, {"ClopperPearson", ClopperPearson}} {
		for _, n := range []int{1, 2, 3, 7, 10, 40, 101, 1000} {
			prev := Interval{-1, -1}
			for k := 0; k <= n; k++ {
				got := f.interval(k, n)
				p := float64(k) / float64(n)
				if got.Lo < 0 || got.Hi > 1 || got.Lo > p || p > got.Hi {
					t.Fatalf("%s(%d, %d) = %+v: want 0 <= Lo <= %g <= Hi <= 1", f.name, k, n, got, p)
				}
				if got.Lo < prev.Lo || got.Hi < prev.Hi {
					t.Fatalf("%s(%d, %d) = %+v falls below %s(%d, %d) = %+v", f.name, k, n, got, f.name, k-1, n, prev)
				}
				if k > 0 && got.Lo == 0 || k < n && got.Hi == 1 {
					t.Fatalf("%s(%d, %d) = %+v: bound at 0 or 1 with 0 < k < n", f.name, k, n, got)
				}
				prev = got
			}
		}
	}
}

func TestIntervalsOutOfRangeInput(t *testing.T) {
	for _, f := range []func(k, n int) Interval{Wilson, ClopperPearson} {
		if got := f(0, 0); got != (Interval{0, 1}) {
			t.Errorf("n = 0: got %+v, want [0, 1]", got)
		}
		if got, want := f(-3, 10), f(0, 10); got != want {
			t.Errorf("k < 0: got %+v, want %+v (k clamped to 0)", got, want)
		}
		if got, want := f(12, 10), f(10, 10); got != want {
			t.Errorf("k > n: got %+v, want %+v (k clamped to n)", got, want)
		}
	}
}

func TestPercentileType7(t *testing.T) {
	oneToTwenty := make([]float64, 20)
	for i := range oneToTwenty {
		oneToTwenty[i] = float64(20 - i) // descending: Percentile must sort
	}
	tests := []struct {
		name   string
		values []float64
		p      float64
		want   float64
	}{
		{"none", nil, 0.5, 0},
		{"single", []float64{7}, 0.95, 7},
		{"two at 0.5", []float64{4, 1}, 0.5, 2.5},
		{"two at 0.25", []float64{1, 4}, 0.25, 1.75},
		{"p = 0 is the minimum", []float64{3, -2, 9}, 0, -2},
		{"p = 1 is the maximum", []float64{3, -2, 9}, 1, 9},
		// Index 1 + 19·0.95 = 19.05: 19 + 0.05·(20 − 19).
		{"0.95 of 1..20", oneToTwenty, 0.95, 19.05},
		// Index 1 + 19·0.5 = 10.5: halfway between 10 and 11.
		{"median of 1..20", oneToTwenty, 0.5, 10.5},
		{"ties", []float64{2, 2, 2, 5}, 0.5, 2},
		{"p below 0 clamped", []float64{1, 2}, -1, 1},
		{"p above 1 clamped", []float64{1, 2}, 2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.values)
			got := Percentile(tc.values, tc.p)
			if math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Percentile(%v, %g) = %g, want %g", tc.values, tc.p, got, tc.want)
			}
			if !slices.Equal(before, tc.values) {
				t.Errorf("Percentile modified its input: %v, was %v", tc.values, before)
			}
		})
	}
}

// collect is the k sequence Resample gives.
func collect(outcomes []bool, resamples int, seed uint64) []int {
	var ks []int
	Resample(outcomes, resamples, seed, func(k int) { ks = append(ks, k) })
	return ks
}

// outcomesOf is n outcomes of which the first k are successes.
func outcomesOf(k, n int) []bool {
	out := make([]bool, n)
	for i := range k {
		out[i] = true
	}
	return out
}

func TestResampleDeterministic(t *testing.T) {
	outcomes := outcomesOf(13, 40)
	a := collect(outcomes, 500, DefaultSeed)
	b := collect(outcomes, 500, DefaultSeed)
	if len(a) != 500 {
		t.Fatalf("got %d resamples, want 500", len(a))
	}
	if !slices.Equal(a, b) {
		t.Fatal("same seed gave different k sequences")
	}
	if c := collect(outcomes, 500, DefaultSeed+1); slices.Equal(a, c) {
		t.Fatal("different seeds gave the same k sequence")
	}
	for _, k := range a {
		if k < 0 || k > len(outcomes) {
			t.Fatalf("k = %d outside [0, %d]", k, len(outcomes))
		}
	}
}

// TestResamplePinnedSequence pins the first k values for two seeds. Signed
// records carry shares computed from these sequences, so a change here (to
// the seeding, the index reduction or Go's PCG) changes recorded results and
// must be deliberate.
func TestResamplePinnedSequence(t *testing.T) {
	tests := []struct {
		successes, n int
		seed         uint64
		want         []int
	}{
		{13, 40, DefaultSeed, []int{9, 17, 10, 9, 12, 16, 19, 14, 15, 15, 16, 7}},
		{1, 3, 1, []int{1, 2, 0, 0, 1, 1, 0, 0, 2, 1, 1, 2}},
	}
	for _, tc := range tests {
		if got := collect(outcomesOf(tc.successes, tc.n), len(tc.want), tc.seed); !slices.Equal(got, tc.want) {
			t.Errorf("%d/%d, seed %d: k = %v, want %v", tc.successes, tc.n, tc.seed, got, tc.want)
		}
	}
}

func TestResampleMeanAndSpread(t *testing.T) {
	const n, successes = 50, 15 // p = 0.3
	ks := collect(outcomesOf(successes, n), BootstrapResamples, DefaultSeed)
	var sum, sumSq float64
	for _, k := range ks {
		sum += float64(k)
		sumSq += float64(k) * float64(k)
	}
	mean := sum / float64(len(ks))
	variance := sumSq/float64(len(ks)) - mean*mean
	// k ~ Binomial(50, 0.3): mean 15, variance 10.5. The standard error of the
	// mean over 10,000 resamples is about 0.032; allow more than 6 of them.
	if math.Abs(mean-15) > 0.2 {
		t.Errorf("mean k = %g, want 15 ± 0.2", mean)
	}
	if math.Abs(variance-10.5) > 1 {
		t.Errorf("variance of k = %g, want 10.5 ± 1", variance)
	}
}

func TestResampleIndicesUniform(t *testing.T) {
	// A single success among n = 3 (2^64 mod 3 ≠ 0, so rejection matters in
	// principle): each draw hits it with probability 1/3.
	ks := collect(outcomesOf(1, 3), 30000, 7)
	sum := 0
	for _, k := range ks {
		sum += k
	}
	// 90,000 draws, expected 30,000 hits, sd ≈ 141.
	if sum < 29200 || sum > 30800 {
		t.Errorf("success drawn %d times in 90000 draws, want about 30000", sum)
	}
}

func TestResampleNoOutcomes(t *testing.T) {
	ks := collect(nil, 4, 1)
	if !slices.Equal(ks, []int{0, 0, 0, 0}) {
		t.Errorf("got %v, want four zeros", ks)
	}
}

func TestSameVerdictShare(t *testing.T) {
	threshold := func(k, n int) string {
		if n > 0 && float64(k)/float64(n) >= 0.9 {
			return "pass"
		}
		return "fail"
	}
	if got := SameVerdictShare(outcomesOf(30, 30), BootstrapResamples, DefaultSeed, threshold); got != 1 {
		t.Errorf("all successes: share = %g, want 1", got)
	}
	if got := SameVerdictShare(outcomesOf(0, 30), 1000, DefaultSeed, threshold); got != 1 {
		t.Errorf("no successes: share = %g, want 1", got)
	}
	// 27/30 sits on the threshold: about a third of the resamples fall below
	// it (P(Binomial(30, 0.9) >= 27) ≈ 0.65).
	got := SameVerdictShare(outcomesOf(27, 30), BootstrapResamples, DefaultSeed, threshold)
	if got < 0.55 || got > 0.75 {
		t.Errorf("on the threshold: share = %g, want about 0.65", got)
	}
	if again := SameVerdictShare(outcomesOf(27, 30), BootstrapResamples, DefaultSeed, threshold); again != got {
		t.Errorf("same seed: share %g then %g", got, again)
	}
	if got := SameVerdictShare(outcomesOf(3, 5), 0, DefaultSeed, threshold); got != 0 {
		t.Errorf("no resamples: share = %g, want 0", got)
	}
}

func TestDec(t *testing.T) {
	tests := []struct {
		x    float64
		want string
	}{
		{0.5, "0.5"},
		{1, "1"},
		{0.1234567, "0.123457"},
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{-0.0000001, "0"},
		{-0.25, "-0.25"},
		{100, "100"},
		{1e-6, "0.000001"},
		{0.95, "0.95"},
		{12.3400001, "12.34"},
	}
	for _, tc := range tests {
		if got := Dec(tc.x); got != tc.want {
			t.Errorf("Dec(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}
