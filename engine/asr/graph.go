package asr

import (
	"fmt"
	"math"
	"time"

	"github.com/ollama/ollama/ml"
)

// caches are the tensors that outlive one graph: the cross-attention keys
// and values of the current audio window (per decoder layer), and the
// self-attention keys and values of up to maxBeams sequences.
type caches struct {
	ctxs           []ml.Context
	crossK, crossV []ml.Tensor // [S, NAudioCtx]
	selfK, selfV   []ml.Tensor // [S, NTextCtx, maxBeams]
	scratchK       []ml.Tensor // beam reordering buffer, like selfK
	scratchV       []ml.Tensor
	audioCtx       int // encoder positions of the window in crossK/V
}

// maxBeams is the most sequences decoded together (beam size, best_of).
const maxBeams = 5

func newCaches(m *Model) *caches {
	c := &caches{}
	S := m.hp.NTextState
	for l := range m.hp.NTextLayer {
		ctx := m.b.NewContextSize(8).Layer(l)
		c.ctxs = append(c.ctxs, ctx)
		c.crossK = append(c.crossK, ctx.Zeros(ml.DTypeF32, S, m.hp.NAudioCtx))
		c.crossV = append(c.crossV, ctx.Zeros(ml.DTypeF32, S, m.hp.NAudioCtx))
		c.selfK = append(c.selfK, ctx.Zeros(ml.DTypeF32, S, m.hp.NTextCtx, maxBeams))
		c.selfV = append(c.selfV, ctx.Zeros(ml.DTypeF32, S, m.hp.NTextCtx, maxBeams))
		c.scratchK = append(c.scratchK, ctx.Zeros(ml.DTypeF32, S, m.hp.NTextCtx, maxBeams))
		c.scratchV = append(c.scratchV, ctx.Zeros(ml.DTypeF32, S, m.hp.NTextCtx, maxBeams))
	}
	return c
}

func (c *caches) close() {
	for _, ctx := range c.ctxs {
		ctx.Close()
	}
}

// attention is softmax(k·q/√d [+ mask])·v over heads. q is [d, H, nq, B];
// k and v are [d, H, nk, kb] (kb is B, or 1 for keys every sequence
// shares); the result is [S, nq, B].
func attention(ctx ml.Context, q, k, v ml.Tensor, mask ml.Tensor) ml.Tensor {
	d, heads, nq, B := q.Dim(0), q.Dim(1), q.Dim(2), q.Dim(3)
	q = q.Permute(ctx, 0, 2, 1, 3).Contiguous(ctx) // [d, nq, H, B]
	k = k.Permute(ctx, 0, 2, 1, 3).Contiguous(ctx) // [d, nk, H, kb]
	v = v.Permute(ctx, 1, 2, 0, 3).Contiguous(ctx) // [nk, d, H, kb]
	kq := k.MulmatFullPrec(ctx, q)                 // [nk, nq, H, B]
	kq = kq.Scale(ctx, 1/math.Sqrt(float64(d)))
	if mask != nil {
		kq = kq.Add(ctx, mask)
	}
	kq = kq.Softmax(ctx)
	kqv := v.Mulmat(ctx, kq)                                            // [d, nq, H, B]
	return kqv.Permute(ctx, 0, 2, 1, 3).Contiguous(ctx, d*heads, nq, B) // [S, nq, B]
}

// heads views a contiguous [S, n, B] tensor as [d, H, n, B].
func heads(ctx ml.Context, x ml.Tensor, h int) ml.Tensor {
	return x.Reshape(ctx, x.Dim(0)/h, h, x.Dim(1), x.Dim(2))
}

// encodeGraph builds the encoder over one window's mel ([NFrames] x
// NMels, frame fastest) and writes each decoder layer's cross-attention
// keys and values into the caches. It returns the encoder output.
func (m *Model) encodeGraph(ctx ml.Context, mel []float32, A int) ml.Tensor {
	hp, w := m.hp, &m.weights
	S, M := hp.NAudioState, hp.NMels
	x := ctx.Input().FromFloats(mel, 2*A, 1, M, 1)
	// Conv stem: two 1-D convolutions (kernel 3, padding 1; the second with
	// stride 2) written as 2-D convolutions of height 1.
	x = w.conv1w.Reshape(ctx, 3, 1, M, S).Conv2D(ctx, x, 1, 1, 1, 0, 1, 1)
	x = x.Add(ctx, w.conv1b.Reshape(ctx, 1, 1, S, 1)).GELU_ERF(ctx)
	x = w.conv2w.Reshape(ctx, 3, 1, S, S).Conv2D(ctx, x, 2, 1, 1, 0, 1, 1)
	x = x.Add(ctx, w.conv2b.Reshape(ctx, 1, 1, S, 1)).GELU_ERF(ctx) // [A, 1, S, 1]
	x = x.Reshape(ctx, A, S).Permute(ctx, 1, 0, 2, 3).Contiguous(ctx, S, A, 1)
	x = x.Add(ctx, w.encPos.View(ctx, 0, S, w.encPos.Stride(1), A).Reshape(ctx, S, A, 1))
	for _, blk := range w.enc {
		h := blk.attn.ln.forward(ctx, x)
		q := blk.attn.q.forward(ctx, h)
		k := blk.attn.k.forward(ctx, h)
		v := blk.attn.v.forward(ctx, h)
		H := hp.NAudioHead
		x = x.Add(ctx, blk.attn.o.forward(ctx, attention(ctx, heads(ctx, q, H), heads(ctx, k, H), heads(ctx, v, H), nil)))
		h = blk.mlpLN.forward(ctx, x)
		x = x.Add(ctx, blk.mlp2.forward(ctx, blk.mlp0.forward(ctx, h).GELU_ERF(ctx)))
	}
	x = w.encLN.forward(ctx, x) // [S, A, 1]
	for l, blk := range w.dec {
		k := blk.cross.k.forward(ctx, x)
		v := blk.cross.v.forward(ctx, x)
		ck, cv := m.caches.crossK[l], m.caches.crossV[l]
		ctx.Forward(k.Copy(ctx, ck.View(ctx, 0, S, ck.Stride(1), A).Reshape(ctx, S, A, 1)))
		ctx.Forward(v.Copy(ctx, cv.View(ctx, 0, S, cv.Stride(1), A).Reshape(ctx, S, A, 1)))
	}
	return x
}

// decodeGraph runs the decoder on tokens [n, B] (token i of sequence b at
// tokens[b*n+i]) placed at positions past..past+n-1 of every sequence, and
// returns the logits of the rows listed in rows (indices into 0..n-1) for
// each sequence: [NVocab, len(rows), B].
func (m *Model) decodeGraph(ctx ml.Context, tokens []int32, n, B, past int, rows []int) ml.Tensor {
	hp, w := m.hp, &m.weights
	S := hp.NTextState
	if past+n > hp.NTextCtx {
		panic(fmt.Sprintf("asr: %d tokens past position %d exceed the text context of %d", n, past, hp.NTextCtx))
	}
	in := ctx.Input()
	idx := in.FromInts(tokens, n*B)
	x := w.tokEmb.Rows(ctx, idx).Reshape(ctx, S, n, B)
	pos := w.decPos.View(ctx, past*w.decPos.Stride(1), S, w.decPos.Stride(1), n)
	x = x.Add(ctx, pos.Reshape(ctx, S, n, 1))
	var mask ml.Tensor
	if n > 1 { // causal: query i sees keys 0..past+i
		total := past + n
		mv := make([]float32, total*n)
		for i := range n {
			for j := range total {
				if j > past+i {
					mv[i*total+j] = float32(math.Inf(-1))
				}
			}
		}
		mask = in.FromFloats(mv, total, n, 1, 1)
	}
	for l, blk := range w.dec {
		c := m.caches
		h := blk.attn.ln.forward(ctx, x)
		q := blk.attn.q.forward(ctx, h)
		k := blk.attn.k.forward(ctx, h)
		v := blk.attn.v.forward(ctx, h)
		kc, vc := c.selfK[l], c.selfV[l]
		nb1, nb2 := kc.Stride(1), kc.Stride(2)
		ctx.Forward(k.Copy(ctx, kc.View(ctx, past*nb1, S, nb1, n, nb2, B)))
		ctx.Forward(v.Copy(ctx, vc.View(ctx, past*nb1, S, nb1, n, nb2, B)))
		H, d := hp.NTextHead, S/hp.NTextHead
		es := kc.Stride(0)
		keys := kc.View(ctx, 0, d, d*es, H, nb1, past+n, nb2, B)
		vals := vc.View(ctx, 0, d, d*es, H, nb1, past+n, nb2, B)
		x = x.Add(ctx, blk.attn.o.forward(ctx, attention(ctx, heads(ctx, q, H), keys, vals, mask)))

		h = blk.cross.ln.forward(ctx, x)
		q = blk.cross.q.forward(ctx, h)
		A, cb1 := c.audioCtx, c.crossK[l].Stride(1)
		ck := c.crossK[l].View(ctx, 0, d, d*es, H, cb1, A, cb1*A, 1)
		cv := c.crossV[l].View(ctx, 0, d, d*es, H, cb1, A, cb1*A, 1)
		x = x.Add(ctx, blk.cross.o.forward(ctx, attention(ctx, heads(ctx, q, H), ck, cv, nil)))

		h = blk.mlpLN.forward(ctx, x)
		x = x.Add(ctx, blk.mlp2.forward(ctx, blk.mlp0.forward(ctx, h).GELU_ERF(ctx)))
	}
	x = w.decLN.forward(ctx, x) // [S, n, B]
	if len(rows) != n {
		ri := in.FromInts(rowIndex(rows, n, B), len(rows)*B)
		x = x.Reshape(ctx, S, n*B).Rows(ctx, ri).Reshape(ctx, S, len(rows), B)
	}
	return w.outProj.Mulmat(ctx, x) // [V, rows, B]
}

// rowIndex lists, for each sequence, the flattened index of each wanted row.
func rowIndex(rows []int, n, B int) []int32 {
	out := make([]int32, 0, len(rows)*B)
	for b := range B {
		for _, r := range rows {
			out = append(out, int32(b*n+r))
		}
	}
	return out
}

// reorderGraph makes sequence i's self-attention cache a copy of sequence
// parents[i]'s, for the first past positions (beam search).
func (m *Model) reorderGraph(ctx ml.Context, parents []int32, past int) {
	S := m.hp.NTextState
	idx := ctx.Input().FromInts(parents, len(parents))
	for l := range m.weights.dec {
		c := m.caches
		for _, pair := range [][2]ml.Tensor{{c.selfK[l], c.scratchK[l]}, {c.selfV[l], c.scratchV[l]}} {
			src, tmp := pair[0], pair[1]
			nb1, nb2 := src.Stride(1), src.Stride(2)
			B := len(parents)
			// Gather whole per-sequence caches (rows of [S*NTextCtx, beams]).
			flat := src.Reshape(ctx, S*m.hp.NTextCtx, maxBeams)
			picked := flat.Rows(ctx, idx) // [S*NTextCtx, B]
			ctx.Forward(picked.Copy(ctx, tmp.View(ctx, 0, S*m.hp.NTextCtx, nb2, B)))
			ctx.Forward(tmp.View(ctx, 0, S, nb1, past, nb2, B).Copy(ctx, src.View(ctx, 0, S, nb1, past, nb2, B)))
		}
	}
}

// run computes a graph, turning the backend's out-of-memory panics into
// errors.
func (m *Model) run(build func(ctx ml.Context) ml.Tensor) (out []float32, err error) {
	ctx := m.b.NewContext()
	defer ctx.Close()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("asr: compute: %v", r)
		}
	}()
	t := build(ctx)
	if t == nil {
		ctx.Forward().Compute()
		return nil, nil
	}
	ctx.Forward(t).Compute(t)
	return t.Floats(), nil
}

// encode runs the encoder on a window of mel frames (3000 for Whisper as
// trained; an even number up to that to encode only part of it), filling
// the cross-attention caches; it returns the encoder output [A x S]
// (position major) when want is true.
func (m *Model) encode(win *Spectrogram, want bool) ([]float32, error) {
	if win.Frames > NFrames || win.Frames < 2 || win.Frames%2 != 0 || win.NMels != m.hp.NMels {
		return nil, fmt.Errorf("asr: encoder input is %d x %d, want %d x an even number up to %d", win.NMels, win.Frames, m.hp.NMels, NFrames)
	}
	A := win.Frames / 2
	m.caches.audioCtx = A
	defer m.stats.add(&m.stats.encode, time.Now())
	m.stats.windows.Add(1)
	return m.run(func(ctx ml.Context) ml.Tensor {
		x := m.encodeGraph(ctx, win.Data, A)
		if !want {
			ctx.Forward(x)
			return nil
		}
		return x
	})
}

// logits runs the decoder: tokens [B][n] at positions past.., returning
// the logits [B][len(rows)][NVocab].
func (m *Model) logits(tokens [][]int32, past int, rows []int) ([][][]float32, error) {
	B, n := len(tokens), len(tokens[0])
	flat := make([]int32, 0, B*n)
	for _, t := range tokens {
		if len(t) != n {
			return nil, fmt.Errorf("asr: sequences of different lengths")
		}
		flat = append(flat, t...)
	}
	defer m.stats.add(&m.stats.decode, time.Now())
	m.stats.steps.Add(1)
	data, err := m.run(func(ctx ml.Context) ml.Tensor { return m.decodeGraph(ctx, flat, n, B, past, rows) })
	if err != nil {
		return nil, err
	}
	V := m.hp.NVocab
	out := make([][][]float32, B)
	for b := range B {
		out[b] = make([][]float32, len(rows))
		for r := range rows {
			off := (b*len(rows) + r) * V
			out[b][r] = data[off : off+V]
		}
	}
	return out, nil
}

// reorder copies beam caches: sequence i takes parents[i]'s first past
// positions.
func (m *Model) reorder(parents []int32, past int) error {
	defer m.stats.add(&m.stats.decode, time.Now())
	_, err := m.run(func(ctx ml.Context) ml.Tensor {
		m.reorderGraph(ctx, parents, past)
		return nil
	})
	return err
}
