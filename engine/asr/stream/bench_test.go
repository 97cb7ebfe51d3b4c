package stream

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"boxd/engine/asr"
	"boxd/engine/asr/frontend"
	"boxd/engine/asr/vad"
	"boxd/engine/models/testmodels"
)

// BenchmarkTiny measures the tiny architecture (random weights in
// whisper.cpp's default F16 layout, so the arithmetic is that of the real
// model) on jfk.wav, 11 s of speech, on this machine:
//
//   - rtf: seconds of audio per wall-clock second (above 1 keeps up);
//   - mel%, enc%, dec%: shares of the wall time in the log-mel front
//     end, the encoder and the decoder (the rest is the VAD, the Go side
//     of decoding and waiting);
//   - peak_rss_MB: the process's peak resident memory so far.
//
// Random weights never stop on their own, so every decode is held to
// what jfk.wav's real transcript takes (27 tokens for 11 s: 2.5 tokens a
// second) and decoded once, at temperature 0 (real speech rarely needs
// the fallback).
func BenchmarkTiny(b *testing.B) {
	m, err := asr.Load(context.Background(), testmodels.Generated(b, testmodels.WhisperF16GGUF), asr.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	v, err := vad.Load(testmodels.Shared(b, "ggml-silero-v6.2.0.bin"))
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	pcm, err := frontend.ReadWAV(testmodels.Shared(b, "jfk.wav"))
	if err != nil {
		b.Fatal(err)
	}
	audio := float64(len(pcm)) / frontend.SampleRate
	ctx := context.Background()
	opts := func(beam int) Options {
		dec := asr.DecodeOptions{BeamSize: beam, Temperatures: []float64{0}}
		return Options{Language: "en", Final: dec, Partial: asr.DecodeOptions{Temperatures: []float64{0}}, TokensPerSecond: 2.5, MinTokens: 1}
	}
	cases := []struct {
		name string
		run  func() error
	}{
		{"whisper-longform/greedy", func() error {
			_, err := m.Transcribe(ctx, pcm, asr.DecodeOptions{Language: "en", Temperatures: []float64{0}, MaxTokens: 27})
			return err
		}},
		{"whisper-longform/beam5", func() error {
			_, err := m.Transcribe(ctx, pcm, asr.DecodeOptions{Language: "en", BeamSize: 5, Temperatures: []float64{0}, MaxTokens: 27})
			return err
		}},
		{"sentences/greedy", func() error { _, err := Transcribe(ctx, m, v, pcm, opts(1)); return err }},
		{"sentences/beam5", func() error { _, err := Transcribe(ctx, m, v, pcm, opts(5)); return err }},
		{"stream/greedy", func() error { return feedAll(ctx, m, v, pcm, opts(1)) }},
		{"stream/beam5", func() error { return feedAll(ctx, m, v, pcm, opts(5)) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			before := m.Stats()
			start := time.Now()
			for range b.N {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
			wall := time.Since(start)
			after := m.Stats()
			share := func(d time.Duration) float64 { return 100 * float64(d) / float64(wall) }
			b.ReportMetric(audio*float64(b.N)/wall.Seconds(), "rtf")
			b.ReportMetric(share(after.Mel-before.Mel), "mel%")
			b.ReportMetric(share(after.Encoder-before.Encoder), "enc%")
			b.ReportMetric(share(after.Decoder-before.Decoder), "dec%")
			b.ReportMetric(float64(after.Windows-before.Windows)/float64(b.N), "windows/op")
			b.ReportMetric(peakRSSMB(), "peak_rss_MB")
		})
	}
}

// feedAll plays pcm through a session in 100 ms frames, re-decoding the
// partial as often as the settings allow (the box keeping up).
func feedAll(ctx context.Context, m *asr.Model, v *vad.Model, pcm []float32, o Options) error {
	s := NewSession(m, v, o)
	for off := 0; off < len(pcm); off += 1600 {
		if _, err := s.Feed(ctx, pcm[off:min(len(pcm), off+1600)], true); err != nil {
			return err
		}
	}
	_, err := s.Flush(ctx)
	return err
}

// peakRSSMB reads VmHWM from /proc/self/status (0 where there is none).
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
