package embnet

import (
	"math"
	"math/cmplx"
	"testing"
)

// naiveFbank is Kaldi's fbank written again from torchaudio's description,
// with a direct DFT and the mel triangles from their formula, before the
// centring.
func naiveFbank(pcm []float32) [][]float64 {
	mel := func(f float64) float64 { return 1127 * math.Log(1+f/700) }
	lo, hi := mel(20), mel(8000)
	delta := (hi - lo) / 81
	var out [][]float64
	for start := 0; start+400 <= len(pcm); start += 160 {
		x := make([]float64, 400)
		var sum float64
		for i := range x {
			x[i] = float64(pcm[start+i]) * 32768
			sum += x[i]
		}
		for i := range x {
			x[i] -= sum / 400
		}
		y := make([]float64, 400)
		for i := range y {
			prev := x[0]
			if i > 0 {
				prev = x[i-1]
			}
			y[i] = (x[i] - 0.97*prev) * (0.54 - 0.46*math.Cos(2*math.Pi*float64(i)/399))
		}
		row := make([]float64, 80)
		for k := range 256 { // bin 256 (Nyquist) has no weight
			var c complex128
			for n, v := range y {
				c += complex(v, 0) * cmplx.Exp(complex(0, -2*math.Pi*float64(k*n)/512))
			}
			p := real(c)*real(c) + imag(c)*imag(c)
			mk := mel(float64(k) * 16000 / 512)
			for m := range row {
				l, ce, r := lo+float64(m)*delta, lo+float64(m+1)*delta, lo+float64(m+2)*delta
				if w := math.Min((mk-l)/(ce-l), (r-mk)/(r-ce)); w > 0 {
					row[m] += w * p
				}
			}
		}
		for m, e := range row {
			row[m] = math.Log(math.Max(e, 1.1920928955078125e-07))
		}
		out = append(out, row)
	}
	return out
}

func TestFbankMatchesDirectCalculation(t *testing.T) {
	pcm := testAudio(2000, 7) // 11 frames
	got := Fbank(pcm)
	want := naiveFbank(pcm)
	if len(got) != 11 || len(want) != 11 {
		t.Fatalf("%d and %d frames, want 11", len(got), len(want))
	}
	var mean [80]float64
	for _, row := range want {
		for m, v := range row {
			mean[m] += v / float64(len(want))
		}
	}
	var worst float64
	for f := range want {
		for m := range 80 {
			worst = max(worst, math.Abs(float64(got[f][m])-(want[f][m]-mean[m])))
		}
	}
	if worst > 1e-5 {
		t.Errorf("Fbank differs from the direct calculation by up to %g", worst)
	}
	t.Logf("max |Fbank - direct| = %.2g", worst)
}

func TestFbankSineLandsInItsMelBin(t *testing.T) {
	mel := func(f float64) float64 { return 1127 * math.Log(1+f/700) }
	lo, hi := mel(20), mel(8000)
	delta := (hi - lo) / 81
	for _, freq := range []float64{300, 1000, 3000, 6500} {
		pcm := make([]float32, 8000)
		for i := range pcm {
			pcm[i] = float32(0.5 * math.Sin(2*math.Pi*freq*float64(i)/16000))
		}
		raw := rawFbank(pcm, WindowHamming)
		var sum [NMels]float64
		for _, row := range raw {
			for m, v := range row {
				sum[m] += v
			}
		}
		best := 0
		for m := range sum {
			if sum[m] > sum[best] {
				best = m
			}
		}
		// The filter whose centre lies nearest the tone in mel.
		want, dist := 0, math.Inf(1)
		for m := range NMels {
			if d := math.Abs(lo + float64(m+1)*delta - mel(freq)); d < dist {
				want, dist = m, d
			}
		}
		if best != want {
			t.Errorf("%v Hz: most energy in mel bin %d, want %d", freq, best, want)
		}
	}
}

func TestFbankHandComputed(t *testing.T) {
	for n, want := range map[int]int{0: 0, 399: 0, 400: 1, 559: 1, 560: 2, 16000: 98, 160000: 998} {
		if got := NumFrames(n); got != want {
			t.Errorf("NumFrames(%d) = %d, want %d", n, got, want)
		}
		if got := len(Fbank(make([]float32, n))); got != want {
			t.Errorf("len(Fbank(%d samples)) = %d, want %d", n, got, want)
		}
	}
	// The first mel filter: mel(20 Hz) = 31.749, spacing 34.671 mel; FFT
	// bin 1 (31.25 Hz) at 49.223 mel is 0.50398 up its rising edge, bin 2
	// (62.5 Hz) 0.13572 down its falling one.
	for k, want := range map[int]float64{0: 0, 1: 0.5039832471, 2: 0.1357233702, 3: 0, 256: 0} {
		if got := MelBank(0, k); math.Abs(got-want) > 1e-9 {
			t.Errorf("MelBank(0, %d) = %.10f, want %.10f", k, got, want)
		}
	}
	// A constant signal has no energy once the DC offset is removed: every
	// bin is log(float32 epsilon) = -15.942385, and 0 after the centring.
	pcm := make([]float32, 800)
	for i := range pcm {
		pcm[i] = 0.25
	}
	for _, row := range rawFbank(pcm, WindowHamming) {
		for m, v := range row {
			if math.Abs(v+15.942385152878742) > 1e-9 {
				t.Fatalf("constant signal: bin %d = %v, want -15.942385", m, v)
			}
		}
	}
	for _, row := range Fbank(pcm) {
		for m, v := range row {
			if v != 0 {
				t.Fatalf("constant signal: centred bin %d = %v, want 0", m, v)
			}
		}
	}
	// One frame holding a single sample of 1/32768 at index 1: scaled to 1,
	// mean 1/400 removed, pre-emphasis y[i] = x[i] - 0.97 x[i-1] (y[0] =
	// 0.03 x[0]), Hamming weights 0.54 - 0.46 cos(2 pi i / 399).
	src := make([]float32, FrameLength)
	src[1] = 1.0 / 32768
	dst := make([]float64, nFFT)
	getFrontEnd(WindowHamming).frame(dst, src)
	for i, want := range map[int]float64{
		0:   0.03 * -0.0025 * 0.08,
		1:   (0.9975 + 0.97*0.0025) * 0.0800570338654454,
		2:   (-0.0025 - 0.97*0.9975) * 0.0802281213189043,
		200: (-0.0025 + 0.97*0.0025) * (0.54 - 0.46*math.Cos(2*math.Pi*200/399)),
		400: 0, 511: 0,
	} {
		if math.Abs(dst[i]-want) > 1e-12 {
			t.Errorf("frame sample %d = %.15g, want %.15g", i, dst[i], want)
		}
	}
}

func TestFbankPoveyWindow(t *testing.T) {
	pcm := testAudio(4000, 3)
	h, p := Fbank(pcm), FbankWindow(pcm, WindowPovey)
	if len(h) != len(p) {
		t.Fatalf("%d and %d frames", len(h), len(p))
	}
	var diff float64
	for f := range h {
		for m := range h[f] {
			diff = max(diff, math.Abs(float64(h[f][m]-p[f][m])))
		}
	}
	if diff < 1e-3 {
		t.Error("the Povey window gives the Hamming window's features")
	}
	// Its window: a Hann window to the power 0.85.
	fe := getFrontEnd(WindowPovey)
	if w := fe.window[100]; math.Abs(w-math.Pow(0.5-0.5*math.Cos(2*math.Pi*100/399), 0.85)) > 1e-15 {
		t.Errorf("Povey window[100] = %v", w)
	}
}
