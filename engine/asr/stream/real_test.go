package stream

import (
	"context"
	"testing"
	"time"

	"boxd/engine/asr"
	"boxd/engine/asr/asrtest"
	"boxd/engine/asr/frontend"
	"boxd/engine/asr/vad"
	"boxd/engine/models/testmodels"
)

func loadReal(t *testing.T) (*asr.Model, *vad.Model) {
	t.Helper()
	m, err := asr.Load(context.Background(), testmodels.Generated(t, testmodels.WhisperMicroGGUF), asr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	v, err := vad.Load(testmodels.Shared(t, "ggml-silero-v6.2.0.bin"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return m, v
}

// realOptions decode the random-weight model without skipping windows as
// silence (its no-speech probability is noise), with one fallback step.
func realOptions(lang string) Options {
	dec := asr.DecodeOptions{Temperatures: []float64{0, 0.6}, NoSpeechThreshold: 1, Seed: 3}
	return Options{Language: lang, DetectAmong: []string{"en", "es"}, Final: dec, Partial: asr.DecodeOptions{NoSpeechThreshold: 1}, TokensPerSecond: 3}
}

// TestStreamRulesOnRealAudio runs the real Silero VAD and the ggml Whisper
// graphs (tiny, random weights) over jfk.wav and over espeak-ng sentences
// separated by pauses, frame by frame: the transcript rules hold, and the
// finals equal the batch transcript of the same audio, both when every
// frame gets a partial decode and through the goroutine-driven Stream.
func TestStreamRulesOnRealAudio(t *testing.T) {
	m, v := loadReal(t)
	jfk, err := frontend.ReadWAV(testmodels.Shared(t, "jfk.wav"))
	if err != nil {
		t.Fatal(err)
	}
	var spoken []float32
	for _, s := range []string{"The patient reports lower back pain since Monday.", "We will follow up in two weeks."} {
		spoken = append(spoken, asrtest.Silence(0.8)...)
		spoken = append(spoken, asrtest.Speak(t, s)...)
	}
	spoken = append(spoken, asrtest.Silence(0.5)...)
	for _, c := range []struct {
		name  string
		audio []float32
		lang  string
	}{
		{"jfk", jfk, "en"},
		{"espeak", spoken, "auto"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			o := realOptions(c.lang)
			start := time.Now()
			batch, err := Transcribe(ctx, m, v, c.audio, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("batch %s: %d sentences", time.Since(start), len(batch.Sentences))
			if len(batch.Sentences) == 0 {
				t.Fatal("no sentences")
			}
			start = time.Now()
			s := NewSession(m, v, o)
			var evs []Event
			feedFrames(t, ctx, s, c.audio, &evs)
			rest, err := s.Flush(ctx)
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, rest...)
			t.Logf("session %s: %d events", time.Since(start), len(evs))
			checkEvents(t, evs)
			if len(evs) == len(finals(evs)) {
				t.Error("no partial events")
			}
			assertSameFinals(t, finals(evs), batch.Events())

			start = time.Now()
			streamed := streamFrames(t, m, v, c.audio, o)
			t.Logf("stream %s: %d events", time.Since(start), len(streamed))
			checkEvents(t, streamed)
			assertSameFinals(t, finals(streamed), batch.Events())
		})
	}
}
