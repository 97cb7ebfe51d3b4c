package asr

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"boxd/engine/asr/cpuenc"
)

// Tasks.
const (
	TaskTranscribe = "transcribe"
	TaskTranslate  = "translate"
)

// DecodeOptions follow openai/whisper's decoding options and defaults.
type DecodeOptions struct {
	Task string // transcribe (default) or translate (to English)
	// Language is a code ("en", "es", ...) or "" / "auto" to detect it.
	Language string
	// DetectAmong limits language detection to these codes (nil: all the
	// model knows).
	DetectAmong []string
	// Timestamps decodes segment timestamps.
	Timestamps bool
	// BeamSize: 0 or 1 is greedy; 5 is openai's CLI default. Used at T=0.
	BeamSize int
	// BestOf samples at T>0 (default 5).
	BestOf int
	// Temperatures is the fallback schedule (default 0, 0.2, ..., 1.0).
	Temperatures []float64
	// Thresholds for falling back to the next temperature and for skipping
	// silence (defaults 2.4, -1.0, 0.6).
	CompressionRatioThreshold float64
	LogProbThreshold          float64
	NoSpeechThreshold         float64
	// MaxInitialTimestamp bounds the first timestamp (default 1.0 s).
	MaxInitialTimestamp float64
	// KeepNonSpeech turns off the suppression of non-speech symbols.
	KeepNonSpeech bool
	// Prompt is earlier text tokens given as context (<|startofprev|>).
	Prompt []int32
	// Seed makes sampling reproducible.
	Seed uint64
	// MaxTokens bounds the tokens sampled per window (0: 224, half the
	// text context, as openai/whisper).
	MaxTokens int
	// AudioContext, above 0, encodes only that many encoder positions (50
	// a second) of each window instead of all of them (1500, 30 s): much
	// faster on short audio, somewhat less accurate, since Whisper was
	// trained on whole windows (whisper.cpp's audio_ctx). Windows then
	// hold AudioContext/50 seconds.
	AudioContext int
}

func (o DecodeOptions) withDefaults() DecodeOptions {
	if o.Task == "" {
		o.Task = TaskTranscribe
	}
	if o.Language == "auto" {
		o.Language = ""
	}
	if o.BestOf <= 0 {
		o.BestOf = 5
	}
	if o.Temperatures == nil {
		o.Temperatures = []float64{0, 0.2, 0.4, 0.6, 0.8, 1.0}
	}
	if o.CompressionRatioThreshold == 0 {
		o.CompressionRatioThreshold = 2.4
	}
	if o.LogProbThreshold == 0 {
		o.LogProbThreshold = -1.0
	}
	if o.NoSpeechThreshold == 0 {
		o.NoSpeechThreshold = 0.6
	}
	if o.MaxInitialTimestamp == 0 {
		o.MaxInitialTimestamp = 1.0
	}
	return o
}

// windowResult is one decode of one 30 s window.
type windowResult struct {
	tokens           []int32 // sampled tokens before EOT
	sumLogProb       float64
	avgLogProb       float64
	noSpeechProb     float64
	compressionRatio float64
	temperature      float64
}

// nonSpeech are the tokens openai/whisper suppresses by default ("-1"):
// symbols and music marks, for English-only and multilingual vocabularies.
var nonSpeechEN = []int32{1, 2, 7, 8, 9, 10, 14, 25, 26, 27, 28, 29, 31, 58, 59, 60, 61, 62, 63, 90, 91, 92, 93, 357, 366, 438, 532, 685, 705, 796, 930, 1058, 1220, 1267, 1279, 1303, 1343, 1377, 1391, 1635, 1782, 1875, 2162, 2361, 2488, 3467, 4008, 4211, 4600, 4808, 5299, 5855, 6329, 7203, 9609, 9959, 10563, 10786, 11420, 11709, 11907, 13163, 13697, 13700, 14808, 15306, 16410, 16791, 17992, 19203, 19510, 20724, 22305, 22935, 27007, 30109, 30420, 33409, 34949, 40283, 40493, 40549, 47282, 49146}

var nonSpeechML = []int32{1, 2, 7, 8, 9, 10, 14, 25, 26, 27, 28, 29, 31, 58, 59, 60, 61, 62, 63, 90, 91, 92, 93, 359, 503, 522, 542, 873, 893, 902, 918, 922, 931, 1350, 1853, 1982, 2460, 2627, 3246, 3253, 3268, 3536, 3846, 3961, 4183, 4667, 6585, 6647, 7273, 9061, 9383, 10428, 10929, 11938, 12033, 12331, 12562, 13793, 14157, 14635, 15265, 15618, 16553, 16604, 18362, 18956, 20075, 21675, 22520, 26130, 26161, 26435, 28279, 29464, 31650, 32302, 32470, 36865, 42863, 47425, 49870, 50254}

// blankToken is " " in Whisper's vocabularies.
const blankToken = 220

// suppressed lists the tokens masked at every step.
func (m *Model) suppressed(o DecodeOptions) []int32 {
	tk := m.tok
	out := []int32{tk.Transcribe, tk.Translate, tk.SOT, tk.Prev, tk.SOLM, tk.NoSpeech}
	if !o.KeepNonSpeech {
		if tk.Multilingual {
			out = append(out, nonSpeechML...)
		} else {
			out = append(out, nonSpeechEN...)
		}
	}
	return out
}

// sotSequence is the task prefix: <|startoftranscript|> [language task]
// [<|notimestamps|>].
func (m *Model) sotSequence(lang string, o DecodeOptions) ([]int32, error) {
	tk := m.tok
	seq := []int32{tk.SOT}
	if tk.Multilingual {
		lt, err := tk.LanguageToken(lang)
		if err != nil {
			return nil, err
		}
		task := tk.Transcribe
		if o.Task == TaskTranslate {
			task = tk.Translate
		}
		seq = append(seq, lt, task)
	} else if o.Task == TaskTranslate {
		return nil, errors.New("asr: an English-only model cannot translate")
	}
	if !o.Timestamps {
		seq = append(seq, tk.NoTimestamps)
	}
	return seq, nil
}

// DetectLanguage runs the decoder on <|startoftranscript|> over the
// window in the caches and returns each language's probability, limited to
// among (nil: all).
func (m *Model) detectLanguage(sl *slot, among []string) (string, map[string]float64, error) {
	tk := m.tok
	if !tk.Multilingual {
		return "en", map[string]float64{"en": 1}, nil
	}
	lg, err := m.step(sl, []int32{tk.SOT}, 0, nil)
	if err != nil {
		return "", nil, err
	}
	l := lg[0]
	allowed := map[string]bool{}
	for _, c := range among {
		allowed[c] = true
	}
	mx := math.Inf(-1)
	for i, c := range Languages[:tk.NLanguages] {
		if len(allowed) == 0 || allowed[c] {
			mx = math.Max(mx, float64(l[int(tk.SOT)+1+i]))
		}
	}
	probs := map[string]float64{}
	var z float64
	for i, c := range Languages[:tk.NLanguages] {
		if len(allowed) == 0 || allowed[c] {
			p := math.Exp(float64(l[int(tk.SOT)+1+i]) - mx)
			probs[c] = p
			z += p
		}
	}
	best, bestP := "", -1.0
	for c, p := range probs {
		probs[c] = p / z
		if probs[c] > bestP || (probs[c] == bestP && c < best) {
			best, bestP = c, probs[c]
		}
	}
	if best == "" {
		return "", nil, fmt.Errorf("asr: no language among %v", among)
	}
	return best, probs, nil
}

// seq is one hypothesis.
type seq struct {
	tokens   []int32 // sampled tokens (after the prompt)
	sum      float64
	finished bool
}

// decodeWindow decodes the window whose encoding is in the caches at one
// temperature.
func (m *Model) decodeWindow(ctx context.Context, sl *slot, lang string, o DecodeOptions, temperature float64, rng *rand.Rand) (windowResult, error) {
	tk := m.tok
	sot, err := m.sotSequence(lang, o)
	if err != nil {
		return windowResult{}, err
	}
	var initial []int32
	if len(o.Prompt) > 0 {
		keep := o.Prompt[max(0, len(o.Prompt)-(m.hp.NTextCtx/2-1)):]
		initial = append(append(initial, tk.Prev), keep...)
	}
	sotIndex := len(initial)
	initial = append(initial, sot...)
	sampleBegin := len(initial)
	sampleLen := m.hp.NTextCtx / 2
	if o.MaxTokens > 0 {
		sampleLen = min(sampleLen, o.MaxTokens)
	}

	beam := temperature == 0 && o.BeamSize > 1
	n := 1
	switch {
	case beam:
		n = min(o.BeamSize, maxBeams)
	case temperature > 0:
		n = min(o.BestOf, maxBeams)
	}
	first, err := m.logits(sl, [][]int32{initial}, 0, []int{sotIndex, len(initial) - 1})
	if err != nil {
		return windowResult{}, err
	}
	noSpeech := softmaxAt(first[0][0], tk.NoSpeech)
	if n > 1 {
		if err := m.reorderAlone(sl, make([]int32, n), len(initial)); err != nil {
			return windowResult{}, err
		}
	}
	suppress := m.suppressed(o)
	seqs := make([]*seq, n)
	for i := range seqs {
		seqs[i] = &seq{}
	}
	logits := make([][]float32, n)
	for i := range logits {
		logits[i] = first[0][1]
	}
	past := len(initial)
	maxCandidates := n
	var finished []*seq
	// Buffers every step reuses: the filtered logits and, where a step
	// needs all of them (beams, sampling), the log-probabilities. Greedy
	// decoding needs only the best token and its log-probability, one pass
	// over the logits without a second array.
	greedy := !beam && temperature == 0
	filtered := make([][]float32, n)
	lps := make([][]float64, n)
	for i := range n {
		filtered[i] = make([]float32, len(logits[0]))
		if !greedy {
			lps[i] = make([]float64, len(logits[0]))
		}
	}
	bestLP := make([]float64, n)
	picks := make([]int32, n) // greedy: each sequence's best token this step
	// The steps run batched with other transcriptions' (batch.go).
	m.batch.enter()
	defer m.batch.leave()
	for step := 0; step < sampleLen && past < m.hp.NTextCtx; step++ {
		if err := ctx.Err(); err != nil {
			return windowResult{}, err
		}
		for i, s := range seqs {
			l := filtered[i][:len(logits[i])]
			copy(l, logits[i])
			m.filter(l, s.tokens, sampleBegin, len(s.tokens) == 0, suppress, o)
			if greedy {
				picks[i], bestLP[i] = argmaxLogProb(l)
			} else {
				logSoftmaxInto(lps[i], l)
			}
		}
		var next, parents []int32
		if beam {
			seqs, parents, next, finished = beamStep(seqs, lps, n, tk.EOT, finished)
			if len(finished) >= maxCandidates {
				break
			}
		} else {
			next = make([]int32, n)
			done := true
			for i, s := range seqs {
				if s.finished {
					next[i] = tk.EOT
					continue
				}
				var tok int32
				if greedy {
					tok = picks[i]
					s.sum += bestLP[i]
				} else {
					tok = sample(lps[i], temperature, rng)
					s.sum += lps[i][tok]
				}
				if tok == tk.EOT {
					s.finished = true
				} else {
					s.tokens = append(s.tokens, tok)
					done = false
				}
				next[i] = tok
			}
			if done {
				break
			}
		}
		lg, err := m.step(sl, next, past, parents)
		if err != nil {
			return windowResult{}, err
		}
		past++
		copy(logits, lg)
	}
	candidates := finished
	if !beam {
		candidates = seqs
	} else if len(candidates) < n {
		sort.SliceStable(seqs, func(a, b int) bool { return seqs[a].sum > seqs[b].sum })
		candidates = append(candidates, seqs[:n-len(candidates)]...)
	}
	best := candidates[0]
	for _, c := range candidates[1:] {
		if score(c) > score(best) {
			best = c
		}
	}
	text := tk.Decode(textTokens(best.tokens, tk.EOT))
	return windowResult{
		tokens: best.tokens, sumLogProb: best.sum, avgLogProb: best.sum / float64(len(best.tokens)+1),
		noSpeechProb: noSpeech, compressionRatio: compressionRatio(strings.TrimSpace(text)), temperature: temperature,
	}, nil
}

// score ranks finished hypotheses: sum of log-probabilities over length.
func score(s *seq) float64 { return s.sum / float64(max(1, len(s.tokens))) }

// beamStep extends each beam with its best beamSize+1 tokens and keeps the
// best beamSize unfinished candidates; candidates ending in EOT are
// finished. It returns the new beams, their parents and their last tokens.
func beamStep(beams []*seq, lps [][]float64, size int, eot int32, finished []*seq) ([]*seq, []int32, []int32, []*seq) {
	type cand struct {
		parent int
		tok    int32
		sum    float64
	}
	var cands []cand
	for i, b := range beams {
		top := topK(lps[i], size+1)
		for _, tok := range top {
			cands = append(cands, cand{i, tok, b.sum + lps[i][tok]})
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].sum > cands[b].sum })
	var next []*seq
	var parents, toks []int32
	seen := map[string]bool{}
	for _, c := range cands {
		tokens := append(append([]int32(nil), beams[c.parent].tokens...), c.tok)
		key := fmt.Sprint(tokens)
		if seen[key] {
			continue
		}
		seen[key] = true
		if c.tok == eot {
			if len(finished) < size {
				finished = append(finished, &seq{tokens: tokens[:len(tokens)-1], sum: c.sum, finished: true})
			}
			continue
		}
		if len(next) < size {
			next = append(next, &seq{tokens: tokens, sum: c.sum})
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

// filter applies openai/whisper's logit filters in place: suppress blank
// at the first step, suppress the configured tokens and every control
// token, and the timestamp rules.
func (m *Model) filter(l []float32, tokens []int32, sampleBegin int, first bool, suppress []int32, o DecodeOptions) {
	tk := m.tok
	ninf := float32(math.Inf(-1))
	if first {
		l[blankToken] = ninf
		l[tk.EOT] = ninf
	}
	for _, t := range suppress {
		l[t] = ninf
	}
	// Control tokens (start, languages, tasks, <|notimestamps|>, ...) are
	// never text, as whisper.cpp holds; only EOT and, with timestamps on,
	// the timestamp tokens may follow the prompt.
	for t := tk.EOT + 1; t < tk.TimestampBegin; t++ {
		l[t] = ninf
	}
	if !o.Timestamps {
		for t := tk.TimestampBegin; int(t) < len(l); t++ {
			l[t] = ninf
		}
		return
	}
	l[tk.NoTimestamps] = ninf
	n := len(tokens)
	lastTS := n >= 1 && tk.IsTimestamp(tokens[n-1])
	penultTS := n < 2 || tk.IsTimestamp(tokens[n-2])
	if lastTS {
		if penultTS { // after a pair of timestamps: text or EOT
			for t := tk.TimestampBegin; int(t) < len(l); t++ {
				l[t] = ninf
			}
		} else { // after one: a timestamp or EOT
			for t := int32(0); t < tk.EOT; t++ {
				l[t] = ninf
			}
		}
	}
	// Timestamps do not go backwards; a segment has a length.
	for i := n - 1; i >= 0; i-- {
		if tk.IsTimestamp(tokens[i]) {
			bound := tokens[i] + 1
			if lastTS && !penultTS {
				bound = tokens[i]
			}
			for t := tk.TimestampBegin; t < bound; t++ {
				l[t] = ninf
			}
			break
		}
	}
	if first { // the first token is a timestamp no later than MaxInitialTimestamp
		for t := int32(0); t < tk.TimestampBegin; t++ {
			l[t] = ninf
		}
		last := tk.TimestampBegin + int32(math.Round(o.MaxInitialTimestamp/0.02))
		for t := last + 1; int(t) < len(l); t++ {
			l[t] = ninf
		}
	}
	// When timestamps together are likelier than any text token, force one.
	// Both sides are log-probabilities over the same normaliser, so the
	// logits compare as they are: log Σ exp(timestamp logits) against the
	// largest text logit, without normalising all 51,865.
	tsSum := math.Inf(-1)
	for t := int(tk.TimestampBegin); t < len(l); t++ {
		tsSum = logAdd(tsSum, float64(l[t]))
	}
	maxText := math.Inf(-1)
	for t := 0; t < int(tk.TimestampBegin); t++ {
		maxText = math.Max(maxText, float64(l[t]))
	}
	if tsSum > maxText {
		for t := int32(0); t < tk.TimestampBegin; t++ {
			l[t] = ninf
		}
	}
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
	return logSoftmaxInto(make([]float64, len(l)), l)
}

// logNormaliser is log Σ exp(l), computed as logSoftmax does: the
// exponentials in float32, as whisper.cpp's, summed in float64
// (cpuenc.LogNormaliser; over 51,865 logits a step this was a fifth of a
// millisecond of math.Exp).
func logNormaliser(l []float32) float64 { return cpuenc.LogNormaliser(l) }

// logSoftmaxInto writes the log-probabilities of l into out (len(l)).
func logSoftmaxInto(out []float64, l []float32) []float64 {
	lz := logNormaliser(l)
	for i, v := range l {
		out[i] = float64(v) - lz
	}
	return out
}

// argmaxLogProb is the index of the largest logit (the first of equals,
// as argmaxF over logSoftmax(l)) and its log-probability.
func argmaxLogProb(l []float32) (int32, float64) {
	best := 0
	for i, v := range l {
		if v > l[best] {
			best = i
		}
	}
	return int32(best), float64(l[best]) - logNormaliser(l)
}

func softmaxAt(l []float32, i int32) float64 { return math.Exp(logSoftmax(l)[i]) }

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

// sample draws from softmax(logprobs / T).
func sample(lp []float64, t float64, rng *rand.Rand) int32 {
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

// textTokens drops special tokens (timestamps included).
func textTokens(toks []int32, eot int32) []int32 {
	out := make([]int32, 0, len(toks))
	for _, t := range toks {
		if t < eot {
			out = append(out, t)
		}
	}
	return out
}

// compressionRatio is len(text) / len(zlib(text)), as openai/whisper
// computes it to catch repetition loops.
func compressionRatio(text string) float64 {
	if text == "" {
		return 0
	}
	var buf bytes.Buffer
	w, _ := zlib.NewWriterLevel(&buf, 6)
	_, _ = w.Write([]byte(text))
	_ = w.Close()
	return float64(len(text)) / float64(buf.Len())
}
