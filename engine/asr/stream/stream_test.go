package stream

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"boxd/engine/asr"
	"boxd/engine/asr/frontend"
	"boxd/engine/asr/tokenizer"
	"boxd/engine/asr/vad"
	"boxd/engine/models/testmodels"
	"boxd/engine/models/whisperbin"
)

// checkEvents asserts the contract's transcript rules: i never goes back
// and finals count 0, 1, 2, ...; partials of a sentence are cumulative
// (each extends the one before); nothing about a sentence follows its
// final; t never goes back and a sentence keeps its t.
func checkEvents(t *testing.T, evs []Event) {
	t.Helper()
	nextFinal := 0
	lastT := -1.0
	partial := map[int]Event{}
	for k, e := range evs {
		if e.I != nextFinal {
			t.Fatalf("event %d %+v: sentence %d is the one in progress", k, e, nextFinal)
		}
		if e.T < lastT {
			t.Fatalf("event %d %+v: t went back from %.3f", k, e, lastT)
		}
		lastT = e.T
		if p, ok := partial[e.I]; ok && p.T != e.T {
			t.Fatalf("event %d %+v: t differs from the partial's %.3f", k, e, p.T)
		}
		if e.Final {
			nextFinal++
			continue
		}
		if e.Text == "" {
			t.Fatalf("event %d: empty partial", k)
		}
		if p, ok := partial[e.I]; ok && !strings.HasPrefix(e.Text, p.Text) {
			t.Fatalf("event %d: partial %q does not extend %q", k, e.Text, p.Text)
		}
		partial[e.I] = e
	}
}

func finals(evs []Event) []Event {
	var out []Event
	for _, e := range evs {
		if e.Final {
			out = append(out, e)
		}
	}
	return out
}

// energyVAD calls a window speech when its RMS is above -40 dBFS.
type energyVAD struct{}

func (energyVAD) Prob(_ *vad.State, w []float32) (float32, error) {
	var s float64
	for _, v := range w {
		s += float64(v) * float64(v)
	}
	if math.Sqrt(s/float64(len(w))) > 0.01 {
		return 1, nil
	}
	return 0, nil
}

// wordsRec "hears" five words every two seconds of audio, the same words
// in the same order every time, so successive hypotheses of a growing
// sentence agree on their common part; it records the longest audio it
// was given.
type wordsRec struct {
	tk      *tokenizer.Tokenizer
	longest int
	calls   int
}

var vocabulary = strings.Fields("the patient reports lower back pain since monday blood pressure is one hundred twenty eight over eighty two we will follow up in weeks")

func (r *wordsRec) Transcribe(_ context.Context, pcm []float32, o asr.DecodeOptions) (*asr.Transcript, error) {
	r.calls++
	r.longest = max(r.longest, len(pcm))
	n := int(float64(len(pcm)) / frontend.SampleRate * 2.5)
	words := make([]string, n)
	for i := range words {
		words[i] = vocabulary[i%len(vocabulary)]
	}
	// Each decode ends in a word of its own, which two decodes never agree
	// on (its first letters they do: "zqa", "zqb", ...); it depends on the
	// audio only, so the same audio gives the same text.
	words = append(words, "zq"+string(rune('a'+len(pcm)/1600%26)))
	toks := r.tk.Encode(" " + strings.Join(words, " "))
	if o.MaxTokens > 0 && len(toks) > o.MaxTokens {
		toks = toks[:o.MaxTokens]
	}
	lang := o.Language
	if lang == "" {
		lang = "en"
	}
	return &asr.Transcript{Language: lang, Segments: []asr.Segment{{Text: r.tk.Decode(toks), Tokens: toks}}}, nil
}

func (r *wordsRec) Tokenizer() *tokenizer.Tokenizer { return r.tk }

func realTokenizer(t testing.TB) *tokenizer.Tokenizer {
	t.Helper()
	m, err := whisperbin.ReadFile(testmodels.Shared(t, "whisper-vocab-tiny.bin"))
	if err != nil {
		t.Fatal(err)
	}
	toks := make([]string, len(m.Vocab))
	for i, b := range m.Vocab {
		toks[i] = string(b)
	}
	tk, err := tokenizer.New(toks, 51865)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// tone is a 220 Hz tone at -14 dBFS: "speech" to the energy VAD.
func tone(seconds float64) []float32 {
	out := make([]float32, int(seconds*frontend.SampleRate))
	for i := range out {
		out[i] = 0.2 * float32(math.Sin(2*math.Pi*220*float64(i)/frontend.SampleRate))
	}
	return out
}

func feedFrames(t *testing.T, ctx context.Context, s *Session, pcm []float32, evs *[]Event) {
	t.Helper()
	for off := 0; off < len(pcm); off += 1600 {
		e, err := s.Feed(ctx, pcm[off:min(len(pcm), off+1600)], true)
		if err != nil {
			t.Fatal(err)
		}
		*evs = append(*evs, e...)
	}
}

// TestHoursOfAudioInBoundedMemory streams two hours of talk (4 s
// sentences, 1 s pauses) and then a minute without a pause: the session
// holds no more than the longest sentence plus padding, every decode sees
// at most one sentence, long speech is split at the limit, and the rules
// hold throughout.
func TestHoursOfAudioInBoundedMemory(t *testing.T) {
	rec := &wordsRec{tk: realTokenizer(t)}
	s := NewSession(rec, energyVAD{}, Options{Language: "en"})
	ctx := context.Background()
	var evs []Event
	sentence := append(tone(4), make([]float32, frontend.SampleRate)...)
	const hours = 2
	maxBuf := 0
	for range hours * 3600 / 5 {
		for off := 0; off < len(sentence); off += 1600 {
			e, err := s.Feed(ctx, sentence[off:off+1600], true)
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, e...)
			maxBuf = max(maxBuf, s.Buffered())
		}
	}
	if n := len(finals(evs)); n != hours*3600/5 {
		t.Fatalf("%d finals for %d sentences", n, hours*3600/5)
	}
	if maxBuf > 6*frontend.SampleRate {
		t.Errorf("session held %.1f s of audio for 4 s sentences", float64(maxBuf)/frontend.SampleRate)
	}
	before := len(finals(evs))
	feedFrames(t, ctx, s, tone(61), &evs)
	e, err := s.Flush(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, e...)
	checkEvents(t, evs)
	if n := len(finals(evs)) - before; n != 4 { // 20 s limit: 4 pieces of 61 s
		t.Errorf("61 s without a pause gave %d sentences, want 4", n)
	}
	if rec.longest > 20*frontend.SampleRate {
		t.Errorf("a decode saw %.1f s, more than the 20 s sentence limit", float64(rec.longest)/frontend.SampleRate)
	}
	if _, err := s.Feed(ctx, tone(1), true); !errors.Is(err, ErrFlushed) {
		t.Errorf("feed after flush: %v", err)
	}
}

// TestPartialsAgreeBeforeCommitting: a word shows only once two decodes
// agree on it, partial text never shrinks, the final holds every word.
func TestPartialsAgreeBeforeCommitting(t *testing.T) {
	rec := &wordsRec{tk: realTokenizer(t)}
	s := NewSession(rec, energyVAD{}, Options{Language: "en"})
	var evs []Event
	audio := append(append(make([]float32, frontend.SampleRate/2), tone(6)...), make([]float32, frontend.SampleRate)...)
	feedFrames(t, context.Background(), s, audio, &evs)
	checkEvents(t, evs)
	if len(evs) < 4 {
		t.Fatalf("events %+v: want several partials and a final", evs)
	}
	first := evs[0]
	if first.Final || first.I != 0 || math.Abs(first.T-0.47) > 0.05 {
		t.Errorf("first event %+v: want a partial of sentence 0 at about 0.47 s", first)
	}
	// At the first partial decode (1 s of audio: 2 words) there is nothing
	// to agree with yet; words appear from the second decode on.
	if rec.calls < 3 {
		t.Errorf("%d decodes", rec.calls)
	}
	for _, e := range evs {
		if !e.Final && strings.Contains(e.Text, " z") {
			t.Errorf("partial %q holds a word (or part of one) only one decode gave", e.Text)
		}
	}
	last := evs[len(evs)-1]
	if !last.Final || !strings.HasPrefix(last.Text, evs[len(evs)-2].Text) || len(strings.Fields(last.Text)) < 15 {
		t.Errorf("final %+v after partial %+v", last, evs[len(evs)-2])
	}
}

// TestStreamMatchesBatchOnFakeModel: the goroutine-driven Stream, fed 100
// ms PCM16 frames, ends with the finals the batch path gives.
func TestStreamMatchesBatchOnFakeModel(t *testing.T) {
	rec := &wordsRec{tk: realTokenizer(t)}
	var audio []float32
	for i, d := range []float64{1.3, 0.2, 2.7, 0.1, 4.4} {
		audio = append(audio, make([]float32, int(0.3*float64(i+1)*frontend.SampleRate))...)
		audio = append(audio, tone(d)...)
	}
	audio = append(audio, tone(0.15)...) // ends in speech
	o := Options{Language: "auto"}
	batch, err := Transcribe(context.Background(), rec, energyVAD{}, audio, o)
	if err != nil {
		t.Fatal(err)
	}
	got := streamFrames(t, rec, energyVAD{}, audio, o)
	checkEvents(t, got)
	assertSameFinals(t, finals(got), batch.Events())
}

func streamFrames(t *testing.T, rec Recognizer, vad Detector, audio []float32, o Options) []Event {
	t.Helper()
	var evs []Event
	ctx := context.Background()
	st := Start(ctx, NewSession(rec, vad, o), func(e Event) { evs = append(evs, e) })
	for off := 0; off < len(audio); off += 1600 {
		if err := st.Write(ctx, pcm16(audio[off:min(len(audio), off+1600)])); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Write(ctx, pcm16(tone(0.1))); !errors.Is(err, ErrClosed) {
		t.Errorf("write after close: %v", err)
	}
	return evs
}

func assertSameFinals(t *testing.T, got, want []Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("stream finals %+v\nbatch %+v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("final %d: stream %+v, batch %+v", i, got[i], want[i])
		}
	}
}

func pcm16(pcm []float32) []byte {
	b := make([]byte, 2*len(pcm))
	for i, v := range pcm {
		s := int16(max(-32768, min(32767, math.Round(float64(v)*32768))))
		b[2*i], b[2*i+1] = byte(s), byte(uint16(s)>>8)
	}
	return b
}

func TestWriteRejectsBadFrames(t *testing.T) {
	rec := &wordsRec{tk: realTokenizer(t)}
	ctx := context.Background()
	st := Start(ctx, NewSession(rec, energyVAD{}, Options{}), func(Event) {})
	defer st.Close(ctx)
	for name, frame := range map[string][]byte{
		"empty":      {},
		"odd length": make([]byte, 3199),
		"too long":   make([]byte, MaxFrameBytes+2),
	} {
		if err := st.Write(ctx, frame); !errors.Is(err, ErrBadFrame) {
			t.Errorf("%s: %v, want ErrBadFrame", name, err)
		}
	}
	if err := st.Write(ctx, make([]byte, 3200)); err != nil {
		t.Errorf("a 100 ms frame: %v", err)
	}
}

// failingRec fails every decode.
type failingRec struct{ wordsRec }

func (f *failingRec) Transcribe(context.Context, []float32, asr.DecodeOptions) (*asr.Transcript, error) {
	return nil, errors.New("device lost")
}

func TestDecodeErrorStopsTheStream(t *testing.T) {
	rec := &failingRec{wordsRec{tk: realTokenizer(t)}}
	ctx := context.Background()
	st := Start(ctx, NewSession(rec, energyVAD{}, Options{}), func(Event) {})
	var err error
	for range 100 {
		if err = st.Write(ctx, pcm16(tone(0.1))); err != nil {
			break
		}
	}
	if cerr := st.Close(ctx); cerr == nil || !strings.Contains(cerr.Error(), "device lost") {
		t.Errorf("close: %v, want the decode error", cerr)
	}
	_ = err
}

func TestWordBoundary(t *testing.T) {
	tk := realTokenizer(t)
	enc := func(s string) []int32 { return tk.Encode(s) }
	full := enc(" the hospitalization was brief")
	for k := 1; k < len(full); k++ {
		got := string(tokenBytes(tk, wordBoundary(tk, full[:k], full[k])))
		for _, w := range []string{"", " the", " the hospitalization", " the hospitalization was"} {
			if got == w {
				goto ok
			}
		}
		t.Errorf("prefix of %d tokens committed as %q: not at a word boundary", k, got)
	ok:
	}
	if got := completeUTF8([]byte("caf\xc3")); got != "caf" {
		t.Errorf("completeUTF8 kept a split character: %q", got)
	}
	if got := completeUTF8([]byte("café")); got != "café" {
		t.Errorf("completeUTF8(café) = %q", got)
	}
}

// TestOnPartialDecode: the hook sees every partial re-decode (each 1 s of
// new audio in a sentence, also those whose text changed nothing shown),
// with the audio received when it began, never more than was fed.
func TestOnPartialDecode(t *testing.T) {
	rec := &wordsRec{tk: realTokenizer(t)}
	var heard []float64
	s := NewSession(rec, energyVAD{}, Options{Language: "en", OnPartialDecode: func(h float64) { heard = append(heard, h) }})
	var evs []Event
	audio := append(append(make([]float32, frontend.SampleRate/2), tone(6)...), make([]float32, frontend.SampleRate)...)
	feedFrames(t, context.Background(), s, audio, &evs)
	partials := 0
	for _, e := range evs {
		if !e.Final {
			partials++
		}
	}
	if len(heard) < 5 || len(heard) < partials {
		t.Fatalf("%d partial decodes seen for %d partial events: %v", len(heard), partials, heard)
	}
	for i, h := range heard {
		if h <= 0 || h > float64(len(audio))/frontend.SampleRate || i > 0 && h-heard[i-1] < 0.99 {
			t.Errorf("decode %d began at %.2f s of audio (before: %v)", i, h, heard[:i])
		}
	}
}
