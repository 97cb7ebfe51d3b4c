package cpuenc

// #include "attn.h"
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Linear is a projection y = x·Wᵀ + b with W packed for the kernel.
type Linear struct {
	N, K   int       // outputs, inputs
	panels []float32 // W in panels of 16 outputs
	bias   []float32 // N, or nil
}

// NewLinear packs w [N × K] (output-major, as ggml stores a weight of
// shape [K, N]) and keeps bias (N values, or nil). N must be a multiple
// of 16.
func NewLinear(w []float32, bias []float32, N, K int) (*Linear, error) {
	switch {
	case N <= 0 || K <= 0 || N%16 != 0:
		return nil, fmt.Errorf("cpuenc: a %d × %d projection: outputs must be a positive multiple of 16", N, K)
	case len(w) != N*K:
		return nil, fmt.Errorf("cpuenc: a %d × %d projection has %d weights", N, K, len(w))
	case bias != nil && len(bias) != N:
		return nil, fmt.Errorf("cpuenc: a projection of %d outputs has %d biases", N, len(bias))
	}
	l := &Linear{N: N, K: K, panels: make([]float32, N*K), bias: bias}
	C.boxd_pack_panels((*C.float)(unsafe.Pointer(&w[0])), C.int(N), C.int(K), (*C.float)(unsafe.Pointer(&l.panels[0])))
	return l, nil
}

// Epilogues: what rows does with a projection's result.
const (
	set      = C.BOXD_GEMM_BIAS
	gelu     = C.BOXD_GEMM_GELU
	residual = C.BOXD_GEMM_RESIDUAL
)

// rows computes rows i0..i1 of out [M × N] from in [M × K].
func (l *Linear) rows(in []float32, out []float32, i0, i1, mode int) {
	var bias *C.float
	if l.bias != nil {
		bias = (*C.float)(unsafe.Pointer(&l.bias[0]))
	}
	C.boxd_gemm_rows((*C.float)(unsafe.Pointer(&in[0])), C.int(l.K), C.int(l.K), (*C.float)(unsafe.Pointer(&l.panels[0])), C.int(l.N), bias,
		(*C.float)(unsafe.Pointer(&out[0])), C.int(l.N), C.int(i0), C.int(i1), C.int(mode))
}

// Norm is a layer norm's gain and bias.
type Norm struct{ G, B []float32 }

// Layer is one encoder block: pre-norm self-attention and a GELU MLP,
// each added to the residual stream.
type Layer struct {
	AttnLN     Norm
	Q, K, V, O *Linear
	MLPLN      Norm
	FC1, FC2   *Linear
}

// Encoder is a stack of blocks of Heads heads of width 64·k.
type Encoder struct {
	Layers []Layer
	Heads  int
	Eps    float32
}

// Forward runs the blocks over x [n × S] (position major) in place, with
// threads workers: per block the row-wise work (norm and q, k, v; the
// output projection, norm and MLP) in blocks of Rows positions, and the
// attention between them.
func (e *Encoder) Forward(x []float32, n, threads int) error {
	if len(e.Layers) == 0 {
		return nil
	}
	S := e.Layers[0].Q.K
	if e.Heads <= 0 || S%e.Heads != 0 || !Supported(S/e.Heads) {
		return fmt.Errorf("cpuenc: %d heads over a width of %d", e.Heads, S)
	}
	if len(x) != n*S {
		return fmt.Errorf("cpuenc: the input has %d values, not %d × %d", len(x), n, S)
	}
	threads = max(1, threads)
	q, k, v, a := make([]float32, n*S), make([]float32, n*S), make([]float32, n*S), make([]float32, n*S)
	blocks := (n + Rows - 1) / Rows
	workers := min(threads, blocks)
	hs := make([][]float32, workers)
	fs := make([][]float32, workers)
	for i := range workers {
		hs[i] = make([]float32, Rows*S)
		fs[i] = make([]float32, Rows*e.Layers[0].FC1.N)
	}
	// each runs f over the row blocks, worker w with its own buffers.
	each := func(f func(w, i0, i1 int)) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for b := int(next.Add(1) - 1); b < blocks; b = int(next.Add(1) - 1) {
					f(w, b*Rows, min(n, (b+1)*Rows))
				}
			})
		}
		wg.Wait()
	}
	eps := C.float(e.Eps)
	var sc attentionScratch // one set of attention buffers for every layer
	for li := range e.Layers {
		L := &e.Layers[li]
		each(func(w, i0, i1 int) {
			h := hs[w]
			norm(x[i0*S:i1*S], S, L.AttnLN, eps, h)
			L.Q.rows(h, q[i0*S:], 0, i1-i0, set)
			L.K.rows(h, k[i0*S:], 0, i1-i0, set)
			L.V.rows(h, v[i0*S:], 0, i1-i0, set)
		})
		if err := attention(q, k, v, a, n, e.Heads, S/e.Heads, threads, &sc); err != nil {
			return err
		}
		each(func(w, i0, i1 int) {
			h, f := hs[w], fs[w]
			L.O.rows(a[i0*S:], x[i0*S:], 0, i1-i0, residual)
			norm(x[i0*S:i1*S], S, L.MLPLN, eps, h)
			L.FC1.rows(h, f, 0, i1-i0, gelu)
			L.FC2.rows(f, x[i0*S:], 0, i1-i0, residual)
		})
	}
	return nil
}

// norm writes the layer norm of the rows of x [m × S] to out.
func norm(x []float32, S int, n Norm, eps C.float, out []float32) {
	m := len(x) / S
	C.boxd_layernorm_rows((*C.float)(unsafe.Pointer(&x[0])), C.int(S), (*C.float)(unsafe.Pointer(&n.G[0])), (*C.float)(unsafe.Pointer(&n.B[0])),
		eps, (*C.float)(unsafe.Pointer(&out[0])), 0, C.int(m))
}
