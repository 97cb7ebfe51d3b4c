package llm

/*
#include "bridge.h"
*/
import "C"

import (
	"math"
	"unsafe"
)

// MaxTopLogprobs is the most alternatives Request.TopLogprobs may ask for
// (OpenAI's and ollama's limit).
const MaxTopLogprobs = 20

// TopLogprob is one of the likeliest tokens at a generated position.
type TopLogprob struct {
	Token   string  // the piece as text: string(Bytes), which may not be valid UTF-8 alone
	Bytes   []byte  // the piece's bytes as the engine renders them (control tokens: none)
	Logprob float64 // natural log of its probability under the raw logits
}

// TokenLogprob is a generated token with its log probability and the
// likeliest tokens at its position. The log probabilities are the
// log-softmax of the model's raw logits there, in float64: before
// temperature, penalties and grammar, as llama-server and ollama report
// them; under greedy sampling the chosen token is Top[0] (ties: the lower
// token id first).
type TokenLogprob struct {
	Token   string
	Bytes   []byte
	Logprob float64
	// Top are the TopLogprobs likeliest tokens, by descending Logprob,
	// ties by token id.
	Top []TopLogprob
}

// logprobs reads the logits at batch index at and describes the chosen
// token tok, whose piece is piece, with the top likeliest tokens.
func (e *Engine) logprobs(at int, tok int32, piece []byte, top int) TokenLogprob {
	p := C.llama_get_logits_ith(e.lctx, C.int32_t(at))
	if p == nil {
		return TokenLogprob{Token: string(piece), Bytes: piece, Logprob: math.NaN()}
	}
	lps, best := logSoftmaxTop(unsafe.Slice((*float32)(unsafe.Pointer(p)), e.nVocab), tok, top)
	out := TokenLogprob{Token: string(piece), Bytes: piece, Logprob: lps, Top: make([]TopLogprob, len(best))}
	for i, b := range best {
		bp := e.piece(b.id)
		out.Top[i] = TopLogprob{Token: string(bp), Bytes: bp, Logprob: b.lp}
	}
	return out
}

type scored struct {
	id int32
	lp float64
}

// logSoftmaxTop is the log-softmax of logits at tok, and the top likeliest
// ids with theirs, by descending value, ties by id.
func logSoftmaxTop(logits []float32, tok int32, top int) (float64, []scored) {
	mx := math.Inf(-1)
	for _, l := range logits {
		mx = max(mx, float64(l))
	}
	var sum float64
	for _, l := range logits {
		sum += math.Exp(float64(l) - mx)
	}
	lse := mx + math.Log(sum)
	best := make([]scored, 0, top+1)
	for i, l := range logits {
		v := float64(l)
		if len(best) == top && v <= best[top-1].lp {
			continue // not above the last kept (equal: the kept has the lower id)
		}
		k := len(best)
		for k > 0 && v > best[k-1].lp {
			k--
		}
		best = append(best, scored{})
		copy(best[k+1:], best[k:])
		best[k] = scored{int32(i), v}
		best = best[:min(len(best), top)]
	}
	for i := range best {
		best[i].lp -= lse
	}
	return float64(logits[tok]) - lse, best
}

// emittedLogprobs keeps the tokens that put at least one byte into the
// text, which took the first emitted bytes of their pieces (an empty piece
// is kept when it lies within them): a stop string drops the tokens whose
// pieces lie wholly in or after it.
func emittedLogprobs(lps []TokenLogprob, emitted int) []TokenLogprob {
	off := 0
	for i, lp := range lps {
		if off >= emitted && (len(lp.Bytes) > 0 || off > emitted) {
			return lps[:i]
		}
		off += len(lp.Bytes)
	}
	return lps
}
