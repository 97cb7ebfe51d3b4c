package live_test

import (
	"context"
	"testing"
	"time"

	"boxd/engine/asr/stream"
	"boxd/pipelines/live"
	"boxd/pipelines/live/livetest"
)

// handTranscriber emits what the test tells it to.
type handTranscriber struct{ emit func(stream.Event) }

func (h *handTranscriber) Write(context.Context, []byte) error { return nil }
func (h *handTranscriber) Close(context.Context) error         { return nil }

// TestSinceSpeechCountsSpeechNotBytes: audio frames (silence) do not
// reset SinceSpeech, nor does an empty final (a span too short to keep);
// a partial or final with text does (the idle rule of the live socket,
// limits.live_speech_idle_s).
func TestSinceSpeechCountsSpeechNotBytes(t *testing.T) {
	h := &handTranscriber{}
	s, err := live.Start(context.Background(), live.Config{
		Vertical: testVertical(), Models: live.Models{ASR: "whisper-test"},
		Transcribe: func(_ context.Context, _ string, emit func(stream.Event)) (live.Transcriber, error) {
			h.emit = emit
			return h, nil
		},
		Budget: &livetest.Budget{Tokens: 5000, AudioMS: 600000}, Send: (&livetest.Recorder{}).Send,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pause := func() time.Duration {
		t.Helper()
		before := s.SinceSpeech()
		time.Sleep(20 * time.Millisecond)
		return before
	}
	pause()
	for range 5 {
		if err := s.Audio(context.Background(), make([]byte, 3200)); err != nil {
			t.Fatal(err)
		}
	}
	h.emit(stream.Event{I: 0, Final: true})             // a dropped sentence: no text
	h.emit(stream.Event{I: 1, Text: "  ", Final: true}) // blank
	quiet := s.SinceSpeech()
	if quiet < 20*time.Millisecond {
		t.Fatalf("silence frames and empty finals reset SinceSpeech (%v)", quiet)
	}
	h.emit(stream.Event{I: 2, Text: "The pump", Final: false})
	if got := s.SinceSpeech(); got >= quiet {
		t.Errorf("a partial with text: SinceSpeech %v, was %v", got, quiet)
	}
	pause()
	quiet = s.SinceSpeech()
	h.emit(stream.Event{I: 2, Text: "The pump loses pressure.", Final: true})
	if got := s.SinceSpeech(); got >= quiet {
		t.Errorf("a final with text: SinceSpeech %v, was %v", got, quiet)
	}
}
