// Package melbank computes Whisper's mel filter bank. It has no
// dependencies so that the recogniser, the converters and the test-model
// generator can all use it.
package melbank

import "math"

// Slaney mel scale (librosa's default, htk=False): linear below 1 kHz,
// logarithmic above.
const (
	slaneyFSp      = 200.0 / 3
	slaneyMinLogHz = 1000.0
)

var (
	slaneyMinLogMel = slaneyMinLogHz / slaneyFSp
	slaneyLogStep   = math.Log(6.4) / 27
)

func hzToMel(hz float64) float64 {
	if hz < slaneyMinLogHz {
		return hz / slaneyFSp
	}
	return slaneyMinLogMel + math.Log(hz/slaneyMinLogHz)/slaneyLogStep
}

func melToHz(mel float64) float64 {
	if mel < slaneyMinLogMel {
		return mel * slaneyFSp
	}
	return slaneyMinLogHz * math.Exp(slaneyLogStep*(mel-slaneyMinLogMel))
}

// Whisper's STFT at 16 kHz.
const (
	SampleRate = 16000
	NFFT       = 400
)

// Slaney computes Whisper's mel filter bank (librosa.filters.mel with sr
// 16000, n_fft 400, fmin 0, fmax 8000, slaney scale and slaney area
// normalisation): nMels rows of NFFT/2+1 weights, row-major. Hugging Face
// checkpoints do not ship the filters; the converter computes them.
func Slaney(nMels int) []float32 {
	bins := NFFT/2 + 1
	fft := make([]float64, bins)
	for k := range fft {
		fft[k] = float64(k) * SampleRate / NFFT
	}
	lo, hi := hzToMel(0), hzToMel(SampleRate/2)
	pts := make([]float64, nMels+2)
	for i := range pts {
		pts[i] = melToHz(lo + (hi-lo)*float64(i)/float64(nMels+1))
	}
	out := make([]float32, nMels*bins)
	for i := range nMels {
		enorm := 2 / (pts[i+2] - pts[i])
		for k, f := range fft {
			lower := (f - pts[i]) / (pts[i+1] - pts[i])
			upper := (pts[i+2] - f) / (pts[i+2] - pts[i+1])
			out[i*bins+k] = float32(max(0, min(lower, upper)) * enorm)
		}
	}
	return out
}
