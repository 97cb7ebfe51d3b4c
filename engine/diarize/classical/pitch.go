package classical

import (
	"context"
	"math"
	"slices"
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
//     high, does not win: it must peak 0.1 higher, which halves the
//     octave errors on espeak-ng's female voices);
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
	octaveCost       = 0.1                                  // per octave above pitchMinHz
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
	clean   []float64           // one span's samples, cleaned (see sample)
	buf     []float64           // one span's audio, low-passed and decimated
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
	var todo []int
	done := 0
	for _, s := range speech {
		if err := ctx.Err(); err != nil {
			return err
		}
		// decimate the span's audio, with a margin for the frames at its
		// ends: the clean samples first, then the filter at every other one
		const half = lowpassTaps / 2
		from := max(0, s.start*hop+frameLen/2-pitchMargin) &^ 1
		to := min(len(pcm), (s.end-1)*hop+frameLen/2+pitchMargin)
		p.clean = slices.Grow(p.clean[:0], to-from+2*half)
		for i := from - half; i < to+half; i++ {
			v := 0.0
			if i >= 0 && i < len(pcm) {
				v = sample(pcm, i)
			}
			p.clean = append(p.clean, v)
		}
		p.buf = slices.Grow(p.buf[:0], (to-from)/pitchDecimate+1)
		for i := 0; i < to-from; i += pitchDecimate {
			var v float64
			for k, h := range p.lowpass {
				v += h * p.clean[i+k]
			}
			p.buf = append(p.buf, v)
		}
		todo = todo[:0]
		for t := s.start; t < s.end; t++ {
			if float64(f.db[t]) >= level-quietVoicingDB {
				todo = append(todo, t)
			}
		}
		// two frames per FFT: one real, one imaginary
		first := func(t int) int { return (t*hop+frameLen/2-from)/pitchDecimate - pitchHalf }
		for j := 0; j < len(todo); j += 2 {
			if done += 2; done%4096 < 2 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			p.load(first(todo[j]), re[:])
			if j+1 < len(todo) {
				p.load(first(todo[j+1]), im[:])
			} else {
				clear(im[:])
			}
			p.autocorrelate(re[:], im[:])
			f.f0[todo[j]] = float32(p.pick(re[:]))
			if j+1 < len(todo) {
				f.f0[todo[j+1]] = float32(p.pick(im[:]))
			}
		}
	}
	return nil
}

// load writes the pitchFrame samples of p.buf from first (zero outside
// it), less their mean and windowed, to dst, zero-padded to nfft.
func (p *pitchTracker) load(first int, dst []float64) {
	x := p.buf
	var mean float64
	for i := range pitchFrame {
		if j := first + i; j >= 0 && j < len(x) {
			mean += x[j]
		}
	}
	mean /= pitchFrame
	for i := range nfft {
		dst[i] = 0
		if j := first + i; i < pitchFrame && j >= 0 && j < len(x) {
			dst[i] = (x[j] - mean) * p.window[i]
		}
	}
}

// autocorrelate replaces two real frames, a in re and b in im, by their
// autocorrelations times nfft: one FFT gives both spectra (Z = A + iB,
// A[k] = (Z[k] + conj Z[-k])/2, B[k] = (Z[k] - conj Z[-k])/2i), and as
// power spectra are real and even, one more FFT of |A|² + i|B|² gives
// both autocorrelations, real, in re and im.
func (p *pitchTracker) autocorrelate(re, im []float64) {
	p.fe.fft(re, im)
	for k := 0; k <= nfft/2; k++ {
		nk := (nfft - k) % nfft
		zr, zi, wr, wi := re[k], im[k], re[nk], im[nk]
		ar, ai := (zr+wr)/2, (zi-wi)/2
		br, bi := (zi+wi)/2, (wr-zr)/2
		pa, pb := ar*ar+ai*ai, br*br+bi*bi
		re[k], re[nk], im[k], im[nk] = pa, pa, pb, pb
	}
	p.fe.fft(re, im)
}

// pick returns the F0 in Hz of a frame from its autocorrelation, or 0
// when it is not voiced.
func (p *pitchTracker) pick(ac []float64) float64 {
	r0 := ac[0]
	if !(r0 > 1e-12) {
		return 0
	}
	r := func(lag int) float64 { return ac[lag] / r0 / p.winAC[lag] }
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
