package embnet

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/dsp/fourier"
)

// The front end's constants: torchaudio.compliance.kaldi.fbank as
// pyannote's WeSpeaker wrapper calls it at 16 kHz.
const (
	SampleRate  = 16000
	NMels       = 80
	FrameLength = 400 // 25 ms
	FrameShift  = 160 // 10 ms
	nFFT        = 512 // the frame rounded up to a power of two
	preemphasis = 0.97
	lowFreq     = 20.0
	pcmScale    = 1 << 15 // pyannote scales [-1, 1] samples to 16-bit range
)

// Window is the analysis window of the front end.
type Window int

const (
	// WindowHamming is what pyannote's WeSpeakerResNet34 uses (its
	// window_type default, saved with the published checkpoint) and what
	// WeSpeaker trained the model with.
	WindowHamming Window = iota
	// WindowPovey is Kaldi's default window (a Hann window to the power
	// 0.85), for other WeSpeaker models.
	WindowPovey
)

// melEps is torchaudio's floor before the log: float32's machine epsilon.
const melEps = 1.1920928955078125e-07

type frontEnd struct {
	window [FrameLength]float64
	// bank[m] is mel filter m's weight for FFT bins lo[m] to lo[m]+len-1.
	bank [NMels][]float64
	lo   [NMels]int
	ffts sync.Pool
}

var frontEnds [2]struct {
	once sync.Once
	fe   *frontEnd
}

func getFrontEnd(w Window) *frontEnd {
	e := &frontEnds[w]
	e.once.Do(func() { e.fe = newFrontEnd(w) })
	return e.fe
}

func melScale(f float64) float64 { return 1127 * math.Log(1+f/700) }

// MelBank returns Kaldi's triangular filter m's weight for FFT bin k of the
// 512-point FFT (k up to 256; the Nyquist bin has weight 0), as
// torchaudio's get_mel_banks computes it: triangles evenly spaced in mel
// from 20 Hz to 8 kHz, interpolated in mel.
func MelBank(m, k int) float64 {
	if k >= nFFT/2 || m < 0 || m >= NMels || k < 0 {
		return 0
	}
	melLow, melHigh := melScale(lowFreq), melScale(SampleRate/2)
	delta := (melHigh - melLow) / (NMels + 1)
	left := melLow + float64(m)*delta
	center := melLow + float64(m+1)*delta
	right := melLow + float64(m+2)*delta
	mel := melScale(float64(k) * SampleRate / nFFT)
	up := (mel - left) / (center - left)
	down := (right - mel) / (right - center)
	return max(0, min(up, down))
}

func newFrontEnd(w Window) *frontEnd {
	fe := &frontEnd{}
	for n := range FrameLength {
		c := math.Cos(2 * math.Pi * float64(n) / (FrameLength - 1))
		switch w {
		case WindowPovey:
			fe.window[n] = math.Pow(0.5-0.5*c, 0.85)
		default:
			fe.window[n] = 0.54 - 0.46*c
		}
	}
	for m := range NMels {
		lo, hi := -1, -1
		for k := range nFFT / 2 {
			if MelBank(m, k) > 0 {
				if lo < 0 {
					lo = k
				}
				hi = k
			}
		}
		if lo < 0 {
			continue
		}
		fe.lo[m] = lo
		for k := lo; k <= hi; k++ {
			fe.bank[m] = append(fe.bank[m], MelBank(m, k))
		}
	}
	fe.ffts.New = func() any { return fourier.NewFFT(nFFT) }
	return fe
}

// NumFrames is the number of fbank frames of n samples (Kaldi's
// snip_edges: whole 400-sample frames every 160 samples).
func NumFrames(n int) int {
	if n < FrameLength {
		return 0
	}
	return 1 + (n-FrameLength)/FrameShift
}

// Fbank is pyannote's front end for WeSpeaker: 80 log mel filter-bank
// energies every 10 ms (Kaldi's fbank as torchaudio computes it: 25 ms
// frames, DC offset removed, pre-emphasis 0.97, Hamming window, 512-point
// power spectrum, no dither) of pcm (16 kHz mono in [-1, 1], scaled by
// 2^15 first), then centred: each bin's mean over the frames is
// subtracted. One row of NMels a frame; nil when pcm is shorter than a
// frame.
func Fbank(pcm []float32) [][]float32 { return FbankWindow(pcm, WindowHamming) }

// FbankWindow is Fbank with another analysis window.
func FbankWindow(pcm []float32, w Window) [][]float32 {
	raw := rawFbank(pcm, w)
	if len(raw) == 0 {
		return nil
	}
	var mean [NMels]float64
	for _, row := range raw {
		for m, v := range row {
			mean[m] += v
		}
	}
	out := make([][]float32, len(raw))
	flat := make([]float32, len(raw)*NMels)
	for f, row := range raw {
		out[f] = flat[f*NMels : (f+1)*NMels : (f+1)*NMels]
		for m, v := range row {
			out[f][m] = float32(v - mean[m]/float64(len(raw)))
		}
	}
	return out
}

// rawFbank is Kaldi's fbank before the centring, in float64.
func rawFbank(pcm []float32, w Window) [][NMels]float64 {
	n := NumFrames(len(pcm))
	if n == 0 {
		return nil
	}
	fe := getFrontEnd(w)
	fft := fe.ffts.Get().(*fourier.FFT)
	defer fe.ffts.Put(fft)
	out := make([][NMels]float64, n)
	frame := make([]float64, nFFT)
	coef := make([]complex128, nFFT/2+1)
	power := make([]float64, nFFT/2+1)
	for f := range n {
		fe.frame(frame, pcm[f*FrameShift:f*FrameShift+FrameLength])
		fft.Coefficients(coef, frame)
		for k, c := range coef {
			power[k] = real(c)*real(c) + imag(c)*imag(c)
		}
		for m := range NMels {
			var e float64
			for j, wt := range fe.bank[m] {
				e += wt * power[fe.lo[m]+j]
			}
			out[f][m] = math.Log(max(e, melEps))
		}
	}
	return out
}

// frame fills dst (nFFT long) with one frame of samples, scaled to 16-bit
// range, its mean removed, pre-emphasised (the first sample against
// itself), windowed and zero-padded.
func (fe *frontEnd) frame(dst []float64, src []float32) {
	var mean float64
	for i, s := range src {
		dst[i] = float64(s) * pcmScale
		mean += dst[i]
	}
	mean /= FrameLength
	for i := range FrameLength {
		dst[i] -= mean
	}
	for i := FrameLength - 1; i > 0; i-- {
		dst[i] -= preemphasis * dst[i-1]
	}
	dst[0] -= preemphasis * dst[0]
	for i := range FrameLength {
		dst[i] *= fe.window[i]
	}
	clear(dst[FrameLength:])
}
