package classical

import (
	"context"
	"math"
)

// Pitch (F0) per frame: the autocorrelation method of Boersma (1993),
// "Accurate short-term analysis of the fundamental frequency and the
// harmonics-to-noise ratio of a sampled sound", simplified. Only speech
// frames are analysed:
//
//   - the audio is low-passed at 1 kHz (a windowed-sinc FIR) and decimated
//     to 8 kHz, which keeps the first harmonics of any voice and drops
//     the higher formants that mislead autocorrelation;
//   - a 40 ms Hann-windowed frame centred on each 10 ms frame, less its
//     mean, is autocorrelated (512-point FFT, no wrap-around below lag
//     192), normalised by its value at lag 0 and divided by the window's
//     own normalised autocorrelation, so that a periodic signal peaks
//     near 1 at its period;
//   - the best local maximum between 1/400 s and 1/60 s, its lag refined
//     by a parabola, wins, scored by its height plus octaveCost per
//     octave above 60 Hz (so that twice the period, which peaks almost as
//     high, does not win);
//   - the frame is voiced when that peak is at least voicingThreshold
//     and the frame is no more than quietVoicingDB below the recording's
//     speech level (near-silence inside speech has chance peaks).
const (
	pitchDecimate    = 2
	pitchRate        = sampleRate / pitchDecimate
	pitchFrame       = 320 // 40 ms at 8 kHz
	pitchMinHz       = 60
	pitchMaxHz       = 400
	minLag           = pitchRate / pitchMaxHz               // 20
	maxLag           = pitchRate/pitchMinHz + 1             // 134
	lowpassHz        = 1000                                 // anti-alias and formant filter
	lowpassTaps      = 31                                   // odd: symmetric, delay 15 samples
	voicingThreshold = 0.5                                  // normalised autocorrelation peak
	octaveCostX      = 0.01                                 // per octave above pitchMinHz
	quietVoicingDB   = 25                                   // below the speech level: unvoiced
	pitchHalf        = pitchFrame / 2                       // frame centre, in 8 kHz samples
	pitchMargin      = pitchHalf*pitchDecimate + hop        // 16 kHz samples around a span
	_                = uint(nfft - pitchFrame - maxLag - 1) // no wrap-around up to maxLag+1
)

// pitchTracker holds the low-pass filter and the window's autocorrelation.
type pitchTracker struct {
	fe      *frontEnd
	lowpass [lowpassTaps]float64
	window  [pitchFrame]float64
	winAC   [maxLag + 2]float64 // the window's normalised autocorrelation
	buf     []float64           // the decimated audio of one span
}

func newPitchTracker(fe *frontEnd) *pitchTracker {
	p := &pitchTracker{fe: fe}
	var sum float64
	const mid = lowpassTaps / 2
	for i := range lowpassTaps {
		x := float64(i - mid)
		h := 2 * lowpassHz / float64(sampleRate) // sinc at the cutoff
		if x != 0 {
			h = math.Sin(2*math.Pi*lowpassHz/sampleRate*x) / (math.Pi * x)
		}
		h *= 0.54 - 0.46*math.Cos(2*math.Pi*float64(i)/(lowpassTaps-1)) // Hamming
		p.lowpass[i] = h
		sum += h
	}
	for i := range p.lowpass {
		p.lowpass[i] /= sum // unit gain at 0 Hz
	}
	for i := range pitchFrame {
		p.window[i] = 0.5 - 0.5*math.Cos(2*math.Pi*(float64(i)+0.5)/pitchFrame)
	}
	for lag := range p.winAC {
		var s float64
		for i := 0; i+lag < pitchFrame; i++ {
			s += p.window[i] * p.window[i+lag]
		}
		p.winAC[lag] = s
	}
	for lag := len(p.winAC) - 1; lag >= 0; lag-- {
		p.winAC[lag] /= p.winAC[0]
	}
	return p
}

// track sets f.f0 (Hz, 0 where unvoiced) for the frames of speech; level
// is the recording's speech level in dB. It checks ctx every few thousand
// frames.
func (p *pitchTracker) track(ctx context.Context, pcm []float32, f *features, speech []span, level float64) error {
	f.f0 = make([]float32, f.n)
	var re, im [nfft]float64
	done := 0
	for _, s := range speech {
		// decimate the span's audio, with a margin for the frames at its ends
		from := max(0, s.start*hop+frameLen/2-pitchMargin) &^ 1
		to := min(len(pcm), (s.end-1)*hop+frameLen/2+pitchMargin)
		p.buf = p.buf[:0]
		for i := from; i < to; i += pitchDecimate {
			var v float64
			for k, h := range p.lowpass {
				if j := i + k - lowpassTaps/2; j >= 0 && j < len(pcm) {
					v += h * sample(pcm, j)
				}
			}
			p.buf = append(p.buf, v)
		}
		for t := s.start; t < s.end; t++ {
			if done++; done%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if float64(f.db[t]) < level-quietVoicingDB {
				continue
			}
			c := (t*hop+frameLen/2-from)/pitchDecimate - pitchHalf // first sample
			f.f0[t] = float32(p.frame(p.buf, c, re[:], im[:]))
		}
	}
	return nil
}

// frame returns the F0 in Hz of the pitchFrame samples of x from first
// (zero outside x), or 0 when they are not voiced.
func (p *pitchTracker) frame(x []float64, first int, re, im []float64) float64 {
	var mean float64
	for i := range pitchFrame {
		if j := first + i; j >= 0 && j < len(x) {
			mean += x[j]
		}
	}
	mean /= pitchFrame
	for i := range nfft {
		re[i], im[i] = 0, 0
		if j := first + i; i < pitchFrame && j >= 0 && j < len(x) {
			re[i] = (x[j] - mean) * p.window[i]
		}
	}
	p.fe.fft(re, im)
	// the power spectrum is real and even: its FFT is its inverse FFT
	// times nfft, the autocorrelation
	for i := range nfft {
		re[i], im[i] = re[i]*re[i]+im[i]*im[i], 0
	}
	p.fe.fft(re, im)
	r0 := re[0]
	if !(r0 > 1e-12) {
		return 0
	}
	r := func(lag int) float64 { return re[lag] / r0 / p.winAC[lag] }
	bestLag, bestHeight, bestScore := 0.0, 0.0, math.Inf(-1)
	for lag := minLag; lag < maxLag; lag++ {
		a, b, c := r(lag-1), r(lag), r(lag+1)
		if b < a || b < c || b < voicingThreshold {
			continue
		}
		// parabola through the three points
		d, height := 0.0, b
		if den := a - 2*b + c; den < 0 {
			d = 0.5 * (a - c) / den
			height = b - 0.25*(a-c)*d
		}
		l := float64(lag) + d
		score := min(height, 1) + octaveCost*math.Log2(pitchRate/l/pitchMinHz)
		if score > bestScore {
			bestLag, bestHeight, bestScore = l, height, score
		}
	}
	if bestHeight < voicingThreshold {
		return 0
	}
	hz := pitchRate / bestLag
	if hz < pitchMinHz || hz > pitchMaxHz {
		return 0
	}
	return hz
}

var octaveCost = 0.1 // TEMPORARY sweep
