package llm

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"boxd/gpu"
)

// Sampling controls how tokens are chosen.
type Sampling struct {
	Temperature      float32 // 0: greedy
	TopP             float32 // 0 or 1: off
	TopK             int     // 0: off
	MinP             float32 // 0: off
	RepeatPenalty    float32 // 0 or 1: off
	RepeatLastN      int     // 0: 64
	FrequencyPenalty float32
	PresencePenalty  float32
	// Seed for sampling; nil draws one at random.
	Seed *uint32
}

// Request is one generation.
type Request struct {
	// Prompt is the tokens to continue (already templated and tokenized).
	Prompt []int32
	// MaxTokens caps the generated tokens (the engine also caps at the
	// context left).
	MaxTokens int
	Sampling  Sampling
	// Stop ends generation at the first of these strings (not included).
	Stop []string
	// Grammar, when set, constrains the output (GBNF; see SchemaGrammar).
	Grammar string
	// Priority orders the request among the box's work.
	Priority gpu.Priority
	// Images are pictures placed among the prompt's tokens (from
	// TokenizeImages); they count against the context as their tokens do.
	Images []ImageEmbedding
	// TopLogprobs, 1 to MaxTopLogprobs, reports each generated token's log
	// probability and that many likeliest tokens (Result.Logprobs); 0:
	// none, at no cost.
	TopLogprobs int
}

// Finish says why generation ended.
type Finish string

// Finish reasons.
const (
	FinishStop      Finish = "stop"   // end of generation token, stop string, grammar complete
	FinishLength    Finish = "length" // MaxTokens or the context reached
	FinishCancelled Finish = "cancelled"
	FinishError     Finish = "error"
)

// Result is a finished job.
type Result struct {
	Text             string
	PromptTokens     int
	CompletionTokens int
	// CachedTokens is how many prompt tokens came from the sequence's cache.
	CachedTokens int
	Finish       Finish
	Err          error
	// Logprobs are the generated tokens whose pieces went into Text, in
	// order, when the request asked (TopLogprobs); not the end-of-generation
	// token. A stop string cuts the token holding it when none of its bytes
	// are in Text, so Text is a prefix of the pieces' bytes joined (equal
	// without a stop string, invalid UTF-8 aside).
	Logprobs []TokenLogprob
}

// Job is a running generation. Read its text with Next; Result tells how it
// ended.
type Job struct {
	ctx       context.Context
	prompt    []int32                // images as placeholders (negative ids)
	images    map[int]ImageEmbedding // by where they start in prompt
	maxTokens int
	sampler   *C.struct_boxd_sampler
	release   func()

	generated int
	reused    int
	out       output

	topLogprobs int
	logprobs    []TokenLogprob // written by the engine loop only

	mu     sync.Mutex
	ready  chan struct{} // signalled when text or the end arrives
	result *Result
}

// Generate queues a request and returns its job once the request has a
// sequence (it waits behind higher-priority work). It fails at once with
// ErrBusy when the queue is full, ErrPromptTooLong when the prompt does not
// fit the context, and ErrGrammar when the grammar does not parse.
func (e *Engine) Generate(ctx context.Context, r Request) (*Job, error) {
	if e.closed.Load() {
		return nil, ErrClosed
	}
	if len(r.Prompt) == 0 {
		return nil, errors.New("llm: empty prompt")
	}
	for _, t := range r.Prompt {
		if t < 0 || int(t) >= e.nVocab {
			return nil, fmt.Errorf("llm: token %d is outside the vocabulary", t)
		}
	}
	if r.TopLogprobs < 0 || r.TopLogprobs > MaxTopLogprobs {
		return nil, fmt.Errorf("llm: top logprobs %d outside 0 to %d", r.TopLogprobs, MaxTopLogprobs)
	}
	prompt, images, err := e.withImages(r)
	if err != nil {
		return nil, err
	}
	if len(prompt) >= e.nCtxSeq {
		return nil, fmt.Errorf("%w: %d tokens; one request may use %d tokens of context, prompt and answer together", ErrPromptTooLong, len(prompt), e.nCtxSeq)
	}
	maxTokens := r.MaxTokens
	if maxTokens <= 0 || maxTokens > e.nCtxSeq-len(prompt) {
		maxTokens = e.nCtxSeq - len(prompt)
	}
	smp, err := newSampler(e.model, r.Sampling, r.Grammar)
	if err != nil {
		return nil, err
	}
	release, err := e.pool.Acquire(ctx, r.Priority)
	if err != nil {
		C.boxd_sampler_free(smp)
		return nil, err
	}
	j := &Job{
		ctx: ctx, prompt: prompt, images: images, maxTokens: maxTokens, sampler: smp, release: release,
		out: output{stops: r.Stop}, ready: make(chan struct{}, 1), topLogprobs: r.TopLogprobs,
	}
	j.out.notify = j.signal
	select {
	case e.submit <- j:
	case <-e.quit:
		j.fail(ErrClosed)
	}
	return j, nil
}

func newSampler(model *C.struct_llama_model, s Sampling, grammar string) (*C.struct_boxd_sampler, error) {
	p := C.struct_boxd_sampling{
		temperature: C.float(s.Temperature), top_p: 1, top_k: C.int32_t(s.TopK), min_p: C.float(s.MinP),
		repeat_penalty: 1, repeat_last_n: 64,
		frequency_penalty: C.float(s.FrequencyPenalty), presence_penalty: C.float(s.PresencePenalty),
	}
	if s.TopP > 0 && s.TopP < 1 {
		p.top_p = C.float(s.TopP)
	}
	if s.RepeatPenalty > 0 {
		p.repeat_penalty = C.float(s.RepeatPenalty)
	}
	if s.RepeatLastN > 0 {
		p.repeat_last_n = C.int32_t(s.RepeatLastN)
	}
	if s.Seed != nil {
		p.seed = C.uint32_t(*s.Seed)
	} else {
		var b [4]byte
		_, _ = rand.Read(b[:])
		p.seed = C.uint32_t(binary.LittleEndian.Uint32(b[:]))
	}
	var cg *C.char
	if grammar != "" {
		cg = C.CString(grammar)
		defer C.free(unsafe.Pointer(cg))
	}
	var errBuf [256]C.char
	smp := C.boxd_sampler_new(model, p, cg, &errBuf[0], C.size_t(len(errBuf)))
	if smp == nil {
		return nil, fmt.Errorf("%w: %s", ErrGrammar, C.GoString(&errBuf[0]))
	}
	return smp, nil
}

func (j *Job) signal() {
	select {
	case j.ready <- struct{}{}:
	default:
	}
}

// complete is called by the engine loop when the job ends.
func (j *Job) complete(reason Finish, err error) {
	j.out.flush(reason == FinishStop || reason == FinishLength)
	C.boxd_sampler_free(j.sampler)
	j.sampler = nil
	j.release()
	j.mu.Lock()
	j.result = &Result{
		Text: j.out.all.String(), PromptTokens: len(j.prompt), CompletionTokens: j.generated,
		CachedTokens: j.reused, Finish: reason, Err: err, Logprobs: emittedLogprobs(j.logprobs, j.out.emitted),
	}
	j.mu.Unlock()
	j.signal()
}

// fail ends a job that never ran.
func (j *Job) fail(err error) {
	if j.sampler != nil {
		C.boxd_sampler_free(j.sampler)
		j.sampler = nil
	}
	j.release()
	j.mu.Lock()
	j.result = &Result{PromptTokens: len(j.prompt), Finish: FinishError, Err: err}
	j.mu.Unlock()
	j.signal()
}

// Next returns the next piece of text as it is generated, io.EOF after the
// last one, or ctx's error.
func (j *Job) Next(ctx context.Context) (string, error) {
	for {
		if s, ok := j.out.take(); ok {
			return s, nil
		}
		j.mu.Lock()
		done := j.result != nil
		j.mu.Unlock()
		if done {
			if s, ok := j.out.take(); ok {
				return s, nil
			}
			return "", io.EOF
		}
		select {
		case <-j.ready:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// Wait blocks until the job ends and returns its result.
func (j *Job) Wait(ctx context.Context) (Result, error) {
	for {
		if _, err := j.Next(ctx); err != nil {
			if errors.Is(err, io.EOF) {
				return j.Result(), nil
			}
			return Result{}, err
		}
	}
}

// Result is the job's outcome; zero until it ends.
func (j *Job) Result() Result {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.result == nil {
		return Result{}
	}
	return *j.result
}

// output turns token bytes into text pieces: it holds back incomplete UTF-8
// sequences and any tail that could be the start of a stop string, and
// ends the text at the first stop string.
type output struct {
	mu      sync.Mutex
	stops   []string
	raw     []byte // bytes not yet valid UTF-8
	held    string // text that may begin a stop string
	queue   []string
	all     strings.Builder
	stopped bool
	emitted int // bytes pushed that went into all (before invalid UTF-8 is replaced)
	notify  func()
}

// push adds a token's bytes; it returns true when a stop string was found.
func (o *output) push(b []byte) bool {
	o.mu.Lock()
	if o.stopped {
		o.mu.Unlock()
		return true
	}
	o.raw = append(o.raw, b...)
	n := validPrefix(o.raw)
	text := o.held + string(o.raw[:n])
	o.raw = o.raw[n:]
	o.held = ""
	stopped := false
	if i, ok := firstStop(text, o.stops); ok {
		text, stopped = text[:i], true
		o.stopped = true
		o.raw = nil
	} else if k := heldTail(text, o.stops); k > 0 {
		o.held = text[len(text)-k:]
		text = text[:len(text)-k]
	}
	if text != "" {
		o.emitted += len(text)
		text = strings.ToValidUTF8(text, "\uFFFD")
		o.queue = append(o.queue, text)
		o.all.WriteString(text)
	}
	o.mu.Unlock()
	if text != "" {
		o.notify()
	}
	return stopped
}

// flush releases held text at the end (invalid trailing bytes become
// U+FFFD) when the generation completed.
func (o *output) flush(emit bool) {
	o.mu.Lock()
	var text string
	if emit && !o.stopped {
		text = o.held + strings.ToValidUTF8(string(o.raw), "\uFFFD")
		o.emitted += len(o.held) + len(o.raw)
	}
	o.held, o.raw = "", nil
	if text != "" {
		o.queue = append(o.queue, text)
		o.all.WriteString(text)
	}
	o.mu.Unlock()
}

func (o *output) take() (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.queue) == 0 {
		return "", false
	}
	s := strings.Join(o.queue, "")
	o.queue = o.queue[:0]
	return s, true
}

// validPrefix is the length of the longest prefix of b that does not end
// inside a UTF-8 sequence.
func validPrefix(b []byte) int {
	for back := 0; back < 4 && back < len(b); back++ {
		i := len(b) - 1 - back
		c := b[i]
		if c < 0x80 {
			return len(b)
		}
		if c >= 0xC0 { // a leading byte: is its sequence complete?
			need := 2
			if c >= 0xE0 {
				need = 3
			}
			if c >= 0xF0 {
				need = 4
			}
			if len(b)-i >= need {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

func firstStop(text string, stops []string) (int, bool) {
	best := -1
	for _, s := range stops {
		if s == "" {
			continue
		}
		if i := strings.Index(text, s); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best, best >= 0
}

// heldTail is the length of the longest suffix of text that is a proper
// prefix of a stop string.
func heldTail(text string, stops []string) int {
	best := 0
	for _, s := range stops {
		for k := min(len(s)-1, len(text)); k > best; k-- {
			if strings.HasSuffix(text, s[:k]) {
				best = k
				break
			}
		}
	}
	// Never split a UTF-8 sequence.
	for best > 0 && best < len(text) && !utf8.RuneStart(text[len(text)-best]) {
		best++
	}
	return best
}
