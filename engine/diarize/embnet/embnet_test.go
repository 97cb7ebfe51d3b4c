package embnet

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"boxd/engine/models/gguf"
	"boxd/engine/models/torchfile"
)

func TestConvertRejectsOtherCheckpoints(t *testing.T) {
	base := randomStateDict(3)
	clone := func() map[string]torchfile.Tensor {
		sd := make(map[string]torchfile.Tensor, len(base))
		for k, v := range base {
			sd[k] = v
		}
		return sd
	}
	seg := map[string]torchfile.Tensor{ // segmentation-3.0's first tensors
		"sincnet.wav_norm1d.weight":           {Shape: []int{1}, Data: []float32{1}},
		"sincnet.conv1d.0.filterbank.low_hz_": {Shape: []int{40, 1}, Data: make([]float32, 40)},
	}
	missing := clone()
	delete(missing, "resnet.layer3.2.bn2.running_var")
	shape := clone()
	shape["resnet.layer2.0.conv1.weight"] = torchfile.Tensor{Shape: []int{64, 64, 3, 3}, Data: make([]float32, 64*64*9)}
	short := clone()
	short["resnet.seg_1.bias"] = torchfile.Tensor{Shape: []int{256}, Data: make([]float32, 100)}
	two := clone()
	two["resnet.seg_2.weight"] = torchfile.Tensor{Shape: []int{256, 256}, Data: make([]float32, 256*256)}
	negVar := clone()
	v := append([]float32(nil), base["resnet.bn1.running_var"].Data...)
	v[3] = -1
	negVar["resnet.bn1.running_var"] = torchfile.Tensor{Shape: []int{32}, Data: v}
	for _, c := range []struct {
		name string
		sd   map[string]torchfile.Tensor
		want []string
		arch bool // ErrNotResNet34
	}{
		{"segmentation", seg, []string{"not a WeSpeaker ResNet34 checkpoint", "resnet.conv1.weight"}, true},
		{"empty", nil, []string{"not a WeSpeaker ResNet34 checkpoint", "resnet.conv1.weight"}, true},
		{"missing", missing, []string{"not a WeSpeaker ResNet34 checkpoint", "resnet.layer3.2.bn2.running_var"}, true},
		{"shape", shape, []string{"resnet.layer2.0.conv1.weight has shape [64 64 3 3], want [64 32 3 3]"}, true},
		{"values", short, []string{"resnet.seg_1.bias has 100 values"}, false},
		{"seg_2", two, []string{"resnet.seg_2.weight", "one"}, false},
		{"variance", negVar, []string{"resnet.bn1.running_var[3]"}, false},
	} {
		_, err := ConvertStateDict(c.sd)
		if err == nil {
			t.Errorf("%s: converted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
		if errors.Is(err, ErrNotResNet34) != c.arch {
			t.Errorf("%s: errors.Is(%v, ErrNotResNet34) = %v", c.name, err, !c.arch)
		}
	}
}

func writerBytes(t *testing.T, w *gguf.Writer) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := w.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// WeSpeaker's own checkpoint names lack the resnet. prefix and add the
// training head's projection; they convert to the same GGUF.
func TestConvertWeSpeakerNames(t *testing.T) {
	sd := randomStateDict(4)
	plain := map[string]torchfile.Tensor{"projection.weight": {Shape: []int{10, 256}, Data: make([]float32, 2560)}}
	for k, v := range sd {
		plain[strings.TrimPrefix(k, "resnet.")] = v
	}
	a, err := ConvertStateDict(sd)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ConvertStateDict(plain)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(writerBytes(t, a), writerBytes(t, b)) {
		t.Error("the two namings convert differently")
	}
}

// The batch norm folded into the stem: w' = w g / sqrt(v + 1e-5),
// b' = beta - mean g / sqrt(v + 1e-5).
func TestConvertFoldsBatchNorm(t *testing.T) {
	sd := randomStateDict(5)
	w, err := ConvertStateDict(sd)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) []float32 {
		info, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		raw, err := f.TensorData(path, info)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float32, len(raw)/4)
		for i := range out {
			out[i] = math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
		}
		return out
	}
	cw, cb := get("blk.0.conv.weight"), get("blk.0.conv.bias")
	g, beta := sd["resnet.bn1.weight"].Data, sd["resnet.bn1.bias"].Data
	mu, va := sd["resnet.bn1.running_mean"].Data, sd["resnet.bn1.running_var"].Data
	raw := sd["resnet.conv1.weight"].Data
	for o := range 32 {
		s := float64(g[o]) / math.Sqrt(float64(va[o])+1e-5)
		if d := math.Abs(float64(cb[o]) - (float64(beta[o]) - float64(mu[o])*s)); d > 1e-6 {
			t.Errorf("bias %d off by %g", o, d)
		}
		for i := range 9 {
			if d := math.Abs(float64(cw[o*9+i]) - float64(raw[o*9+i])*s); d > 1e-6 {
				t.Errorf("weight %d.%d off by %g", o, i, d)
			}
		}
	}
	if got := f.String(KeyWindow); got != "hamming" {
		t.Errorf("window %q", got)
	}
	if n, _ := f.Uint(KeyBlockCount); n != 17 {
		t.Errorf("block count %d", n)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "absent.gguf"), Options{}); err == nil || !strings.Contains(err.Error(), "absent.gguf") {
		t.Errorf("missing file: %v", err)
	}
	if err := ConvertFile(filepath.Join(dir, "absent.bin"), filepath.Join(dir, "out.gguf")); err == nil || !strings.Contains(err.Error(), "absent.bin") {
		t.Errorf("missing checkpoint: %v", err)
	}
	other := gguf.NewWriter()
	other.Set("general.architecture", "whisper")
	if err := other.AddFloats("x", gguf.F32, []uint64{1}, []float32{1}); err != nil {
		t.Fatal(err)
	}
	otherPath := filepath.Join(dir, "whisper.gguf")
	if err := other.WriteFile(otherPath); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(otherPath, Options{}); !errors.Is(err, ErrNotResNet34) || !strings.Contains(err.Error(), `"whisper"`) {
		t.Errorf("other architecture: %v", err)
	}
	// The right keys but a tensor missing.
	hollow := gguf.NewWriter()
	for _, kv := range []struct {
		k string
		v any
	}{
		{"general.architecture", Arch}, {KeyBlockCount, uint32(17)}, {KeyEmbedding, uint32(256)}, {KeyMels, uint32(80)},
		{KeyChannels, []int32{32, 64, 128, 256}}, {KeyBlocks, []int32{3, 4, 6, 3}},
	} {
		hollow.Set(kv.k, kv.v)
	}
	if err := hollow.AddFloats("blk.0.conv.weight", gguf.F32, []uint64{3, 3, 1, 32}, make([]float32, 288)); err != nil {
		t.Fatal(err)
	}
	hollowPath := filepath.Join(dir, "hollow.gguf")
	if err := hollow.WriteFile(hollowPath); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(hollowPath, Options{}); !errors.Is(err, ErrNotResNet34) || !strings.Contains(err.Error(), "blk.0.conv.bias") {
		t.Errorf("missing tensor: %v", err)
	}
}

// The checkpoint file's round trip: torchfile.Write, ConvertFile, Load give
// the model that the in-memory conversion gives.
func TestConvertFileRoundTrip(t *testing.T) {
	sd := randomStateDict(6)
	dir := t.TempDir()
	bin, out := filepath.Join(dir, "pytorch_model.bin"), filepath.Join(dir, "embnet.gguf")
	if err := torchfile.Write(bin, sd); err != nil {
		t.Fatal(err)
	}
	if err := ConvertFile(bin, out); err != nil {
		t.Fatal(err)
	}
	w, err := ConvertStateDict(sd)
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, writerBytes(t, w)) {
		t.Error("ConvertFile's GGUF differs from ConvertStateDict's")
	}
	m, err := Load(out, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e, err := m.EmbedPCM(context.Background(), testAudio(4000, 9), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(e) != 1 || len(e[0]) != Embedding {
		t.Fatalf("EmbedPCM gave %d embeddings", len(e))
	}
}

// Embed batches sequences of one length and runs other lengths apart; the
// results are those of one sequence at a time.
func TestEmbedBatchesAsSingles(t *testing.T) {
	m := loadRandom(t, randomStateDict(8), Options{Threads: 1, Batch: 2})
	ctx := context.Background()
	fa, fb, fc := Fbank(testAudio(4000, 10)), Fbank(testAudio(4000, 11)), Fbank(testAudio(3000, 12))
	half := make([]float32, len(fa))
	for i := range half[:len(half)/2] {
		half[i] = 1
	}
	feats := [][]float32{Flatten(fa), Flatten(fc), Flatten(fb), Flatten(fa)}
	weights := [][]float32{nil, nil, nil, half}
	got, err := m.Embed(ctx, feats, weights)
	if err != nil {
		t.Fatal(err)
	}
	singles := [][]float32{}
	for i, f := range [][][]float32{fa, fc, fb, fa} {
		var masks [][]float32
		if weights[i] != nil {
			masks = [][]float32{weights[i]}
		}
		e, err := m.EmbedMasks(ctx, f, masks)
		if err != nil {
			t.Fatal(err)
		}
		singles = append(singles, e[0])
	}
	for i := range got {
		cos, rel := compare(got[i], f64(singles[i]))
		if cos < 0.999999 || rel > 1e-5 {
			t.Errorf("sequence %d: batched vs alone: cosine %v, relative diff %v", i, cos, rel)
		}
	}
	if cos, _ := compare(got[0], f64(got[3])); cos > 0.9999999 {
		t.Error("the weights of sequence 3 changed nothing")
	}
}

func TestEmbedBadInputs(t *testing.T) {
	m := loadRandom(t, randomStateDict(9), Options{Threads: 1})
	ctx := context.Background()
	good := Flatten(Fbank(testAudio(4000, 1)))
	if _, err := m.Embed(ctx, [][]float32{good[:100]}, nil); err == nil {
		t.Error("a sequence of 100 values was embedded")
	}
	if _, err := m.Embed(ctx, [][]float32{good}, [][]float32{nil, nil}); err == nil {
		t.Error("two weight sequences for one fbank sequence were taken")
	}
	if _, err := m.EmbedMasks(ctx, [][]float32{make([]float32, 79)}, nil); err == nil {
		t.Error("a frame of 79 bins was embedded")
	}
	if _, err := m.EmbedPCM(ctx, make([]float32, 399), nil); err == nil {
		t.Error("399 samples were embedded")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.Embed(cancelled, [][]float32{good}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	m.Close()
	if _, err := m.Embed(ctx, [][]float32{good}, nil); !errors.Is(err, errClosed) {
		t.Errorf("closed: %v", err)
	}
}

// On a machine with a GPU backend the offloaded model agrees with the CPU.
func TestGPUMatchesCPU(t *testing.T) {
	sd := randomStateDict(10)
	g := loadRandom(t, sd, Options{GPU: true})
	if !g.Offloaded() {
		t.Skip("no GPU backend")
	}
	c := loadRandom(t, sd, Options{Threads: 1})
	feats := Fbank(testAudio(32000, 13))
	mask := make([]float32, len(feats))
	for i := range mask[len(mask)/3:] {
		mask[len(mask)/3+i] = 1
	}
	a, err := g.EmbedMasks(context.Background(), feats, [][]float32{nil, mask})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.EmbedMasks(context.Background(), feats, [][]float32{nil, mask})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		cos, rel := compare(a[i], f64(b[i]))
		t.Logf("mask %d: GPU vs CPU cosine %.8f, relative diff %.2e", i, cos, rel)
		if cos < minCosine || rel > maxRelErr {
			t.Errorf("mask %d: GPU vs CPU cosine %v, relative diff %v", i, cos, rel)
		}
	}
}

// BenchmarkEmbed: one 10 s window (998 fbank frames) through the network
// with three masks, on the CPU with BOXD_EMBNET_THREADS threads (default
// 1: ggml's spinning threads waste most of their time on a machine that
// other work shares), or on the GPU with BOXD_EMBNET_GPU=1.
func BenchmarkEmbed(b *testing.B) {
	o := Options{Threads: 1, GPU: os.Getenv("BOXD_EMBNET_GPU") == "1"}
	if n, err := strconv.Atoi(os.Getenv("BOXD_EMBNET_THREADS")); err == nil {
		o.Threads = n
	}
	m := loadRandom(b, randomStateDict(11), o)
	feats := Fbank(testAudio(160000, 14))
	masks := make([][]float32, 3)
	for k := range masks {
		masks[k] = make([]float32, 589) // segmentation frames
		for i := k * 150; i < k*150+250; i++ {
			masks[k][i] = 1
		}
	}
	ctx := context.Background()
	cpu0 := cpuSeconds()
	for b.Loop() {
		if _, err := m.EmbedMasks(ctx, feats, masks); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/window")
	// CPU time (user and system) a window: the figure that does not
	// depend on what else the machine runs.
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/window")
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
