// Package segnet is pyannote segmentation-3.0's network (PyanNet) in Go on
// ggml, through ollama's ml API (the backend the Whisper engine uses): it
// turns 10 s windows of 16 kHz audio into per-frame powerset log
// probabilities of up to three local speakers, on the CPU or a CUDA GPU.
//
// The architecture (pyannote-audio's PyanNet and SincNet, asteroid-
// filterbanks' ParamSincFB) as segmentation-3.0 configures it:
//
//	SincNet: InstanceNorm1d(1, affine) over the waveform;
//	  ParamSincFB (80 filters of 251 taps, stride 10; 40 band-pass
//	  "cos" and 40 "sin" filters from the learnt low_hz_ and band_hz_),
//	  abs, MaxPool1d(3, 3), InstanceNorm1d(80, affine), LeakyReLU;
//	  Conv1d(80, 60, 5), MaxPool1d(3, 3), InstanceNorm1d(60), LeakyReLU;
//	  Conv1d(60, 60, 5), MaxPool1d(3, 3), InstanceNorm1d(60), LeakyReLU.
//	LSTM(60 → 128, 4 layers, bidirectional, batch first).
//	Linear(256, 128), LeakyReLU, Linear(128, 128), LeakyReLU.
//	Classifier Linear(128, 7), LogSoftmax: the powerset of 3 speakers
//	  with at most 2 at once ({}, {0}, {1}, {2}, {0,1}, {0,2}, {1,2}).
//
// 160,000 samples give 589 frames; frame i covers samples
// [270·i, 270·i + 991) (FrameStep, FrameDuration: the receptive field of
// the convolution and pooling stack, as pyannote's Model.receptive_field).
//
// The published model is pyannote/segmentation-3.0 on Hugging Face
// (pytorch_model.bin, MIT licence; the repository is gated: the user
// accepts its conditions to download it). ConvertFile turns that
// checkpoint into a GGUF (architecture "pyannote-segmentation"): the sinc
// filters are computed once in float64 and stored as a plain convolution
// weight, each LSTM layer's two directions are stacked and its gates
// regrouped (sigmoid gates i, f, o; tanh gate g) with b_ih + b_hh summed.
// Every tensor is named under block 0 (blk.0.) so that the backend puts
// them all on the GPU when one is used.
//
// ggml has no LSTM operation: the recurrence is a chain of per-timestep
// nodes, both directions of a layer in one node per operation (the reverse
// direction runs over the time-reversed input). The backend bounds a
// graph's nodes (32 per weight tensor), so a layer's 589 steps run as
// several graphs with the state carried in tensors on the device, the
// input projections of every step computed beforehand in one product.
// Windows run together in a batch dimension. ml's operations lack a few
// of the network's: abs is sqrt(x²), max pooling is a + relu(b - a) over
// the three taps' views, LeakyReLU is relu(x) - 0.01·relu(-x), and the
// log-softmax runs on the host in float64 over the classifier's scores.
// On the CPU the recurrent steps run on one thread (their operations are
// too small to share), the rest on Options.Threads.
//
// Accuracy: everything runs in float32. Against a float64 reference
// written from the architecture (reference_test.go: random weights of the
// real shapes, two 10 s windows), the CPU's log probabilities differ by at
// most 3.3e-6 (measured) and the test holds them to 1e-4; no frame's best
// powerset class differs.
package segnet

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/ollama/ollama/ml"
	_ "github.com/ollama/ollama/ml/backend" // registers the ggml backend

	"boxd/engine/asr/ggmlcpu"
	"boxd/engine/models/gguf"
)

const (
	// SampleRate is the audio's rate.
	SampleRate = 16000
	// WindowSamples is the length of a window Segment takes: 10 s.
	WindowSamples = 10 * SampleRate
	// Frames is the number of output frames of a window.
	Frames = 589
	// Classes is the number of powerset classes a frame is scored on.
	Classes = 7
	// Speakers is the number of local speakers in a window.
	Speakers = 3
	// FrameStepSamples and FrameSizeSamples are the receptive field of an
	// output frame: frame i covers samples [i·step, i·step + size).
	FrameStepSamples = 270
	FrameSizeSamples = 991
	// FrameStep is the time between frames' starts in seconds (16.875 ms).
	FrameStep = float64(FrameStepSamples) / SampleRate
	// FrameDuration is a frame's receptive field in seconds (61.9375 ms);
	// frame i starts at i·FrameStep, its centre at i·FrameStep +
	// FrameDuration/2.
	FrameDuration = float64(FrameSizeSamples) / SampleRate
)

// convStack is SincNet's convolutions and poolings (kernel, stride), the
// stack whose receptive field the frame timing is.
var convStack = [][2]int{{sincKernel, sincStride}, {3, 3}, {convKernel, 1}, {3, 3}, {convKernel, 1}, {3, 3}}

// NumFrames is the number of output frames of samples samples (as
// pyannote's SincNet.num_frames); 0 when too short.
func NumFrames(samples int) int {
	n := samples
	for _, ks := range convStack {
		if n < ks[0] {
			return 0
		}
		n = 1 + (n-ks[0])/ks[1]
	}
	return n
}

// PowersetClasses are the speakers of each class, in the classifier's order.
var PowersetClasses = [Classes][]int{{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}}

// Powerset turns frame-major powerset scores (Classes a frame) into hard
// multi-label activity, as pyannote's Powerset.to_multilabel(soft=False):
// the frame's best class (the first of equals) marks its speakers 1, the
// others 0.
func Powerset(logp []float32) [][Speakers]float32 {
	out := make([][Speakers]float32, len(logp)/Classes)
	for f := range out {
		row := logp[f*Classes : (f+1)*Classes]
		best := 0
		for k := 1; k < Classes; k++ {
			if row[k] > row[best] {
				best = k
			}
		}
		for _, s := range PowersetClasses[best] {
			out[f][s] = 1
		}
	}
	return out
}

// Options say how to load a model.
type Options struct {
	// Threads for the CPU; 0 picks the number of CPUs.
	Threads int
	// GPU puts the whole network on the first GPU when the backend has one
	// (otherwise it runs on the CPU).
	GPU bool
	// Batch is the most windows one pass runs together (0: 8 on the CPU,
	// 32 on a GPU). Each window takes about 25 MB of working memory.
	Batch int
}

// Model is a loaded segmentation model. Its methods are safe for
// concurrent use; passes run one at a time.
type Model struct {
	mu       sync.Mutex
	b        ml.Backend
	w        weights
	onGPU    bool
	batch    int
	state    ml.Context // the pass's buffers below, on the network's device
	gs, gt   ml.Tensor  // input projections of every step: sigmoid and tanh gates
	seq      ml.Tensor  // a layer's outputs, both directions
	hs, cs   ml.Tensor  // the recurrent state between graphs
	maxNodes int
	threads  int
	// setThreads, when set, changes ggml's CPU threads between graphs
	// (useThreads); nowThreads is the current count.
	setThreads func(int)
	nowThreads int
}

// Load reads a GGUF made by ConvertFile.
func Load(path string, o Options) (*Model, error) {
	f, err := gguf.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("segnet: %s: %w", path, err)
	}
	if a := f.String("general.architecture"); a != Arch {
		return nil, fmt.Errorf("segnet: %s: architecture %q, want %q: %w", path, a, Arch, ErrNotSegmentation)
	}
	for key, v := range map[string]int{
		KeySampleRate: SampleRate, KeyWindow: WindowSamples, KeySincFilters: sincFilters, KeySincKernel: sincKernel,
		KeySincStride: sincStride, KeyLSTMHidden: lstmHidden, KeyLSTMLayers: lstmLayers, KeyLinearHidden: linearHidden,
		KeyLinearLayers: linearLayers, KeyClasses: Classes, KeySpeakers: Speakers, KeyBlockCount: 1,
	} {
		if got, ok := f.Uint(key); !ok || got != uint64(v) {
			return nil, fmt.Errorf("segnet: %s: %s is %d, want %d: %w", path, key, got, v, ErrNotSegmentation)
		}
	}
	threads := o.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	b, onGPU, err := newBackend(path, ml.BackendParams{AllocMemory: true, NumThreads: threads}, o.GPU)
	if err != nil {
		return nil, fmt.Errorf("segnet: %s: %w", path, err)
	}
	if err := b.Load(context.Background(), nil); err != nil {
		b.Close()
		return nil, fmt.Errorf("segnet: %s: load weights: %w", path, err)
	}
	m := &Model{b: b, onGPU: onGPU, batch: o.Batch, threads: threads}
	if !onGPU {
		m.setThreads, m.nowThreads = ggmlcpu.Threads(b), threads
	}
	if m.batch <= 0 {
		m.batch = 8
		if onGPU {
			m.batch = 32
		}
	}
	if err := m.bind(); err != nil {
		b.Close()
		return nil, fmt.Errorf("segnet: %s: %w", path, err)
	}
	if err := m.allocState(); err != nil {
		b.Close()
		return nil, fmt.Errorf("segnet: %s: %w", path, err)
	}
	return m, nil
}

// newBackend opens the ggml backend with block 0 (every tensor) and the
// output block on the first GPU when asked and present.
func newBackend(path string, params ml.BackendParams, gpu bool) (b ml.Backend, onGPU bool, err error) {
	defer func() {
		// The ggml backend panics when memory runs out.
		if r := recover(); r != nil {
			err = fmt.Errorf("backend: %v", r)
		}
	}()
	if gpu {
		probe, err := ml.NewBackend(path, ml.BackendParams{AllocMemory: false, NumThreads: params.NumThreads})
		if err == nil {
			devs := probe.BackendDevices()
			probe.Close()
			if len(devs) > 0 {
				params.GPULayers = ml.GPULayersList{{DeviceID: devs[0].DeviceID, Layers: []int{0, 1}}}
				onGPU = true
			}
		}
	}
	b, err = ml.NewBackend(path, params)
	return b, onGPU, err
}

// allocState makes the buffers a pass keeps between graphs, for m.batch
// windows, beside the weights.
func (m *Model) allocState() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("allocate state: %v", r)
			if m.state != nil {
				m.state.Close()
				m.state = nil
			}
		}
	}()
	ctx := m.b.NewContextSize(8)
	m.state = ctx
	l := ctx.Layer(0)
	B := m.batch
	m.gs = l.Empty(ml.DTypeF32, 3*lstmHidden*B*Frames*2)
	m.gt = l.Empty(ml.DTypeF32, lstmHidden*B*Frames*2)
	m.seq = l.Empty(ml.DTypeF32, lstmHidden*B*Frames*2)
	m.hs = l.Empty(ml.DTypeF32, lstmHidden*B*2)
	m.cs = l.Empty(ml.DTypeF32, lstmHidden*B*2)
	probe := m.b.NewContext()
	m.maxNodes = probe.MaxGraphNodes()
	probe.Close()
	return nil
}

// useThreads sets ggml's CPU threads for the next graph.
func (m *Model) useThreads(n int) {
	if m.setThreads != nil && n != m.nowThreads {
		m.setThreads(n)
		m.nowThreads = n
	}
}

// OnGPU says whether the network runs on a GPU.
func (m *Model) OnGPU() bool { return m.onGPU }

// Close frees the model.
func (m *Model) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != nil {
		m.state.Close()
		m.state = nil
	}
	if m.b != nil {
		m.b.Close()
		m.b = nil
	}
}

// Segment scores each window (exactly WindowSamples samples of mono audio
// at 16 kHz): per window Frames·Classes log probabilities, frame-major
// (frame f's class k at f·Classes + k). It honours ctx between graphs.
func (m *Model) Segment(ctx context.Context, windows [][]float32) ([][]float32, error) {
	for i, w := range windows {
		if len(w) != WindowSamples {
			return nil, fmt.Errorf("segnet: window %d has %d samples, want %d (10 s at 16 kHz)", i, len(w), WindowSamples)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.b == nil {
		return nil, fmt.Errorf("segnet: model closed")
	}
	out := make([][]float32, 0, len(windows))
	for from := 0; from < len(windows); from += m.batch {
		chunk := windows[from:min(len(windows), from+m.batch)]
		logits, err := m.pass(ctx, chunk)
		if err != nil {
			return nil, err
		}
		n := Frames * Classes
		for i := range chunk {
			out = append(out, logSoftmax(logits[i*n:(i+1)*n]))
		}
	}
	return out, nil
}

// logSoftmax is the classifier's activation over each frame's scores, in
// float64.
func logSoftmax(logits []float32) []float32 {
	out := make([]float32, len(logits))
	for f := 0; f < len(logits); f += Classes {
		row := logits[f : f+Classes]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = max(mx, float64(v))
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - mx)
		}
		lse := mx + math.Log(s)
		for k, v := range row {
			out[f+k] = float32(float64(v) - lse)
		}
	}
	return out
}
