package llm

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"boxd/engine/models/gguf"
	"boxd/engine/models/testmodels"
)

// bertRef is a float64 BERT (llama.cpp's bert graph: token, type-0 and
// position embeddings, layer norms after each block, GELU, no cache) read
// from an F32 GGUF: the independent reference for the embedder and the
// cross-encoder reranker.
type bertRef struct {
	embd, heads, layers, ff int
	eps                     float64
	t                       map[string][]float64
}

func loadBertRef(t *testing.T, path string) *bertRef {
	t.Helper()
	f, err := gguf.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := func(k string) int {
		v, ok := f.Uint(k)
		if !ok {
			t.Fatalf("%s missing", k)
		}
		return int(v)
	}
	r := &bertRef{embd: u("bert.embedding_length"), heads: u("bert.attention.head_count"), layers: u("bert.block_count"),
		ff: u("bert.feed_forward_length"), t: map[string][]float64{}}
	v, _ := f.Get("bert.attention.layer_norm_epsilon")
	r.eps = float64(v.(float32))
	for _, ti := range f.Tensors {
		if ti.Type != gguf.F32 {
			t.Fatalf("%s is %v: the reference reads F32 files", ti.Name, ti.Type)
		}
		b, err := f.TensorData(path, ti)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, len(b)/4)
		for i := range x {
			x[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
		r.t[ti.Name] = x
	}
	return r
}

func (r *bertRef) w(name string) []float64 {
	x, ok := r.t[name]
	if !ok {
		panic("no tensor " + name)
	}
	return x
}

// linear is W·x + b for W stored [out][in].
func (r *bertRef) linear(name string, x []float64, out int) []float64 {
	W, in := r.w(name+".weight"), len(x)
	y := make([]float64, out)
	for o := range out {
		var s float64
		for i := range in {
			s += W[o*in+i] * x[i]
		}
		y[o] = s
	}
	if b, ok := r.t[name+".bias"]; ok {
		for o := range y {
			y[o] += b[o]
		}
	}
	return y
}

func (r *bertRef) norm(name string, x []float64) []float64 {
	var mean, vr float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		vr += (v - mean) * (v - mean)
	}
	vr /= float64(len(x))
	inv := 1 / math.Sqrt(vr+r.eps)
	w, b := r.w(name+".weight"), r.w(name+".bias")
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = (v-mean)*inv*w[i] + b[i]
	}
	return y
}

// hidden runs the encoder over tokens and returns the last hidden states.
func (r *bertRef) hidden(tokens []int32) [][]float64 {
	E, H := r.embd, r.heads
	d := E / H
	tok, typ, pos := r.w("token_embd.weight"), r.w("token_types.weight"), r.w("position_embd.weight")
	x := make([][]float64, len(tokens))
	for p, id := range tokens {
		v := make([]float64, E)
		for i := range E {
			v[i] = tok[int(id)*E+i] + typ[i] + pos[p*E+i]
		}
		x[p] = r.norm("token_embd_norm", v)
	}
	for l := range r.layers {
		pre := fmt.Sprintf("blk.%d.", l)
		q, k, v := make([][]float64, len(x)), make([][]float64, len(x)), make([][]float64, len(x))
		for p := range x {
			q[p], k[p], v[p] = r.linear(pre+"attn_q", x[p], E), r.linear(pre+"attn_k", x[p], E), r.linear(pre+"attn_v", x[p], E)
		}
		out := make([][]float64, len(x))
		for p := range x {
			att := make([]float64, E)
			for h := range H {
				sc := make([]float64, len(x))
				mx := math.Inf(-1)
				for j := range x {
					var s float64
					for i := range d {
						s += q[p][h*d+i] * k[j][h*d+i]
					}
					sc[j] = s / math.Sqrt(float64(d))
					mx = math.Max(mx, sc[j])
				}
				var z float64
				for j := range sc {
					sc[j] = math.Exp(sc[j] - mx)
					z += sc[j]
				}
				for j := range x {
					for i := range d {
						att[h*d+i] += sc[j] / z * v[j][h*d+i]
					}
				}
			}
			o := r.linear(pre+"attn_output", att, E)
			for i := range o {
				o[i] += x[p][i]
			}
			ffIn := r.norm(pre+"attn_output_norm", o)
			up := r.linear(pre+"ffn_up", ffIn, r.ff)
			for i, u := range up { // ggml_gelu: the tanh form
				up[i] = 0.5 * u * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(u+0.044715*u*u*u)))
			}
			down := r.linear(pre+"ffn_down", up, E)
			for i := range down {
				down[i] += ffIn[i]
			}
			out[p] = r.norm(pre+"layer_output_norm", down)
		}
		x = out
	}
	return x
}

// rank is the cross-encoder's score: the first token through the
// classification head (dense, tanh, projection).
func (r *bertRef) rank(tokens []int32) float64 {
	h := r.linear("cls", r.hidden(tokens)[0], r.embd)
	for i := range h {
		h[i] = math.Tanh(h[i])
	}
	return r.linear("cls.output", h, 1)[0]
}

// mean is the normalised mean of the hidden states.
func (r *bertRef) mean(tokens []int32) []float64 {
	hs := r.hidden(tokens)
	m := make([]float64, r.embd)
	for _, h := range hs {
		for i := range m {
			m[i] += h[i] / float64(len(hs))
		}
	}
	var n float64
	for _, v := range m {
		n += v * v
	}
	for i := range m {
		m[i] /= math.Sqrt(n)
	}
	return m
}

// TestRerankerMatchesFloat64Reference: the reranker's scores equal the
// float64 reference's on the same tokens within 2e-3 (ggml's GELU reads
// a float16 table on the CPU: about 1e-3 of noise), and they rank the
// documents in the same order.
func TestRerankerMatchesFloat64Reference(t *testing.T) {
	path := testmodels.Generated(t, testmodels.RerankFile)
	ref := loadBertRef(t, path)
	e, err := OpenEmbedder(context.Background(), Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	query := "why does the pump lose pressure after the filter change"
	docs := []string{
		"the pump loses pressure when the filter is clogged",
		"roof shingles crack in the cold",
		"after a filter change, bleed the air from the pump",
		"the patient reports back pain",
		"pressure",
		"a long document about pumps, filters, valves and pressure that goes on for a while and mentions the change twice: change",
	}
	got, err := e.Rerank(context.Background(), query, docs)
	if err != nil {
		t.Fatal(err)
	}
	q, err := tokenize(e.vocab, query, true, false)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	wants := make([]float64, len(docs))
	for i, d := range docs {
		dt, err := tokenize(e.vocab, d, false, false)
		if err != nil {
			t.Fatal(err)
		}
		want := ref.rank(append(append(append([]int32(nil), q...), dt...), e.sep))
		wants[i] = want
		diff := math.Abs(float64(got[i]) - want)
		worst = math.Max(worst, diff)
		if diff > 2e-3*math.Max(1, math.Abs(want)) {
			t.Errorf("document %d: score %.6f, float64 reference %.6f", i, got[i], want)
		}
	}
	// Pairs the reference tells apart by more than the noise keep their order.
	for i := range docs {
		for j := range docs {
			if wants[i]-wants[j] > 4e-3 && got[i] <= got[j] {
				t.Errorf("documents %d and %d: the reference ranks %d first (%.4f > %.4f), the reranker does not (%.4f, %.4f)", i, j, i, wants[i], wants[j], got[i], got[j])
			}
		}
	}
	t.Logf("%d documents, scores %v, largest difference from the float64 reference %.2g", len(docs), got, worst)
}

// TestEmbedderMatchesFloat64Reference: the same for the embedder's
// normalised mean-pooled vectors (cosine at least 0.99999).
func TestEmbedderMatchesFloat64Reference(t *testing.T) {
	path := testmodels.Generated(t, testmodels.EmbedFile)
	ref := loadBertRef(t, path)
	e, err := OpenEmbedder(context.Background(), Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	texts := []string{"the pump loses pressure", "a", "roof shingles crack in the cold weather near the chimney"}
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, tx := range texts {
		toks, err := tokenize(e.vocab, tx, true, false)
		if err != nil {
			t.Fatal(err)
		}
		want := ref.mean(toks)
		var c float64
		for j := range want {
			c += want[j] * float64(got[i][j])
		}
		if c < 0.99999 {
			t.Errorf("text %d: cosine %.7f with the float64 reference", i, c)
		}
	}
}
