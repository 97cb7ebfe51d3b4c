package asr

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"boxd/engine/asr/decoding"
	"boxd/engine/asr/frontend"
)

// Segment is a piece of the transcript with its time span.
type Segment struct {
	Start, End       float64 // seconds from the start of the audio
	Text             string
	Tokens           []int32
	AvgLogProb       float64
	NoSpeechProb     float64
	CompressionRatio float64
	Temperature      float64
}

// Transcript is the result of Transcribe.
type Transcript struct {
	Language     string
	LanguageProb float64
	Duration     float64 // seconds of audio
	Segments     []Segment
}

// Text joins the segments.
func (t *Transcript) Text() string {
	var b strings.Builder
	for _, s := range t.Segments {
		b.WriteString(s.Text)
	}
	return strings.TrimSpace(b.String())
}

// Transcribe decodes 16 kHz mono audio as openai/whisper's transcribe
// does: 30 s windows, temperature fallback on compression ratio and
// log-probability, windows skipped as silence by the no-speech rule,
// segments cut at timestamp pairs, earlier text as the prompt.
func (m *Model) Transcribe(ctx context.Context, pcm []float32, o DecodeOptions) (*Transcript, error) {
	o = o.withDefaults()
	if o.Task != TaskTranscribe && o.Task != TaskTranslate {
		return nil, fmt.Errorf("asr: task %q: use transcribe or translate", o.Task)
	}
	if len(pcm) == 0 {
		return nil, frontend.ErrEmpty
	}
	melStart := time.Now()
	spec, err := m.mel.Compute(pcm, frontend.NSamples)
	m.stats.add(&m.stats.mel, melStart)
	if err != nil {
		return nil, err
	}
	sl, err := m.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer m.release(sl)
	tk := m.tok
	out := &Transcript{Duration: float64(len(pcm)) / frontend.SampleRate}
	contentFrames := len(pcm) / frontend.HopLength
	frames := frontend.NFrames
	if o.AudioContext > 0 {
		frames = 2 * min(m.hp.NAudioCtx, o.AudioContext)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	var all []int32
	promptReset := 0
	lang := o.Language
	for seek := 0; seek < contentFrames; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		offset := float64(seek) * frontend.HopLength / frontend.SampleRate
		size := min(frames, contentFrames-seek)
		if _, err := m.encode(sl, spec.WindowN(seek, frames), false); err != nil {
			return nil, err
		}
		if lang == "" {
			code, probs, err := m.detectLanguage(sl, o.DetectAmong)
			if err != nil {
				return nil, err
			}
			lang, out.LanguageProb = code, probs[code]
		}
		if out.Language == "" {
			out.Language = lang
		}
		wo := o
		wo.Prompt = all[promptReset:]
		res, err := m.decodeWithFallback(ctx, sl, lang, wo, rng)
		if err != nil {
			return nil, err
		}
		if res.noSpeechProb > o.NoSpeechThreshold && res.avgLogProb <= o.LogProbThreshold {
			seek += size // silence
			continue
		}
		segs, advance := m.segments(res, offset, size, o.Timestamps)
		for _, s := range segs {
			if s.Start == s.End && o.Timestamps || strings.TrimSpace(s.Text) == "" {
				continue
			}
			out.Segments = append(out.Segments, s)
			all = append(all, decoding.TextTokens(s.Tokens, tk.EOT)...)
		}
		seek += advance
		if res.temperature > 0.5 {
			promptReset = len(all)
		}
	}
	return out, nil
}

// decodeWithFallback decodes at rising temperatures until the result is
// neither repetitive nor improbable (or the schedule ends).
func (m *Model) decodeWithFallback(ctx context.Context, sl *slot, lang string, o DecodeOptions, rng *rand.Rand) (windowResult, error) {
	var res windowResult
	for i, t := range o.Temperatures {
		r, err := m.decodeWindow(ctx, sl, lang, o, t, rng)
		if err != nil {
			return windowResult{}, err
		}
		res = r
		needs := r.compressionRatio > o.CompressionRatioThreshold || r.avgLogProb < o.LogProbThreshold
		if r.noSpeechProb > o.NoSpeechThreshold && r.avgLogProb < o.LogProbThreshold {
			needs = false // silence: the caller skips it
		}
		if !needs || i == len(o.Temperatures)-1 {
			break
		}
	}
	return res, nil
}

// segments cuts a window's tokens at consecutive timestamp pairs and says
// how many frames to advance.
func (m *Model) segments(r windowResult, offset float64, size int, timestamps bool) ([]Segment, int) {
	tk := m.tok
	spans, advance := decoding.Cut(tk, r.tokens, size, timestamps)
	var segs []Segment
	for _, s := range spans {
		segs = append(segs, Segment{Start: offset + s.Start, End: offset + s.End, Text: tk.Decode(decoding.TextTokens(s.Tokens, tk.EOT)), Tokens: s.Tokens,
			AvgLogProb: r.avgLogProb, NoSpeechProb: r.noSpeechProb, CompressionRatio: r.compressionRatio, Temperature: r.temperature})
	}
	return segs, advance
}
