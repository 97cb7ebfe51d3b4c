package stream

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"boxd/engine/asr"
	"boxd/engine/asr/frontend"
	"boxd/engine/models/testmodels"
)

// BenchmarkSpeed measures one Whisper model file the way the GPU check
// compares it with Hugging Face transformers (gpu/check/hf_whisper.py runs
// the same procedure on the same checkpoint): greedy, no timestamps,
// language given, every window decoded to at most BOXD_BENCH_ASR_TOKENS
// tokens (random weights rarely stop on their own; steps/window says how
// many ran), one decode per window (no temperature fallback, no window
// skipped as silence).
//
//   - window: a 30 s window: enc_ms (encoder), mel_ms (log-mel) and
//     step_ms (decoder: the window's wall time less log-mel and encoder,
//     over its decoder steps, so the Go side of every step is counted);
//   - longform: BOXD_BENCH_LONG_S seconds of audio in 30 s windows: rtf
//     (seconds of audio per wall-clock second);
//   - batch: BOXD_BENCH_BATCH 30 s windows transcribed at once:
//     windows_per_s (their decoder steps batched, up to the model's slots
//     at a time), and the same windows one transcription at a time
//     (windows_per_s_serial, as the engine ran before it batched):
//     batch_speedup is the ratio.
//
// Environment: BOXD_BENCH_ASR_MODEL (default: the generated tiny F16
// model), BOXD_BENCH_GPU_LAYERS (default 0; -1: all), BOXD_BENCH_AUDIO
// (default jfk.wav, repeated to fill the windows), BOXD_BENCH_ASR_FLASH
// (1: asr.flash_attention on), BOXD_BENCH_ASR_TOKENS
// (64), BOXD_BENCH_LONG_S (120), BOXD_BENCH_BATCH (8), BOXD_BENCH_REPS (3:
// windows timed for the per-window figures).
func BenchmarkSpeed(b *testing.B) {
	path := os.Getenv("BOXD_BENCH_ASR_MODEL")
	if path == "" {
		path = testmodels.Generated(b, testmodels.WhisperF16GGUF)
	}
	audio := os.Getenv("BOXD_BENCH_AUDIO")
	if audio == "" {
		audio = testmodels.Shared(b, "jfk.wav")
	}
	flash := asr.FlashOff
	if os.Getenv("BOXD_BENCH_ASR_FLASH") == "1" {
		flash = asr.FlashOn
	}
	m, err := asr.Load(context.Background(), path, asr.Options{GPULayers: testmodels.EnvInt(b, "BOXD_BENCH_GPU_LAYERS", 0), Flash: flash})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	pcm, err := frontend.ReadWAV(audio)
	if err != nil {
		b.Fatal(err)
	}
	tokens := testmodels.EnvInt(b, "BOXD_BENCH_ASR_TOKENS", 64)
	longS := testmodels.EnvInt(b, "BOXD_BENCH_LONG_S", 120)
	batch := testmodels.EnvInt(b, "BOXD_BENCH_BATCH", 8)
	reps := max(1, testmodels.EnvInt(b, "BOXD_BENCH_REPS", 3))
	window := repeatTo(pcm, 30*frontend.SampleRate)
	long := repeatTo(pcm, longS*frontend.SampleRate)
	ctx := context.Background()
	opts := asr.DecodeOptions{Language: "en", Temperatures: []float64{0}, NoSpeechThreshold: 1, MaxTokens: tokens}
	run := func(x []float32) error { _, err := m.Transcribe(ctx, x, opts); return err }
	// Warm up: first graphs, GPU kernels, caches.
	if err := run(window); err != nil {
		b.Fatal(err)
	}
	measure := func(b *testing.B, f func() error) (time.Duration, asr.Stats) {
		before := m.Stats()
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		after := m.Stats()
		return wall, asr.Stats{Mel: after.Mel - before.Mel, Encoder: after.Encoder - before.Encoder, Decoder: after.Decoder - before.Decoder,
			Windows: after.Windows - before.Windows, Steps: after.Steps - before.Steps}
	}
	msOf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.Run("window", func(b *testing.B) {
		var wall time.Duration
		var st asr.Stats
		for range b.N * reps {
			w, s := measure(b, func() error { return run(window) })
			wall += w
			st.Mel, st.Encoder, st.Windows, st.Steps = st.Mel+s.Mel, st.Encoder+s.Encoder, st.Windows+s.Windows, st.Steps+s.Steps
		}
		n := float64(st.Windows)
		b.ReportMetric(msOf(st.Encoder)/n, "enc_ms")
		b.ReportMetric(msOf(st.Mel)/n, "mel_ms")
		b.ReportMetric(msOf(wall-st.Mel-st.Encoder)/float64(max(1, st.Steps)), "step_ms")
		b.ReportMetric(float64(st.Steps)/n, "steps/window")
	})
	b.Run("longform", func(b *testing.B) {
		var wall time.Duration
		var st asr.Stats
		for range b.N {
			w, s := measure(b, func() error { return run(long) })
			wall += w
			st.Windows, st.Steps = st.Windows+s.Windows, st.Steps+s.Steps
		}
		b.ReportMetric(float64(b.N*len(long))/frontend.SampleRate/wall.Seconds(), "rtf")
		b.ReportMetric(float64(st.Windows)/float64(b.N), "windows/op")
		b.ReportMetric(float64(st.Steps)/float64(max(1, st.Windows)), "steps/window")
	})
	b.Run("batch", func(b *testing.B) {
		var wall, serial time.Duration
		for range b.N {
			w, _ := measure(b, func() error {
				var wg sync.WaitGroup
				errs := make([]error, batch)
				for i := range batch {
					wg.Go(func() { errs[i] = run(window) })
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						return err
					}
				}
				return nil
			})
			wall += w
			w, _ = measure(b, func() error {
				for range batch {
					if err := run(window); err != nil {
						return err
					}
				}
				return nil
			})
			serial += w
		}
		b.ReportMetric(float64(b.N*batch)/wall.Seconds(), "windows_per_s")
		b.ReportMetric(float64(b.N*batch)/serial.Seconds(), "windows_per_s_serial")
		b.ReportMetric(serial.Seconds()/wall.Seconds(), "batch_speedup")
	})
}

// repeatTo repeats pcm to n samples.
func repeatTo(pcm []float32, n int) []float32 {
	out := make([]float32, 0, n)
	for len(out) < n {
		out = append(out, pcm[:min(len(pcm), n-len(out))]...)
	}
	return out
}
