package decoding

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"boxd/engine/asr/cpuenc"
)

// Seq is one hypothesis: its sampled tokens (after the prompt) and the
// sum of their log-probabilities.
type Seq struct {
	Tokens   []int32
	Sum      float64
	Finished bool
}

// Score ranks finished hypotheses: sum of log-probabilities over length.
func Score(s *Seq) float64 { return s.Sum / float64(max(1, len(s.Tokens))) }

// BeamStep extends each beam with its best beamSize+1 tokens and keeps the
// best beamSize unfinished candidates; candidates ending in EOT are
// finished. It returns the new beams, their parents and their last tokens.
func BeamStep(beams []*Seq, lps [][]float64, size int, eot int32, finished []*Seq) ([]*Seq, []int32, []int32, []*Seq) {
	type cand struct {
		parent int
		tok    int32
		sum    float64
	}
	var cands []cand
	for i, b := range beams {
		top := topK(lps[i], size+1)
		for _, tok := range top {
			cands = append(cands, cand{i, tok, b.Sum + lps[i][tok]})
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].sum > cands[b].sum })
	var next []*Seq
	var parents, toks []int32
	seen := map[string]bool{}
	for _, c := range cands {
		tokens := append(append([]int32(nil), beams[c.parent].Tokens...), c.tok)
		key := fmt.Sprint(tokens)
		if seen[key] {
			continue
		}
		seen[key] = true
		if c.tok == eot {
			if len(finished) < size {
				finished = append(finished, &Seq{Tokens: tokens[:len(tokens)-1], Sum: c.sum, Finished: true})
			}
			continue
		}
		if len(next) < size {
			next = append(next, &Seq{Tokens: tokens, Sum: c.sum})
			parents = append(parents, int32(c.parent))
			toks = append(toks, c.tok)
		}
	}
	for len(next) < size { // keep the batch full
		next = append(next, next[0])
		parents = append(parents, parents[0])
		toks = append(toks, toks[0])
	}
	return next, parents, toks, finished
}

func logAdd(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	m := math.Max(a, b)
	return m + math.Log(math.Exp(a-m)+math.Exp(b-m))
}

func logSoftmax(l []float32) []float64 {
	return LogSoftmaxInto(make([]float64, len(l)), l)
}

// logNormaliser is log Σ exp(l), computed as logSoftmax does: the
// exponentials in float32, as whisper.cpp's, summed in float64
// (cpuenc.LogNormaliser; over 51,865 logits a step this was a fifth of a
// millisecond of math.Exp).
func logNormaliser(l []float32) float64 { return cpuenc.LogNormaliser(l) }

// LogSoftmaxInto writes the log-probabilities of l into out (len(l)).
func LogSoftmaxInto(out []float64, l []float32) []float64 {
	lz := logNormaliser(l)
	for i, v := range l {
		out[i] = float64(v) - lz
	}
	return out
}

// ArgmaxLogProb is the index of the largest logit (the first of equals,
// as argmaxF over logSoftmax(l)) and its log-probability.
func ArgmaxLogProb(l []float32) (int32, float64) {
	best := 0
	for i, v := range l {
		if v > l[best] {
			best = i
		}
	}
	return int32(best), float64(l[best]) - logNormaliser(l)
}

// SoftmaxAt is the probability of token i under the logits l.
func SoftmaxAt(l []float32, i int32) float64 { return math.Exp(logSoftmax(l)[i]) }

func argmaxF(x []float64) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

func topK(x []float64, k int) []int32 {
	idx := make([]int32, 0, k)
	for range k {
		best := int32(-1)
		for i, v := range x {
			if math.IsInf(v, -1) {
				continue
			}
			taken := false
			for _, j := range idx {
				if j == int32(i) {
					taken = true
					break
				}
			}
			if !taken && (best < 0 || v > x[best]) {
				best = int32(i)
			}
		}
		if best < 0 {
			break
		}
		idx = append(idx, best)
	}
	return idx
}

// Sample draws from softmax(logprobs / T).
func Sample(lp []float64, t float64, rng *rand.Rand) int32 {
	mx := math.Inf(-1)
	for _, v := range lp {
		mx = math.Max(mx, v/t)
	}
	var z float64
	w := make([]float64, len(lp))
	for i, v := range lp {
		w[i] = math.Exp(v/t - mx)
		z += w[i]
	}
	r := rng.Float64() * z
	for i, v := range w {
		r -= v
		if r <= 0 && v > 0 {
			return int32(i)
		}
	}
	return argmaxF(lp)
}

// CompressionRatio is len(text) / len(zlib(text)), as openai/whisper
// computes it to catch repetition loops.
func CompressionRatio(text string) float64 {
	if text == "" {
		return 0
	}
	var buf bytes.Buffer
	w, _ := zlib.NewWriterLevel(&buf, 6)
	_, _ = w.Write([]byte(text))
	_ = w.Close()
	return float64(len(text)) / float64(buf.Len())
}
