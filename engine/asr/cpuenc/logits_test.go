package cpuenc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLogitsMatchFloat64: the projection against float64 sums, F32 and
// F16 weights (the F16 reference rounds the weights as the kernel stores
// them), for 1 to 6 columns (the four-column and one-column kernels and
// both together), an odd vocabulary (a row left after the pairs) and one
// to three threads.
func TestLogitsMatchFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const V, K = 1001, 64
	w := random(r, V*K, 0.1)
	for _, f16 := range []bool{false, true} {
		l, err := NewLogits(w, V, K, f16)
		if err != nil {
			t.Fatal(err)
		}
		ref := w
		if f16 {
			// The weights as half precision holds them.
			h := make([]uint16, len(w))
			copy(h, l.w16)
			ref = make([]float32, len(w))
			for i, b := range h {
				ref[i] = half(b)
			}
			if math.Abs(float64(ref[5]-w[5])) > 1e-3*math.Abs(float64(w[5]))+1e-7 {
				t.Fatalf("f16 %v from %v", ref[5], w[5])
			}
		}
		for cols := 1; cols <= 6; cols++ {
			for _, threads := range []int{1, 3} {
				x := random(r, cols*K, 1)
				out := make([]float32, cols*V)
				if err := l.Project(x, cols, out, threads); err != nil {
					t.Fatal(err)
				}
				for c := range cols {
					for v := range V {
						s := 0.0
						for k := range K {
							s += float64(x[c*K+k]) * float64(ref[v*K+k])
						}
						if d := math.Abs(float64(out[c*V+v]) - s); d > 1e-5 {
							t.Fatalf("f16 %v cols %d threads %d: column %d row %d is %v, want %v", f16, cols, threads, c, v, out[c*V+v], s)
						}
					}
				}
			}
		}
	}
	if _, err := NewLogits(w[:V*K-1], V, K, false); err == nil {
		t.Error("a short embedding was taken")
	}
	if _, err := NewLogits(make([]float32, 12), 2, 6, false); err == nil {
		t.Error("K 6 was taken")
	}
}

// half is IEEE half precision bits as a float32 (normal numbers and 0).
func half(b uint16) float32 {
	sign := uint32(b>>15) << 31
	exp := uint32(b>>10) & 0x1f
	frac := uint32(b) & 0x3ff
	if exp == 0 {
		return math.Float32frombits(sign) + float32(frac)*float32(math.Pow(2, -24))*float32(1-2*float64(b>>15))
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}

func BenchmarkLogitsTiny(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const V, K = 51865, 384
	l, err := NewLogits(random(r, V*K, 0.05), V, K, true)
	if err != nil {
		b.Fatal(err)
	}
	for _, cols := range []int{1, 2, 3, 4} {
		x, out := random(r, cols*K, 1), make([]float32, cols*V)
		b.Run(string(rune('0'+cols)), func(b *testing.B) {
			for b.Loop() {
				if err := l.Project(x, cols, out, benchThreads); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var benchThreads = 2

// TestLogNormaliser: against float64 over 51,865 values (a vocabulary),
// a few, -Inf entries (suppressed tokens), and an empty slice.
func TestLogNormaliser(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 7, 64, 130, 51865} {
		l := random(r, n, 4)
		for i := 0; i < n; i += 3 {
			l[i] = float32(math.Inf(-1))
		}
		l[n-1] = 2
		mx := math.Inf(-1)
		for _, v := range l {
			mx = math.Max(mx, float64(v))
		}
		z := 0.0
		for _, v := range l {
			z += math.Exp(float64(v) - mx)
		}
		want := mx + math.Log(z)
		if got := LogNormaliser(l); math.Abs(got-want) > 1e-6 {
			t.Errorf("n %d: %v, want %v", n, got, want)
		}
	}
	if got := LogNormaliser(nil); !math.IsInf(got, -1) {
		t.Errorf("empty: %v", got)
	}
}
