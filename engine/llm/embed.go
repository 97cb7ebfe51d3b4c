package llm

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"
)

// Embedder runs a BERT-style encoder: sentence embeddings (mean or CLS
// pooling, as the file says) or cross-encoder reranking (rank pooling).
type Embedder struct {
	mu      sync.Mutex
	model   *C.struct_llama_model
	vocab   *C.struct_llama_vocab
	lctx    *C.struct_llama_context
	batch   C.struct_llama_batch
	info    Info
	nEmbd   int
	nCtx    int
	nSeq    int
	pooling C.enum_llama_pooling_type
	sep     int32
	closed  bool

	dec threadedDecode
}

// embedSeqs is how many texts one batch carries.
const embedSeqs = 16

// OpenEmbedder loads an embedding or reranking model.
func OpenEmbedder(ctx context.Context, o Options) (*Embedder, error) {
	if o.Threads <= 0 {
		o.Threads = runtime.NumCPU()
	}
	m, err := loadModel(ctx, o.Path, modelParams(o.GPULayers), o.Progress)
	if err != nil {
		return nil, fmt.Errorf("llm: load embedder: %w", err)
	}
	info, err := describe(m, o.Path)
	if err != nil {
		C.llama_model_free(m)
		return nil, fmt.Errorf("llm: %w", err)
	}
	nCtx := info.ContextLength
	if o.ContextLength > 0 {
		nCtx = min(nCtx, o.ContextLength)
	}
	cp := C.llama_context_default_params()
	cp.embeddings = true
	// One decode holds at most nCtx tokens (whole texts: an encoder reads
	// each text in one piece). Attention in a batch runs over all of its
	// tokens, masked per text, so its cost grows with the square of the
	// batch: 16 texts of up to nCtx tokens in one decode ran 4× slower
	// than ollama, which decodes 512 tokens at a time.
	if o.GPULayers == 0 {
		// llama.cpp turns flash attention on by itself where the backend
		// has it; this ggml's CPU kernel made embedding 4× slower than
		// ollama's (which leaves it off on the CPU).
		cp.flash_attn_type = C.LLAMA_FLASH_ATTN_TYPE_DISABLED
	}
	cp.n_ctx = C.uint32_t(nCtx)
	cp.n_batch = C.uint32_t(nCtx)
	cp.n_ubatch = C.uint32_t(nCtx)
	cp.n_seq_max = embedSeqs
	cp.n_threads = C.int32_t(o.Threads)
	cp.n_threads_batch = C.int32_t(o.Threads)
	cp.no_perf = true
	lctx := C.llama_init_from_model(m, cp)
	if lctx == nil {
		C.llama_model_free(m)
		return nil, fmt.Errorf("llm: could not create the embedding context")
	}
	e := &Embedder{
		model: m, vocab: C.llama_model_get_vocab(m), lctx: lctx, info: info,
		nEmbd: int(C.llama_model_n_embd(m)), nCtx: nCtx, nSeq: embedSeqs,
		pooling: C.llama_pooling_type(lctx),
	}
	e.dec = newThreadedDecode(o)
	e.sep = int32(C.llama_vocab_sep(e.vocab))
	if e.pooling == C.LLAMA_POOLING_TYPE_NONE {
		e.Close()
		return nil, errors.New("llm: the model has no pooling: it is not a sentence-embedding or reranking model")
	}
	e.batch = C.llama_batch_init(C.int32_t(nCtx), 0, 1)
	return e, nil
}

// Info describes the model.
func (e *Embedder) Info() Info { return e.info }

// Dim is the embedding size.
func (e *Embedder) Dim() int { return e.nEmbd }

// IsReranker reports whether the model scores pairs (rank pooling).
func (e *Embedder) IsReranker() bool { return e.pooling == C.LLAMA_POOLING_TYPE_RANK }

// MaxTokens is the longest input; longer ones are cut to it.
func (e *Embedder) MaxTokens() int { return e.nCtx }

// Close frees the model.
func (e *Embedder) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.closed = true
	if e.batch.token != nil {
		C.llama_batch_free(e.batch)
	}
	freeContext(e.lctx)
	C.llama_model_free(e.model)
}

// CountTokens is how many tokens text takes as Embed feeds it (special
// tokens included, before any cut to MaxTokens).
func (e *Embedder) CountTokens(text string) (int, error) {
	toks, err := tokenize(e.vocab, text, true, false)
	return len(toks), err
}

// Embed returns one unit-length vector per text.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.IsReranker() {
		return nil, errors.New("llm: this model is a reranker; use Rerank")
	}
	inputs := make([][]int32, len(texts))
	for i, t := range texts {
		toks, err := tokenize(e.vocab, t, true, false)
		if err != nil {
			return nil, err
		}
		inputs[i] = e.cut(toks)
	}
	out, err := e.run(ctx, inputs, e.nEmbd)
	if err != nil {
		return nil, err
	}
	for _, v := range out {
		normalise(v)
	}
	return out, nil
}

// Rerank scores each document against the query (higher is more relevant).
func (e *Embedder) Rerank(ctx context.Context, query string, docs []string) ([]float32, error) {
	if !e.IsReranker() {
		return nil, errors.New("llm: this model is not a reranker (its pooling is not rank)")
	}
	q, err := tokenize(e.vocab, query, true, false) // [CLS] query [SEP]
	if err != nil {
		return nil, err
	}
	inputs := make([][]int32, len(docs))
	for i, d := range docs {
		dt, err := tokenize(e.vocab, d, false, false)
		if err != nil {
			return nil, err
		}
		in := append(append(append([]int32(nil), q...), dt...), e.sep)
		inputs[i] = e.cut(in)
	}
	scores, err := e.run(ctx, inputs, 1)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(scores))
	for i, s := range scores {
		out[i] = s[0]
	}
	return out, nil
}

func (e *Embedder) cut(toks []int32) []int32 {
	if len(toks) > e.nCtx {
		return toks[:e.nCtx]
	}
	return toks
}

// run encodes inputs in batches of up to nSeq sequences and reads n floats
// of each sequence's pooled output.
func (e *Embedder) run(ctx context.Context, inputs [][]int32, n int) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	out := make([][]float32, len(inputs))
	for start := 0; start < len(inputs); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := start
		tokens := 0
		for end < len(inputs) && end-start < e.nSeq && tokens+len(inputs[end]) <= e.nCtx {
			tokens += len(inputs[end])
			end++
		}
		k := 0
		for i := start; i < end; i++ {
			for p, tok := range inputs[i] {
				C.boxd_batch_set(&e.batch, C.int32_t(k), C.llama_token(tok), C.llama_pos(p), C.llama_seq_id(i-start), true)
				k++
			}
		}
		e.batch.n_tokens = C.int32_t(k)
		if mem := C.llama_get_memory(e.lctx); mem != nil {
			C.llama_memory_clear(mem, true)
		}
		if rc := e.dec.decode(e.lctx, e.batch, k); rc != 0 {
			return nil, fmt.Errorf("llm: encode failed (llama_decode returned %d)", int(rc))
		}
		for i := start; i < end; i++ {
			p := C.llama_get_embeddings_seq(e.lctx, C.llama_seq_id(i-start))
			if p == nil {
				return nil, errors.New("llm: no pooled output")
			}
			v := make([]float32, n)
			copy(v, unsafe.Slice((*float32)(unsafe.Pointer(p)), n))
			out[i] = v
		}
		start = end
	}
	return out, nil
}

func normalise(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}
