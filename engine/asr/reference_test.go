package asr

import (
	"context"
	"math"
	"strconv"
	"sync"
	"testing"

	"boxd/engine/asr/frontend"
	"boxd/engine/models/gguf"
	"boxd/engine/models/testmodels"
	"boxd/engine/models/whisperbin"
)

// refModel is a plain float64 Whisper, written for tests: slow and
// obvious, sharing nothing with the ggml graphs but the weights.
type refModel struct {
	hp HParams
	w  map[string][]float64
	// dims of each tensor, ggml order
	dims map[string][]int
}

func loadRef(t *testing.T, path string) *refModel {
	t.Helper()
	m, err := whisperbin.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := m.HParams
	r := &refModel{hp: HParams{NVocab: int(h.NVocab), NAudioCtx: int(h.NAudioCtx), NAudioState: int(h.NAudioState), NAudioHead: int(h.NAudioHead),
		NAudioLayer: int(h.NAudioLayer), NTextCtx: int(h.NTextCtx), NTextState: int(h.NTextState), NTextHead: int(h.NTextHead), NTextLayer: int(h.NTextLayer), NMels: int(h.NMels)},
		w: map[string][]float64{}, dims: map[string][]int{}}
	for _, tn := range m.Tensors {
		n := int(tn.Elements())
		v := make([]float64, n)
		for i := range n {
			switch tn.Type {
			case 0:
				v[i] = float64(math.Float32frombits(uint32(tn.Data[4*i]) | uint32(tn.Data[4*i+1])<<8 | uint32(tn.Data[4*i+2])<<16 | uint32(tn.Data[4*i+3])<<24))
			case 1:
				v[i] = float64(gguf.HalfToFloat(uint16(tn.Data[2*i]) | uint16(tn.Data[2*i+1])<<8))
			default:
				t.Fatalf("reference: type %d", tn.Type)
			}
		}
		r.w[tn.Name] = v
		d := make([]int, len(tn.Dims))
		for i, x := range tn.Dims {
			d[i] = int(x)
		}
		r.dims[tn.Name] = d
	}
	return r
}

// linear: y[o] = b[o] + sum_i W[o][i] x[i]; W stored row o at o*in.
func (r *refModel) linear(name string, x []float64, bias bool) []float64 {
	w := r.w[name+".weight"]
	in := r.dims[name+".weight"][0]
	out := r.dims[name+".weight"][1]
	y := make([]float64, out)
	for o := range out {
		var s float64
		row := w[o*in : (o+1)*in]
		for i, xi := range x {
			s += row[i] * xi
		}
		if bias {
			s += r.w[name+".bias"][o]
		}
		y[o] = s
	}
	return y
}

func (r *refModel) layerNorm(name string, x []float64) []float64 {
	var mean, v float64
	for _, a := range x {
		mean += a
	}
	mean /= float64(len(x))
	for _, a := range x {
		v += (a - mean) * (a - mean)
	}
	v /= float64(len(x))
	g, b := r.w[name+".weight"], r.w[name+".bias"]
	y := make([]float64, len(x))
	for i, a := range x {
		y[i] = (a-mean)/math.Sqrt(v+1e-5)*g[i] + b[i]
	}
	return y
}

func gelu(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

// mha: attention of queries over keys/values (rows), heads h, optional
// causal limit: query i sees keys 0..limit(i).
func mha(q, k, v [][]float64, h int, limit func(i int) int) [][]float64 {
	S := len(q[0])
	d := S / h
	out := make([][]float64, len(q))
	for i := range q {
		out[i] = make([]float64, S)
		last := len(k) - 1
		if limit != nil {
			last = limit(i)
		}
		for hd := range h {
			lo := hd * d
			scores := make([]float64, last+1)
			mx := math.Inf(-1)
			for j := 0; j <= last; j++ {
				var s float64
				for c := range d {
					s += q[i][lo+c] * k[j][lo+c]
				}
				scores[j] = s / math.Sqrt(float64(d))
				mx = math.Max(mx, scores[j])
			}
			var z float64
			for j := range scores {
				scores[j] = math.Exp(scores[j] - mx)
				z += scores[j]
			}
			for j := range scores {
				p := scores[j] / z
				for c := range d {
					out[i][lo+c] += p * v[j][lo+c]
				}
			}
		}
	}
	return out
}

func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	ch := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				f(i)
			}
		}()
	}
	for i := range n {
		ch <- i
	}
	close(ch)
	wg.Wait()
}

// encode: mel [bin][frame] (2A frames, 3000 for a whole window) -> [A][S].
func (r *refModel) encode(mel *frontend.Spectrogram) [][]float64 {
	hp := r.hp
	S, M := hp.NAudioState, hp.NMels
	conv := func(name string, in [][]float64, cin, stride int) [][]float64 {
		// in: [cin][T]; W ne (3, cin, S): W[o][i][k] at (o*cin+i)*3+k
		T := len(in[0])
		outT := (T+2-3)/stride + 1
		w, b := r.w[name+".weight"], r.w[name+".bias"]
		out := make([][]float64, S)
		parallel(S, func(o int) {
			out[o] = make([]float64, outT)
			for t := range outT {
				s := b[o]
				for i := range cin {
					for k := range 3 {
						src := t*stride + k - 1
						if src >= 0 && src < T {
							s += w[(o*cin+i)*3+k] * in[i][src]
						}
					}
				}
				out[o][t] = gelu(s)
			}
		})
		return out
	}
	in := make([][]float64, M)
	for b := range M {
		in[b] = make([]float64, mel.Frames)
		for f := range mel.Frames {
			in[b][f] = float64(mel.At(b, f))
		}
	}
	c1 := conv("encoder.conv1", in, M, 1)
	c2 := conv("encoder.conv2", c1, S, 2)
	A := mel.Frames / 2
	x := make([][]float64, A)
	pos := r.w["encoder.positional_embedding"]
	for t := range A {
		x[t] = make([]float64, S)
		for s := range S {
			x[t][s] = c2[s][t] + pos[t*S+s]
		}
	}
	for l := range hp.NAudioLayer {
		p := "encoder.blocks." + itoa(l) + "."
		q, k, v := make([][]float64, A), make([][]float64, A), make([][]float64, A)
		parallel(A, func(t int) {
			h := r.layerNorm(p+"attn_ln", x[t])
			q[t], k[t], v[t] = r.linear(p+"attn.query", h, true), r.linear(p+"attn.key", h, false), r.linear(p+"attn.value", h, true)
		})
		att := make([][]float64, A)
		parallel(A, func(t int) { att[t] = mha(q[t:t+1], k, v, hp.NAudioHead, nil)[0] })
		parallel(A, func(t int) {
			o := r.linear(p+"attn.out", att[t], true)
			for s := range S {
				x[t][s] += o[s]
			}
			h := r.layerNorm(p+"mlp_ln", x[t])
			m := r.linear(p+"mlp.0", h, true)
			for i := range m {
				m[i] = gelu(m[i])
			}
			o = r.linear(p+"mlp.2", m, true)
			for s := range S {
				x[t][s] += o[s]
			}
		})
	}
	parallel(A, func(t int) { x[t] = r.layerNorm("encoder.ln_post", x[t]) })
	return x
}

// refDecoder decodes one sequence with a key/value cache.
type refDecoder struct {
	r              *refModel
	crossK, crossV [][][]float64 // [layer][A][S]
	selfK, selfV   [][][]float64 // [layer][pos][S]
}

func (r *refModel) decoder(enc [][]float64) *refDecoder {
	d := &refDecoder{r: r}
	for l := range r.hp.NTextLayer {
		p := "decoder.blocks." + itoa(l) + ".cross_attn."
		k, v := make([][]float64, len(enc)), make([][]float64, len(enc))
		parallel(len(enc), func(t int) { k[t], v[t] = r.linear(p+"key", enc[t], false), r.linear(p+"value", enc[t], true) })
		d.crossK, d.crossV = append(d.crossK, k), append(d.crossV, v)
		d.selfK, d.selfV = append(d.selfK, nil), append(d.selfV, nil)
	}
	return d
}

// step feeds one token and returns the logits.
func (d *refDecoder) step(tok int32) []float64 {
	r := d.r
	S := r.hp.NTextState
	pos := len(d.selfK[0])
	x := make([]float64, S)
	emb, pe := r.w["decoder.token_embedding.weight"], r.w["decoder.positional_embedding"]
	for s := range S {
		x[s] = emb[int(tok)*S+s] + pe[pos*S+s]
	}
	for l := range r.hp.NTextLayer {
		p := "decoder.blocks." + itoa(l) + "."
		h := r.layerNorm(p+"attn_ln", x)
		q := r.linear(p+"attn.query", h, true)
		d.selfK[l] = append(d.selfK[l], r.linear(p+"attn.key", h, false))
		d.selfV[l] = append(d.selfV[l], r.linear(p+"attn.value", h, true))
		o := r.linear(p+"attn.out", mha([][]float64{q}, d.selfK[l], d.selfV[l], r.hp.NTextHead, nil)[0], true)
		for s := range S {
			x[s] += o[s]
		}
		h = r.layerNorm(p+"cross_attn_ln", x)
		q = r.linear(p+"cross_attn.query", h, true)
		o = r.linear(p+"cross_attn.out", mha([][]float64{q}, d.crossK[l], d.crossV[l], r.hp.NTextHead, nil)[0], true)
		for s := range S {
			x[s] += o[s]
		}
		h = r.layerNorm(p+"mlp_ln", x)
		m := r.linear(p+"mlp.0", h, true)
		for i := range m {
			m[i] = gelu(m[i])
		}
		o = r.linear(p+"mlp.2", m, true)
		for s := range S {
			x[s] += o[s]
		}
	}
	x = r.layerNorm("decoder.ln", x)
	V := r.hp.NVocab
	logits := make([]float64, V)
	for v := range V {
		var s float64
		row := emb[v*S : (v+1)*S]
		for i := range S {
			s += row[i] * x[i]
		}
		logits[v] = s
	}
	return logits
}

func itoa(i int) string { return strconv.Itoa(i) }

// maxRel is max|a-b| / max|b|.
func maxRel(a []float32, b []float64) float64 {
	var d, m float64
	for i := range b {
		d = math.Max(d, math.Abs(float64(a[i])-b[i]))
		m = math.Max(m, math.Abs(b[i]))
	}
	return d / m
}

// TestGraphsMatchTheFloat64Reference: the encoder output, the decoder
// logits and 50 greedy tokens on jfk.wav agree between the ggml graphs and
// the float64 reference on the same random weights.
func TestGraphsMatchTheFloat64Reference(t *testing.T) {
	if testing.Short() {
		t.Skip("the float64 reference takes a while")
	}
	m, err := Load(context.Background(), testmodels.Generated(t, testmodels.WhisperGGUF), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ref := loadRef(t, testmodels.Generated(t, testmodels.WhisperBin))
	pcm, err := frontend.ReadWAV(testmodels.Shared(t, "jfk.wav"))
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := m.Mel().Compute(pcm, frontend.NSamples)
	win := spec.Window(0)
	enc, err := m.encode(m.caches.slots[0], win, true)
	if err != nil {
		t.Fatal(err)
	}
	renc := ref.encode(win)
	flat := make([]float64, 0, len(enc))
	for _, row := range renc {
		flat = append(flat, row...)
	}
	encErr := maxRel(enc, flat)
	t.Logf("encoder: max |ggml - float64| / max |float64| = %.2e", encErr)
	if encErr > 1e-4 {
		t.Errorf("encoder differs: %.2e (tolerance 1e-4)", encErr)
	}

	// Decoder: the prompt and 50 greedy tokens (special tokens suppressed
	// so random weights keep talking).
	tk := m.Tokenizer()
	rd := ref.decoder(renc)
	prompt := []int32{tk.SOT, tk.SOT + 1, tk.Transcribe, tk.NoTimestamps}
	var last []float64
	for _, tok := range prompt {
		last = rd.step(tok)
	}
	rows := []int{len(prompt) - 1}
	lg, err := m.logits(m.caches.slots[0], [][]int32{prompt}, 0, rows)
	if err != nil {
		t.Fatal(err)
	}
	logitErr := maxRel(lg[0][0], last)
	t.Logf("decoder logits: max rel diff %.2e", logitErr)
	if logitErr > 1e-4 {
		t.Errorf("decoder logits differ: %.2e (tolerance 1e-4)", logitErr)
	}
	argmax := func(x []float64) int32 {
		best := int32(0)
		for i := range int(tk.EOT) {
			if x[i] > x[best] {
				best = int32(i)
			}
		}
		return best
	}
	argmax32 := func(x []float32) int32 {
		best := int32(0)
		for i := range int(tk.EOT) {
			if x[i] > x[best] {
				best = int32(i)
			}
		}
		return best
	}
	past := len(prompt)
	g := argmax32(lg[0][0])
	for i := range 50 {
		r := argmax(last)
		if g != r {
			t.Fatalf("greedy token %d: ggml %d, float64 %d", i, g, r)
		}
		last = rd.step(r)
		lg, err = m.logits(m.caches.slots[0], [][]int32{{g}}, past, []int{0})
		if err != nil {
			t.Fatal(err)
		}
		past++
		g = argmax32(lg[0][0])
		if e := maxRel(lg[0][0], last); e > 1e-4 {
			t.Fatalf("step %d: logits differ by %.2e", i, e)
		}
	}
}

// TestShortAudioContextMatchesTheReference: encoding only the first 300
// positions (6 s, whisper.cpp's audio_ctx) is the same computation on the
// shorter input: the encoder output and the first logits agree with the
// float64 reference run on those 600 mel frames.
func TestShortAudioContextMatchesTheReference(t *testing.T) {
	if testing.Short() {
		t.Skip("the float64 reference takes a while")
	}
	m, err := Load(context.Background(), testmodels.Generated(t, testmodels.WhisperGGUF), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ref := loadRef(t, testmodels.Generated(t, testmodels.WhisperBin))
	pcm, err := frontend.ReadWAV(testmodels.Shared(t, "jfk.wav"))
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := m.Mel().Compute(pcm, frontend.NSamples)
	win := spec.WindowN(0, 600)
	enc, err := m.encode(m.caches.slots[0], win, true)
	if err != nil {
		t.Fatal(err)
	}
	renc := ref.encode(win)
	if len(renc) != 300 || len(enc) != 300*m.HParams().NAudioState {
		t.Fatalf("encoder output %d values, reference %d positions", len(enc), len(renc))
	}
	flat := make([]float64, 0, len(enc))
	for _, row := range renc {
		flat = append(flat, row...)
	}
	if e := maxRel(enc, flat); e > 1e-4 {
		t.Errorf("encoder differs: %.2e (tolerance 1e-4)", e)
	}
	tk := m.Tokenizer()
	rd := ref.decoder(renc)
	prompt := []int32{tk.SOT, tk.SOT + 1, tk.Transcribe, tk.NoTimestamps}
	var last []float64
	for _, tok := range prompt {
		last = rd.step(tok)
	}
	lg, err := m.logits(m.caches.slots[0], [][]int32{prompt}, 0, []int{len(prompt) - 1})
	if err != nil {
		t.Fatal(err)
	}
	if e := maxRel(lg[0][0], last); e > 1e-4 {
		t.Errorf("decoder logits differ: %.2e (tolerance 1e-4)", e)
	}
	if _, err := m.encode(m.caches.slots[0], spec.WindowN(0, 601), false); err == nil {
		t.Error("an odd number of frames was encoded")
	}
}
