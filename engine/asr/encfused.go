package asr

import (
	"fmt"

	"github.com/ollama/ollama/ml"

	"boxd/engine/asr/attn"
)

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
	// stage runs one graph: build returns the tensors to read back, each
	// given its own node (a node no other reads is never overwritten by
	// ggml's allocator within the graph).
	stage := func(build func(ctx ml.Context) []ml.Tensor) (out [][]float32, err error) {
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
	qkv := func(ctx ml.Context, blk *block, x ml.Tensor) []ml.Tensor {
		h := blk.attn.ln.forward(ctx, x)
		return []ml.Tensor{x, blk.attn.q.forward(ctx, h), blk.attn.k.forward(ctx, h), blk.attn.v.forward(ctx, h)}
	}
	t, err := stage(func(ctx ml.Context) []ml.Tensor {
		return qkv(ctx, &w.enc[0], m.encoderStem(ctx, mel, A))
	})
	if err != nil {
		return nil, err
	}
	att := make([]float32, A*S)
	for l := range w.enc {
		if err := attn.Encoder(t[1], t[2], t[3], att, A, H, d, m.threads); err != nil {
			return nil, err
		}
		x := t[0]
		last := l == len(w.enc)-1
		t, err = stage(func(ctx ml.Context) []ml.Tensor {
			blk := &w.enc[l]
			in := ctx.Input()
			y := in.FromFloats(x, S, A, 1)
			y = y.Add(ctx, blk.attn.o.forward(ctx, in.FromFloats(att, S, A, 1)))
			h := blk.mlpLN.forward(ctx, y)
			y = y.Add(ctx, blk.mlp2.forward(ctx, blk.mlp0.forward(ctx, h).GELU_ERF(ctx)))
			if !last {
				return qkv(ctx, &w.enc[l+1], y)
			}
			y = m.encoderTail(ctx, sl, y, A)
			if !want {
				return nil
			}
			return []ml.Tensor{y}
		})
		if err != nil {
			return nil, err
		}
	}
	if !want {
		return nil, nil
	}
	return t[0], nil
}
