// Package decoding holds openai/whisper's decoding rules over a decoder
// step's logits, apart from the model that computes them (package asr):
// the task prefix, the suppressed tokens and the timestamp rules (Rules),
// language detection from the language tokens' logits, log-softmax and the
// greedy, beam-search and temperature picks, the compression ratio that
// catches repetition loops, and cutting a window's tokens into segments at
// timestamp pairs. Token ids are those of package tokenizer.
package decoding

import (
	"errors"
	"fmt"
	"math"

	"boxd/engine/asr/frontend"
	"boxd/engine/asr/tokenizer"
)

// nonSpeech are the tokens openai/whisper suppresses by default ("-1"):
// symbols and music marks, for English-only and multilingual vocabularies.
var nonSpeechEN = []int32{1, 2, 7, 8, 9, 10, 14, 25, 26, 27, 28, 29, 31, 58, 59, 60, 61, 62, 63, 90, 91, 92, 93, 357, 366, 438, 532, 685, 705, 796, 930, 1058, 1220, 1267, 1279, 1303, 1343, 1377, 1391, 1635, 1782, 1875, 2162, 2361, 2488, 3467, 4008, 4211, 4600, 4808, 5299, 5855, 6329, 7203, 9609, 9959, 10563, 10786, 11420, 11709, 11907, 13163, 13697, 13700, 14808, 15306, 16410, 16791, 17992, 19203, 19510, 20724, 22305, 22935, 27007, 30109, 30420, 33409, 34949, 40283, 40493, 40549, 47282, 49146}

var nonSpeechML = []int32{1, 2, 7, 8, 9, 10, 14, 25, 26, 27, 28, 29, 31, 58, 59, 60, 61, 62, 63, 90, 91, 92, 93, 359, 503, 522, 542, 873, 893, 902, 918, 922, 931, 1350, 1853, 1982, 2460, 2627, 3246, 3253, 3268, 3536, 3846, 3961, 4183, 4667, 6585, 6647, 7273, 9061, 9383, 10428, 10929, 11938, 12033, 12331, 12562, 13793, 14157, 14635, 15265, 15618, 16553, 16604, 18362, 18956, 20075, 21675, 22520, 26130, 26161, 26435, 28279, 29464, 31650, 32302, 32470, 36865, 42863, 47425, 49870, 50254}

// blankToken is " " in Whisper's vocabularies.
const blankToken = 220

// Suppressed lists the tokens masked at every step: the task and control
// tokens and, unless keepNonSpeech, the non-speech symbols.
func Suppressed(tk *tokenizer.Tokenizer, keepNonSpeech bool) []int32 {
	out := []int32{tk.Transcribe, tk.Translate, tk.SOT, tk.Prev, tk.SOLM, tk.NoSpeech}
	if !keepNonSpeech {
		if tk.Multilingual {
			out = append(out, nonSpeechML...)
		} else {
			out = append(out, nonSpeechEN...)
		}
	}
	return out
}

// Prefix is the task prefix: <|startoftranscript|> [language task]
// [<|notimestamps|>], the task translate when translate is set.
func Prefix(tk *tokenizer.Tokenizer, lang string, translate, timestamps bool) ([]int32, error) {
	seq := []int32{tk.SOT}
	if tk.Multilingual {
		lt, err := tk.LanguageToken(lang)
		if err != nil {
			return nil, err
		}
		task := tk.Transcribe
		if translate {
			task = tk.Translate
		}
		seq = append(seq, lt, task)
	} else if translate {
		return nil, errors.New("asr: an English-only model cannot translate")
	}
	if !timestamps {
		seq = append(seq, tk.NoTimestamps)
	}
	return seq, nil
}

// Language reads the logits l of the step on <|startoftranscript|> as
// language detection: the likeliest language and each language's
// probability, limited to among (nil: all the model knows).
func Language(tk *tokenizer.Tokenizer, l []float32, among []string) (string, map[string]float64, error) {
	allowed := map[string]bool{}
	for _, c := range among {
		allowed[c] = true
	}
	mx := math.Inf(-1)
	for i, c := range tokenizer.Languages[:tk.NLanguages] {
		if len(allowed) == 0 || allowed[c] {
			mx = math.Max(mx, float64(l[int(tk.SOT)+1+i]))
		}
	}
	probs := map[string]float64{}
	var z float64
	for i, c := range tokenizer.Languages[:tk.NLanguages] {
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

// Rules are openai/whisper's logit filters for one decode.
type Rules struct {
	Tok *tokenizer.Tokenizer
	// Suppress are the tokens masked at every step (Suppressed).
	Suppress []int32
	// Timestamps allows timestamp tokens, under the timestamp rules.
	Timestamps bool
	// MaxInitialTimestamp bounds the first timestamp (seconds).
	MaxInitialTimestamp float64
}

// Filter applies the logit filters in place to the logits l that follow
// the sampled tokens (first: none yet): suppress blank at the first step,
// suppress the configured tokens and every control token, and the
// timestamp rules.
func (r *Rules) Filter(l []float32, tokens []int32, first bool) {
	tk := r.Tok
	ninf := float32(math.Inf(-1))
	if first {
		l[blankToken] = ninf
		l[tk.EOT] = ninf
	}
	for _, t := range r.Suppress {
		l[t] = ninf
	}
	// Control tokens (start, languages, tasks, <|notimestamps|>, ...) are
	// never text, as whisper.cpp holds; only EOT and, with timestamps on,
	// the timestamp tokens may follow the prompt.
	for t := tk.EOT + 1; t < tk.TimestampBegin; t++ {
		l[t] = ninf
	}
	if !r.Timestamps {
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
		last := tk.TimestampBegin + int32(math.Round(r.MaxInitialTimestamp/0.02))
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

// TextTokens drops special tokens (timestamps included).
func TextTokens(toks []int32, eot int32) []int32 {
	out := make([]int32, 0, len(toks))
	for _, t := range toks {
		if t < eot {
			out = append(out, t)
		}
	}
	return out
}

// A Span is a segment of a window's tokens with its times in seconds from
// the window's start.
type Span struct {
	Tokens     []int32
	Start, End float64
}

// Cut cuts the tokens decoded over a window of size mel frames at
// consecutive timestamp pairs and says how many frames to advance.
func Cut(tk *tokenizer.Tokenizer, toks []int32, size int, timestamps bool) ([]Span, int) {
	dur := float64(size) * frontend.HopLength / frontend.SampleRate
	if !timestamps {
		return []Span{{toks, 0, dur}}, size
	}
	isTS := func(i int) bool { return tk.IsTimestamp(toks[i]) }
	n := len(toks)
	singleEnding := n >= 2 && !isTS(n-2) && isTS(n-1)
	var cuts []int
	for i := 0; i+1 < n; i++ {
		if isTS(i) && isTS(i+1) {
			cuts = append(cuts, i+1)
		}
	}
	if len(cuts) == 0 {
		end := dur
		for i := n - 1; i >= 0; i-- {
			if isTS(i) && toks[i] != tk.TimestampBegin {
				end = tk.TimestampSeconds(toks[i])
				break
			}
		}
		return []Span{{toks, 0, end}}, size
	}
	if singleEnding {
		cuts = append(cuts, n)
	}
	var spans []Span
	last := 0
	for _, c := range cuts {
		slice := toks[last:c]
		if len(slice) > 0 && tk.IsTimestamp(slice[0]) && tk.IsTimestamp(slice[len(slice)-1]) {
			spans = append(spans, Span{slice, tk.TimestampSeconds(slice[0]), tk.TimestampSeconds(slice[len(slice)-1])})
		}
		last = c
	}
	if singleEnding {
		return spans, size
	}
	lastTS := toks[last-1]
	return spans, max(1, int(lastTS-tk.TimestampBegin)*2)
}
