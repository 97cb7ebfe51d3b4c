package cpuenc

// #include "attn.h"
import "C"

import (
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// Logits is Whisper's output projection (the token embedding, [V × K]) on
// the CPU: a pass over the weights serves every column at once, four at a
// time, where ggml's product of several columns with F16 weights converts
// every weight row again for each column. Weights stay F16 when the model
// stores them so (half the bytes a step reads) or F32.
type Logits struct {
	V, K int
	w16  []uint16
	w32  []float32
}

// NewLogits takes the embedding [V × K] as float32 values; f16 keeps them
// as half precision (exact when they were stored so). K must be a
// multiple of 8.
func NewLogits(w []float32, V, K int, f16 bool) (*Logits, error) {
	if V <= 0 || K <= 0 || K%8 != 0 || len(w) != V*K {
		return nil, fmt.Errorf("cpuenc: an output projection of %d × %d with %d weights (K a multiple of 8)", V, K, len(w))
	}
	l := &Logits{V: V, K: K}
	if !f16 {
		l.w32 = w
		return l, nil
	}
	l.w16 = make([]uint16, len(w))
	C.boxd_f32_to_f16((*C.float)(unsafe.Pointer(&w[0])), (*C.uint16_t)(unsafe.Pointer(&l.w16[0])), C.long(len(w)))
	return l, nil
}

// Project writes out [cols × V] (V fastest) = x [cols × K] · Wᵀ, the
// vocabulary split over threads workers.
func (l *Logits) Project(x []float32, cols int, out []float32, threads int) error {
	if cols <= 0 || len(x) < cols*l.K || len(out) < cols*l.V {
		return fmt.Errorf("cpuenc: %d columns of %d into %d logits", cols, len(x), len(out))
	}
	var w16 *C.uint16_t
	var w32 *C.float
	if l.w16 != nil {
		w16 = (*C.uint16_t)(unsafe.Pointer(&l.w16[0]))
	} else {
		w32 = (*C.float)(unsafe.Pointer(&l.w32[0]))
	}
	threads = max(1, threads)
	chunk := (l.V + threads - 1) / threads
	var wg sync.WaitGroup
	for t := range threads {
		v0, v1 := t*chunk, min(l.V, (t+1)*chunk)
		if v0 >= v1 {
			break
		}
		wg.Go(func() {
			C.boxd_logits(w16, w32, C.int(l.K), (*C.float)(unsafe.Pointer(&x[0])), C.int(cols), (*C.float)(unsafe.Pointer(&out[0])),
				C.int(l.V), C.int(v0), C.int(v1))
		})
	}
	wg.Wait()
	return nil
}

// LogNormaliser is log Σ exp(l): the largest value subtracted first, the
// exponentials in float32 (relative error under 2e-7, as whisper.cpp's
// expf), summed in float64 every 64 values. An empty l gives -Inf.
func LogNormaliser(l []float32) float64 {
	if len(l) == 0 {
		return math.Inf(-1)
	}
	return float64(C.boxd_log_normaliser((*C.float)(unsafe.Pointer(&l[0])), C.long(len(l))))
}
