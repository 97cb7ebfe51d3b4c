package cpuenc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refLinear is x·Wᵀ + b in float64.
func refLinear(x []float64, w, b []float32, n, N, K int) []float64 {
	out := make([]float64, n*N)
	for i := range n {
		for o := range N {
			s := 0.0
			if b != nil {
				s = float64(b[o])
			}
			for k := range K {
				s += x[i*K+k] * float64(w[o*K+k])
			}
			out[i*N+o] = s
		}
	}
	return out
}

func refNorm(x []float64, S int, nm Norm, eps float64) []float64 {
	out := make([]float64, len(x))
	for i := 0; i < len(x); i += S {
		mean, v := 0.0, 0.0
		for _, y := range x[i : i+S] {
			mean += y
		}
		mean /= float64(S)
		for _, y := range x[i : i+S] {
			v += (y - mean) * (y - mean)
		}
		sc := 1 / math.Sqrt(v/float64(S)+eps)
		for j := range S {
			out[i+j] = (x[i+j]-mean)*sc*float64(nm.G[j]) + float64(nm.B[j])
		}
	}
	return out
}

func to64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// refBlock is one encoder block in float64.
func refBlock(x []float64, n, heads int, w refWeights, eps float64) []float64 {
	S := len(x) / n
	d := S / heads
	h := refNorm(x, S, w.ln1, eps)
	q, k, v := refLinear(h, w.q, w.qb, n, S, S), refLinear(h, w.k, nil, n, S, S), refLinear(h, w.v, w.vb, n, S, S)
	a := make([]float64, n*S)
	s := make([]float64, n)
	for hd := range heads {
		for i := range n {
			m := math.Inf(-1)
			for j := range n {
				dot := 0.0
				for c := range d {
					dot += q[i*S+hd*d+c] * k[j*S+hd*d+c]
				}
				s[j] = dot / math.Sqrt(float64(d))
				m = max(m, s[j])
			}
			sum := 0.0
			for j := range n {
				s[j] = math.Exp(s[j] - m)
				sum += s[j]
			}
			for c := range d {
				acc := 0.0
				for j := range n {
					acc += s[j] * v[j*S+hd*d+c]
				}
				a[i*S+hd*d+c] = acc / sum
			}
		}
	}
	o := refLinear(a, w.o, w.ob, n, S, S)
	y := make([]float64, n*S)
	for i := range y {
		y[i] = x[i] + o[i]
	}
	h = refNorm(y, S, w.ln2, eps)
	f := refLinear(h, w.f1, w.f1b, n, 4*S, S)
	for i, z := range f {
		f[i] = 0.5 * z * (1 + math.Erf(z/math.Sqrt2))
	}
	f2 := refLinear(f, w.f2, w.f2b, n, S, 4*S)
	for i := range y {
		y[i] += f2[i]
	}
	return y
}

type refWeights struct {
	ln1, ln2             Norm
	q, k, v, o, f1, f2   []float32
	qb, vb, ob, f1b, f2b []float32
}

// TestEncoderBlocksMatchFloat64: two blocks (width 128, 2 heads, 53
// positions: no block of rows or tile filled evenly) against float64, with
// one thread and three: within 1e-4 of the largest output.
func TestEncoderBlocksMatchFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n, S, heads = 53, 128, 2
	ones := func(k int) []float32 {
		x := random(r, k, 0.1)
		for i := range x {
			x[i] += 1
		}
		return x
	}
	var ws []refWeights
	e := &Encoder{Heads: heads, Eps: 1e-5}
	for range 2 {
		std := 1 / math.Sqrt(S)
		w := refWeights{ln1: Norm{ones(S), random(r, S, 0.1)}, ln2: Norm{ones(S), random(r, S, 0.1)},
			q: random(r, S*S, std), k: random(r, S*S, std), v: random(r, S*S, std), o: random(r, S*S, std),
			f1: random(r, 4*S*S, std), f2: random(r, 4*S*S, std/2),
			qb: random(r, S, 0.1), vb: random(r, S, 0.1), ob: random(r, S, 0.1), f1b: random(r, 4*S, 0.1), f2b: random(r, S, 0.1)}
		ws = append(ws, w)
		mk := func(wt, b []float32, N, K int) *Linear {
			l, err := NewLinear(wt, b, N, K)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		e.Layers = append(e.Layers, Layer{AttnLN: w.ln1, MLPLN: w.ln2, Q: mk(w.q, w.qb, S, S), K: mk(w.k, nil, S, S), V: mk(w.v, w.vb, S, S),
			O: mk(w.o, w.ob, S, S), FC1: mk(w.f1, w.f1b, 4*S, S), FC2: mk(w.f2, w.f2b, S, 4*S)})
	}
	x0 := random(r, n*S, 1)
	want := to64(x0)
	for _, w := range ws {
		want = refBlock(want, n, heads, w, 1e-5)
	}
	scale := 0.0
	for _, v := range want {
		scale = max(scale, math.Abs(v))
	}
	for _, threads := range []int{1, 3} {
		x := append([]float32(nil), x0...)
		if err := e.Forward(x, n, threads); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i := range x {
			worst = max(worst, math.Abs(float64(x[i])-want[i]))
		}
		if worst/scale > 1e-4 {
			t.Errorf("%d threads: worst difference %.3g of %.3g", threads, worst, scale)
		}
	}
	if err := e.Forward(make([]float32, 10), n, 1); err == nil {
		t.Error("an input of the wrong length ran")
	}
	if _, err := NewLinear(make([]float32, 24*4), nil, 24, 4); err == nil {
		t.Error("24 outputs (not a multiple of 16) packed")
	}
}

func BenchmarkLinearTiny(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, S = 1500, 384
	l, err := NewLinear(random(r, 4*S*S, 0.05), random(r, 4*S, 0.1), 4*S, S)
	if err != nil {
		b.Fatal(err)
	}
	x, y := random(r, n*S, 1), make([]float32, n*4*S)
	for b.Loop() {
		for i := 0; i < n; i += Rows {
			l.rows(x[i*S:], y[i*4*S:], 0, min(Rows, n-i), set)
		}
	}
	b.ReportMetric(2.0*n*S*4*S*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
