package asr

import (
	"fmt"

	"github.com/ollama/ollama/ml"

	"boxd/engine/asr/cpuenc"
)

// MaxCPUDecoderBytes bounds the copy of the decoder's weights (its blocks
// and the token embedding, as stored: F16 or F32) that the CPU decoder
// keeps: up to Whisper small's (about 280 MB as F16); larger models on the
// CPU decode in ggml.
const MaxCPUDecoderBytes = 512 << 20

// loadCPUDecoder copies the decoder's weights out of the backend into a
// cpuenc.Decoder, which then holds the decoder's caches too (newCaches
// makes none in ggml): when the model is on the CPU, its decoder weights
// and token embedding are all F16 or all F32, the widths suit cpuenc's
// kernels and the copy fits MaxCPUDecoderBytes. ggml's graph of a step is
// hundreds of small operations, each handed to its threads; the decoder
// runs a step's layers in one call (docs/decisions.md, "Speech engine
// speed", fourth sitting).
func (m *Model) loadCPUDecoder(slots int) error {
	hp, w := m.hp, &m.weights
	S, H := hp.NTextState, max(1, hp.NTextHead)
	dt := w.tokEmb.DType()
	if (dt != ml.DTypeF16 && dt != ml.DTypeF32) || S%16 != 0 || S%H != 0 || !cpuenc.Supported(S/H) || len(w.dec) == 0 {
		return nil
	}
	es := int64(2)
	if dt == ml.DTypeF32 {
		es = 4
	}
	if n := (int64(len(w.dec))*14*int64(S)*int64(S) + int64(hp.NVocab)*int64(S)) * es; n > MaxCPUDecoderBytes {
		return nil
	}
	var ts []ml.Tensor
	for _, blk := range w.dec {
		for _, l := range decoderLinears(blk) {
			if l.w.DType() != dt {
				return nil // mixed or quantized: ggml decodes
			}
			ts = append(ts, l.w, l.b)
		}
		ts = append(ts, blk.attn.ln.w, blk.attn.ln.b, blk.cross.ln.w, blk.cross.ln.b, blk.mlpLN.w, blk.mlpLN.b)
	}
	ts = append(ts, w.decLN.w, w.decLN.b, w.tokEmb, w.decPos)
	data, err := m.floats(ts)
	if err != nil {
		return fmt.Errorf("asr: copy the decoder's weights: %w", err)
	}
	dec, err := cpuenc.NewDecoder(cpuenc.DecoderConfig{
		State: S, Heads: H, Layers: len(w.dec), Vocab: hp.NVocab, TextCtx: hp.NTextCtx, AudioCtx: hp.NAudioCtx,
		Slots: slots, Beams: maxBeams, F16: dt == ml.DTypeF16, Eps: lnEps, Threads: m.threads,
	})
	if err != nil {
		return fmt.Errorf("asr: the CPU decoder: %w", err)
	}
	set := func() error {
		for l, blk := range w.dec {
			for which, lin := range decoderLinears(blk) {
				var bias []float32
				if lin.b != nil {
					bias = data[lin.b]
				}
				if err := dec.SetLinear(l, which, data[lin.w], bias, lin.w.Dim(1), lin.w.Dim(0)); err != nil {
					return err
				}
			}
			for which, n := range []norm{blk.attn.ln, blk.cross.ln, blk.mlpLN} {
				if err := dec.SetNorm(l, which, data[n.w], data[n.b]); err != nil {
					return err
				}
			}
		}
		if err := dec.SetNorm(-1, 0, data[w.decLN.w], data[w.decLN.b]); err != nil {
			return err
		}
		return dec.SetEmbedding(data[w.tokEmb], data[w.decPos][:hp.NTextCtx*S])
	}
	if err := set(); err != nil {
		dec.Close()
		return fmt.Errorf("asr: the decoder's weights: %w", err)
	}
	m.dec = dec
	return nil
}

// decoderLinears are a block's projections in cpuenc's order (DecQ ..
// DecFC2). The cross attention's keys and values are the encoder's work
// (encoderTail).
func decoderLinears(blk block) []linear {
	return []linear{blk.attn.q, blk.attn.k, blk.attn.v, blk.attn.o, blk.cross.q, blk.cross.o, blk.mlp0, blk.mlp2}
}

// crossKV builds the decoder layers' cross keys and values of the
// encoder output x [S, A, 1] for the CPU decoder to read back (storeCross):
// k and v of each layer in turn.
func (m *Model) crossKV(ctx ml.Context, x ml.Tensor) []ml.Tensor {
	var out []ml.Tensor
	for _, blk := range m.weights.dec {
		out = append(out, blk.cross.k.forward(ctx, x), blk.cross.v.forward(ctx, x))
	}
	return out
}

// storeCross hands crossKV's results to the CPU decoder as the slot's
// window of A positions.
func (m *Model) storeCross(sl *slot, kv [][]float32, A int) error {
	for l := range m.weights.dec {
		if err := m.dec.SetCross(sl.index, l, kv[2*l], kv[2*l+1], A); err != nil {
			return fmt.Errorf("asr: %w", err)
		}
	}
	return nil
}

// decodeCPU is decode on the CPU decoder: the groups' tokens as rows, the
// logits of rows of each sequence, [V, rows·B] as decodeGraph's. The
// caller holds m.exec.
func (m *Model) decodeCPU(gs []group, n int, rows []int) ([]float32, error) {
	var t cpuenc.Tokens
	var want []int32
	for _, g := range gs {
		if g.past+n > m.hp.NTextCtx {
			return nil, fmt.Errorf("asr: %d tokens past position %d exceed the text context of %d", n, g.past, m.hp.NTextCtx)
		}
		for b := range g.B {
			base := int32(len(t.Tok))
			for i := range n {
				t.Tok = append(t.Tok, g.tokens[b*n+i])
				t.Slot = append(t.Slot, int32(g.sl.index))
				t.Seq = append(t.Seq, int32(b))
				t.Pos = append(t.Pos, int32(g.past+i))
			}
			for _, r := range rows {
				want = append(want, base+int32(r))
			}
		}
	}
	out := make([]float32, len(want)*m.hp.NVocab)
	if err := m.dec.Forward(t, want, out); err != nil {
		return nil, fmt.Errorf("asr: decode: %w", err)
	}
	return out, nil
}
