package whispercpp_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/engine/asr"
	"boxd/engine/asr/frontend"
	"boxd/engine/asr/whispercpp"
	"boxd/engine/models/testmodels"
)

// BenchmarkVsWhisperCpp compares boxd's Whisper with whisper.cpp (the npm
// reference, whisper-cli 1.9.1) on the same random weights in the tiny,
// base and small shapes (F16, as whisper.cpp's default files), in one
// sitting on this machine: jfk.wav as one 30 s window, greedy at
// temperature 0, no fallback, no timestamps, English, up to 220 tokens
// (random weights rarely end a window early; both run the same steps),
// BOXD_BENCH_WHISPER_THREADS threads (default 2) for both.
//
// Reported per shape: enc_ms and step_ms for boxd (its encoder and decoder
// time over windows and steps, from asr.Stats), wcpp_enc_ms and
// wcpp_step_ms for whisper.cpp as it runs by default (flash attention on)
// and wcpp_nofa_* without flash attention (whisper_print_timings), and the
// ratios boxd ÷ whisper.cpp default: enc_ratio, step_ratio (below 1:
// boxd is faster). BOXD_BENCH_WHISPER_SHAPES lists the shapes (default
// tiny,base,small).
//
// Four sessions: agg4_ms is the wall time of 4 transcriptions of the same
// file started at once on one boxd model (their decoder steps batched),
// wcpp_seq4_ms 4 whisper.cpp runs one after another as its server would
// take them (each run's total less its model load, flash attention on),
// and agg4_speedup = wcpp_seq4_ms ÷ agg4_ms (above 1: boxd is faster).
func BenchmarkVsWhisperCpp(b *testing.B) {
	whispercpp.Require(b)
	wav := testmodels.Shared(b, "jfk.wav")
	pcm, err := frontend.ReadWAV(wav)
	if err != nil {
		b.Fatal(err)
	}
	threads := testmodels.EnvInt(b, "BOXD_BENCH_WHISPER_THREADS", 2)
	shapes := os.Getenv("BOXD_BENCH_WHISPER_SHAPES")
	if shapes == "" {
		shapes = "tiny,base,small"
	}
	ctx := context.Background()
	for _, shape := range strings.Split(shapes, ",") {
		shape = strings.TrimSpace(shape)
		b.Run(shape, func(b *testing.B) {
			spec := testmodels.Whisper{Name: "boxd-bench-whisper-" + shape, Seed: 31, F16: true, TokenStd: 0.01}
			if shape != "tiny" {
				spec.Shape = shape
			}
			bin, gg := testmodels.WhisperFiles(b, spec)
			m, err := asr.Load(ctx, gg, asr.Options{Threads: threads})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			o := asr.DecodeOptions{Language: "en", Temperatures: []float64{0}, KeepNonSpeech: true, MaxTokens: m.HParams().NTextCtx/2 - 4}
			if _, err := m.Transcribe(ctx, pcm, o); err != nil { // warm-up: first allocations, page cache
				b.Fatal(err)
			}
			var enc, step, wEnc, wStep, nEnc, nStep, agg, wWork float64
			for range b.N {
				before := m.Stats()
				if _, err := m.Transcribe(ctx, pcm, o); err != nil {
					b.Fatal(err)
				}
				after := m.Stats()
				enc += float64((after.Encoder - before.Encoder).Microseconds()) / 1000 / float64(after.Windows-before.Windows)
				step += float64((after.Decoder - before.Decoder).Microseconds()) / 1000 / float64(after.Steps-before.Steps)
				for _, fa := range []bool{true, false} {
					r, err := whispercpp.Run(ctx, bin, wav, whispercpp.Options{Threads: threads, FlashAttn: fa, Language: "en"})
					if err != nil {
						b.Fatal(err)
					}
					e, s := r.Timings.EncodeMS/float64(max(1, r.Timings.EncodeRuns)), r.Timings.DecodeMS/float64(max(1, r.Timings.DecodeRuns))
					if fa {
						wEnc, wStep = wEnc+e, wStep+s
						wWork += r.Timings.TotalMS - r.Timings.LoadMS
					} else {
						nEnc, nStep = nEnc+e, nStep+s
					}
				}
			}
			for range b.N {
				start := time.Now()
				var wg sync.WaitGroup
				errs := make([]error, 4)
				for i := range errs {
					wg.Go(func() { _, errs[i] = m.Transcribe(ctx, pcm, o) })
				}
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					b.Fatal(err)
				}
				agg += float64(time.Since(start).Microseconds()) / 1000
			}
			n := float64(b.N)
			b.ReportMetric(enc/n, "enc_ms")
			b.ReportMetric(step/n, "step_ms")
			b.ReportMetric(wEnc/n, "wcpp_enc_ms")
			b.ReportMetric(wStep/n, "wcpp_step_ms")
			b.ReportMetric(nEnc/n, "wcpp_nofa_enc_ms")
			b.ReportMetric(nStep/n, "wcpp_nofa_step_ms")
			b.ReportMetric(enc/wEnc, "enc_ratio")
			b.ReportMetric(step/wStep, "step_ratio")
			b.ReportMetric(agg/n, "agg4_ms")
			b.ReportMetric(4*wWork/n, "wcpp_seq4_ms")
			b.ReportMetric(4*wWork/agg, "agg4_speedup")
			b.Logf("%s, %d threads: boxd encoder %.0f ms, step %.2f ms; whisper.cpp (flash attention) %.0f ms, %.2f ms; without %.0f ms, %.2f ms; 4 at once %.0f ms, whisper.cpp 4 in a row %.0f ms",
				shape, threads, enc/n, step/n, wEnc/n, wStep/n, nEnc/n, nStep/n, agg/n, 4*wWork/n)
		})
	}
}
