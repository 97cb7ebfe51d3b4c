package asr

import (
	"fmt"

	"github.com/ollama/ollama/ml"

	"boxd/engine/asr/cpuenc"
)

// stage runs one graph: build returns the tensors to read back, each
// given its own node (a node no other reads is never overwritten by ggml's
// allocator within the graph).
func (m *Model) stage(build func(ctx ml.Context) []ml.Tensor) (out [][]float32, err error) {
	m.useThreads(m.threads)
	ctx := m.b.NewContext()
	defer ctx.Close()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("asr: compute: %v", r)
		}
	}()
	ts := build(ctx)
	for i, t := range ts {
		ts[i] = t.Contiguous(ctx)
	}
	ctx.Forward(ts...).Compute(ts...)
	for _, t := range ts {
		out = append(out, t.Floats())
	}
	return out, nil
}

// encodeFused is the encoder on the CPU with its self-attention outside
// ggml: each layer's attention runs as package attn's fused kernel (the
// scores never leave the cache), between ggml graphs for everything else
// (the stem and the first layer's projections; each layer's output
// projection, MLP and the next layer's projections; the final norm and
// the decoder's cross keys and values). The graphs hand their tensors over
// as floats: about 9 MB a layer for a 1,500-position tiny window, well
// under a millisecond of copying, against the hundreds of milliseconds the
// unfused attention's n × n scores cost in memory traffic. The caller
// holds m.exec. It returns the encoder output when want is true.
func (m *Model) encodeFused(sl *slot, mel []float32, A int, want bool) ([]float32, error) {
	hp, w := m.hp, &m.weights
	S, H := hp.NAudioState, hp.NAudioHead
	d := S / H
	qkv := func(ctx ml.Context, blk *block, x ml.Tensor) []ml.Tensor {
		h := blk.attn.ln.forward(ctx, x)
		return []ml.Tensor{x, blk.attn.q.forward(ctx, h), blk.attn.k.forward(ctx, h), blk.attn.v.forward(ctx, h)}
	}
	t, err := m.stage(func(ctx ml.Context) []ml.Tensor {
		return qkv(ctx, &w.enc[0], m.encoderStem(ctx, mel, A))
	})
	if err != nil {
		return nil, err
	}
	att := make([]float32, A*S)
	for l := range w.enc {
		if err := cpuenc.Attention(t[1], t[2], t[3], att, A, H, d, m.threads); err != nil {
			return nil, err
		}
		x := t[0]
		last := l == len(w.enc)-1
		t, err = m.stage(func(ctx ml.Context) []ml.Tensor {
			blk := &w.enc[l]
			in := ctx.Input()
			y := in.FromFloats(x, S, A, 1)
			y = y.Add(ctx, blk.attn.o.forward(ctx, in.FromFloats(att, S, A, 1)))
			h := blk.mlpLN.forward(ctx, y)
			y = y.Add(ctx, blk.mlp2.forward(ctx, blk.mlp0.forward(ctx, h).GELU_ERF(ctx)))
			if !last {
				return qkv(ctx, &w.enc[l+1], y)
			}
			return m.tail(ctx, sl, y, A, want)
		})
		if err != nil {
			return nil, err
		}
	}
	return m.tailDone(sl, t, A, want)
}

// MaxCPUEncoderBytes bounds the float32 copy of the encoder blocks'
// weights that encodeCPU keeps: up to Whisper small's (about 350 MB);
// larger models on the CPU keep their blocks in ggml (encodeFused).
const MaxCPUEncoderBytes = 512 << 20

// cpuEncoderFits says whether the encoder blocks' weights fit
// MaxCPUEncoderBytes as float32 and their widths suit cpuenc.
func cpuEncoderFits(hp HParams) bool {
	S, H := hp.NAudioState, max(1, hp.NAudioHead)
	// Per block: q, k, v, o (S × S), the MLP (2 × 4S × S), norms and biases.
	n := int64(hp.NAudioLayer) * (12*int64(S)*int64(S) + 16*int64(S)) * 4
	return hp.NAudioLayer > 0 && S%16 == 0 && cpuenc.Supported(S/H) && n <= MaxCPUEncoderBytes
}

// loadCPUEncoder copies the encoder blocks' weights out of the backend as
// float32 (widened from F16, or as stored) into package cpuenc's layout,
// when they are F16 or F32, fit MaxCPUEncoderBytes and the widths suit its
// kernels.
func (m *Model) loadCPUEncoder() (err error) {
	hp, w := m.hp, &m.weights
	if !cpuEncoderFits(hp) {
		return nil
	}
	var ts []ml.Tensor
	for _, blk := range w.enc {
		for _, l := range []linear{blk.attn.q, blk.attn.k, blk.attn.v, blk.attn.o, blk.mlp0, blk.mlp2} {
			ts = append(ts, l.w, l.b)
		}
		ts = append(ts, blk.attn.ln.w, blk.attn.ln.b, blk.mlpLN.w, blk.mlpLN.b)
	}
	// F16 and F32 only: ggml's copy to float32 from a quantized type is
	// not one every build has, and a quantized file keeps its blocks in
	// ggml (encodeFused).
	for _, t := range ts {
		if t != nil && t.DType() != ml.DTypeF16 && t.DType() != ml.DTypeF32 {
			return nil
		}
	}
	data, err := m.floats(ts)
	if err != nil {
		return fmt.Errorf("asr: copy the encoder's weights: %w", err)
	}
	lin := func(l linear) (*cpuenc.Linear, error) {
		var bias []float32
		if l.b != nil {
			bias = data[l.b]
		}
		return cpuenc.NewLinear(data[l.w], bias, l.w.Dim(1), l.w.Dim(0))
	}
	enc := &cpuenc.Encoder{Heads: hp.NAudioHead, Eps: lnEps}
	for _, blk := range w.enc {
		var L cpuenc.Layer
		for _, p := range []struct {
			dst **cpuenc.Linear
			src linear
		}{{&L.Q, blk.attn.q}, {&L.K, blk.attn.k}, {&L.V, blk.attn.v}, {&L.O, blk.attn.o}, {&L.FC1, blk.mlp0}, {&L.FC2, blk.mlp2}} {
			if *p.dst, err = lin(p.src); err != nil {
				return fmt.Errorf("asr: the encoder's weights: %w", err)
			}
		}
		L.AttnLN = cpuenc.Norm{G: data[blk.attn.ln.w], B: data[blk.attn.ln.b]}
		L.MLPLN = cpuenc.Norm{G: data[blk.mlpLN.w], B: data[blk.mlpLN.b]}
		enc.Layers = append(enc.Layers, L)
	}
	m.cpu = enc
	return m.loadCPULogits()
}

// floats copies tensors out of the backend as float32 (a ggml cast:
// widened from F16, or as stored), by tensor; nil entries are skipped.
func (m *Model) floats(ts []ml.Tensor) (data map[ml.Tensor][]float32, err error) {
	ctx := m.b.NewContext()
	defer ctx.Close()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("compute: %v", r)
		}
	}()
	var outs []ml.Tensor
	for _, t := range ts {
		if t != nil {
			outs = append(outs, t.Cast(ctx, ml.DTypeF32).Contiguous(ctx))
		}
	}
	ctx.Forward(outs...).Compute(outs...)
	data = map[ml.Tensor][]float32{}
	i := 0
	for _, t := range ts {
		if t != nil {
			data[t] = outs[i].Floats()
			i++
		}
	}
	return data, nil
}

// loadCPULogits copies the token embedding (the output projection) out of
// the backend for decode, kept F16 when the file stores it so, F32 when
// F32; other types (quantized) stay in ggml.
func (m *Model) loadCPULogits() (err error) {
	if m.dec != nil {
		return nil // the CPU decoder projects its own
	}
	w := m.weights.tokEmb
	f16 := w.DType() == ml.DTypeF16
	if (!f16 && w.DType() != ml.DTypeF32) || m.hp.NTextState%8 != 0 {
		return nil
	}
	ctx := m.b.NewContext()
	defer ctx.Close()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("asr: copy the output projection: %v", r)
		}
	}()
	t := w.Cast(ctx, ml.DTypeF32).Contiguous(ctx)
	ctx.Forward(t).Compute(t)
	out, err := cpuenc.NewLogits(t.Floats(), m.hp.NVocab, m.hp.NTextState, f16)
	if err != nil {
		return fmt.Errorf("asr: the output projection: %w", err)
	}
	m.out = out
	return nil
}

// encodeCPU is the encoder on the CPU with its blocks in package cpuenc:
// one ggml graph for the conv stem, the blocks in cpuenc (fused attention,
// projections from packed float32 weights, norms and the MLP a block of
// positions at a time), and one graph for the final norm and the decoder's
// cross keys and values. The caller holds m.exec.
func (m *Model) encodeCPU(sl *slot, mel []float32, A int, want bool) ([]float32, error) {
	S := m.hp.NAudioState
	t, err := m.stage(func(ctx ml.Context) []ml.Tensor { return []ml.Tensor{m.encoderStem(ctx, mel, A)} })
	if err != nil {
		return nil, err
	}
	x := t[0]
	if err := m.cpu.Forward(x, A, m.threads); err != nil {
		return nil, err
	}
	t, err = m.stage(func(ctx ml.Context) []ml.Tensor { return m.tail(ctx, sl, ctx.Input().FromFloats(x, S, A, 1), A, want) })
	if err != nil {
		return nil, err
	}
	return m.tailDone(sl, t, A, want)
}

// tail is the encoder's last graph's outputs: encoderTail's (the encoder
// output, when want is true) and, for the CPU decoder, each layer's cross
// keys and values (crossKV), which tailDone hands to it.
func (m *Model) tail(ctx ml.Context, sl *slot, x ml.Tensor, A int, want bool) []ml.Tensor {
	y := m.encoderTail(ctx, sl, x, A)
	var out []ml.Tensor
	if want {
		out = append(out, y)
	}
	if m.dec != nil {
		out = append(out, m.crossKV(ctx, y)...)
	}
	return out
}

// tailDone stores the cross keys and values tail read back, and returns
// the encoder output when want is true.
func (m *Model) tailDone(sl *slot, t [][]float32, A int, want bool) ([]float32, error) {
	if m.dec != nil {
		if err := m.storeCross(sl, t[len(t)-2*len(m.weights.dec):], A); err != nil {
			return nil, err
		}
	}
	if !want {
		return nil, nil
	}
	return t[0], nil
}

// oneThreadStepWidth is the widest decoder (tiny's 384) whose step of one
// sequence runs ggml on one thread (decode): its graph is hundreds of small
// operations, and on 2 cores a second thread cost more in meeting between
// them than it gave (a tiny step about 5.0 ms with 2 threads, 4.2 with 1,
// output projection included); base's and small's operations are big
// enough that one thread was slower (7.7 → 8.7 ms, 19.0 → 25.6 ms).
const oneThreadStepWidth = 384

// useThreads sets ggml's CPU threads for the next graphs, when the model
// can (ggmlcpu): one for a tiny step of one sequence (oneThreadStepWidth),
// every thread otherwise. The caller holds m.exec.
func (m *Model) useThreads(n int) {
	if m.ggmlThreads == nil || n == m.ggmlNow {
		return
	}
	m.ggmlThreads(n)
	m.ggmlNow = n
}
