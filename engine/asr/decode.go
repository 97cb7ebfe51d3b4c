package asr

import (
	"context"
	"math/rand/v2"
	"sort"
	"strings"

	"boxd/engine/asr/decoding"
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
	return decoding.Language(tk, lg[0], among)
}

// decodeWindow decodes the window whose encoding is in the caches at one
// temperature.
func (m *Model) decodeWindow(ctx context.Context, sl *slot, lang string, o DecodeOptions, temperature float64, rng *rand.Rand) (windowResult, error) {
	tk := m.tok
	sot, err := decoding.Prefix(tk, lang, o.Task == TaskTranslate, o.Timestamps)
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
	noSpeech := decoding.SoftmaxAt(first[0][0], tk.NoSpeech)
	if n > 1 {
		if err := m.reorderAlone(sl, make([]int32, n), len(initial)); err != nil {
			return windowResult{}, err
		}
	}
	rules := decoding.Rules{Tok: tk, Suppress: decoding.Suppressed(tk, o.KeepNonSpeech), Timestamps: o.Timestamps, MaxInitialTimestamp: o.MaxInitialTimestamp}
	seqs := make([]*decoding.Seq, n)
	for i := range seqs {
		seqs[i] = &decoding.Seq{}
	}
	logits := make([][]float32, n)
	for i := range logits {
		logits[i] = first[0][1]
	}
	past := len(initial)
	maxCandidates := n
	var finished []*decoding.Seq
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
			rules.Filter(l, s.Tokens, len(s.Tokens) == 0)
			if greedy {
				picks[i], bestLP[i] = decoding.ArgmaxLogProb(l)
			} else {
				decoding.LogSoftmaxInto(lps[i], l)
			}
		}
		var next, parents []int32
		if beam {
			seqs, parents, next, finished = decoding.BeamStep(seqs, lps, n, tk.EOT, finished)
			if len(finished) >= maxCandidates {
				break
			}
		} else {
			next = make([]int32, n)
			done := true
			for i, s := range seqs {
				if s.Finished {
					next[i] = tk.EOT
					continue
				}
				var tok int32
				if greedy {
					tok = picks[i]
					s.Sum += bestLP[i]
				} else {
					tok = decoding.Sample(lps[i], temperature, rng)
					s.Sum += lps[i][tok]
				}
				if tok == tk.EOT {
					s.Finished = true
				} else {
					s.Tokens = append(s.Tokens, tok)
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
		sort.SliceStable(seqs, func(a, b int) bool { return seqs[a].Sum > seqs[b].Sum })
		candidates = append(candidates, seqs[:n-len(candidates)]...)
	}
	best := candidates[0]
	for _, c := range candidates[1:] {
		if decoding.Score(c) > decoding.Score(best) {
			best = c
		}
	}
	text := tk.Decode(decoding.TextTokens(best.Tokens, tk.EOT))
	return windowResult{
		tokens: best.Tokens, sumLogProb: best.Sum, avgLogProb: best.Sum / float64(len(best.Tokens)+1),
		noSpeechProb: noSpeech, compressionRatio: decoding.CompressionRatio(strings.TrimSpace(text)), temperature: temperature,
	}, nil
}
