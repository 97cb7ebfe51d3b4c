package neural

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"boxd/engine/diarize"
	"boxd/engine/diarize/embnet"
	"boxd/engine/diarize/segnet"
	"boxd/engine/models/torchfile"
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

// randTensors fills a state dict with random values.
type randTensors struct {
	rng *rand.Rand
	sd  map[string]torchfile.Tensor
}

func (r randTensors) put(name string, shape []int, f func() float64) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(f())
	}
	r.sd[name] = torchfile.Tensor{Shape: shape, Data: data}
}

func (r randTensors) normal(name string, scale float64, shape ...int) {
	r.put(name, shape, func() float64 { return r.rng.NormFloat64() * scale })
}

func (r randTensors) around(name string, mean, spread float64, shape ...int) {
	r.put(name, shape, func() float64 { return mean + spread*r.rng.Float64() })
}

// randomSegmentation is segmentation-3.0's state dict with random values;
// the classifier's bias favours the classes with speech so that windows
// have active speakers and the embedder runs.
func randomSegmentation(seed uint64) map[string]torchfile.Tensor {
	r := randTensors{rand.New(rand.NewPCG(seed, 1)), map[string]torchfile.Tensor{}}
	r.around("sincnet.wav_norm1d.weight", 1, 0, 1)
	r.around("sincnet.wav_norm1d.bias", 0, 0, 1)
	r.around("sincnet.conv1d.0.filterbank.low_hz_", 30, 6000, 40, 1)
	r.around("sincnet.conv1d.0.filterbank.band_hz_", 50, 800, 40, 1)
	r.normal("sincnet.conv1d.1.weight", 1/math.Sqrt(80*5), 60, 80, 5)
	r.normal("sincnet.conv1d.1.bias", 0.1, 60)
	r.normal("sincnet.conv1d.2.weight", 1/math.Sqrt(60*5), 60, 60, 5)
	r.normal("sincnet.conv1d.2.bias", 0.1, 60)
	for i, c := range []int{80, 60, 60} {
		r.around(fmt.Sprintf("sincnet.norm1d.%d.weight", i), 0.5, 1, c)
		r.normal(fmt.Sprintf("sincnet.norm1d.%d.bias", i), 0.1, c)
	}
	for l := range 4 {
		in := 60
		if l > 0 {
			in = 256
		}
		for _, sfx := range []string{"", "_reverse"} {
			r.normal(fmt.Sprintf("lstm.weight_ih_l%d%s", l, sfx), 1/math.Sqrt(float64(in)), 512, in)
			r.normal(fmt.Sprintf("lstm.weight_hh_l%d%s", l, sfx), 1/math.Sqrt(128), 512, 128)
			r.normal(fmt.Sprintf("lstm.bias_ih_l%d%s", l, sfx), 0.1, 512)
			r.normal(fmt.Sprintf("lstm.bias_hh_l%d%s", l, sfx), 0.1, 512)
		}
	}
	r.normal("linear.0.weight", 1/math.Sqrt(256), 128, 256)
	r.normal("linear.0.bias", 0.1, 128)
	r.normal("linear.1.weight", 1/math.Sqrt(128), 128, 128)
	r.normal("linear.1.bias", 0.1, 128)
	r.normal("classifier.weight", 1/math.Sqrt(128), 7, 128)
	r.put("classifier.bias", []int{7}, func() float64 { return 0 })
	copy(r.sd["classifier.bias"].Data, []float32{0, 2, 1.5, 1, 1.2, 0, 0})
	return r.sd
}

// randomEmbedding is WeSpeaker ResNet34's state dict (pyannote's names)
// with random values.
func randomEmbedding(seed uint64) map[string]torchfile.Tensor {
	r := randTensors{rand.New(rand.NewPCG(seed, 2)), map[string]torchfile.Tensor{}}
	conv := func(name string, out, in, k int) {
		r.normal(name, math.Sqrt(2/float64(in*k*k)), out, in, k, k)
	}
	bn := func(name string, c int) {
		r.around(name+".weight", 0.3, 0.5, c)
		r.normal(name+".bias", 0.2, c)
		r.normal(name+".running_mean", 0.2, c)
		r.around(name+".running_var", 0.5, 1, c)
	}
	conv("resnet.conv1.weight", 32, 1, 3)
	bn("resnet.bn1", 32)
	in := 32
	for s, n := range []int{3, 4, 6, 3} {
		out := 32 << s
		for i := range n {
			p := fmt.Sprintf("resnet.layer%d.%d.", s+1, i)
			conv(p+"conv1.weight", out, in, 3)
			bn(p+"bn1", out)
			conv(p+"conv2.weight", out, out, 3)
			bn(p+"bn2", out)
			if i == 0 && s > 0 {
				conv(p+"shortcut.0.weight", out, in, 1)
				bn(p+"shortcut.1", out)
			}
			in = out
		}
	}
	r.normal("resnet.seg_1.weight", 1/math.Sqrt(5120), 256, 5120)
	r.normal("resnet.seg_1.bias", 0.1, 256)
	return r.sd
}

// loadRandom converts random state dicts of both networks and loads them.
func loadRandom(tb testing.TB) (*segnet.Model, *embnet.Model) {
	tb.Helper()
	dir := tb.TempDir()
	segPath, embPath := filepath.Join(dir, "seg.gguf"), filepath.Join(dir, "emb.gguf")
	w, err := segnet.ConvertStateDict(randomSegmentation(1))
	if err != nil {
		tb.Fatalf("segnet.ConvertStateDict: %v", err)
	}
	if err := w.WriteFile(segPath); err != nil {
		tb.Fatal(err)
	}
	w, err = embnet.ConvertStateDict(randomEmbedding(2))
	if err != nil {
		tb.Fatalf("embnet.ConvertStateDict: %v", err)
	}
	if err := w.WriteFile(embPath); err != nil {
		tb.Fatal(err)
	}
	seg, err := segnet.Load(segPath, segnet.Options{})
	if err != nil {
		tb.Fatalf("segnet.Load: %v", err)
	}
	tb.Cleanup(seg.Close)
	emb, err := embnet.Load(embPath, embnet.Options{})
	if err != nil {
		tb.Fatalf("embnet.Load: %v", err)
	}
	tb.Cleanup(emb.Close)
	return seg, emb
}

// babble is n samples of two alternating voices of sorts: harmonic tones
// with vibrato in noise, switching every few seconds, with pauses.
func babble(n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 3))
	pcm := make([]float32, n)
	for i := range pcm {
		t := float64(i) / diarize.SampleRate
		seg := int(t / 3.7)
		f0 := []float64{120, 210}[seg%2]
		v := 0.0
		if math.Mod(t, 3.7) < 3.2 {
			for h := 1.0; h <= 5; h++ {
				v += math.Sin(2*math.Pi*h*f0*t+0.3*math.Sin(2*math.Pi*5*t)) / h
			}
		}
		pcm[i] = float32(0.1*v + 0.01*rng.NormFloat64())
	}
	return pcm
}

// TestRandomWeightsEndToEnd runs 30 s through both networks. Step is 10 s
// (three windows, no overlap) to keep it to a minute or so on two shared
// CPU cores; the windowing at other steps is covered with the fakes.
func TestRandomWeightsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs both networks on 30 s of audio")
	}
	seg, emb := loadRandom(t)
	pcm := babble(30*diarize.SampleRate, 1)
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
// NEURAL_BENCH_SECONDS=600 for the real thing.
func BenchmarkNeural10Min(b *testing.B) {
	seconds := benchSeconds()
	seg, emb := loadRandom(b)
	pcm := babble(seconds*diarize.SampleRate, 2)
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
