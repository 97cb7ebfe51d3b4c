package segnet

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"boxd/engine/models/gguf"
)

// Arch is the GGUF general.architecture of a converted model.
const Arch = "pyannote-segmentation"

// The GGUF metadata keys Load reads (ConvertStateDict writes them).
const (
	KeyBlockCount      = Arch + ".block_count" // 1: every tensor is in block 0
	KeySampleRate      = Arch + ".sample_rate"
	KeyWindow          = Arch + ".window_samples"
	KeySincFilters     = Arch + ".sinc.filters"
	KeySincKernel      = Arch + ".sinc.kernel"
	KeySincStride      = Arch + ".sinc.stride"
	KeyLSTMHidden      = Arch + ".lstm.hidden"
	KeyLSTMLayers      = Arch + ".lstm.layers"
	KeyLinearHidden    = Arch + ".linear.hidden"
	KeyLinearLayers    = Arch + ".linear.layers"
	KeyClasses         = Arch + ".powerset.classes"
	KeySpeakers        = Arch + ".powerset.speakers"
	KeyMaxPerFrame     = Arch + ".powerset.max_speakers_per_frame"
	sincMinLowHz       = 50.0
	sincMinBandHz      = 50.0
	sincFilters        = 80
	sincKernel         = 251
	sincStride         = 10
	convChannels       = 60
	convKernel         = 5
	lstmHidden         = 128
	lstmLayers         = 4
	linearHidden       = 128
	linearLayers       = 2
	blockPrefix        = "blk.0." // the ggml backend places a tensor by the first number in its name
	errNotSegmentation = "not a pyannote segmentation-3.0 checkpoint"
)

// ErrNotSegmentation is wrapped by every error about a checkpoint or a GGUF
// that is not pyannote segmentation-3.0.
var ErrNotSegmentation = errors.New(errNotSegmentation)

// tensor is a state-dict entry: row-major float32 values of a shape
// (torchfile.Tensor's fields).
type tensor struct {
	Shape []int
	Data  []float32
}

// want is a state-dict entry the converter needs, with its PyTorch shape.
type want struct {
	name     string
	shape    []int
	optional bool
}

// checkpointTensors lists segmentation-3.0's state dict.
func checkpointTensors() []want {
	w := []want{
		{name: "sincnet.wav_norm1d.weight", shape: []int{1}},
		{name: "sincnet.wav_norm1d.bias", shape: []int{1}},
		{name: "sincnet.conv1d.0.filterbank.low_hz_", shape: []int{sincFilters / 2, 1}},
		{name: "sincnet.conv1d.0.filterbank.band_hz_", shape: []int{sincFilters / 2, 1}},
		// Buffers the converter recomputes in float64; checked when present.
		{name: "sincnet.conv1d.0.filterbank.n_", shape: []int{1, sincKernel / 2}, optional: true},
		{name: "sincnet.conv1d.0.filterbank.window_", shape: []int{sincKernel / 2}, optional: true},
		{name: "sincnet.conv1d.1.weight", shape: []int{convChannels, sincFilters, convKernel}},
		{name: "sincnet.conv1d.1.bias", shape: []int{convChannels}},
		{name: "sincnet.conv1d.2.weight", shape: []int{convChannels, convChannels, convKernel}},
		{name: "sincnet.conv1d.2.bias", shape: []int{convChannels}},
		{name: "sincnet.norm1d.0.weight", shape: []int{sincFilters}},
		{name: "sincnet.norm1d.0.bias", shape: []int{sincFilters}},
	}
	for i := 1; i <= 2; i++ {
		w = append(w, want{name: fmt.Sprintf("sincnet.norm1d.%d.weight", i), shape: []int{convChannels}},
			want{name: fmt.Sprintf("sincnet.norm1d.%d.bias", i), shape: []int{convChannels}})
	}
	for l := range lstmLayers {
		in := convChannels
		if l > 0 {
			in = 2 * lstmHidden
		}
		for _, sfx := range []string{"", "_reverse"} {
			w = append(w,
				want{name: fmt.Sprintf("lstm.weight_ih_l%d%s", l, sfx), shape: []int{4 * lstmHidden, in}},
				want{name: fmt.Sprintf("lstm.weight_hh_l%d%s", l, sfx), shape: []int{4 * lstmHidden, lstmHidden}},
				want{name: fmt.Sprintf("lstm.bias_ih_l%d%s", l, sfx), shape: []int{4 * lstmHidden}},
				want{name: fmt.Sprintf("lstm.bias_hh_l%d%s", l, sfx), shape: []int{4 * lstmHidden}})
		}
	}
	w = append(w,
		want{name: "linear.0.weight", shape: []int{linearHidden, 2 * lstmHidden}},
		want{name: "linear.0.bias", shape: []int{linearHidden}},
		want{name: "linear.1.weight", shape: []int{linearHidden, linearHidden}},
		want{name: "linear.1.bias", shape: []int{linearHidden}},
		want{name: "classifier.weight", shape: []int{Classes, linearHidden}},
		want{name: "classifier.bias", shape: []int{Classes}})
	return w
}

// checkStateDict says which needed tensor is missing or misshapen.
func checkStateDict(sd map[string]tensor) error {
	if _, ok := sd["sincnet.conv1d.0.filterbank.low_hz_"]; !ok {
		if _, ok := sd["lstm.weight_ih_l0"]; !ok {
			return fmt.Errorf("segnet: no SincNet or LSTM tensors (sincnet.conv1d.0.filterbank.low_hz_, lstm.weight_ih_l0): %w", ErrNotSegmentation)
		}
	}
	var missing []string
	for _, w := range checkpointTensors() {
		t, ok := sd[w.name]
		if !ok {
			if !w.optional {
				missing = append(missing, w.name)
			}
			continue
		}
		if !slices.Equal(t.Shape, w.shape) {
			return fmt.Errorf("segnet: tensor %s has shape %v, want %v: %w", w.name, t.Shape, w.shape, ErrNotSegmentation)
		}
		if n := elements(t.Shape); len(t.Data) != n {
			return fmt.Errorf("segnet: tensor %s has %d values for shape %v (%d): %w", w.name, len(t.Data), t.Shape, n, ErrNotSegmentation)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("segnet: missing tensors %v: %w", missing[:min(len(missing), 5)], ErrNotSegmentation)
	}
	return nil
}

func elements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// sincFilterbank computes ParamSincFB's 80 filters (asteroid-filterbanks,
// min_low_hz = min_band_hz = 50, 16 kHz, 251 taps) in float64 from the
// learnt low_hz_ and band_hz_ (40 each): low = 50 + |low_hz_|, high =
// clamp(low + 50 + |band_hz_|, 50, 8000); with n = 2π·k/16000 for
// k = -125..-1 and the left half of a 251-point Hamming window w, the
// even ("cos") filter's left half is (sin(high·n) - sin(low·n))/(n/2)·w,
// its centre 2·(high-low), its right half the left mirrored; the odd
// ("sin") filter's left half is (cos(low·n) - cos(high·n))/(n/2)·w, its
// centre 0, its right half the left mirrored and negated; each filter is
// divided by 2·(high-low). The 40 cos filters come first. The result is
// the conv weight [80, 1, 251], row-major.
func sincFilterbank(lowHz, bandHz []float32) ([]float32, error) {
	half := sincKernel / 2
	nf := len(lowHz)
	n := make([]float64, half)
	win := make([]float64, half)
	for k := range half {
		n[k] = 2 * math.Pi * float64(k-half) / SampleRate
		win[k] = 0.54 - 0.46*math.Cos(2*math.Pi*float64(k)/float64(sincKernel-1))
	}
	out := make([]float32, 2*nf*sincKernel)
	for i := range nf {
		low := sincMinLowHz + math.Abs(float64(lowHz[i]))
		high := min(max(low+sincMinBandHz+math.Abs(float64(bandHz[i])), sincMinLowHz), SampleRate/2)
		band := high - low
		if !(band > 0) {
			return nil, fmt.Errorf("segnet: sinc filter %d has an empty band (low %g Hz, high %g Hz): %w", i, low, high, ErrNotSegmentation)
		}
		cos := out[i*sincKernel : (i+1)*sincKernel]
		sin := out[(nf+i)*sincKernel : (nf+i+1)*sincKernel]
		for k := range half {
			l := (math.Sin(high*n[k]) - math.Sin(low*n[k])) / (n[k] / 2) * win[k] / (2 * band)
			cos[k], cos[sincKernel-1-k] = float32(l), float32(l)
			s := (math.Cos(low*n[k]) - math.Cos(high*n[k])) / (n[k] / 2) * win[k] / (2 * band)
			sin[k], sin[sincKernel-1-k] = float32(s), float32(-s)
		}
		cos[half] = 1 // 2·band / (2·band)
		sin[half] = 0
	}
	return out, nil
}

// lstmGates splits a direction pair's PyTorch gate rows (i, f, g, o,
// hidden rows each, cols values a row) into the sigmoid gates (i, f, o)
// and the tanh gate (g), each direction after the other: the layouts of
// the GGUF's *_sig and *_tanh tensors.
func lstmGates(cols int) func(fwd, rev []float32) (sig, tanh []float32) {
	return func(fwd, rev []float32) (sig, tanh []float32) {
		h := lstmHidden * cols
		for _, w := range [][]float32{fwd, rev} {
			sig = append(sig, w[0:2*h]...)     // i, f
			sig = append(sig, w[3*h:4*h]...)   // o
			tanh = append(tanh, w[2*h:3*h]...) // g
		}
		return sig, tanh
	}
}

// convert builds the GGUF of a checked state dict. Tensor names are
// blockPrefix + the name; dims are ggml's (fastest first).
func convert(sd map[string]tensor) (*gguf.Writer, error) {
	if err := checkStateDict(sd); err != nil {
		return nil, err
	}
	w := gguf.NewWriter()
	w.Set("general.architecture", Arch)
	w.Set("general.name", "pyannote/segmentation-3.0")
	w.Set("general.license", "mit")
	w.Set(KeyBlockCount, uint32(1))
	w.Set(KeySampleRate, uint32(SampleRate))
	w.Set(KeyWindow, uint32(WindowSamples))
	w.Set(KeySincFilters, uint32(sincFilters))
	w.Set(KeySincKernel, uint32(sincKernel))
	w.Set(KeySincStride, uint32(sincStride))
	w.Set(KeyLSTMHidden, uint32(lstmHidden))
	w.Set(KeyLSTMLayers, uint32(lstmLayers))
	w.Set(KeyLinearHidden, uint32(linearHidden))
	w.Set(KeyLinearLayers, uint32(linearLayers))
	w.Set(KeyClasses, uint32(Classes))
	w.Set(KeySpeakers, uint32(Speakers))
	w.Set(KeyMaxPerFrame, uint32(2))
	var err error
	add := func(name string, values []float32, dims ...uint64) {
		if err == nil {
			err = w.AddFloats(blockPrefix+name, gguf.F32, dims, values)
		}
	}
	// PyTorch's row-major [a, b, c] is ggml's [c, b, a].
	same := func(name string) {
		t := sd[name]
		dims := make([]uint64, len(t.Shape))
		for i, d := range t.Shape {
			dims[len(dims)-1-i] = uint64(d)
		}
		add(name, t.Data, dims...)
	}
	same("sincnet.wav_norm1d.weight")
	same("sincnet.wav_norm1d.bias")
	filters, ferr := sincFilterbank(sd["sincnet.conv1d.0.filterbank.low_hz_"].Data, sd["sincnet.conv1d.0.filterbank.band_hz_"].Data)
	if ferr != nil {
		return nil, ferr
	}
	add("sincnet.conv1d.0.weight", filters, sincKernel, 1, sincFilters)
	for _, name := range []string{"sincnet.conv1d.1.weight", "sincnet.conv1d.1.bias", "sincnet.conv1d.2.weight", "sincnet.conv1d.2.bias"} {
		same(name)
	}
	for i := range 3 {
		same(fmt.Sprintf("sincnet.norm1d.%d.weight", i))
		same(fmt.Sprintf("sincnet.norm1d.%d.bias", i))
	}
	for l := range lstmLayers {
		in := sd[fmt.Sprintf("lstm.weight_ih_l%d", l)].Shape[1]
		pair := func(f string) (fwd, rev []float32) {
			return sd[fmt.Sprintf(f, l, "")].Data, sd[fmt.Sprintf(f, l, "_reverse")].Data
		}
		p := fmt.Sprintf("lstm.%d.", l)
		sig, tanh := lstmGates(in)(pair("lstm.weight_ih_l%d%s"))
		add(p+"ih_sig", sig, uint64(in), 3*lstmHidden, 2)
		add(p+"ih_tanh", tanh, uint64(in), lstmHidden, 2)
		sig, tanh = lstmGates(lstmHidden)(pair("lstm.weight_hh_l%d%s"))
		add(p+"hh_sig", sig, lstmHidden, 3*lstmHidden, 2)
		add(p+"hh_tanh", tanh, lstmHidden, lstmHidden, 2)
		// One bias: b_ih + b_hh, summed in float64.
		fi, ri := pair("lstm.bias_ih_l%d%s")
		fh, rh := pair("lstm.bias_hh_l%d%s")
		sig, tanh = lstmGates(1)(sum(fi, fh), sum(ri, rh))
		add(p+"b_sig", sig, 3*lstmHidden, 1, 2)
		add(p+"b_tanh", tanh, lstmHidden, 1, 2)
	}
	for _, name := range []string{"linear.0.weight", "linear.0.bias", "linear.1.weight", "linear.1.bias", "classifier.weight", "classifier.bias"} {
		same(name)
	}
	if err != nil {
		return nil, fmt.Errorf("segnet: %w", err)
	}
	return w, nil
}

func sum(a, b []float32) []float32 {
	out := make([]float32, len(a))
	for i := range a {
		out[i] = float32(float64(a[i]) + float64(b[i]))
	}
	return out
}
