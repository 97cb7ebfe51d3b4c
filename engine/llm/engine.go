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
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"boxd/engine/llm/threadtune"
	"boxd/engine/models"
	"boxd/gpu"
)

// EngineOptions configure a chat engine.
type EngineOptions struct {
	Options
	// Arbiter orders the engine's work among the box's other work; nil
	// makes a private one.
	Arbiter *gpu.Arbiter
	// MaxQueue is how many requests may wait for a sequence (back-pressure);
	// 0 means 4 times Parallel.
	MaxQueue int
	// Template overrides the chat template family found in the file.
	Template models.Template
	// Pool names the engine's slots on the arbiter ("": "llm"). Every
	// engine on one arbiter needs its own: a pool is found by name, and
	// one engine admitting jobs by another's capacity would give a job no
	// sequence.
	Pool string
}

// Engine runs one model with one llama.cpp context whose parallel sequences
// serve concurrent requests by continuous batching: every decode step
// carries the next token of each generating sequence plus chunks of the
// prompts being read, new requests join between steps, and a finished or
// cancelled request gives its sequence back at once.
type Engine struct {
	model *C.struct_llama_model
	vocab *C.struct_llama_vocab
	lctx  *C.struct_llama_context
	batch C.struct_llama_batch

	info     Info
	template models.Template
	nVocab   int
	nSeq     int
	nCtxSeq  int // tokens one sequence may hold
	nBatch   int
	nUbatch  int
	addBOS   bool
	vis      *vision // nil: text only

	dec threadedDecode

	pool   *gpu.Pool
	submit chan *Job
	quit   chan struct{}
	done   chan struct{}
	closed atomic.Bool

	stats struct {
		active, promptEval, promptReused, generated, cancelled atomic.Int64
	}
}

// promptChunk bounds the prompt tokens read in a step while other
// sequences are generating, so their next token is never held up long.
const promptChunk = 512

// Open loads the model and starts the engine.
func Open(ctx context.Context, o EngineOptions) (*Engine, error) {
	if o.ContextLength <= 0 || o.Parallel <= 0 {
		return nil, fmt.Errorf("llm: context length %d and parallel %d must be positive", o.ContextLength, o.Parallel)
	}
	if o.Threads <= 0 {
		o.Threads = runtime.NumCPU()
	}
	m, err := loadModel(ctx, o.Path, modelParams(o.GPULayers), o.Progress)
	if err != nil {
		return nil, fmt.Errorf("llm: load: %w", err)
	}
	info, err := describe(m, o.Path)
	if err != nil {
		C.llama_model_free(m)
		return nil, fmt.Errorf("llm: %w", err)
	}
	nCtxSeq := o.ContextLength
	if info.ContextLength > 0 && nCtxSeq > info.ContextLength {
		slog.Warn("llm: context length above what the model was trained for; using the model's", "configured", nCtxSeq, "trained", info.ContextLength)
		nCtxSeq = info.ContextLength
	}
	cp := C.llama_context_default_params()
	cp.n_ctx = C.uint32_t(nCtxSeq * o.Parallel)
	cp.n_batch = C.uint32_t(min(nCtxSeq*o.Parallel, 2048))
	cp.n_ubatch = C.uint32_t(min(nCtxSeq*o.Parallel, 512))
	cp.n_seq_max = C.uint32_t(o.Parallel)
	cp.n_threads = C.int32_t(o.Threads)
	cp.n_threads_batch = C.int32_t(o.Threads)
	cp.kv_unified = false // each sequence owns nCtxSeq cells
	cp.no_perf = true
	lctx := C.llama_init_from_model(m, cp)
	if lctx == nil {
		C.llama_model_free(m)
		return nil, fmt.Errorf("llm: could not create a context of %d tokens for %d sequences (too little memory?)", nCtxSeq, o.Parallel)
	}
	var vis *vision
	if o.Projector != "" {
		vis, err = openVision(m, o.Projector, o.GPULayers != 0, o.Threads)
		if err != nil {
			freeContext(lctx)
			C.llama_model_free(m)
			return nil, err
		}
	}
	e := &Engine{
		model: m, vocab: C.llama_model_get_vocab(m), lctx: lctx, info: info, vis: vis,
		nSeq: o.Parallel, nCtxSeq: nCtxSeq, nBatch: int(C.llama_n_batch(lctx)), nUbatch: int(C.llama_n_ubatch(lctx)),
		submit: make(chan *Job, o.Parallel), quit: make(chan struct{}), done: make(chan struct{}),
	}
	e.dec = newThreadedDecode(o.Options)
	e.nVocab = int(C.llama_vocab_n_tokens(e.vocab))
	e.addBOS = bool(C.llama_vocab_get_add_bos(e.vocab))
	e.template = models.Template(info.ChatTemplate)
	if o.Template != "" {
		e.template = o.Template
	}
	e.batch = C.llama_batch_init(C.int32_t(e.nBatch), 0, 1)
	arb := o.Arbiter
	if arb == nil {
		arb = gpu.NewArbiter()
	}
	maxQueue := o.MaxQueue
	if maxQueue <= 0 {
		maxQueue = 4 * o.Parallel
	}
	pool := o.Pool
	if pool == "" {
		pool = "llm"
	}
	e.pool = arb.Pool(pool, o.Parallel, maxQueue)
	go e.loop()
	return e, nil
}

// Info describes the loaded model (WeightsRoot empty).
func (e *Engine) Info() Info { return e.info }

// Template is the chat template family the engine renders.
func (e *Engine) Template() models.Template { return e.template }

// ContextPerRequest is the most tokens (prompt plus answer) one request
// may use.
func (e *Engine) ContextPerRequest() int { return e.nCtxSeq }

// Parallel is the number of sequences decoded together.
func (e *Engine) Parallel() int { return e.nSeq }

// Stats are counters for tests and metrics.
type Stats struct {
	Active          int64 // sequences running a request
	Waiting         int   // requests waiting for a sequence
	PromptEvaluated int64 // prompt tokens decoded
	PromptReused    int64 // prompt tokens found in a sequence's cache
	Generated       int64 // tokens generated
	Cancelled       int64 // requests cancelled while running
}

// Stats reads the counters.
func (e *Engine) Stats() Stats {
	return Stats{
		Active: e.stats.active.Load(), Waiting: e.pool.Waiting(),
		PromptEvaluated: e.stats.promptEval.Load(), PromptReused: e.stats.promptReused.Load(),
		Generated: e.stats.generated.Load(), Cancelled: e.stats.cancelled.Load(),
	}
}

// Close stops the engine: running requests end with ErrClosed.
func (e *Engine) Close() {
	if e.closed.Swap(true) {
		return
	}
	close(e.quit)
	<-e.done
	C.llama_batch_free(e.batch)
	e.vis.close()
	freeContext(e.lctx)
	C.llama_model_free(e.model)
}

// Errors of Generate.
var (
	ErrClosed        = errors.New("llm: engine closed")
	ErrPromptTooLong = errors.New("llm: prompt too long")
	ErrGrammar       = errors.New("llm: grammar")
	ErrBusy          = gpu.ErrQueueFull
)

// slot is one sequence of the context.
type slot struct {
	seq     int
	job     *Job
	cached  []int32 // tokens whose KV cells the sequence holds, in order
	pending []int32 // prompt tokens still to decode
	next    int32   // sampled token to decode next (-1: none)
	logitAt int     // batch index of this slot's logits in the current step
}

func (e *Engine) loop() {
	defer close(e.done)
	slots := make([]*slot, e.nSeq)
	for i := range slots {
		slots[i] = &slot{seq: i, next: -1, logitAt: -1}
	}
	mem := C.llama_get_memory(e.lctx)
	for {
		// Admit: requests join between steps.
	admit:
		for {
			select {
			case j := <-e.submit:
				e.assign(mem, slots, j)
			default:
				break admit
			}
		}
		active := 0
		for _, s := range slots {
			if s.job != nil {
				active++
			}
		}
		if active == 0 {
			select {
			case j := <-e.submit:
				e.assign(mem, slots, j)
				continue
			case <-e.quit:
				e.drain(mem, slots)
				return
			}
		}
		select {
		case <-e.quit:
			e.drain(mem, slots)
			return
		default:
		}
		// Cancelled requests leave at once, freeing their cells.
		for _, s := range slots {
			if s.job != nil && s.job.ctx.Err() != nil {
				e.stats.cancelled.Add(1)
				e.finish(mem, s, FinishCancelled, s.job.ctx.Err())
			}
		}
		e.step(mem, slots)
	}
}

// assign puts a job on the free sequence whose cached tokens share the
// longest prefix with its prompt, and keeps that prefix.
func (e *Engine) assign(mem C.llama_memory_t, slots []*slot, j *Job) {
	var best *slot
	bestN := -1
	for _, s := range slots {
		if s.job != nil {
			continue
		}
		n := commonPrefix(s.cached, j.prompt)
		if n > bestN {
			best, bestN = s, n
		}
	}
	if best == nil { // cannot happen: the arbiter admits at most nSeq jobs
		j.fail(fmt.Errorf("llm: no free sequence"))
		return
	}
	keep := min(bestN, len(j.prompt)-1) // the last prompt token is read again for its logits
	for start, im := range j.images {
		if start < keep && keep < start+im.Tokens {
			keep = start // an image is decoded whole or not at all
		}
	}
	if keep < len(best.cached) {
		if !C.llama_memory_seq_rm(mem, C.llama_seq_id(best.seq), C.llama_pos(keep), -1) {
			C.llama_memory_seq_rm(mem, C.llama_seq_id(best.seq), -1, -1)
			keep = 0
		}
		best.cached = best.cached[:keep]
	}
	best.job = j
	best.pending = j.prompt[keep:]
	best.next = -1
	j.reused = keep
	e.stats.promptReused.Add(int64(keep))
	e.stats.active.Add(1)
}

func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// step builds one batch, decodes it and samples for every sequence whose
// logits it produced.
func (e *Engine) step(mem C.llama_memory_t, slots []*slot) {
	// Images first, each on its own: embeddings cannot share a batch with
	// tokens.
	for _, s := range slots {
		if s.job == nil || len(s.pending) == 0 {
			continue
		}
		if im, ok := s.job.images[len(s.job.prompt)-len(s.pending)]; ok {
			if err := e.decodeImage(s, im); err != nil {
				e.finish(mem, s, FinishError, err)
			}
		}
	}
	n := 0
	generating := false
	for _, s := range slots {
		s.logitAt = -1
		if s.job != nil && s.next >= 0 {
			C.boxd_batch_set(&e.batch, C.int32_t(n), C.llama_token(s.next), C.llama_pos(len(s.cached)), C.llama_seq_id(s.seq), true)
			s.logitAt = n
			n++
			generating = true
		}
	}
	budget := e.nBatch - n
	if generating {
		budget = min(budget, promptChunk)
	}
	type fed struct {
		s *slot
		k int
	}
	var prompts []fed
	inBatch := map[*slot]bool{}
	for _, s := range slots {
		if s.logitAt >= 0 {
			inBatch[s] = true
		}
	}
	for _, s := range slots {
		if s.job == nil || len(s.pending) == 0 || budget <= 0 {
			continue
		}
		k := min(len(s.pending), budget)
		if s.pending[0] < 0 {
			continue // an image's placeholders: decoded above, next step
		}
		for i := range k {
			if s.pending[i] < 0 {
				k = i // stop before the next image
				break
			}
		}
		for i := range k {
			last := i == k-1 && k == len(s.pending)
			C.boxd_batch_set(&e.batch, C.int32_t(n), C.llama_token(s.pending[i]), C.llama_pos(len(s.cached)+i), C.llama_seq_id(s.seq), C.bool(last))
			if last {
				s.logitAt = n
			}
			n++
		}
		budget -= k
		prompts = append(prompts, fed{s, k})
		inBatch[s] = true
	}
	if n == 0 {
		return
	}
	e.batch.n_tokens = C.int32_t(n)
	if rc := e.dec.decode(e.lctx, e.batch, n); rc != 0 {
		err := fmt.Errorf("llm: decode failed (llama_decode returned %d)", int(rc))
		for s := range inBatch {
			e.finish(mem, s, FinishError, err)
		}
		return
	}
	// Decoded tokens are now in the cache.
	for _, s := range slots {
		if s.job != nil && s.next >= 0 && s.logitAt >= 0 {
			s.cached = append(s.cached, s.next)
			s.next = -1
		}
	}
	for _, f := range prompts {
		f.s.cached = append(f.s.cached, f.s.pending[:f.k]...)
		f.s.pending = f.s.pending[f.k:]
		e.stats.promptEval.Add(int64(f.k))
	}
	for _, s := range slots {
		if s.job == nil || s.logitAt < 0 || len(s.pending) > 0 {
			continue
		}
		j := s.job
		tok := int32(C.boxd_sampler_sample(j.sampler, e.lctx, C.int32_t(s.logitAt)))
		if tok < 0 {
			e.finish(mem, s, FinishError, errors.New("llm: sampling failed"))
			continue
		}
		C.boxd_sampler_accept(j.sampler, C.llama_token(tok))
		if bool(C.llama_vocab_is_eog(e.vocab, C.llama_token(tok))) {
			e.finish(mem, s, FinishStop, nil)
			continue
		}
		j.generated++
		e.stats.generated.Add(1)
		piece := e.piece(tok)
		if j.topLogprobs > 0 {
			j.logprobs = append(j.logprobs, e.logprobs(s.logitAt, tok, piece, j.topLogprobs))
		}
		if j.out.push(piece) {
			e.finish(mem, s, FinishStop, nil) // a stop string
			continue
		}
		if j.generated >= j.maxTokens || len(s.cached)+1 >= e.nCtxSeq {
			e.finish(mem, s, FinishLength, nil)
			continue
		}
		s.next = tok
	}
}

// finish ends a slot's job. A cancelled or failed job's cells are freed;
// a completed one's stay as the sequence's prefix cache.
func (e *Engine) finish(mem C.llama_memory_t, s *slot, reason Finish, err error) {
	j := s.job
	if reason == FinishCancelled || reason == FinishError {
		C.llama_memory_seq_rm(mem, C.llama_seq_id(s.seq), -1, -1)
		s.cached = s.cached[:0]
	}
	s.job, s.pending, s.next = nil, nil, -1
	e.stats.active.Add(-1)
	j.complete(reason, err)
}

func (e *Engine) drain(mem C.llama_memory_t, slots []*slot) {
	for _, s := range slots {
		if s.job != nil {
			e.finish(mem, s, FinishError, ErrClosed)
		}
	}
	for {
		select {
		case j := <-e.submit:
			j.fail(ErrClosed)
		default:
			return
		}
	}
}

// piece is the bytes a token stands for (control tokens render empty).
func (e *Engine) piece(tok int32) []byte {
	var buf [256]byte
	n := C.llama_token_to_piece(e.vocab, C.llama_token(tok), (*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf)), 0, false)
	if n < 0 {
		big := make([]byte, -n)
		n = C.llama_token_to_piece(e.vocab, C.llama_token(tok), (*C.char)(unsafe.Pointer(&big[0])), C.int32_t(len(big)), 0, false)
		return big[:max(n, 0)]
	}
	return append([]byte(nil), buf[:n]...)
}

// Tokenize turns text into tokens. addSpecial adds the model's BOS (and
// EOS where the model wants it); parseSpecial reads control tokens written
// as text (<|im_start|>) as single tokens.
func (e *Engine) Tokenize(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	return tokenize(e.vocab, text, addSpecial, parseSpecial)
}

func tokenize(vocab *C.struct_llama_vocab, text string, addSpecial, parseSpecial bool) ([]int32, error) {
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	capacity := len(text) + 8
	out := make([]int32, capacity)
	n := C.llama_tokenize(vocab, ctext, C.int32_t(len(text)), (*C.llama_token)(unsafe.Pointer(&out[0])), C.int32_t(capacity), C.bool(addSpecial), C.bool(parseSpecial))
	if n < 0 {
		out = make([]int32, -n)
		n = C.llama_tokenize(vocab, ctext, C.int32_t(len(text)), (*C.llama_token)(unsafe.Pointer(&out[0])), C.int32_t(len(out)), C.bool(addSpecial), C.bool(parseSpecial))
	}
	if n < 0 {
		return nil, fmt.Errorf("llm: tokenize failed")
	}
	return out[:n], nil
}

// CountTokens is the number of tokens text takes (no special tokens added).
func (e *Engine) CountTokens(text string) int {
	t, err := e.Tokenize(text, false, false)
	if err != nil {
		return 0
	}
	return len(t)
}

// Detokenize turns tokens back into text (control tokens omitted).
func (e *Engine) Detokenize(tokens []int32) string {
	var b []byte
	for _, t := range tokens {
		b = append(b, e.piece(t)...)
	}
	return string(b)
}

// AddsBOS reports whether tokenizing with addSpecial adds a BOS token.
func (e *Engine) AddsBOS() bool { return e.addBOS }

// IsEOG reports whether a token ends generation.
func (e *Engine) IsEOG(tok int32) bool {
	return bool(C.llama_vocab_is_eog(e.vocab, C.llama_token(tok)))
}

// threadedDecode runs llama_decode with the thread count its tuner picks
// (package threadtune), timing each step for it; with no tuner, the context's
// count as configured.
type threadedDecode struct {
	tune     *threadtune.Tuner // nil: threads as configured
	threads  int               // the count the context decodes with now
	switches int               // times the count was changed (tests)
}

func newThreadedDecode(o Options) threadedDecode {
	d := threadedDecode{threads: o.Threads}
	if o.TuneThreads && o.GPULayers == 0 {
		d.tune = threadtune.New(o.Threads, time.Now())
	}
	return d
}

// decode decodes batch, of tokens tokens, in lctx.
func (d *threadedDecode) decode(lctx *C.struct_llama_context, batch C.struct_llama_batch, tokens int) C.int32_t {
	if d.tune == nil {
		return C.llama_decode(lctx, batch)
	}
	if k := d.tune.Threads(time.Now()); k != d.threads {
		C.llama_set_n_threads(lctx, C.int32_t(k), C.int32_t(k))
		d.threads = k
		d.switches++
	}
	t0 := time.Now()
	rc := C.llama_decode(lctx, batch)
	if rc == 0 {
		now := time.Now()
		d.tune.Observe(tokens, now.Sub(t0), now)
	}
	return rc
}
