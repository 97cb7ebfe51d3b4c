package classical

import (
	"context"
	"math"
)

// Front end: 25 ms frames every 10 ms, pre-emphasis 0.97, a Hamming
// window, a 512-point FFT, 40 triangular filters on the HTK mel scale from
// 60 Hz to 7600 Hz, their log, and the DCT-II of the log (cepstra 1..19
// kept; c0 is loudness, not voice).
const (
	frameLen  = 400 // 25 ms
	hop       = 160 // 10 ms
	nfft      = 512
	nMels     = 40
	nCeps     = 19 // c1..c19
	melLowHz  = 60
	melHighHz = 7600
	preEmph   = 0.97
	frameRate = 100.0 // frames per second
)

// features are a recording's frames: loudness and cepstra.
type features struct {
	// db is each frame's power in dB relative to full scale (a full-scale
	// sine is -3 dB; digital silence -100 dB).
	db []float32
	// ceps holds nCeps cepstra per frame, frame-major.
	ceps []float32
	// f0 is each speech frame's pitch in Hz, 0 where unvoiced (pitch.go).
	f0 []float32
	n  int // frames
}

// frame returns frame i's cepstra.
func (f *features) frame(i int) []float32 { return f.ceps[i*nCeps : (i+1)*nCeps] }

// frontEnd holds the window, filter bank, DCT and FFT tables.
type frontEnd struct {
	window  [frameLen]float64
	filters []melFilter
	dct     [nCeps][nMels]float64
	cos     [nfft / 2]float64 // twiddles
	sin     [nfft / 2]float64
	rev     [nfft]int // bit reversal
}

// melFilter is one triangle: weights for bins first..first+len(w)-1.
type melFilter struct {
	first int
	w     []float64
}

func hzToMel(hz float64) float64  { return 2595 * math.Log10(1+hz/700) }
func melToHz(mel float64) float64 { return 700 * (math.Pow(10, mel/2595) - 1) }

func newFrontEnd() *frontEnd {
	fe := &frontEnd{}
	for i := range frameLen {
		fe.window[i] = 0.54 - 0.46*math.Cos(2*math.Pi*float64(i)/(frameLen-1))
	}
	lo, hi := hzToMel(melLowHz), hzToMel(melHighHz)
	binHz := float64(sampleRate) / nfft
	for m := range nMels {
		l := melToHz(lo + (hi-lo)*float64(m)/(nMels+1))
		c := melToHz(lo + (hi-lo)*float64(m+1)/(nMels+1))
		r := melToHz(lo + (hi-lo)*float64(m+2)/(nMels+1))
		f := melFilter{first: -1}
		for k := 0; k <= nfft/2; k++ {
			hz := float64(k) * binHz
			var w float64
			switch {
			case hz > l && hz <= c:
				w = (hz - l) / (c - l)
			case hz > c && hz < r:
				w = (r - hz) / (r - c)
			}
			if w > 0 {
				if f.first < 0 {
					f.first = k
				}
				f.w = append(f.w, w)
			} else if f.first >= 0 {
				break
			}
		}
		if f.first < 0 { // narrower than a bin: take the nearest bin
			f.first, f.w = int(math.Round(c/binHz)), []float64{1}
		}
		fe.filters = append(fe.filters, f)
	}
	for k := range nCeps {
		for m := range nMels {
			fe.dct[k][m] = math.Cos(math.Pi * float64(k+1) * (float64(m) + 0.5) / nMels)
		}
	}
	for i := range nfft / 2 {
		fe.cos[i] = math.Cos(-2 * math.Pi * float64(i) / nfft)
		fe.sin[i] = math.Sin(-2 * math.Pi * float64(i) / nfft)
	}
	bits := 0
	for 1<<bits < nfft {
		bits++
	}
	for i := range nfft {
		r := 0
		for b := range bits {
			if i&(1<<b) != 0 {
				r |= 1 << (bits - 1 - b)
			}
		}
		fe.rev[i] = r
	}
	return fe
}

// fft transforms re, im (length nfft) in place: iterative radix 2.
func (fe *frontEnd) fft(re, im []float64) {
	for i, r := range fe.rev {
		if i < r {
			re[i], re[r] = re[r], re[i]
			im[i], im[r] = im[r], im[i]
		}
	}
	for size := 2; size <= nfft; size <<= 1 {
		half, step := size/2, nfft/size
		for start := 0; start < nfft; start += size {
			for k := range half {
				wr, wi := fe.cos[k*step], fe.sin[k*step]
				a, b := start+k, start+k+half
				tr := re[b]*wr - im[b]*wi
				ti := re[b]*wi + im[b]*wr
				re[b], im[b] = re[a]-tr, im[a]-ti
				re[a], im[a] = re[a]+tr, im[a]+ti
			}
		}
	}
}

// sample reads pcm[i] as a value in [-1, 1]: NaN and infinities, which
// are no sound, read as 0; other samples are clipped.
func sample(pcm []float32, i int) float64 {
	v := float64(pcm[i])
	switch {
	case v != v || math.IsInf(v, 0):
		return 0
	case v > 1:
		return 1
	case v < -1:
		return -1
	}
	return v
}

// compute returns the features of pcm: one frame per hop whose 25 ms fit
// in the audio. It checks ctx every few thousand frames.
func (fe *frontEnd) compute(ctx context.Context, pcm []float32) (*features, error) {
	n := 0
	if len(pcm) >= frameLen {
		n = (len(pcm)-frameLen)/hop + 1
	}
	f := &features{db: make([]float32, n), ceps: make([]float32, n*nCeps), n: n}
	var re, im [nfft]float64
	var mel [nMels]float64
	for t := range n {
		if t%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		off := t * hop
		var mean, power float64
		for i := range frameLen {
			mean += sample(pcm, off+i)
		}
		mean /= frameLen
		prev := 0.0
		if off > 0 {
			prev = sample(pcm, off-1) - mean
		}
		for i := range frameLen {
			x := sample(pcm, off+i) - mean
			power += x * x
			re[i] = (x - preEmph*prev) * fe.window[i]
			im[i] = 0
			prev = x
		}
		for i := frameLen; i < nfft; i++ {
			re[i], im[i] = 0, 0
		}
		f.db[t] = float32(10 * math.Log10(power/frameLen+1e-10))
		fe.fft(re[:], im[:])
		for m, flt := range fe.filters {
			var s float64
			for j, w := range flt.w {
				k := flt.first + j
				s += w * (re[k]*re[k] + im[k]*im[k])
			}
			mel[m] = math.Log(s + 1e-8)
		}
		c := f.ceps[t*nCeps : (t+1)*nCeps]
		for k := range nCeps {
			var s float64
			for m, v := range mel {
				s += fe.dct[k][m] * v
			}
			c[k] = float32(s)
		}
	}
	return f, nil
}
