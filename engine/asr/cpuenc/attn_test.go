package cpuenc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// reference is attention in float64: softmax(q·kᵀ/√d)·v per head.
func reference(q, k, v []float32, n, heads, d int) []float64 {
	S := heads * d
	out := make([]float64, n*S)
	scale := 1 / math.Sqrt(float64(d))
	s := make([]float64, n)
	for h := range heads {
		for i := range n {
			m := math.Inf(-1)
			for j := range n {
				var dot float64
				for c := range d {
					dot += float64(q[i*S+h*d+c]) * float64(k[j*S+h*d+c])
				}
				s[j] = dot * scale
				m = max(m, s[j])
			}
			var sum float64
			for j := range n {
				s[j] = math.Exp(s[j] - m)
				sum += s[j]
			}
			for c := range d {
				var acc float64
				for j := range n {
					acc += s[j] * float64(v[j*S+h*d+c])
				}
				out[i*S+h*d+c] = acc / sum
			}
		}
	}
	return out
}

func random(r *rand.Rand, n int, std float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * std)
	}
	return x
}

// TestEncoderMatchesFloat64: the kernel against float64 attention, for
// lengths that fill no block or tile evenly (1, 7, 49, 301) and one that
// does (96), one to six heads, one to three threads, scores small and
// large (std 3: peaked softmaxes, exponents far below 0): every output
// within 2e-5 of the reference, relative to the values' scale.
func TestEncoderMatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ n, heads, d, threads int }{
		{1, 1, 64, 1}, {7, 2, 16, 2}, {49, 3, 32, 3}, {96, 6, 64, 2}, {301, 4, 64, 2},
	} {
		for _, std := range []float64{0.5, 3} {
			S := c.heads * c.d
			q, k, v := random(r, c.n*S, std), random(r, c.n*S, std), random(r, c.n*S, 1)
			out := make([]float32, c.n*S)
			if err := Attention(q, k, v, out, c.n, c.heads, c.d, c.threads); err != nil {
				t.Fatal(err)
			}
			want := reference(q, k, v, c.n, c.heads, c.d)
			worst := 0.0
			for i := range want {
				worst = max(worst, math.Abs(float64(out[i])-want[i]))
			}
			if worst > 2e-5 {
				t.Errorf("n %d heads %d d %d std %v: worst difference %.3g", c.n, c.heads, c.d, std, worst)
			}
		}
	}
}

// TestEncoderRefuses: head widths the tiles do not take and short
// tensors are errors, not reads past the end.
func TestEncoderRefuses(t *testing.T) {
	x := make([]float32, 64)
	for _, c := range []struct{ n, heads, d int }{{1, 1, 24}, {2, 1, 64}, {0, 1, 64}, {1, 0, 64}} {
		if err := Attention(x, x, x, x, c.n, c.heads, c.d, 1); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

func BenchmarkEncoderTiny(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, heads, d = 1500, 6, 64
	q, k, v := random(r, n*heads*d, 1), random(r, n*heads*d, 1), random(r, n*heads*d, 1)
	out := make([]float32, n*heads*d)
	for b.Loop() {
		if err := Attention(q, k, v, out, n, heads, d, 2); err != nil {
			b.Fatal(err)
		}
	}
	flop := 4.0 * n * n * heads * d
	b.ReportMetric(flop*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
