package neural

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"boxd/engine/diarize"
	"boxd/engine/diarize/diarizetest"
	"boxd/engine/diarize/embnet"
	"boxd/engine/diarize/segnet"
)

// The integration test and benchmark run the real networks (segnet,
// embnet) with random weights of the real shapes, converted to GGUF by
// their ConvertStateDict: shapes and plumbing, no accuracy.

func TestFrameTimingMatchesSegnet(t *testing.T) {
	if segnet.WindowSamples != WindowSamples || segnet.Frames != FramesPerWindow ||
		segnet.FrameStepSamples != FrameStepSample || segnet.FrameSizeSamples != FrameSizeSample ||
		segnet.Classes != PowersetClasses || segnet.Speakers != LocalSpeakers ||
		segnet.NumFrames(WindowSamples) != FramesPerWindow {
		t.Errorf("frame timing differs from segnet's: window %d, frames %d (NumFrames %d), step %d, size %d, classes %d, speakers %d",
			segnet.WindowSamples, segnet.Frames, segnet.NumFrames(WindowSamples), segnet.FrameStepSamples, segnet.FrameSizeSamples, segnet.Classes, segnet.Speakers)
	}
	for k, p := range segnet.PowersetClasses {
		if fmt.Sprint(p) != fmt.Sprint(powerset[k]) {
			t.Errorf("powerset class %d: segnet %v, here %v", k, p, powerset[k])
		}
	}
	if n := embnet.NumFrames(WindowSamples); n < 990 || n > 1000 {
		t.Errorf("embnet.NumFrames(10 s) = %d; the fbank mask mapping assumes 10 ms frames", n)
	}
}

// loadRandom converts random state dicts of both networks and loads them.
func loadRandom(tb testing.TB) (*segnet.Model, *embnet.Model) {
	tb.Helper()
	segPath, embPath := diarizetest.GGUFs(tb)
	gpu := os.Getenv("NEURAL_BENCH_GPU") == "1"
	seg, err := segnet.Load(segPath, segnet.Options{GPU: gpu})
	if err != nil {
		tb.Fatalf("segnet.Load: %v", err)
	}
	tb.Cleanup(seg.Close)
	emb, err := embnet.Load(embPath, embnet.Options{GPU: gpu})
	if err != nil {
		tb.Fatalf("embnet.Load: %v", err)
	}
	tb.Cleanup(emb.Close)
	return seg, emb
}

// TestRandomWeightsEndToEnd runs 30 s through both networks. Step is 10 s
// (three windows, no overlap) to keep it to a minute or so on two shared
// CPU cores; the windowing at other steps is covered with the fakes.
func TestRandomWeightsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs both networks on 30 s of audio")
	}
	seg, emb := loadRandom(t)
	pcm := diarizetest.Babble(30*diarize.SampleRate, 1)
	counting := &countingEmbedder{Embedder: emb}
	d := New(seg, counting, embnet.Fbank, Config{Step: 10})
	start := time.Now()
	res, err := d.Diarize(context.Background(), pcm, diarize.DefaultOptions)
	if err != nil {
		t.Fatalf("Diarize: %v", err)
	}
	t.Logf("30 s in %v: %d speakers, %d turns, %d embedder calls", time.Since(start), res.Speakers, len(res.Turns), counting.calls)
	checkResult(t, res, 30)
	if counting.calls == 0 {
		t.Error("the embedder never ran; the random segmentation found no speech")
	}
	if res.Speakers < 1 || res.Speakers > diarize.DefaultOptions.MaxSpeakers {
		t.Errorf("Speakers = %d, want 1 to %d", res.Speakers, diarize.DefaultOptions.MaxSpeakers)
	}
}

// countingEmbedder counts EmbedMasks calls.
type countingEmbedder struct {
	Embedder
	calls int
}

func (c *countingEmbedder) EmbedMasks(ctx context.Context, feats [][]float32, masks [][]float32) ([][]float32, error) {
	c.calls++
	return c.Embedder.EmbedMasks(ctx, feats, masks)
}

// BenchmarkNeural10Min reports the real-time factor (processing time over
// audio time) of the whole pipeline with both networks, random weights,
// default Config, on the CPU. Ten minutes take over an hour on two shared
// CPU cores, so by default it measures 1 minute and reports that RTF as
// the extrapolation to 10 minutes (the cost is linear in the audio's
// length but for the clustering, a negligible share); set
// NEURAL_BENCH_SECONDS=600 for the real thing, and NEURAL_BENCH_GPU=1 to
// put both networks on the GPU (the GPU check does both).
func BenchmarkNeural10Min(b *testing.B) {
	seconds := benchSeconds()
	seg, emb := loadRandom(b)
	pcm := diarizetest.Babble(seconds*diarize.SampleRate, 2)
	d := New(seg, emb, embnet.Fbank, Config{})
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := d.Diarize(context.Background(), pcm, diarize.DefaultOptions); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
	}
	b.ReportMetric(elapsed.Seconds()/float64(b.N)/float64(seconds), "rtf")
	b.ReportMetric(float64(seconds), "audio-s")
}

// benchSeconds is NEURAL_BENCH_SECONDS, 60 when unset.
func benchSeconds() int {
	if v, err := strconv.Atoi(os.Getenv("NEURAL_BENCH_SECONDS")); err == nil && v > 0 {
		return v
	}
	return 60
}
