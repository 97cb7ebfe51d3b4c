package cpuenc

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// refDecoder is Whisper's decoder in float64, one row at a time, with its
// own caches: the reference Decoder is held to.
type refDecoder struct {
	c      DecoderConfig
	F      int
	lin    [][8][]float32 // per layer, the projections' weights
	bias   [][8][]float32
	norms  [][3]Norm
	final  Norm
	emb    []float32
	pos    []float32
	crossK [][][]float64 // [slot][layer] → A × S
	crossV [][][]float64
	selfK  map[[3]int][]float64 // (slot, seq, layer) → T × S
	selfV  map[[3]int][]float64
}

func newRefDecoder(r *rand.Rand, c DecoderConfig, F int) *refDecoder {
	S := c.State
	d := &refDecoder{c: c, F: F, selfK: map[[3]int][]float64{}, selfV: map[[3]int][]float64{}}
	for range c.Layers {
		var w, b [8][]float32
		for p := range 8 {
			N, K := S, S
			switch p {
			case DecFC1:
				N = F
			case DecFC2:
				K = F
			}
			w[p] = random(r, N*K, 1/math.Sqrt(float64(K)))
			if p != DecK {
				b[p] = random(r, N, 0.1)
			}
		}
		var n [3]Norm
		for i := range n {
			n[i] = Norm{G: random(r, S, 0.3), B: random(r, S, 0.1)}
			for j := range n[i].G {
				n[i].G[j]++
			}
		}
		d.lin, d.bias, d.norms = append(d.lin, w), append(d.bias, b), append(d.norms, n)
	}
	d.final = Norm{G: random(r, S, 0.3), B: random(r, S, 0.1)}
	d.emb = random(r, c.Vocab*S, 1)
	d.pos = random(r, c.TextCtx*S, 0.3)
	d.crossK = make([][][]float64, c.Slots)
	d.crossV = make([][][]float64, c.Slots)
	return d
}

// load sets the weights into dec, rounded as F16 holds them when the
// decoder keeps F16 (the reference then uses the rounded weights).
func (d *refDecoder) load(t *testing.T, dec *Decoder) {
	t.Helper()
	round := func(x []float32) []float32 {
		if !d.c.F16 || x == nil {
			return x
		}
		out := make([]float32, len(x))
		for i, v := range x {
			out[i] = roundHalf(v)
		}
		return out
	}
	S := d.c.State
	for l := range d.c.Layers {
		for p := range 8 {
			N, K := S, S
			switch p {
			case DecFC1:
				N = d.F
			case DecFC2:
				K = d.F
			}
			if err := dec.SetLinear(l, p, d.lin[l][p], d.bias[l][p], N, K); err != nil {
				t.Fatal(err)
			}
			d.lin[l][p] = round(d.lin[l][p])
		}
		for i := range 3 {
			if err := dec.SetNorm(l, i, d.norms[l][i].G, d.norms[l][i].B); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := dec.SetNorm(-1, 0, d.final.G, d.final.B); err != nil {
		t.Fatal(err)
	}
	if err := dec.SetEmbedding(d.emb, d.pos); err != nil {
		t.Fatal(err)
	}
	d.emb = round(d.emb)
}

// roundHalf is x rounded to the nearest half-precision value (normal
// range).
func roundHalf(x float32) float32 {
	if x == 0 {
		return 0
	}
	e := math.Floor(math.Log2(math.Abs(float64(x))))
	q := math.Pow(2, e-10)
	return float32(math.RoundToEven(float64(x)/q) * q)
}

// setCross gives both a slot's window: random keys and values.
func (d *refDecoder) setCross(t *testing.T, r *rand.Rand, dec *Decoder, slot, A int) {
	t.Helper()
	S := d.c.State
	d.crossK[slot], d.crossV[slot] = make([][]float64, d.c.Layers), make([][]float64, d.c.Layers)
	for l := range d.c.Layers {
		k, v := random(r, A*S, 1), random(r, A*S, 1)
		if err := dec.SetCross(slot, l, k, v, A); err != nil {
			t.Fatal(err)
		}
		if d.c.F16 {
			for i := range k {
				k[i], v[i] = roundHalf(k[i]), roundHalf(v[i])
			}
		}
		d.crossK[slot][l], d.crossV[slot][l] = to64(k), to64(v)
	}
}

// attend64 is softmax(k·q/√dh)·v over the first n rows of k and v (rows
// of S, head h).
func attend64(q []float64, k, v []float64, n, S, h, dh int) []float64 {
	sc := make([]float64, n)
	mx := math.Inf(-1)
	for j := range n {
		s := 0.0
		for c := range dh {
			s += q[h*dh+c] * k[j*S+h*dh+c]
		}
		sc[j] = s / math.Sqrt(float64(dh))
		mx = max(mx, sc[j])
	}
	sum := 0.0
	for j := range sc {
		sc[j] = math.Exp(sc[j] - mx)
		sum += sc[j]
	}
	out := make([]float64, dh)
	for j := range n {
		for c := range dh {
			out[c] += sc[j] / sum * v[j*S+h*dh+c]
		}
	}
	return out
}

// row runs one row and returns its logits.
func (d *refDecoder) row(tok, slot, seq, pos int) []float64 {
	c, S := d.c, d.c.State
	dh := S / c.Heads
	x := make([]float64, S)
	for i := range S {
		x[i] = float64(d.emb[tok*S+i]) + float64(d.pos[pos*S+i])
	}
	add := func(y []float64) {
		for i := range x {
			x[i] += y[i]
		}
	}
	for l := range c.Layers {
		w, b := d.lin[l], d.bias[l]
		h := refNorm(x, S, d.norms[l][0], float64(c.Eps))
		q := refLinear(h, w[DecQ], b[DecQ], 1, S, S)
		key := [3]int{slot, seq, l}
		if d.selfK[key] == nil {
			d.selfK[key], d.selfV[key] = make([]float64, c.TextCtx*S), make([]float64, c.TextCtx*S)
		}
		copy(d.selfK[key][pos*S:], refLinear(h, w[DecK], nil, 1, S, S))
		copy(d.selfV[key][pos*S:], refLinear(h, w[DecV], b[DecV], 1, S, S))
		att := make([]float64, S)
		for hh := range c.Heads {
			copy(att[hh*dh:], attend64(q, d.selfK[key], d.selfV[key], pos+1, S, hh, dh))
		}
		add(refLinear(att, w[DecO], b[DecO], 1, S, S))
		h = refNorm(x, S, d.norms[l][1], float64(c.Eps))
		q = refLinear(h, w[DecCrossQ], b[DecCrossQ], 1, S, S)
		A := len(d.crossK[slot][l]) / S
		for hh := range c.Heads {
			copy(att[hh*dh:], attend64(q, d.crossK[slot][l], d.crossV[slot][l], A, S, hh, dh))
		}
		add(refLinear(att, w[DecCrossO], b[DecCrossO], 1, S, S))
		h = refNorm(x, S, d.norms[l][2], float64(c.Eps))
		f := refLinear(h, w[DecFC1], b[DecFC1], 1, d.F, S)
		for i, v := range f {
			f[i] = 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
		}
		add(refLinear(f, w[DecFC2], b[DecFC2], 1, S, d.F))
	}
	h := refNorm(x, S, d.final, float64(c.Eps))
	return refLinear(h, d.emb, nil, 1, c.Vocab, S)
}

// reorder copies sequence parents[i]'s caches to sequence i, as beams.
func (d *refDecoder) reorder(slot int, parents []int32) {
	for l := range d.c.Layers {
		var ks, vs [][]float64
		for _, p := range parents {
			ks = append(ks, append([]float64(nil), d.selfK[[3]int{slot, int(p), l}]...))
			vs = append(vs, append([]float64(nil), d.selfV[[3]int{slot, int(p), l}]...))
		}
		for i := range parents {
			d.selfK[[3]int{slot, i, l}], d.selfV[[3]int{slot, i, l}] = ks[i], vs[i]
		}
	}
}

// TestDecoderMatchesFloat64: the decoder (heads 64 wide, as Whisper's)
// against a float64 one, F32 and F16 (its weights and caches rounded as
// F16 holds them; its products round their inputs too, 2^-11 relative),
// one thread and three: a
// prompt of several tokens on two sequences of a slot (causal), a step of
// rows from two slots with windows of different lengths, a beam reorder,
// and a prompt whose logits are wanted for some rows only.
func TestDecoderMatchesFloat64(t *testing.T) {
	for _, f16 := range []bool{false, true} {
		for _, threads := range []int{1, 3} {
			tol := 2e-4
			if f16 {
				tol = 2e-2
			}
			r := rand.New(rand.NewPCG(7, uint64(threads)))
			c := DecoderConfig{State: 128, Heads: 2, Layers: 2, Vocab: 101, TextCtx: 12, AudioCtx: 24, Slots: 2, Beams: 3, F16: f16, Eps: 1e-5, Threads: threads}
			dec, err := NewDecoder(c)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(dec.Close)
			ref := newRefDecoder(r, c, 256)
			ref.load(t, dec)
			out := make([]float32, 8*c.Vocab)
			check := func(what string, rows Tokens, want []int32) {
				t.Helper()
				if err := dec.Forward(rows, want, out); err != nil {
					t.Fatal(err)
				}
				var got []float32
				var exp []float64
				all := make([][]float64, len(rows.Tok))
				for i := range rows.Tok {
					all[i] = ref.row(int(rows.Tok[i]), int(rows.Slot[i]), int(rows.Seq[i]), int(rows.Pos[i]))
				}
				for i, w := range want {
					got = append(got, out[i*c.Vocab:(i+1)*c.Vocab]...)
					exp = append(exp, all[w]...)
				}
				scale := 0.0
				for _, v := range exp {
					scale = max(scale, math.Abs(v))
				}
				for i := range exp {
					if d := math.Abs(float64(got[i])-exp[i]) / scale; d > tol || math.IsNaN(float64(got[i])) {
						t.Fatalf("f16 %v, %d threads, %s: logit %d is %v, want %v (%.2g of the largest)", f16, threads, what, i, got[i], exp[i], d)
					}
				}
			}
			if err := dec.Forward(Tokens{Tok: []int32{1}, Slot: []int32{0}, Seq: []int32{0}, Pos: []int32{0}}, []int32{0}, out); err == nil {
				t.Fatal("a slot with no window decoded")
			}
			ref.setCross(t, r, dec, 0, 24)
			ref.setCross(t, r, dec, 1, 17)
			// Prompts: slot 0's sequences 0 and 1, three tokens each, and
			// slot 1's sequence 0, two tokens.
			check("prompt", Tokens{
				Tok:  []int32{5, 9, 13, 5, 9, 14, 7, 8},
				Slot: []int32{0, 0, 0, 0, 0, 0, 1, 1},
				Seq:  []int32{0, 0, 0, 1, 1, 1, 0, 0},
				Pos:  []int32{0, 1, 2, 0, 1, 2, 0, 1},
			}, []int32{0, 1, 2, 3, 4, 5, 6, 7})
			check("step", Tokens{Tok: []int32{20, 21, 30}, Slot: []int32{0, 0, 1}, Seq: []int32{0, 1, 0}, Pos: []int32{3, 3, 2}}, []int32{0, 1, 2})
			parents := []int32{1, 1}
			if err := dec.Reorder(0, parents, 4); err != nil {
				t.Fatal(err)
			}
			ref.reorder(0, parents)
			check("after a reorder", Tokens{Tok: []int32{40, 41}, Slot: []int32{0, 0}, Seq: []int32{0, 1}, Pos: []int32{4, 4}}, []int32{1, 0})
			check("some rows", Tokens{Tok: []int32{3, 4, 6}, Slot: []int32{1, 1, 1}, Seq: []int32{1, 1, 1}, Pos: []int32{0, 1, 2}}, []int32{2})
		}
	}
}

// TestDecoderRefusesBadInput: shapes and rows out of range, and a
// forward before the weights are set, are errors, not memory faults.
func TestDecoderRefusesBadInput(t *testing.T) {
	if _, err := NewDecoder(DecoderConfig{State: 60, Heads: 2, Layers: 1, Vocab: 5, TextCtx: 4, AudioCtx: 4, Slots: 1, Beams: 1}); err == nil {
		t.Error("a head width of 30 was taken")
	}
	c := DecoderConfig{State: 32, Heads: 2, Layers: 1, Vocab: 5, TextCtx: 4, AudioCtx: 4, Slots: 1, Beams: 2, Threads: 2}
	dec, err := NewDecoder(c)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	if err := dec.SetLinear(0, DecQ, make([]float32, 32*16), nil, 16, 32); err == nil {
		t.Error("a 16 × 32 query projection was taken")
	}
	if err := dec.SetLinear(0, DecFC1, make([]float32, 64*32), nil, 64, 32); err != nil {
		t.Fatal(err)
	}
	if err := dec.SetLinear(0, DecFC2, make([]float32, 32*48), nil, 32, 48); err == nil {
		t.Error("an MLP of 64 then 48 was taken")
	}
	if err := dec.SetCross(0, 0, make([]float32, 5*32), make([]float32, 5*32), 5); err == nil {
		t.Error("5 audio positions of 4 were taken")
	}
	if err := dec.SetCross(0, 0, make([]float32, 4*32), make([]float32, 4*32), 4); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, 2*c.Vocab)
	for _, rows := range []Tokens{
		{Tok: []int32{5}, Slot: []int32{0}, Seq: []int32{0}, Pos: []int32{0}},
		{Tok: []int32{1}, Slot: []int32{1}, Seq: []int32{0}, Pos: []int32{0}},
		{Tok: []int32{1}, Slot: []int32{0}, Seq: []int32{2}, Pos: []int32{0}},
		{Tok: []int32{1}, Slot: []int32{0}, Seq: []int32{0}, Pos: []int32{4}},
		{Tok: []int32{1}, Slot: []int32{0}, Seq: []int32{0}},
	} {
		if err := dec.Forward(rows, []int32{0}, out); err == nil {
			t.Errorf("rows %+v were taken", rows)
		}
	}
	if err := dec.Forward(Tokens{Tok: []int32{1}, Slot: []int32{0}, Seq: []int32{0}, Pos: []int32{0}}, []int32{1}, out); err == nil {
		t.Error("a wanted row past the rows was taken")
	}
	// Good rows, but only the MLP's first projection is set: an error,
	// not a read through a missing weight.
	if err := dec.Forward(Tokens{Tok: []int32{1}, Slot: []int32{0}, Seq: []int32{0}, Pos: []int32{0}}, []int32{0}, out); err == nil {
		t.Error("a decoder without its weights ran")
	}
	if err := dec.Reorder(0, []int32{2}, 1); err == nil {
		t.Error("a reorder from sequence 2 of 2 was taken")
	}
}

// BenchmarkDecoderStep is one greedy step (one sequence, position 100,
// a 1,500-position window) in Whisper's shapes with random F16 weights:
// the whole of a CPU step but the logit filters. BOXD_BENCH_THREADS sets
// the threads (default 2).
func BenchmarkDecoderStep(b *testing.B) {
	threads := 2
	if s := os.Getenv("BOXD_BENCH_THREADS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			threads = n
		}
	}
	for _, s := range []struct {
		name           string
		S, H, L, beams int
	}{{"tiny", 384, 6, 4, 1}, {"base", 512, 8, 6, 1}, {"small", 768, 12, 12, 1}, {"tiny-5", 384, 6, 4, 5}} {
		b.Run(s.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			c := DecoderConfig{State: s.S, Heads: s.H, Layers: s.L, Vocab: 51865, TextCtx: 448, AudioCtx: 1500, Slots: 1, Beams: 5, F16: true, Eps: 1e-5, Threads: threads}
			dec, err := NewDecoder(c)
			if err != nil {
				b.Fatal(err)
			}
			defer dec.Close()
			for l := range s.L {
				for p := range 8 {
					N, K := s.S, s.S
					switch p {
					case DecFC1:
						N = 4 * s.S
					case DecFC2:
						K = 4 * s.S
					}
					if err := dec.SetLinear(l, p, random(r, N*K, 0.05), random(r, N, 0.1), N, K); err != nil {
						b.Fatal(err)
					}
				}
				for i := range 3 {
					if err := dec.SetNorm(l, i, random(r, s.S, 1), random(r, s.S, 0.1)); err != nil {
						b.Fatal(err)
					}
				}
				if err := dec.SetCross(0, l, random(r, 1500*s.S, 1), random(r, 1500*s.S, 1), 1500); err != nil {
					b.Fatal(err)
				}
			}
			if err := dec.SetNorm(-1, 0, random(r, s.S, 1), random(r, s.S, 0.1)); err != nil {
				b.Fatal(err)
			}
			if err := dec.SetEmbedding(random(r, 51865*s.S, 0.05), random(r, 448*s.S, 0.1)); err != nil {
				b.Fatal(err)
			}
			var t Tokens
			var want []int32
			for i := range s.beams {
				t.Tok, t.Slot, t.Seq, t.Pos = append(t.Tok, int32(400+i)), append(t.Slot, 0), append(t.Seq, int32(i)), append(t.Pos, 100)
				want = append(want, int32(i))
			}
			out := make([]float32, s.beams*51865)
			b.ResetTimer()
			for range b.N {
				if err := dec.Forward(t, want, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/step")
		})
	}
}

// TestDecoderCloseStopsItsThreads: each decoder starts Threads-1 threads
// of its own; Close stops them (ten decoders of 4 threads would leave 30).
func TestDecoderCloseStopsItsThreads(t *testing.T) {
	threads := func() int {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			t.Skipf("no /proc: %v", err)
		}
		return len(ents)
	}
	before := threads()
	c := DecoderConfig{State: 32, Heads: 2, Layers: 1, Vocab: 5, TextCtx: 4, AudioCtx: 4, Slots: 1, Beams: 1, Threads: 4}
	var decs []*Decoder
	for range 10 {
		dec, err := NewDecoder(c)
		if err != nil {
			t.Fatal(err)
		}
		decs = append(decs, dec)
	}
	if n := threads(); n < before+30 {
		t.Fatalf("%d threads with 10 decoders open, %d before: the pool did not start its workers", n, before)
	}
	for _, d := range decs {
		d.Close()
		d.Close() // twice is harmless
	}
	if n := threads(); n > before+5 {
		t.Errorf("%d threads after Close, %d before", n, before)
	}
}
