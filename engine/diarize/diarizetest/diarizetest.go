// Package diarizetest makes random-weight diarizer networks of the real
// shapes, for tests and benchmarks: pyannote segmentation-3.0's and
// WeSpeaker ResNet34's state dicts (Segmentation, Embedding), written as
// the published PyTorch checkpoints are (Checkpoints) or converted to the
// GGUFs boxd loads (GGUFs), and Babble, audio for them to chew on. Random
// weights give shapes and plumbing, never accuracy. For tests only.
package diarizetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"boxd/engine/diarize"
	"boxd/engine/diarize/embnet"
	"boxd/engine/diarize/segnet"
	"boxd/engine/models/torchfile"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	TempDir() string
}

// Checkpoints writes random segmentation and embedding checkpoints in the
// published format (pytorch_model.bin, torch.save's zip) under dir and
// returns their paths.
func Checkpoints(tb TB, dir string) (seg, emb string) {
	tb.Helper()
	seg, emb = filepath.Join(dir, "segmentation-3.0.bin"), filepath.Join(dir, "wespeaker-resnet34.bin")
	if err := torchfile.Write(seg, Segmentation(1)); err != nil {
		tb.Fatalf("diarizetest: %v", err)
	}
	if err := torchfile.Write(emb, Embedding(2)); err != nil {
		tb.Fatalf("diarizetest: %v", err)
	}
	return seg, emb
}

// GGUFs converts random segmentation and embedding networks to GGUF under
// a temporary directory and returns their paths.
func GGUFs(tb TB) (seg, emb string) {
	tb.Helper()
	dir := tb.TempDir()
	seg, emb = filepath.Join(dir, "seg.gguf"), filepath.Join(dir, "emb.gguf")
	w, err := segnet.ConvertStateDict(Segmentation(1))
	if err == nil {
		err = w.WriteFile(seg)
	}
	if err != nil {
		tb.Fatalf("diarizetest: segmentation: %v", err)
	}
	w, err = embnet.ConvertStateDict(Embedding(2))
	if err == nil {
		err = w.WriteFile(emb)
	}
	if err != nil {
		tb.Fatalf("diarizetest: embedding: %v", err)
	}
	return seg, emb
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

// Segmentation is segmentation-3.0's state dict with random values;
// the classifier's bias favours the classes with speech so that windows
// have active speakers and the embedder runs.
func Segmentation(seed uint64) map[string]torchfile.Tensor {
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

// Embedding is WeSpeaker ResNet34's state dict (pyannote's names)
// with random values.
func Embedding(seed uint64) map[string]torchfile.Tensor {
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

// Babble is n samples of two alternating voices of sorts: harmonic tones
// with vibrato in noise, switching every few seconds, with pauses.
func Babble(n int, seed uint64) []float32 {
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
