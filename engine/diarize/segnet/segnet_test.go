package segnet

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/engine/models/gguf"
	"boxd/engine/models/torchfile"
)

// The model and its state dict, shared by the tests that run it.
var shared struct {
	once sync.Once
	sd   map[string]tensor
	path string
	err  error
}

func sharedModel(t testing.TB) (map[string]tensor, string) {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "segnet")
		if err != nil {
			shared.err = err
			return
		}
		shared.sd = randomStateDict(1)
		w, err := convert(shared.sd)
		if err != nil {
			shared.err = err
			return
		}
		shared.path = filepath.Join(dir, "seg.gguf")
		shared.err = w.WriteFile(shared.path)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.sd, shared.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.path != "" {
		os.RemoveAll(filepath.Dir(shared.path))
	}
	os.Exit(code)
}

// TestFrameTiming derives the frame count, step and duration from the
// convolution stack's kernels and strides (pyannote's receptive_field).
func TestFrameTiming(t *testing.T) {
	kernels := []int{251, 3, 5, 3, 5, 3}
	strides := []int{10, 3, 1, 3, 1, 3}
	size := func(frames int) int {
		for i := len(kernels) - 1; i >= 0; i-- {
			frames = kernels[i] + (frames-1)*strides[i]
		}
		return frames
	}
	centre := 0
	for i := len(kernels) - 1; i >= 0; i-- {
		centre = centre*strides[i] + (kernels[i]-1)/2
	}
	step := size(2) - size(1)
	if size(1) != FrameSizeSamples || step != FrameStepSamples {
		t.Fatalf("receptive field %d samples, step %d; constants say %d, %d", size(1), step, FrameSizeSamples, FrameStepSamples)
	}
	if start := float64(centre) - float64(size(1)-1)/2; start != 0 {
		t.Fatalf("first frame starts at sample %g, want 0", start)
	}
	// One frame needs the receptive field; each step more adds one.
	for _, c := range [][2]int{{WindowSamples, Frames}, {size(1), 1}, {size(1) - 1, 0}, {size(2), 2}, {size(2) - 1, 1}, {100, 0}} {
		if got := NumFrames(c[0]); got != c[1] {
			t.Errorf("NumFrames(%d) = %d, want %d", c[0], got, c[1])
		}
	}
	if math.Abs(FrameStep-0.016875) > 1e-12 || math.Abs(FrameDuration-0.0619375) > 1e-12 {
		t.Fatalf("FrameStep %g, FrameDuration %g", FrameStep, FrameDuration)
	}
}

func TestPowerset(t *testing.T) {
	// Frames whose best class is each class in turn.
	var logp []float32
	for best := range Classes {
		row := make([]float32, Classes)
		for k := range row {
			row[k] = -5
		}
		row[best] = -0.1
		logp = append(logp, row...)
	}
	// Ties go to the first class.
	logp = append(logp, -1, -3, -3, -3, -1, -3, -3)
	want := [][Speakers]float32{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {0, 0, 0}}
	got := Powerset(logp)
	if len(got) != len(want) {
		t.Fatalf("%d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("frame %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestSincFilterbank(t *testing.T) {
	sd := randomStateDict(3)
	got, err := sincFilterbank(sd["sincnet.conv1d.0.filterbank.low_hz_"].Data, sd["sincnet.conv1d.0.filterbank.band_hz_"].Data)
	if err != nil {
		t.Fatal(err)
	}
	want := refSincFilters(newRefNet(sd))
	worst := 0.0
	for i, f := range want {
		for k, v := range f {
			worst = math.Max(worst, math.Abs(float64(got[i*sincKernel+k])-v))
		}
	}
	if worst > 1e-6 {
		t.Fatalf("sinc filters differ from the closed form by %g", worst)
	}
}

// TestSegmentMatchesReference runs two random windows through the ggml
// graph (CPU, two in one batch) and the float64 reference.
func TestSegmentMatchesReference(t *testing.T) {
	sd, path := sharedModel(t)
	m, err := Load(path, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	windows := [][]float32{randomWindow(1), randomWindow(2)}
	start := time.Now()
	got, err := m.Segment(context.Background(), windows)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ggml: %v for %d windows", time.Since(start), len(windows))
	if len(got) != len(windows) {
		t.Fatalf("%d outputs for %d windows", len(got), len(windows))
	}
	net := newRefNet(sd)
	worst, flips := 0.0, 0
	for w, win := range windows {
		start := time.Now()
		want := refSegment(net, win)
		t.Logf("reference: %v a window", time.Since(start))
		if len(want) != Frames || len(got[w]) != Frames*Classes {
			t.Fatalf("window %d: %d reference frames, %d values", w, len(want), len(got[w]))
		}
		for f := range Frames {
			for k := range Classes {
				worst = math.Max(worst, math.Abs(float64(got[w][f*Classes+k])-want[f][k]))
			}
		}
		gotML := Powerset(got[w])
		for f := range Frames {
			row := make([]float32, Classes)
			for k := range row {
				row[k] = float32(want[f][k])
			}
			// Frames whose two best classes are within the tolerance may
			// go either way.
			sorted := slices.Sorted(slices.Values(want[f]))
			if Powerset(row)[0] != gotML[f] && sorted[Classes-1]-sorted[Classes-2] > 1e-4 {
				flips++
			}
		}
		// The scores must vary over the window: a constant output would
		// hide a broken recurrence.
		t.Logf("window %d: log probabilities vary by up to %.3g", w, spreadOf(want))
		if spread := spreadOf(want); spread < 0.1 {
			t.Fatalf("window %d: the reference's log probabilities barely vary (%g): a weak test", w, spread)
		}
	}
	t.Logf("max |Δ log p| = %.3g over %d frames; %d frames' argmax differ", worst, len(windows)*Frames, flips)
	if worst > 1e-4 {
		t.Fatalf("max |Δ log p| = %g, want ≤ 1e-4", worst)
	}
	if flips > 0 {
		t.Fatalf("%d frames' speakers differ from the reference", flips)
	}
}

// spreadOf is the largest range of a class's log probability over the
// frames.
func spreadOf(lp [][]float64) float64 {
	best := 0.0
	for k := range Classes {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, row := range lp {
			lo, hi = math.Min(lo, row[k]), math.Max(hi, row[k])
		}
		best = math.Max(best, hi-lo)
	}
	return best
}

// TestSegmentBatches splits windows over several passes (batch 2, three
// windows) and agrees with one window alone.
func TestSegmentBatches(t *testing.T) {
	_, path := sharedModel(t)
	m, err := Load(path, Options{Threads: 2, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	a, b := randomWindow(5), randomWindow(6)
	all, err := m.Segment(context.Background(), [][]float32{a, b, a})
	if err != nil {
		t.Fatal(err)
	}
	one, err := m.Segment(context.Background(), [][]float32{a})
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for i := range one[0] {
		worst = math.Max(worst, math.Abs(float64(all[0][i]-one[0][i])))
		worst = math.Max(worst, math.Abs(float64(all[2][i]-one[0][i])))
	}
	if worst > 1e-5 {
		t.Fatalf("a window scored in different batches differs by %g", worst)
	}
	same := 0
	for i := range all[0] {
		if all[0][i] == all[1][i] {
			same++
		}
	}
	if same > len(all[0])/2 {
		t.Fatalf("different windows give the same scores (%d of %d)", same, len(all[0]))
	}
	if _, err := m.Segment(context.Background(), [][]float32{a, a[:WindowSamples-1]}); err == nil || !strings.Contains(err.Error(), "window 1 has 159999 samples") {
		t.Fatalf("short window: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Segment(ctx, [][]float32{a}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if out, err := m.Segment(context.Background(), nil); err != nil || len(out) != 0 {
		t.Fatalf("no windows: %v, %v", out, err)
	}
}

func TestConvertRejects(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(map[string]tensor)
		want   string
	}{
		{"missing", func(sd map[string]tensor) { delete(sd, "lstm.weight_hh_l2_reverse") }, "lstm.weight_hh_l2_reverse"},
		{"shape", func(sd map[string]tensor) {
			sd["classifier.weight"] = tensor{Shape: []int{4, 128}, Data: make([]float32, 4*128)}
		}, "classifier.weight has shape [4 128], want [7 128]"},
		{"values", func(sd map[string]tensor) {
			sd["linear.1.bias"] = tensor{Shape: []int{128}, Data: make([]float32, 127)}
		}, "linear.1.bias has 127 values"},
		{"other architecture", func(sd map[string]tensor) {
			clear(sd)
			sd["encoder.conv1.weight"] = tensor{Shape: []int{4}, Data: make([]float32, 4)}
		}, "no SincNet or LSTM tensors"},
		{"empty band", func(sd map[string]tensor) {
			sd["sincnet.conv1d.0.filterbank.low_hz_"].Data[3] = 9000
		}, "sinc filter 3 has an empty band"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sd := randomStateDict(9)
			c.mutate(sd)
			_, err := convert(sd)
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrNotSegmentation) ||
				!strings.Contains(err.Error(), "not a pyannote segmentation-3.0 checkpoint") {
				t.Fatalf("got %v, want an error naming %q", err, c.want)
			}
		})
	}
}

// rewrite copies the GGUF at in to out, passing each tensor through edit
// (nil drops it) and the metadata through kv.
func rewrite(t *testing.T, in, out string, edit func(gguf.TensorInfo, []byte) (gguf.TensorInfo, []byte, bool), kv func(gguf.KV) gguf.KV) {
	t.Helper()
	f, err := gguf.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter()
	for _, e := range f.KV {
		e = kv(e)
		w.Set(e.Key, e.Value)
	}
	for _, ti := range f.Tensors {
		data, err := f.TensorData(in, ti)
		if err != nil {
			t.Fatal(err)
		}
		ti, data, keep := edit(ti, data)
		if !keep {
			continue
		}
		if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFile(out); err != nil {
		t.Fatal(err)
	}
}

func TestLoadRejects(t *testing.T) {
	_, path := sharedModel(t)
	dir := t.TempDir()
	keep := func(ti gguf.TensorInfo, d []byte) (gguf.TensorInfo, []byte, bool) { return ti, d, true }
	same := func(kv gguf.KV) gguf.KV { return kv }

	missing := filepath.Join(dir, "nothing.gguf")
	if _, err := Load(missing, Options{Threads: 1}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing file: %v", err)
	}

	other := filepath.Join(dir, "whisper.gguf")
	rewrite(t, path, other, keep, func(kv gguf.KV) gguf.KV {
		if kv.Key == "general.architecture" {
			kv.Value = "whisper"
		}
		return kv
	})
	if _, err := Load(other, Options{Threads: 1}); err == nil || !errors.Is(err, ErrNotSegmentation) || !strings.Contains(err.Error(), `"whisper"`) {
		t.Fatalf("other architecture: %v", err)
	}

	lost := filepath.Join(dir, "lost.gguf")
	rewrite(t, path, lost, func(ti gguf.TensorInfo, d []byte) (gguf.TensorInfo, []byte, bool) {
		return ti, d, ti.Name != blockPrefix+"lstm.2.hh_tanh"
	}, same)
	if _, err := Load(lost, Options{Threads: 1}); err == nil || !errors.Is(err, ErrNotSegmentation) || !strings.Contains(err.Error(), "lstm.2.hh_tanh missing") {
		t.Fatalf("missing tensor: %v", err)
	}

	shape := filepath.Join(dir, "shape.gguf")
	rewrite(t, path, shape, func(ti gguf.TensorInfo, d []byte) (gguf.TensorInfo, []byte, bool) {
		if ti.Name == blockPrefix+"classifier.bias" {
			ti.Dims = []uint64{8}
			d = make([]byte, 32)
		}
		return ti, d, true
	}, same)
	if _, err := Load(shape, Options{Threads: 1}); err == nil || !strings.Contains(err.Error(), "classifier.bias has shape [8], want [7]") {
		t.Fatalf("wrong shape: %v", err)
	}

	hp := filepath.Join(dir, "hp.gguf")
	rewrite(t, path, hp, keep, func(kv gguf.KV) gguf.KV {
		if kv.Key == KeyLSTMLayers {
			kv.Value = uint32(2)
		}
		return kv
	})
	if _, err := Load(hp, Options{Threads: 1}); err == nil || !strings.Contains(err.Error(), KeyLSTMLayers+" is 2, want 4") {
		t.Fatalf("hyper-parameter: %v", err)
	}
}

// BenchmarkSegment reports the seconds per 10 s window: eight windows a
// call (one batch), on the CPU (every CPU), or the GPU with SEGNET_GPU set.
func BenchmarkSegment(b *testing.B) {
	_, path := sharedModel(b)
	m, err := Load(path, Options{GPU: os.Getenv("SEGNET_GPU") != ""})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	windows := make([][]float32, 8)
	for i := range windows {
		windows[i] = randomWindow(uint64(i))
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Segment(context.Background(), windows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*len(windows)), "s/window")
}

// TestConvertFile writes a random checkpoint with torchfile, converts it
// and gets the GGUF that converting the state dict in memory gives.
func TestConvertFile(t *testing.T) {
	sd, path := sharedModel(t)
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "pytorch_model.bin")
	tf := make(map[string]torchfile.Tensor, len(sd))
	for k, v := range sd {
		tf[k] = torchfile.Tensor{Shape: v.Shape, Data: v.Data}
	}
	if err := torchfile.Write(ckpt, tf); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "seg.gguf")
	if err := ConvertFile(ckpt, out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the file's GGUF (%d bytes) differs from the state dict's (%d bytes)", len(got), len(want))
	}
	m, err := Load(out, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()

	// Another architecture's checkpoint.
	other := filepath.Join(dir, "embedding.bin")
	if err := torchfile.Write(other, map[string]torchfile.Tensor{
		"resnet.conv1.weight": {Shape: []int{2, 1, 3, 3}, Data: make([]float32, 18)},
	}); err != nil {
		t.Fatal(err)
	}
	err = ConvertFile(other, filepath.Join(dir, "x.gguf"))
	if err == nil || !errors.Is(err, ErrNotSegmentation) || !strings.Contains(err.Error(), other) {
		t.Fatalf("another architecture: %v", err)
	}
	missing := filepath.Join(dir, "absent.bin")
	if err := ConvertFile(missing, filepath.Join(dir, "y.gguf")); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing file: %v", err)
	}
}
