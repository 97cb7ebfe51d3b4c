package frontend

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"boxd/engine/asr/melbank"

	"boxd/engine/models/testmodels"
	"boxd/engine/models/whisperbin"
)

func realFilters(t *testing.T) []float32 {
	t.Helper()
	m, err := whisperbin.ReadFile(testmodels.Shared(t, "whisper-vocab-tiny.bin"))
	if err != nil {
		t.Fatal(err)
	}
	return m.Filters
}

// The filter bank computed from librosa's definition equals the one
// openai/whisper ships (read from the whisper.cpp file).
func TestMelFiltersMatchTheShippedBank(t *testing.T) {
	want := realFilters(t)
	got := melbank.Slaney(80)
	var maxAbs float64
	for i := range want {
		maxAbs = max(maxAbs, math.Abs(float64(got[i]-want[i])))
	}
	// The shipped bank was computed in float64 and stored as float32.
	if maxAbs > 1e-6 {
		t.Errorf("max |computed - shipped| = %g", maxAbs)
	}
	// 128 bins (large-v3): values computed from the definition in float64.
	f := melbank.Slaney(128)
	if len(f) != 128*201 {
		t.Fatalf("128-bin bank has %d values", len(f))
	}
	first := f[:201]
	for k, v := range first {
		if (k == 1) != (v != 0) {
			t.Errorf("128 bins: filter 0 is %g at bin %d; only bin 1 is non-zero", v, k)
		}
	}
	if math.Abs(float64(first[1])-0.012373986332636965) > 1e-8 {
		t.Errorf("128 bins: filter 0 at bin 1 = %.9g, want 0.0123739863", first[1])
	}
	last := f[127*201:]
	var sum float64
	for k, v := range last {
		if (k >= 191 && k <= 199) != (v != 0) {
			t.Errorf("128 bins: last filter is %g at bin %d; non-zero only at 191..199", v, k)
		}
	}
	for _, v := range f {
		sum += float64(v)
	}
	if math.Abs(sum-3.1909855285407027) > 1e-5 {
		t.Errorf("128 bins: the weights sum to %.7f, want 3.1909855", sum)
	}
}

// referenceMel is the published definition written the slow, obvious way:
// reflect-pad, direct DFT of each Hann-windowed frame, power, mel, log10,
// clamp at max-8, (x+4)/4.
func referenceMel(pcm []float64, filters []float32, nMels int) [][]float64 {
	n := len(pcm)
	pad := make([]float64, n+NFFT)
	for i := range n {
		pad[NFFT/2+i] = pcm[i]
	}
	for i := 1; i <= NFFT/2; i++ {
		pad[NFFT/2-i] = pcm[i]
		pad[NFFT/2+n-1+i] = pcm[n-1-i]
	}
	frames := n / HopLength
	bins := NFFT/2 + 1
	out := make([][]float64, nMels)
	for b := range out {
		out[b] = make([]float64, frames)
	}
	mx := math.Inf(-1)
	for f := range frames {
		power := make([]float64, bins)
		for k := range bins {
			var s complex128
			for j := range NFFT {
				w := 0.5 - 0.5*math.Cos(2*math.Pi*float64(j)/NFFT)
				s += complex(pad[f*HopLength+j]*w, 0) * cmplx.Exp(complex(0, -2*math.Pi*float64(k*j)/NFFT))
			}
			power[k] = real(s)*real(s) + imag(s)*imag(s)
		}
		for b := range nMels {
			var s float64
			for k := range bins {
				s += float64(filters[b*bins+k]) * power[k]
			}
			v := math.Log10(math.Max(s, 1e-10))
			out[b][f] = v
			mx = math.Max(mx, v)
		}
	}
	for b := range out {
		for f := range out[b] {
			out[b][f] = (math.Max(out[b][f], mx-8) + 4) / 4
		}
	}
	return out
}

func TestMelMatchesTheDefinition(t *testing.T) {
	filters := realFilters(t)
	r := rand.New(rand.NewPCG(1, 2))
	pcm := make([]float32, 16000) // one second: a chirp plus noise
	ref := make([]float64, len(pcm))
	for i := range pcm {
		tt := float64(i) / SampleRate
		v := 0.5*math.Sin(2*math.Pi*(200+1500*tt)*tt) + 0.01*r.NormFloat64()
		pcm[i] = float32(v)
		ref[i] = float64(pcm[i])
	}
	m, err := NewMel(filters, 80)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Compute(pcm, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := referenceMel(ref, filters, 80)
	if got.Frames != 100 || len(want[0]) != 100 {
		t.Fatalf("frames %d / %d", got.Frames, len(want[0]))
	}
	var maxAbs float64
	for b := range 80 {
		for f := range got.Frames {
			maxAbs = math.Max(maxAbs, math.Abs(float64(got.At(b, f))-want[b][f]))
		}
	}
	// float32 output of a float64 computation: 1e-5 is generous.
	if maxAbs > 1e-5 {
		t.Errorf("max |mel - reference| = %g", maxAbs)
	}
	t.Logf("max |mel - reference| = %g", maxAbs)
}

func TestMelPaddingAndWindow(t *testing.T) {
	m, _ := NewMel(realFilters(t), 80)
	s, err := m.Compute(make([]float32, 8000), NSamples)
	if err != nil {
		t.Fatal(err)
	}
	if s.Frames != (8000+NSamples)/HopLength {
		t.Errorf("frames %d", s.Frames)
	}
	w := s.Window(s.Frames - 10)
	if w.Frames != NFrames || w.At(0, 20) != 0 {
		t.Errorf("window past the end is not zero-filled")
	}
	if _, err := m.Compute(nil, 0); err == nil {
		t.Error("empty audio accepted")
	}
	if _, err := NewMel(make([]float32, 10), 80); err == nil {
		t.Error("bad filter bank accepted")
	}
}
