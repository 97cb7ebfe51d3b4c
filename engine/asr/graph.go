package asr

import (
	"fmt"
	"math"
	"time"

	"github.com/ollama/ollama/ml"
)

// caches are the tensors that outlive one graph: the cross-attention keys
// and values of the current audio window (per decoder layer), and the
// self-attention keys and values of up to maxBeams sequences. They are
// kept in the layouts the decoder's attention reads, so that a decoder
// step reads them in place (views) instead of copying them into that
// layout on every step: keys [d, positions, heads] (the k of kq = k·q),
// values transposed, [positions, d, heads] (the v of kqv = v·kq). The
// encoder writes the cross keys and values once per window, and each step
// writes its own token's self-attention key and value.
type caches struct {
	ctxs     []ml.Context
	crossK   []ml.Tensor // [d, NAudioCtx, H]
	crossV   []ml.Tensor // [NAudioCtx, d, H]
	selfK    []ml.Tensor // [d, NTextCtx, H, maxBeams]
	selfV    []ml.Tensor // [NTextCtx, d, H, maxBeams]
	scratchK []ml.Tensor // beam reordering buffers, like selfK and selfV
	scratchV []ml.Tensor
	audioCtx int // encoder positions of the window in crossK/V
}

// maxBeams is the most sequences decoded together (beam size, best_of).
const maxBeams = 5

func newCaches(m *Model) *caches {
	c := &caches{}
	H := m.hp.NTextHead
	d := m.hp.NTextState / H
	A, T := m.hp.NAudioCtx, m.hp.NTextCtx
	// The caches hold what the weights hold: F16 for a model with F16 (or
	// quantized) weights, as whisper.cpp's caches are, which halves what
	// each decoder step reads; F32 for an F32 model, whose results the
	// float64 reference test holds to 1e-4.
	dt := ml.DTypeF16
	if m.weights.tokEmb.DType() == ml.DTypeF32 {
		dt = ml.DTypeF32
	}
	for l := range m.hp.NTextLayer {
		ctx := m.b.NewContextSize(8).Layer(l)
		c.ctxs = append(c.ctxs, ctx)
		c.crossK = append(c.crossK, ctx.Zeros(dt, d, A, H))
		c.crossV = append(c.crossV, ctx.Zeros(dt, A, d, H))
		c.selfK = append(c.selfK, ctx.Zeros(dt, d, T, H, maxBeams))
		c.selfV = append(c.selfV, ctx.Zeros(dt, T, d, H, maxBeams))
		c.scratchK = append(c.scratchK, ctx.Zeros(dt, d, T, H, maxBeams))
		c.scratchV = append(c.scratchV, ctx.Zeros(dt, T, d, H, maxBeams))
	}
	return c
}

func (c *caches) close() {
	for _, ctx := range c.ctxs {
		ctx.Close()
	}
}

// encoderAttention is softmax(k·q/√d)·v over heads for the encoder's
// self-attention. q, k and v are [d, H, n, 1]; the result is [S, n, 1].
//
// The keys are padded with zeros to a multiple of 8 (1500 → 1504), their
// scores masked to -inf: the value product v·kq sums over the keys, and
// ggml's fast CPU matrix kernel (llamafile's tinyBLAS) takes only sums a
// multiple of 8 long; without the padding it falls back to dot products,
// which cost a quarter of the encoder's time. Zero values under zero
// weights change no sum.
func encoderAttention(ctx ml.Context, q, k, v ml.Tensor) ml.Tensor {
	d, heads, n := q.Dim(0), q.Dim(1), q.Dim(2)
	pad := (8 - n%8) % 8
	q = q.Permute(ctx, 0, 2, 1, 3).Contiguous(ctx) // [d, n, H, 1]
	k = k.Permute(ctx, 0, 2, 1, 3).Contiguous(ctx) // [d, n, H, 1]
	v = v.Permute(ctx, 1, 2, 0, 3).Contiguous(ctx) // [n, d, H, 1]
	var mask ml.Tensor
	if pad > 0 {
		k = k.Pad(ctx, 0, pad, 0, 0)
		v = v.Pad(ctx, pad, 0, 0, 0)
		mv := make([]float32, n+pad)
		for i := n; i < n+pad; i++ {
			mv[i] = float32(math.Inf(-1))
		}
		mask = ctx.Input().FromFloats(mv, n+pad, 1, 1, 1)
	}
	kq := k.MulmatFullPrec(ctx, q) // [n+pad, n, H, 1]
	kq = kq.Scale(ctx, 1/math.Sqrt(float64(d)))
	if mask != nil {
		kq = kq.Add(ctx, mask)
	}
	kq = kq.Softmax(ctx)
	kqv := v.Mulmat(ctx, kq)                                           // [d, n, H, 1]
	return kqv.Permute(ctx, 0, 2, 1, 3).Contiguous(ctx, d*heads, n, 1) // [S, n, 1]
}

// cachedAttention is attention over keys and values already in the
// caches' layouts: q is [d, H, nq, B], k a view [d, nk, H, kb] and v a
// view [nk, d, H, kb] (kb is B, or 1 for keys every sequence shares). Only
// the query is permuted (a view: the matrix products read it strided); the
// result is [S, nq, B].
func cachedAttention(ctx ml.Context, q, k, v ml.Tensor, mask ml.Tensor) ml.Tensor {
	d, heads, nq, B := q.Dim(0), q.Dim(1), q.Dim(2), q.Dim(3)
	q = q.Permute(ctx, 0, 2, 1, 3) // [d, nq, H, B]
	kq := k.MulmatFullPrec(ctx, q) // [nk, nq, H, B]
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
		x = x.Add(ctx, blk.attn.o.forward(ctx, encoderAttention(ctx, heads(ctx, q, H), heads(ctx, k, H), heads(ctx, v, H))))
		h = blk.mlpLN.forward(ctx, x)
		x = x.Add(ctx, blk.mlp2.forward(ctx, blk.mlp0.forward(ctx, h).GELU_ERF(ctx)))
	}
	x = w.encLN.forward(ctx, x) // [S, A, 1]
	H := hp.NTextHead
	d := S / H
	for l, blk := range w.dec {
		k := heads(ctx, blk.cross.k.forward(ctx, x), H) // [d, H, A, 1]
		v := heads(ctx, blk.cross.v.forward(ctx, x), H)
		ck, cv := m.caches.crossK[l], m.caches.crossV[l]
		// Keys as [d, A, H], values as [A, d, H]: what every decoder step
		// of this window reads in place.
		ctx.Forward(k.Permute(ctx, 0, 2, 1, 3).Copy(ctx, ck.View(ctx, 0, d, ck.Stride(1), A, ck.Stride(2), H)))
		ctx.Forward(v.Permute(ctx, 1, 2, 0, 3).Copy(ctx, cv.View(ctx, 0, A, cv.Stride(1), d, cv.Stride(2), H)))
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
		H, d := hp.NTextHead, S/hp.NTextHead
		es := kc.Stride(0)
		kb1, kb2, kb3 := kc.Stride(1), kc.Stride(2), kc.Stride(3)
		vb1, vb2, vb3 := vc.Stride(1), vc.Stride(2), vc.Stride(3)
		// This step's keys and values go into the caches at past.. in their
		// layouts: keys [d, n, H, B], values [n, d, H, B].
		ctx.Forward(heads(ctx, k, H).Permute(ctx, 0, 2, 1, 3).Copy(ctx, kc.View(ctx, past*kb1, d, kb1, n, kb2, H, kb3, B)))
		ctx.Forward(heads(ctx, v, H).Permute(ctx, 1, 2, 0, 3).Copy(ctx, vc.View(ctx, past*es, n, vb1, d, vb2, H, vb3, B)))
		keys := kc.View(ctx, 0, d, kb1, past+n, kb2, H, kb3, B)
		vals := vc.View(ctx, 0, past+n, vb1, d, vb2, H, vb3, B)
		x = x.Add(ctx, blk.attn.o.forward(ctx, cachedAttention(ctx, heads(ctx, q, H), keys, vals, mask)))

		h = blk.cross.ln.forward(ctx, x)
		q = blk.cross.q.forward(ctx, h)
		A := c.audioCtx
		ck, cv := c.crossK[l], c.crossV[l]
		keysX := ck.View(ctx, 0, d, ck.Stride(1), A, ck.Stride(2), H, ck.Stride(2)*H, 1)
		valsX := cv.View(ctx, 0, A, cv.Stride(1), d, cv.Stride(2), H, cv.Stride(2)*H, 1)
		x = x.Add(ctx, blk.cross.o.forward(ctx, cachedAttention(ctx, heads(ctx, q, H), keysX, valsX, nil)))

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
	S, T, H := m.hp.NTextState, m.hp.NTextCtx, m.hp.NTextHead
	d := S / H
	B := len(parents)
	idx := ctx.Input().FromInts(parents, B)
	for l := range m.weights.dec {
		c := m.caches
		for _, pair := range [][2]ml.Tensor{{c.selfK[l], c.scratchK[l]}, {c.selfV[l], c.scratchV[l]}} {
			src, tmp := pair[0], pair[1]
			nb1, nb2, nb3 := src.Stride(1), src.Stride(2), src.Stride(3)
			// Gather whole per-sequence caches (rows of [S*NTextCtx, beams]).
			flat := src.Reshape(ctx, S*T, maxBeams)
			picked := flat.Rows(ctx, idx) // [S*NTextCtx, B]
			ctx.Forward(picked.Copy(ctx, tmp.View(ctx, 0, S*T, nb3, B)))
			// Copy back the first past positions: keys [d, past, H, B],
			// values [past, d, H, B].
			first := func(t ml.Tensor) ml.Tensor {
				if t.Dim(0) == d {
					return t.View(ctx, 0, d, nb1, past, nb2, H, nb3, B)
				}
				return t.View(ctx, 0, past, nb1, d, nb2, H, nb3, B)
			}
			ctx.Forward(first(tmp).Copy(ctx, first(src)))
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
