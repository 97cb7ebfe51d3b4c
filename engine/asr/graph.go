package asr

import (
	"fmt"
	"math"
	"time"

	"github.com/ollama/ollama/ml"

	"boxd/engine/asr/frontend"
)

// caches are the tensors that outlive one graph, in slots: each running
// transcription holds one slot, with the cross-attention keys and values
// of its current audio window (per decoder layer) and the self-attention
// keys and values of up to maxBeams sequences, so that several
// transcriptions can decode at once and their steps can run in one graph
// (batch.go). Each layer's keys (and values) of every slot are one tensor,
// slot last, so that one product serves the cross attention of several
// slots. They are kept in the layouts the decoder's attention reads, so
// that a decoder step reads them in place (views) instead of copying them
// into that layout on every step: keys [d, positions, heads] (the k of kq
// = k·q), values transposed, [positions, d, heads] (the v of kqv = v·kq),
// or, with flash attention, as the keys: the layout ggml's kernel reads.
// The encoder writes a slot's cross keys and values once per window, and
// each step writes its own token's self-attention key and value. The beam
// reordering buffers are shared: a reorder runs alone.
type caches struct {
	ctxs     []ml.Context
	slots    []*slot
	crossK   []ml.Tensor // per decoder layer, [d, NAudioCtx, H, slots]
	crossV   []ml.Tensor // [NAudioCtx, d, H, slots]
	selfK    []ml.Tensor // [d, NTextCtx, H, slots·maxBeams]
	selfV    []ml.Tensor // [NTextCtx, d, H, slots·maxBeams]
	scratchK []ml.Tensor // beam reordering buffers, like one slot's selfK and selfV
	scratchV []ml.Tensor
	flash    bool // values laid out as the keys
}

// slot is one transcription's share of the caches.
type slot struct {
	index    int
	audioCtx int // encoder positions of the window in its cross keys and values
}

// maxBeams is the most sequences decoded together (beam size, best_of).
const maxBeams = 5

func newCaches(m *Model, slots int) *caches {
	c := &caches{flash: m.flash}
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
	for i := range slots {
		c.slots = append(c.slots, &slot{index: i})
	}
	if m.dec != nil {
		return c // the CPU decoder holds them
	}
	for l := range m.hp.NTextLayer {
		ctx := m.b.NewContextSize(8).Layer(l)
		c.ctxs = append(c.ctxs, ctx)
		c.crossK = append(c.crossK, ctx.Zeros(dt, d, A, H, slots))
		c.selfK = append(c.selfK, ctx.Zeros(dt, d, T, H, slots*maxBeams))
		c.scratchK = append(c.scratchK, ctx.Zeros(dt, d, T, H, maxBeams))
		if c.flash {
			c.crossV = append(c.crossV, ctx.Zeros(dt, d, A, H, slots))
			c.selfV = append(c.selfV, ctx.Zeros(dt, d, T, H, slots*maxBeams))
			c.scratchV = append(c.scratchV, ctx.Zeros(dt, d, T, H, maxBeams))
		} else {
			c.crossV = append(c.crossV, ctx.Zeros(dt, A, d, H, slots))
			c.selfV = append(c.selfV, ctx.Zeros(dt, T, d, H, slots*maxBeams))
			c.scratchV = append(c.scratchV, ctx.Zeros(dt, T, d, H, maxBeams))
		}
	}
	return c
}

func (c *caches) close() {
	for _, ctx := range c.ctxs {
		ctx.Close()
	}
}

// crossKeys views layer l's cross keys of slots from..from+n-1, first A
// positions: [d, A, H, n]; crossValues their values, [A, d, H, n] (with
// flash attention [d, A, H, n]).
func (c *caches) crossKeys(ctx ml.Context, l, from, n, A int) ml.Tensor {
	t := c.crossK[l]
	return t.View(ctx, from*t.Stride(3), t.Dim(0), t.Stride(1), A, t.Stride(2), t.Dim(2), t.Stride(3), n)
}

func (c *caches) crossValues(ctx ml.Context, l, from, n, A int) ml.Tensor {
	t := c.crossV[l]
	if c.flash {
		return t.View(ctx, from*t.Stride(3), t.Dim(0), t.Stride(1), A, t.Stride(2), t.Dim(2), t.Stride(3), n)
	}
	return t.View(ctx, from*t.Stride(3), A, t.Stride(1), t.Dim(1), t.Stride(2), t.Dim(2), t.Stride(3), n)
}

// valueLayout permutes [d, H, n, B] values into the values caches' layout:
// [n, d, H, B], or [d, n, H, B] with flash attention.
func (c *caches) valueLayout(ctx ml.Context, v ml.Tensor) ml.Tensor {
	if c.flash {
		return v.Permute(ctx, 0, 2, 1, 3)
	}
	return v.Permute(ctx, 1, 2, 0, 3)
}

// selfKeys views a slot's self-attention keys of layer l, positions
// from..from+n-1 of its first B sequences: [d, n, H, B]; selfValues its
// values, [n, d, H, B] (with flash attention [d, n, H, B]).
func (c *caches) selfKeys(ctx ml.Context, sl *slot, l, from, n, B int) ml.Tensor {
	t := c.selfK[l]
	return t.View(ctx, sl.index*maxBeams*t.Stride(3)+from*t.Stride(1), t.Dim(0), t.Stride(1), n, t.Stride(2), t.Dim(2), t.Stride(3), B)
}

func (c *caches) selfValues(ctx ml.Context, sl *slot, l, from, n, B int) ml.Tensor {
	t := c.selfV[l]
	if c.flash {
		return t.View(ctx, sl.index*maxBeams*t.Stride(3)+from*t.Stride(1), t.Dim(0), t.Stride(1), n, t.Stride(2), t.Dim(2), t.Stride(3), B)
	}
	return t.View(ctx, sl.index*maxBeams*t.Stride(3)+from*t.Stride(0), n, t.Stride(1), t.Dim(1), t.Stride(2), t.Dim(2), t.Stride(3), B)
}

// encoderAttention is softmax(k·q/√d)·v over heads for the encoder's
// self-attention. q, k and v are [d, H, n, 1]; the result is [S, n, 1].
//
// With flash (the backend opened with flash attention, asr.flash_attention)
// it is ggml's fused kernel, which reads q, k and v as they are, with no
// permuted copies and no n×n scores in memory. On the CPU ggml's kernel is
// slower than the products below (decisions.md, "Speech engine speed").
//
// Otherwise, with padKeys, the keys are padded with zeros to a multiple of
// 8 (1500 → 1504), their scores masked to -inf: the value product v·kq
// sums over the keys, and ggml's fast CPU matrix kernel (llamafile's
// tinyBLAS) takes only sums a multiple of 8 long; without the padding it
// falls back to dot products, which cost a quarter of the encoder's time.
// Zero values under zero weights change no sum. With the model on a GPU
// there is no padding: cuBLAS needs none, and the extra mask is one more
// pass over every score.
func encoderAttention(ctx ml.Context, q, k, v ml.Tensor, padKeys, flash bool) ml.Tensor {
	d, heads, n := q.Dim(0), q.Dim(1), q.Dim(2)
	scale := 1 / math.Sqrt(float64(d))
	if flash {
		// ggml_flash_attn_ext permutes q, k and v to [d, n, H] (views) and
		// writes [d, H, n] contiguous.
		out := q.(ml.ScaledDotProductAttention).ScaledDotProductAttention(ctx, k, v, nil, nil, nil, scale, true)
		return out.Reshape(ctx, d*heads, n, 1)
	}
	pad := 0
	if padKeys {
		pad = (8 - n%8) % 8
	}
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
	kq = kq.Scale(ctx, scale)
	if mask != nil {
		kq = kq.Add(ctx, mask)
	}
	kq = kq.Softmax(ctx)
	kqv := v.Mulmat(ctx, kq)                                           // [d, n, H, 1]
	return kqv.Permute(ctx, 0, 2, 1, 3).Contiguous(ctx, d*heads, n, 1) // [S, n, 1]
}

// cachedAttention is attention over keys and values already in the
// caches' layouts: q is [d, H, nq, B], k a view [d, nk, H, kb] and v a
// view [nk, d, H, kb] (kb is B, or 1 for keys every sequence shares), or
// with flash attention [d, nk, H, kb]. Only the query is permuted (a view:
// the matrix products read it strided); the scale and the mask go into
// one operation (the softmax, or the fused kernel), as whisper.cpp's. The
// result is [S, nq, B].
func cachedAttention(ctx ml.Context, q, k, v ml.Tensor, mask ml.Tensor, flash bool) ml.Tensor {
	d, heads, nq, B := q.Dim(0), q.Dim(1), q.Dim(2), q.Dim(3)
	scale := 1 / math.Sqrt(float64(d))
	if flash {
		// ggml's kernel wants as many key sets as query sets: keys every
		// sequence shares take the sequences' queries as one set.
		if k.Dim(3) != B {
			q = q.Reshape(ctx, d, heads, nq*B, 1)
		}
		if mask != nil {
			mask = mask.Cast(ctx, ml.DTypeF16) // the kernel's mask type
		}
		// It permutes q, k and v from [d, H, n] (so hand it k and v the
		// other way, views) and writes [d, H, nq, B].
		out := q.(ml.ScaledDotProductAttention).ScaledDotProductAttention(ctx, k.Permute(ctx, 0, 2, 1, 3), v.Permute(ctx, 0, 2, 1, 3), mask, nil, nil, scale, true)
		return out.Reshape(ctx, d*heads, nq, B)
	}
	// ggml's attention takes keys as [d, H, nk] and permutes them to
	// [d, nk, H], the caches' layout: hand it the caches' keys permuted
	// the other way (views both). Without flash attention it is k·q,
	// softmax(scale·kq + mask), v·kq.
	out := q.(ml.ScaledDotProductAttention).ScaledDotProductAttention(ctx, k.Permute(ctx, 0, 2, 1, 3), v, mask, nil, nil, scale, true)
	return out.Reshape(ctx, d*heads, nq, B) // [d, H, nq, B] → [S, nq, B]
}

// heads views a contiguous [S, n, B] tensor as [d, H, n, B].
func heads(ctx ml.Context, x ml.Tensor, h int) ml.Tensor {
	return x.Reshape(ctx, x.Dim(0)/h, h, x.Dim(1), x.Dim(2))
}

// encodeGraph builds the encoder over one window's mel ([frontend.NFrames] x
// NMels, frame fastest) and writes each decoder layer's cross-attention
// keys and values into the slot's caches. It returns the encoder output.
func (m *Model) encodeGraph(ctx ml.Context, sl *slot, mel []float32, A int) ml.Tensor {
	hp, w := m.hp, &m.weights
	x := m.encoderStem(ctx, mel, A)
	for _, blk := range w.enc {
		h := blk.attn.ln.forward(ctx, x)
		q := blk.attn.q.forward(ctx, h)
		k := blk.attn.k.forward(ctx, h)
		v := blk.attn.v.forward(ctx, h)
		H := hp.NAudioHead
		x = x.Add(ctx, blk.attn.o.forward(ctx, encoderAttention(ctx, heads(ctx, q, H), heads(ctx, k, H), heads(ctx, v, H), m.padKeys, m.flash)))
		h = blk.mlpLN.forward(ctx, x)
		x = x.Add(ctx, blk.mlp2.forward(ctx, blk.mlp0.forward(ctx, h).GELU_ERF(ctx)))
	}
	return m.encoderTail(ctx, sl, x, A)
}

// encoderStem is the encoder's input: the conv stem over the mel frames
// and the positional embedding, [S, A, 1].
func (m *Model) encoderStem(ctx ml.Context, mel []float32, A int) ml.Tensor {
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
	return x.Add(ctx, w.encPos.View(ctx, 0, S, w.encPos.Stride(1), A).Reshape(ctx, S, A, 1))
}

// encoderTail is the encoder's final norm over x, [S, A, 1]; it writes
// each decoder layer's cross-attention keys and values into the slot's
// caches and returns the encoder output.
func (m *Model) encoderTail(ctx ml.Context, sl *slot, x ml.Tensor, A int) ml.Tensor {
	w := &m.weights
	x = w.encLN.forward(ctx, x) // [S, A, 1]
	if m.dec != nil {
		return x // the CPU decoder's cross keys and values: tail
	}
	H := m.hp.NTextHead
	for l, blk := range w.dec {
		k := heads(ctx, blk.cross.k.forward(ctx, x), H) // [d, H, A, 1]
		v := heads(ctx, blk.cross.v.forward(ctx, x), H)
		// Keys as [d, A, H], values as [A, d, H]: what every decoder step
		// of this window reads in place.
		ctx.Forward(k.Permute(ctx, 0, 2, 1, 3).Copy(ctx, m.caches.crossKeys(ctx, l, sl.index, 1, A)))
		ctx.Forward(m.caches.valueLayout(ctx, v).Copy(ctx, m.caches.crossValues(ctx, l, sl.index, 1, A)))
	}
	return x
}

// group is one slot's sequences in a decoder graph: B sequences of n
// tokens each (token i of sequence b at tokens[b*n+i]) at positions
// past..past+n-1.
type group struct {
	sl      *slot
	tokens  []int32
	B, past int
}

// decodeGraph runs the decoder on groups of sequences, n tokens each, and
// returns the logits of the rows listed in rows (indices into 0..n-1) for
// each sequence, groups in order: [NVocab, len(rows), total sequences].
// The projections, the MLPs and the output projection run once over every
// sequence of every group (one read of the weights for all): the
// activations stay two-dimensional, [S, n·sequences], because ggml treats
// a third dimension as separate products, each reading the weights again.
// Attention runs per group, over that slot's caches.
func (m *Model) decodeGraph(ctx ml.Context, gs []group, n int, rows []int) ml.Tensor {
	hp, w := m.hp, &m.weights
	S := hp.NTextState
	var flat, positions []int32
	B := 0
	for _, g := range gs {
		if g.past+n > hp.NTextCtx {
			panic(fmt.Sprintf("asr: %d tokens past position %d exceed the text context of %d", n, g.past, hp.NTextCtx))
		}
		flat = append(flat, g.tokens...)
		for range g.B {
			for i := range n {
				positions = append(positions, int32(g.past+i))
			}
		}
		B += g.B
	}
	in := ctx.Input()
	x := w.tokEmb.Rows(ctx, in.FromInts(flat, n*B)) // [S, n·B]
	if len(gs) == 1 {
		// Positions past..past+n-1, repeated for each sequence.
		x = x.Add(ctx, w.decPos.View(ctx, gs[0].past*w.decPos.Stride(1), S, w.decPos.Stride(1), n))
	} else {
		x = x.Add(ctx, w.decPos.Rows(ctx, in.FromInts(positions, n*B)))
	}
	seqs := func(t ml.Tensor) ml.Tensor { return t.Reshape(ctx, S, n, B) }
	var mask ml.Tensor
	if n > 1 { // causal: query i sees keys 0..past+i (one group: see logits)
		past := gs[0].past
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
	H := hp.NTextHead
	for l, blk := range w.dec {
		h := blk.attn.ln.forward(ctx, x)
		q := blk.attn.q.forward(ctx, h)
		k := blk.attn.k.forward(ctx, h)
		v := blk.attn.v.forward(ctx, h)
		q, k, v = seqs(q), seqs(k), seqs(v)
		c := m.caches
		att := perGroup(ctx, gs, func(g group, part func(ml.Tensor) ml.Tensor) ml.Tensor {
			past, b := g.past, g.B
			// This step's keys and values go into the caches at past.. in
			// their layouts: keys [d, n, H, B], values [n, d, H, B].
			ctx.Forward(heads(ctx, part(k), H).Permute(ctx, 0, 2, 1, 3).Copy(ctx, c.selfKeys(ctx, g.sl, l, past, n, b)))
			ctx.Forward(c.valueLayout(ctx, heads(ctx, part(v), H)).Copy(ctx, c.selfValues(ctx, g.sl, l, past, n, b)))
			keys, vals := c.selfKeys(ctx, g.sl, l, 0, past+n, b), c.selfValues(ctx, g.sl, l, 0, past+n, b)
			return cachedAttention(ctx, heads(ctx, part(q), H), keys, vals, mask, m.flash)
		})
		x = x.Add(ctx, blk.attn.o.forward(ctx, att.Reshape(ctx, S, n*B)))

		h = blk.cross.ln.forward(ctx, x)
		q = blk.cross.q.forward(ctx, h)
		x = x.Add(ctx, blk.cross.o.forward(ctx, m.crossAttention(ctx, l, gs, q, n)))

		h = blk.mlpLN.forward(ctx, x)
		x = x.Add(ctx, blk.mlp2.forward(ctx, blk.mlp0.forward(ctx, h).GELU_ERF(ctx)))
	}
	x = w.decLN.forward(ctx, x) // [S, n·B]
	if len(rows) != n {
		x = x.Rows(ctx, in.FromInts(rowIndex(rows, n, B), len(rows)*B))
	}
	if m.out != nil {
		return x // decode projects it (cpuenc.Logits)
	}
	return w.outProj.Mulmat(ctx, x) // [V, rows·B]
}

// decode runs decodeGraph and returns its logits, [V, rows·B]: on the CPU
// the output projection runs in package cpuenc over the graph's last
// hidden states (one pass over the embedding for every column). The
// caller holds m.exec.
func (m *Model) decode(gs []group, n int, rows []int) ([]float32, error) {
	seqs := 0
	for _, g := range gs {
		seqs += g.B
	}
	if m.dec != nil {
		return m.decodeCPU(gs, n, rows)
	}
	if seqs == 1 && n == 1 && m.hp.NTextState <= oneThreadStepWidth {
		m.useThreads(1)
	} else {
		m.useThreads(m.threads)
	}
	data, err := m.run(func(ctx ml.Context) ml.Tensor { return m.decodeGraph(ctx, gs, n, rows) })
	if err != nil || m.out == nil {
		return data, err
	}
	cols := len(data) / m.hp.NTextState
	out := make([]float32, cols*m.hp.NVocab)
	if err := m.out.Project(data, cols, out, m.threads); err != nil {
		return nil, fmt.Errorf("asr: output projection: %w", err)
	}
	return out, nil
}

// crossAttention is the cross attention of the groups' queries q [S,
// n·B] over their slots' windows: [S, n·B]. One group reads its slot's keys
// and values in place. Several (one token a sequence, sorted by slot) run
// as one product over the slots they span, however many: the queries are
// gathered into [d, H, Bmax, slots] (spare columns repeat a real query),
// each slot's keys past its own window are masked, and the results are
// gathered back in order. Per group, the graph would grow by five
// operations a layer, each a kernel launch on a GPU.
func (m *Model) crossAttention(ctx ml.Context, l int, gs []group, q ml.Tensor, n int) ml.Tensor {
	c, S, H := m.caches, m.hp.NTextState, m.hp.NTextHead
	if len(gs) == 1 {
		g := gs[0]
		A := g.sl.audioCtx
		out := cachedAttention(ctx, heads(ctx, q.Reshape(ctx, S, n, g.B), H), c.crossKeys(ctx, l, g.sl.index, 1, A), c.crossValues(ctx, l, g.sl.index, 1, A), nil, m.flash)
		return out.Reshape(ctx, S, n*g.B)
	}
	lo, hi := gs[0].sl.index, gs[len(gs)-1].sl.index+1
	spanned := hi - lo
	bmax, A := 0, 0
	for _, g := range gs {
		bmax, A = max(bmax, g.B), max(A, g.sl.audioCtx)
	}
	gather := make([]int32, bmax*spanned) // column s·bmax+b ← row of q (slots in the span not in the batch: row 0)
	var scatter []int32                   // row r of the result ← column
	mask := make([]float32, A*bmax*spanned)
	masked := false
	off := 0
	for _, g := range gs {
		s := g.sl.index - lo
		for b := range bmax {
			gather[s*bmax+b] = int32(off + min(b, g.B-1))
		}
		for b := range g.B {
			scatter = append(scatter, int32(s*bmax+b))
		}
		for a := g.sl.audioCtx; a < A; a++ {
			masked = true
			for b := range bmax {
				mask[(s*bmax+b)*A+a] = float32(math.Inf(-1))
			}
		}
		off += g.B
	}
	in := ctx.Input()
	var mk ml.Tensor
	if masked {
		mk = in.FromFloats(mask, A, bmax, 1, spanned)
	}
	qs := q.Rows(ctx, in.FromInts(gather, len(gather))).Reshape(ctx, S/H, H, bmax, spanned)
	out := cachedAttention(ctx, qs, c.crossKeys(ctx, l, lo, spanned, A), c.crossValues(ctx, l, lo, spanned, A), mk, m.flash) // [S, bmax, spanned]
	return out.Reshape(ctx, S, bmax*spanned).Rows(ctx, in.FromInts(scatter, len(scatter)))
}

// perGroup builds f for each group, with part giving the group's
// sequences of a [S, n, B] tensor (a view), and joins the results along
// the sequences. One group is the tensor itself.
func perGroup(ctx ml.Context, gs []group, f func(g group, part func(ml.Tensor) ml.Tensor) ml.Tensor) ml.Tensor {
	if len(gs) == 1 {
		return f(gs[0], func(t ml.Tensor) ml.Tensor { return t })
	}
	var out ml.Tensor
	off := 0
	for _, g := range gs {
		o, b := off, g.B
		part := func(t ml.Tensor) ml.Tensor {
			return t.View(ctx, o*t.Stride(2), t.Dim(0), t.Stride(1), t.Dim(1), t.Stride(2), b)
		}
		r := f(g, part)
		if out == nil {
			out = r
		} else {
			out = out.Concat(ctx, r, 2)
		}
		off += g.B
	}
	return out
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
func (m *Model) reorderGraph(ctx ml.Context, sl *slot, parents []int32, past int) {
	S, T, H := m.hp.NTextState, m.hp.NTextCtx, m.hp.NTextHead
	d := S / H
	B := len(parents)
	idx := ctx.Input().FromInts(parents, B)
	c := m.caches
	for l := range m.weights.dec {
		for _, pair := range [][2]ml.Tensor{{c.selfK[l], c.scratchK[l]}, {c.selfV[l], c.scratchV[l]}} {
			all, tmp := pair[0], pair[1]
			nb1, nb2, nb3 := all.Stride(1), all.Stride(2), all.Stride(3)
			base := sl.index * maxBeams * nb3
			// Gather whole per-sequence caches (rows of [S*NTextCtx, beams]).
			flat := all.View(ctx, base, S*T, nb3, maxBeams)
			picked := flat.Rows(ctx, idx) // [S*NTextCtx, B]
			ctx.Forward(picked.Copy(ctx, tmp.View(ctx, 0, S*T, nb3, B)))
			// Copy back the first past positions: keys [d, past, H, B],
			// values [past, d, H, B].
			first := func(t ml.Tensor, base int) ml.Tensor {
				if t.Dim(0) == d {
					return t.View(ctx, base, d, nb1, past, nb2, H, nb3, B)
				}
				return t.View(ctx, base, past, nb1, d, nb2, H, nb3, B)
			}
			ctx.Forward(first(tmp, 0).Copy(ctx, first(all, base)))
		}
	}
}

// run computes a graph, turning the backend's out-of-memory panics into
// errors. The caller holds m.exec.
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
// the slot's cross-attention caches; it returns the encoder output [A x S]
// (position major) when want is true.
func (m *Model) encode(sl *slot, win *frontend.Spectrogram, want bool) ([]float32, error) {
	if win.Frames > frontend.NFrames || win.Frames < 2 || win.Frames%2 != 0 || win.NMels != m.hp.NMels {
		return nil, fmt.Errorf("asr: encoder input is %d x %d, want %d x an even number up to %d", win.NMels, win.Frames, m.hp.NMels, frontend.NFrames)
	}
	A := win.Frames / 2
	m.exec.Lock()
	defer m.exec.Unlock()
	sl.audioCtx = A
	defer m.stats.add(&m.stats.encode, time.Now())
	m.stats.windows.Add(1)
	switch {
	case m.cpu != nil:
		return m.encodeCPU(sl, win.Data, A, want)
	case m.fused:
		return m.encodeFused(sl, win.Data, A, want)
	}
	return m.run(func(ctx ml.Context) ml.Tensor {
		x := m.encodeGraph(ctx, sl, win.Data, A)
		if !want {
			ctx.Forward(x)
			return nil
		}
		return x
	})
}

// logits runs the decoder alone on one slot: tokens [B][n] at positions
// past.., returning the logits [B][len(rows)][NVocab]. Steps of one token
// go through step instead, which batches them with other slots'.
func (m *Model) logits(sl *slot, tokens [][]int32, past int, rows []int) ([][][]float32, error) {
	B, n := len(tokens), len(tokens[0])
	flat := make([]int32, 0, B*n)
	for _, t := range tokens {
		if len(t) != n {
			return nil, fmt.Errorf("asr: sequences of different lengths")
		}
		flat = append(flat, t...)
	}
	m.exec.Lock()
	defer m.exec.Unlock()
	defer m.stats.add(&m.stats.decode, time.Now())
	m.stats.steps.Add(1)
	data, err := m.decode([]group{{sl: sl, tokens: flat, B: B, past: past}}, n, rows)
	if err != nil {
		return nil, err
	}
	return splitLogits(data, m.hp.NVocab, len(rows), B), nil
}

// splitLogits cuts [V, rows, B] into [B][rows][V].
func splitLogits(data []float32, V, rows, B int) [][][]float32 {
	out := make([][][]float32, B)
	for b := range B {
		out[b] = make([][]float32, rows)
		for r := range rows {
			off := (b*rows + r) * V
			out[b][r] = data[off : off+V]
		}
	}
	return out
}

// reorder copies a slot's beam caches: sequence i takes parents[i]'s
// first past positions. The caller holds m.exec.
func (m *Model) reorder(sl *slot, parents []int32, past int) error {
	defer m.stats.add(&m.stats.decode, time.Now())
	if m.dec != nil {
		return m.dec.Reorder(sl.index, parents, past)
	}
	_, err := m.run(func(ctx ml.Context) ml.Tensor {
		m.reorderGraph(ctx, sl, parents, past)
		return nil
	})
	return err
}
