// Package frontend is the speech recogniser's audio front end: Whisper's
// audio constants (16 kHz, 30 s windows of 3000 frames), reading 16 kHz
// PCM16 WAV files and the live socket's PCM16 frames as samples, and the
// log-mel spectrogram the encoder reads (its filter bank comes from the
// model file; package melbank computes one). It is pure Go, without cgo,
// so that tools and tests can read audio without the ggml runtime.
package frontend

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Whisper's audio constants.
const (
	SampleRate = 16000
	NFFT       = 400
	HopLength  = 160
	ChunkSec   = 30
	NSamples   = SampleRate * ChunkSec // 480000 samples in a 30 s window
	NFrames    = NSamples / HopLength  // 3000 mel frames in a window
)

// Mel computes Whisper's log-mel spectrogram.
type Mel struct {
	filters []float32 // nMels × (NFFT/2+1), row-major
	nz      [][2]int  // each filter's nonzero weights: [lo, hi)
	nMels   int
	window  []float64
	ffts    sync.Pool // *fourier.FFT: it keeps work space, so one per caller
}

// NewMel makes a front end for a filter bank of nMels rows of NFFT/2+1
// weights (from the model file).
func NewMel(filters []float32, nMels int) (*Mel, error) {
	bins := NFFT/2 + 1
	if nMels <= 0 || len(filters) != nMels*bins {
		return nil, fmt.Errorf("asr: mel filters: %d values for %d bins of %d frequencies", len(filters), nMels, bins)
	}
	w := make([]float64, NFFT)
	for n := range w { // periodic Hann
		w[n] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(n)/NFFT)
	}
	nz := make([][2]int, nMels)
	for b := range nMels {
		row := filters[b*bins : (b+1)*bins]
		lo, hi := 0, 0
		for k, v := range row {
			if v != 0 {
				if hi == 0 {
					lo = k
				}
				hi = k + 1
			}
		}
		nz[b] = [2]int{lo, hi}
	}
	m := &Mel{filters: filters, nz: nz, nMels: nMels, window: w}
	m.ffts.New = func() any { return fourier.NewFFT(NFFT) }
	return m, nil
}

// NMels is the number of mel bins.
func (m *Mel) NMels() int { return m.nMels }

// Spectrogram is a log-mel spectrogram: NMels rows of Frames values,
// row-major (mel bin, frame).
type Spectrogram struct {
	NMels  int
	Frames int
	Data   []float32
}

// At is the value of bin b at frame f.
func (s *Spectrogram) At(b, f int) float32 { return s.Data[b*s.Frames+f] }

// Window returns frames [start, start+NFrames), zero-filled past the end
// (openai/whisper's pad_or_trim of a mel segment).
func (s *Spectrogram) Window(start int) *Spectrogram { return s.WindowN(start, NFrames) }

// WindowN is frames frames from start, zero-filled past the end (the
// encoder input when it runs on less than the full 30 s).
func (s *Spectrogram) WindowN(start, frames int) *Spectrogram {
	out := &Spectrogram{NMels: s.NMels, Frames: frames, Data: make([]float32, s.NMels*frames)}
	if start >= s.Frames {
		return out
	}
	end := min(s.Frames, start+frames)
	for b := range s.NMels {
		copy(out.Data[b*frames:(b+1)*frames], s.Data[b*s.Frames+start:b*s.Frames+end])
	}
	return out
}

// ErrEmpty is returned for no audio.
var ErrEmpty = errors.New("asr: no audio")

// Compute returns the log-mel spectrogram of pcm (16 kHz mono, -1..1)
// followed by padSamples of silence, as openai/whisper's
// log_mel_spectrogram(audio, padding): a centred STFT (reflect padding,
// periodic Hann window of 400, hop 160), the power spectrum with the last
// frame dropped, the mel projection, log10 clamped at 1e-10, values below
// the maximum minus 8 raised to it, and (x + 4) / 4.
func (m *Mel) Compute(pcm []float32, padSamples int) (*Spectrogram, error) {
	n := len(pcm) + padSamples
	if n == 0 {
		return nil, ErrEmpty
	}
	x := make([]float64, n+NFFT) // reflect-padded by NFFT/2 on both sides
	half := NFFT / 2
	at := func(i int) float64 {
		if i < len(pcm) {
			return float64(pcm[i])
		}
		return 0
	}
	for i := range n {
		x[half+i] = at(i)
	}
	for i := 1; i <= half; i++ { // reflection without repeating the edge
		x[half-i] = at(min(i, n-1))
		x[half+n-1+i] = at(max(n-1-i, 0))
	}
	frames := n / HopLength // 1 + n/hop frames, the last dropped
	bins := NFFT/2 + 1
	out := &Spectrogram{NMels: m.nMels, Frames: frames, Data: make([]float32, m.nMels*frames)}
	seg := make([]float64, NFFT)
	coef := make([]complex128, bins)
	power := make([]float64, bins)
	fft := m.ffts.Get().(*fourier.FFT)
	defer m.ffts.Put(fft)
	maxv := math.Inf(-1)
	for f := range frames {
		off := f * HopLength
		silent := true
		for i := range NFFT {
			seg[i] = x[off+i] * m.window[i]
			silent = silent && seg[i] == 0
		}
		if silent { // the padding: every power is 0, no FFT needed
			clear(power)
		} else {
			fft.Coefficients(coef, seg)
			for k, c := range coef {
				power[k] = real(c)*real(c) + imag(c)*imag(c)
			}
		}
		for b := range m.nMels {
			lo, hi := m.nz[b][0], m.nz[b][1]
			row := m.filters[b*bins+lo : b*bins+hi]
			var s float64
			for k, w := range row {
				s += float64(w) * power[lo+k]
			}
			v := math.Log10(max(s, 1e-10))
			out.Data[b*frames+f] = float32(v)
			maxv = max(maxv, v)
		}
	}
	floor := float32(maxv - 8)
	for i, v := range out.Data {
		out.Data[i] = (max(v, floor) + 4) / 4
	}
	return out, nil
}
