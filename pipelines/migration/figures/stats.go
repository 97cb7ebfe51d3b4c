// Package figures computes a migration check's figures from its scores:
// the 95% Wilson and Clopper–Pearson intervals (equal to R's prop.test and
// binom.test), percentiles (R's quantile type 7), the seeded bootstrap, and
// a candidate's whole summary with its verdict. It is deterministic: the
// verifier recomputes every signed figure with it.
package figures

// Statistics for the migration check: 95% intervals of a proportion, type-7
// percentiles, a deterministic bootstrap and the decimal format used in signed
// records. Each function names the R function it equals; stats_r_test.go
// checks them against R itself.

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// BootstrapResamples is the number of bootstrap resamples a check draws.
const BootstrapResamples = 10000

// DefaultSeed seeds the bootstrap when the caller names no seed.
const DefaultSeed uint64 = 20261129

// confidence is the two-sided level of every interval in this file.
const confidence = 0.95

// Interval is a two-sided 95% interval of a proportion, within [0, 1].
type Interval struct{ Lo, Hi float64 }

// Wilson is the 95% Wilson score interval of k successes in n trials: R's
// prop.test(k, n, correct = FALSE)$conf.int (z = qnorm(0.975)). n > 0,
// 0 <= k <= n; k outside [0, n] is clamped into it, and n <= 0 (no trials,
// no information) gives [0, 1].
//
// The arithmetic follows R's stats:::prop.test term by term so that the two
// agree to rounding: with p = k/n and z22n = z²/(2n),
//
//	lo, hi = (p + z22n ∓ z·sqrt(p(1−p)/n + z22n/(2n))) / (1 + 2·z22n)
//
// with lo = 0 when p = 0 and hi = 1 when p = 1.
func Wilson(k, n int) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	k = min(max(k, 0), n)
	z := distuv.UnitNormal.Quantile(1 - (1-confidence)/2)
	fn := float64(n)
	p := float64(k) / fn
	z22n := z * z / (2 * fn)
	half := z * math.Sqrt(p*(1-p)/fn+z22n/(2*fn))
	lo, hi := 0.0, 1.0
	if p > 0 {
		lo = (p + z22n - half) / (1 + 2*z22n)
	}
	if p < 1 {
		hi = (p + z22n + half) / (1 + 2*z22n)
	}
	return Interval{max(lo, 0), min(hi, 1)}
}

// ClopperPearson is the exact 95% interval of k successes in n trials: R's
// binom.test(k, n)$conf.int. Lo = 0 when k = 0, else qbeta(0.025, k, n−k+1);
// Hi = 1 when k = n, else qbeta(0.975, k+1, n−k). Out-of-range input is
// treated as in Wilson.
func ClopperPearson(k, n int) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	k = min(max(k, 0), n)
	alpha := (1 - confidence) / 2
	lo, hi := 0.0, 1.0
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha)
	}
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha)
	}
	return Interval{lo, hi}
}

// Percentile is R's quantile(x, p, type = 7): linear interpolation between
// the order statistics around index 1 + (n−1)·p. values need not be sorted
// and are not modified; no values give 0. p is clamped into [0, 1].
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	x := slices.Clone(values)
	slices.Sort(x)
	p = min(max(p, 0), 1)
	// Zero-based form of R's index <- 1 + (n - 1) * probs.
	index := float64(len(x)-1) * p
	lo := int(math.Floor(index))
	hi := int(math.Ceil(index))
	q := x[lo]
	if h := index - float64(lo); h > 0 && x[hi] != q {
		q = (1-h)*q + h*x[hi]
	}
	return q
}

// Resample draws the bootstrap: resamples draws of len(outcomes) indices
// with replacement, calling fn with the number of successes in each
// resample (outcomes[i] true = success).
//
// The source is a math/rand/v2 PCG seeded with (seed, seed^0x9e3779b97f4a7c15).
// Indices are taken from its raw 64-bit output by Lemire's multiply-and-reject
// reduction written out here, not by rand.Rand.IntN, whose algorithm Go does
// not promise to keep: the same seed gives the same sequence of k values on
// every platform and Go release (PCG's output is specified). With no
// outcomes every resample has k = 0.
func Resample(outcomes []bool, resamples int, seed uint64, fn func(k int)) {
	n := len(outcomes)
	if n == 0 {
		for range resamples {
			fn(0)
		}
		return
	}
	src := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	bound := uint64(n)
	// Draws whose low product word falls below threshold = 2^64 mod n are
	// rejected, so every index has the same probability.
	threshold := -bound % bound
	for range resamples {
		k := 0
		for range n {
			hi, lo := bits.Mul64(src.Uint64(), bound)
			for lo < threshold {
				hi, lo = bits.Mul64(src.Uint64(), bound)
			}
			if outcomes[hi] {
				k++
			}
		}
		fn(k)
	}
}

// SameVerdictShare is the share of bootstrap resamples whose verdict(k, n)
// equals verdict(kObserved, n), where kObserved counts the successes in
// outcomes and the resamples are Resample(outcomes, resamples, seed, ...).
// It is in [0, 1]; resamples <= 0 gives 0.
func SameVerdictShare(outcomes []bool, resamples int, seed uint64, verdict func(k, n int) string) float64 {
	if resamples <= 0 {
		return 0
	}
	n := len(outcomes)
	observed := verdict(countTrue(outcomes), n)
	same := 0
	Resample(outcomes, resamples, seed, func(k int) {
		if verdict(k, n) == observed {
			same++
		}
	})
	return float64(same) / float64(resamples)
}

// countTrue is the number of true values in outcomes.
func countTrue(outcomes []bool) int {
	k := 0
	for _, ok := range outcomes {
		if ok {
			k++
		}
	}
	return k
}

// Dec formats a figure for a signed record: strconv.FormatFloat(x, 'f', 6, 64)
// with trailing zeros and a trailing dot trimmed ("0.5", "1", "0.123457"),
// and negative zero (also a negative value that rounds to it) written "0".
// It is R's sub("\\.?0+$", "", sprintf("%.6f", x)) apart from the sign of zero.
func Dec(x float64) string {
	s := strconv.FormatFloat(x, 'f', 6, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}
