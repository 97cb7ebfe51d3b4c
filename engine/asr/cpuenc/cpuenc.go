// Package cpuenc runs Whisper on the CPU where ggml is slow for it: the
// decoder (Decoder: every layer of a step in one call, dec.c), the output
// projection alone (Logits), and the encoder blocks: the projections
// from float32 weights packed in panels of 16 outputs, layer norms, the GELU
// MLP, and self-attention as one fused kernel (softmax(Q·Kᵀ/√d)·V per head,
// a block of query rows at a time, so the n × n scores stay in the cache
// instead of going through memory three times: the product, the softmax,
// the second product). Every product is an AVX2 register tile (6 rows × 16
// columns, twelve accumulators); the exponential is a polynomial with
// relative error under 2e-7; GELU is by erf, as ggml's GELU_ERF. Built
// without AVX2 it is plain C loops.
//
// Why not ggml, which runs the rest of the model: in the pinned ollama
// module its CPU attention either writes the scores to memory (unfused) or
// reads one query row at a time (ggml_flash_attn_ext), and its F16 matrix
// kernel converts both operands in its inner loop; on this project's 2-core
// machine those made the tiny encoder 821 ms against whisper.cpp's 530
// (docs/decisions.md, "Speech engine speed").
package cpuenc

// #cgo CFLAGS: -O3
// #cgo LDFLAGS: -lm
// #include "attn.h"
import "C"

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Rows is the most query rows one kernel call takes.
const Rows = C.BOXD_ATTN_ROWS

// Supported says whether the kernel takes heads of width d: a multiple of
// 16 (Whisper's are 64).
func Supported(d int) bool { return d > 0 && d%16 == 0 }

// Encoder computes self-attention over n positions of width S = heads·d:
// q, k and v are [n × S] (position major, head h at columns h·d..), and
// the result, in the same layout, is written to out. threads workers
// share the heads' row blocks.
func Attention(q, k, v, out []float32, n, heads, d, threads int) error {
	return attention(q, k, v, out, n, heads, d, threads, nil)
}

// attentionScratch is what attention allocates, kept across the layers of
// one Encoder.Forward: the transposed keys and each worker's scores.
type attentionScratch struct {
	kt     []float32
	scores [][]float32
	tmp    [][]float32
}

// grow returns b with room for n floats, reusing it when it has.
func grow(b []float32, n int) []float32 {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]float32, n)
}

func attention(q, k, v, out []float32, n, heads, d, threads int, sc *attentionScratch) error {
	S := heads * d
	switch {
	case !Supported(d):
		return fmt.Errorf("attn: head width %d is not a multiple of 16", d)
	case n <= 0 || heads <= 0:
		return fmt.Errorf("attn: %d positions, %d heads", n, heads)
	case len(q) < n*S || len(k) < n*S || len(v) < n*S || len(out) < n*S:
		return fmt.Errorf("attn: tensors shorter than %d × %d", n, S)
	}
	threads = max(1, threads)
	np := (n + 15) / 16 * 16
	scale := float32(1 / math.Sqrt(float64(d)))
	if sc == nil {
		sc = &attentionScratch{}
	}
	sc.kt = grow(sc.kt, heads*d*np)
	kt := sc.kt
	var wg sync.WaitGroup
	var next atomic.Int64
	for range min(threads, heads) {
		wg.Go(func() {
			for h := int(next.Add(1) - 1); h < heads; h = int(next.Add(1) - 1) {
				C.boxd_attn_transpose_keys((*C.float)(unsafe.Pointer(&k[0])), C.int(n), C.int(S), C.int(d), C.int(h), C.float(scale),
					(*C.float)(unsafe.Pointer(&kt[h*d*np])), C.int(np))
			}
		})
	}
	wg.Wait()
	blocks := (n + Rows - 1) / Rows
	tasks := heads * blocks
	next.Store(0)
	workers := min(threads, tasks)
	for len(sc.scores) < workers {
		sc.scores, sc.tmp = append(sc.scores, nil), append(sc.tmp, nil)
	}
	for w := range workers {
		sc.scores[w], sc.tmp[w] = grow(sc.scores[w], Rows*np), grow(sc.tmp[w], Rows*d)
	}
	for w := range workers {
		wg.Go(func() {
			scores, tmp := sc.scores[w], sc.tmp[w]
			for t := int(next.Add(1) - 1); t < tasks; t = int(next.Add(1) - 1) {
				h, b := t/blocks, t%blocks
				i0, i1 := b*Rows, min(n, (b+1)*Rows)
				C.boxd_attn_rows((*C.float)(unsafe.Pointer(&q[0])), (*C.float)(unsafe.Pointer(&kt[h*d*np])), (*C.float)(unsafe.Pointer(&v[0])),
					(*C.float)(unsafe.Pointer(&out[0])), C.int(n), C.int(np), C.int(S), C.int(d), C.int(h), C.int(i0), C.int(i1),
					(*C.float)(unsafe.Pointer(&scores[0])), (*C.float)(unsafe.Pointer(&tmp[0])))
			}
		})
	}
	wg.Wait()
	return nil
}
