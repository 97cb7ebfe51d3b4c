// Package stream turns live 16 kHz audio into transcript events: Silero
// VAD cuts sentences, a sliding re-decode of the sentence in progress gives
// partial text under a local-agreement policy, and each finished sentence
// is decoded once more, whole, for its final text.
package stream

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"boxd/engine/asr"
	"boxd/engine/asr/frontend"
	"boxd/engine/asr/tokenizer"
	"boxd/engine/asr/vad"
)

// Event is a transcript event (contract, platform section 2): I is the
// sentence index, T seconds since the session start at the sentence's
// first word; Final false carries the cumulative text of the sentence in
// progress, Final true the finished sentence, which replaces it.
type Event struct {
	I     int     `json:"i"`
	T     float64 `json:"t"`
	Text  string  `json:"text"`
	Final bool    `json:"final"`
	// End is when a final sentence's speech ended (the VAD span's end, in
	// seconds of session audio); 0 on partials and dropped sentences.
	End float64 `json:"end,omitempty"`
}

// Recognizer decodes audio; *asr.Model is one.
type Recognizer interface {
	Transcribe(ctx context.Context, pcm []float32, o asr.DecodeOptions) (*asr.Transcript, error)
	Tokenizer() *tokenizer.Tokenizer
}

// Detector gives the speech probability of one VAD window; *vad.Model is one.
type Detector interface {
	Prob(st *vad.State, window []float32) (float32, error)
}

// Options configure a session. Zero values take the defaults noted.
type Options struct {
	// Language is a code such as "en", or "" / "auto": detected on the
	// first sentence and kept for the rest of the session.
	Language string
	// DetectAmong limits detection (nil: every language the model knows).
	DetectAmong []string
	// Task is asr.TaskTranscribe (default) or asr.TaskTranslate.
	Task string
	// VAD cuts sentences; MaxSpeechS defaults to 20 s so that a sentence
	// always fits one Whisper window with room to spare.
	VAD vad.Params
	// StepS is how much new audio triggers a partial re-decode (1 s).
	StepS float64
	// MinPartialS is the least audio a partial decode looks at (0.5 s).
	MinPartialS float64
	// Final decodes finished sentences (the batch transcript uses the same
	// options); Partial decodes the sentence in progress (default greedy
	// at temperature 0 with no fallback). Language, Task, DetectAmong and
	// MaxTokens are set per call.
	Final, Partial asr.DecodeOptions
	// FullPartials decodes partials over the whole 30 s window, as Whisper
	// was trained. By default a partial encodes only its audio plus a
	// margin (asr.DecodeOptions.AudioContext): several times faster on a
	// CPU, slightly less accurate, and the final replaces it anyway.
	FullPartials bool
	// TokensPerSecond bounds the tokens decoded for a stretch of audio to
	// MinTokens + TokensPerSecond per second (defaults 16 and 8; fast
	// speech is about 5 tokens a second), so a model that loops cannot
	// spend 224 tokens on a short sentence.
	TokensPerSecond float64
	MinTokens       int
	// Acquire, when set, is held around every decode (the GPU arbiter).
	Acquire func(ctx context.Context) (release func(), err error)
	// OnPartialDecode, when set, is called after each partial re-decode
	// (whether or not its text changed what is shown) with the seconds of
	// session audio received when the decode began: the speech it covers
	// ends there. Latency measurements use it.
	OnPartialDecode func(heard float64)
}

func (o Options) withDefaults() Options {
	if o.Language == "auto" {
		o.Language = ""
	}
	if o.Task == "" {
		o.Task = asr.TaskTranscribe
	}
	if o.VAD.MaxSpeechS == 0 {
		o.VAD.MaxSpeechS = 20
	}
	if o.StepS == 0 {
		o.StepS = 1
	}
	if o.MinPartialS == 0 {
		o.MinPartialS = 0.5
	}
	if o.Partial.Temperatures == nil {
		o.Partial.Temperatures = []float64{0}
	}
	if o.TokensPerSecond == 0 {
		o.TokensPerSecond = 8
	}
	if o.MinTokens == 0 {
		o.MinTokens = 16
	}
	return o
}

// maxTokens is the token bound for seconds of audio.
func (o Options) maxTokens(seconds float64) int {
	return o.MinTokens + int(math.Ceil(o.TokensPerSecond*seconds))
}

// Session is one live stream, driven synchronously: Feed audio, Flush at
// the end. It keeps only the audio a later event can still need (the
// sentence in progress, at most VAD.MaxSpeechS plus padding), so memory
// stays bounded over hours. A Session is not safe for concurrent use;
// Stream runs one on its own goroutine.
type Session struct {
	rec Recognizer
	vad Detector
	o   Options

	st  vad.State
	seg *vad.Segmenter

	buf      []float32 // audio from sample bufStart on
	bufStart int
	total    int // samples received
	fed      int // samples given to the VAD (whole windows)
	flushed  bool

	lang    string // the session language once known
	next    int    // index of the next sentence to finish
	dropped int    // seg.Dropped() already accounted for

	// The sentence in progress.
	hypStart  int     // padded start the hypotheses belong to (-1: none)
	prevHyp   []int32 // text tokens of the last partial decode
	committed []int32 // tokens two consecutive decodes agreed on
	shown     string  // last partial text sent
	partialAt int     // total at the last partial decode
}

// NewSession starts a session.
func NewSession(rec Recognizer, det Detector, o Options) *Session {
	o = o.withDefaults()
	return &Session{rec: rec, vad: det, o: o, seg: vad.NewSegmenter(o.VAD), lang: o.Language, hypStart: -1}
}

// ErrFlushed is returned by Feed and Flush after Flush.
var ErrFlushed = errors.New("stream: session already flushed")

// Feed adds audio (16 kHz mono, [-1, 1]) and returns the events it
// completes. With partial false it skips the partial re-decode (the
// caller has more audio queued and only the newest partial matters).
func (s *Session) Feed(ctx context.Context, pcm []float32, partial bool) ([]Event, error) {
	if s.flushed {
		return nil, ErrFlushed
	}
	s.buf = append(s.buf, pcm...)
	s.total += len(pcm)
	var out []Event
	for s.fed+vad.Window <= s.total {
		w := s.buf[s.fed-s.bufStart : s.fed-s.bufStart+vad.Window]
		evs, err := s.window(ctx, w)
		out = append(out, evs...)
		if err != nil {
			return out, err
		}
		s.fed += vad.Window
	}
	if partial {
		ev, err := s.partial(ctx)
		if err != nil {
			return out, err
		}
		if ev != nil {
			out = append(out, *ev)
		}
	}
	s.trim()
	return out, nil
}

// Flush ends the audio: the last partial window is zero-padded (as the
// batch path does), speech still open is finished, and its final returned.
func (s *Session) Flush(ctx context.Context) ([]Event, error) {
	if s.flushed {
		return nil, ErrFlushed
	}
	s.flushed = true
	var out []Event
	if rest := s.total - s.fed; rest > 0 {
		w := make([]float32, vad.Window)
		copy(w, s.buf[s.fed-s.bufStart:])
		evs, err := s.window(ctx, w)
		out = append(out, evs...)
		if err != nil {
			return out, err
		}
		s.fed = s.total
	}
	for _, sp := range s.seg.Finish(s.total) {
		ev, err := s.final(ctx, sp)
		if err != nil {
			return out, err
		}
		if ev != nil {
			out = append(out, *ev)
		}
	}
	out = append(out, s.droppedSentence()...)
	s.buf, s.bufStart = nil, s.total
	return out, nil
}

// window runs the VAD on one window and finishes the sentences it ends.
func (s *Session) window(ctx context.Context, w []float32) ([]Event, error) {
	p, err := s.vad.Prob(&s.st, w)
	if err != nil {
		return nil, fmt.Errorf("stream: vad: %w", err)
	}
	var out []Event
	for _, sp := range s.seg.PushWindow(p, w) {
		ev, err := s.final(ctx, sp)
		if err != nil {
			return out, err
		}
		if ev != nil {
			out = append(out, *ev)
		}
	}
	return append(out, s.droppedSentence()...), nil
}

// droppedSentence closes a sentence that had partial text but turned out
// too short to keep: an empty final replaces the partial.
func (s *Session) droppedSentence() []Event {
	d := s.seg.Dropped()
	if d == s.dropped {
		return nil
	}
	s.dropped = d
	if _, open := s.seg.Open(); open || s.seg.Pending() || s.shown == "" {
		return nil
	}
	ev := Event{I: s.next, T: seconds(s.hypStart), Final: true}
	s.next++
	s.resetSentence()
	return []Event{ev}
}

// final decodes a finished span whole and returns its final event (nil
// when it holds no text and no partial was shown for it).
func (s *Session) final(ctx context.Context, sp vad.Span) (*Event, error) {
	pcm := s.buf[sp.Start-s.bufStart : sp.End-s.bufStart]
	text, err := s.decode(ctx, pcm, s.o.Final, true)
	if err != nil {
		return nil, err
	}
	shown := s.shown != ""
	s.resetSentence()
	if text == "" && !shown {
		return nil, nil
	}
	ev := &Event{I: s.next, T: seconds(sp.Start), Text: text, Final: true, End: seconds(sp.End)}
	s.next++
	return ev, nil
}

// partial re-decodes the sentence in progress when enough new audio has
// come and returns a partial event when the agreed text grew.
func (s *Session) partial(ctx context.Context) (*Event, error) {
	start, open := s.seg.Open()
	if !open || s.seg.Pending() {
		return nil, nil // a finished sentence still waits for its final
	}
	if start != s.hypStart {
		s.resetSentence()
		s.hypStart = start
	}
	if float64(s.total-s.partialAt) < s.o.StepS*frontend.SampleRate || float64(s.total-start) < s.o.MinPartialS*frontend.SampleRate {
		return nil, nil
	}
	s.partialAt = s.total
	pcm := s.buf[start-s.bufStart:]
	po := s.o.Partial
	if !s.o.FullPartials && po.AudioContext == 0 {
		po.AudioContext = fitContext(len(pcm))
	}
	toks, err := s.decodeTokens(ctx, pcm, po, false)
	if err != nil {
		return nil, err
	}
	if s.o.OnPartialDecode != nil {
		s.o.OnPartialDecode(seconds(s.partialAt))
	}
	agreed := commonPrefix(s.prevHyp, toks)
	s.prevHyp = toks
	if len(agreed) <= len(s.committed) || !hasPrefix(agreed, s.committed) {
		return nil, nil
	}
	tk := s.rec.Tokenizer()
	// Commit whole words: when the hypothesis goes on past the agreement
	// inside a word, hold that word back.
	if len(agreed) < len(toks) {
		agreed = wordBoundary(tk, agreed, toks[len(agreed)])
	}
	if len(agreed) <= len(s.committed) {
		return nil, nil
	}
	s.committed = agreed
	text := strings.TrimSpace(completeUTF8(tokenBytes(tk, agreed)))
	if text == "" || text == s.shown {
		return nil, nil
	}
	s.shown = text
	return &Event{I: s.next, T: seconds(start), Text: text}, nil
}

func (s *Session) resetSentence() {
	s.hypStart, s.prevHyp, s.committed, s.shown = -1, nil, nil, ""
}

// decode returns the text of pcm.
func (s *Session) decode(ctx context.Context, pcm []float32, o asr.DecodeOptions, lock bool) (string, error) {
	tr, err := s.transcribe(ctx, pcm, o, lock)
	if err != nil || tr == nil {
		return "", err
	}
	return tr.Text(), nil
}

// decodeTokens returns the text tokens of pcm.
func (s *Session) decodeTokens(ctx context.Context, pcm []float32, o asr.DecodeOptions, lock bool) ([]int32, error) {
	tr, err := s.transcribe(ctx, pcm, o, lock)
	if err != nil || tr == nil {
		return nil, err
	}
	tk := s.rec.Tokenizer()
	var toks []int32
	for _, seg := range tr.Segments {
		for _, t := range seg.Tokens {
			if !tk.IsSpecial(t) {
				toks = append(toks, t)
			}
		}
	}
	return toks, nil
}

func (s *Session) transcribe(ctx context.Context, pcm []float32, o asr.DecodeOptions, lock bool) (*asr.Transcript, error) {
	if len(pcm) == 0 {
		return nil, nil
	}
	tr, err := transcribe(ctx, s.rec, pcm, s.o, o, s.lang)
	if err != nil {
		return nil, err
	}
	if lock && s.lang == "" {
		s.lang = tr.Language
	}
	return tr, nil
}

// transcribe is the one decode call both the stream and the batch path
// make.
func transcribe(ctx context.Context, rec Recognizer, pcm []float32, so Options, o asr.DecodeOptions, lang string) (*asr.Transcript, error) {
	o.Language, o.Task, o.DetectAmong = lang, so.Task, so.DetectAmong
	o.MaxTokens = so.maxTokens(float64(len(pcm)) / frontend.SampleRate)
	if so.Acquire != nil {
		release, err := so.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	tr, err := rec.Transcribe(ctx, pcm, o)
	if err != nil {
		return nil, fmt.Errorf("stream: decode %.2f s: %w", float64(len(pcm))/frontend.SampleRate, err)
	}
	return tr, nil
}

// trim drops audio no later event can need.
func (s *Session) trim() {
	keep := min(s.seg.Keep(), s.fed)
	drop := keep - s.bufStart
	if drop <= 0 {
		return
	}
	if drop > len(s.buf)/2 && cap(s.buf) > 4*frontend.SampleRate {
		s.buf = append(make([]float32, 0, max(len(s.buf)-drop, frontend.SampleRate)), s.buf[drop:]...)
	} else {
		s.buf = s.buf[drop:]
	}
	s.bufStart = keep
}

// Buffered is how many samples the session holds (for tests and metrics).
func (s *Session) Buffered() int { return cap(s.buf) }

// fitContext is the encoder positions (50 a second) that hold n samples
// plus a margin of 64 (1.28 s), as whisper.cpp users size audio_ctx.
func fitContext(n int) int {
	return min(1500, (n+frontend.HopLength*2-1)/(frontend.HopLength*2)+64)
}

func seconds(sample int) float64 {
	return math.Round(float64(max(0, sample))/frontend.SampleRate*1000) / 1000
}

func commonPrefix(a, b []int32) []int32 {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return b[:n:n]
}

func hasPrefix(a, p []int32) bool {
	if len(a) < len(p) {
		return false
	}
	for i := range p {
		if a[i] != p[i] {
			return false
		}
	}
	return true
}

func tokenBytes(tk *tokenizer.Tokenizer, toks []int32) []byte {
	var b []byte
	for _, t := range toks {
		b = append(b, tk.Bytes(t)...)
	}
	return b
}

// completeUTF8 drops an incomplete UTF-8 sequence at the end (a character
// split across tokens whose rest is not agreed yet).
func completeUTF8(b []byte) string {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size > 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return strings.ToValidUTF8(string(b), "")
}

// wordBoundary shortens agreed tokens so they do not end inside a word:
// when the next token continues a word (starts with a letter or digit and
// the agreed text ends in one), the trailing word is held back. Scripts
// written without spaces have no such boundary and are not held back.
func wordBoundary(tk *tokenizer.Tokenizer, agreed []int32, next int32) []int32 {
	continues := func(b []byte) bool {
		r, _ := utf8.DecodeRune(b)
		return isWordRune(r)
	}
	for len(agreed) > 0 {
		text := tokenBytes(tk, agreed)
		last, _ := utf8.DecodeLastRune(text)
		if !isWordRune(last) || !continues(tk.Bytes(next)) {
			return agreed
		}
		next = agreed[len(agreed)-1]
		agreed = agreed[:len(agreed)-1]
	}
	return agreed
}

func isWordRune(r rune) bool {
	if r == utf8.RuneError {
		return false
	}
	if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai) {
		return false
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}
