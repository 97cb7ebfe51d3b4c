package segnet

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// This file is a float64 reference of PyanNet written from the
// architecture (pyannote-audio's PyanNet and SincNet, asteroid-filterbanks'
// ParamSincFB, PyTorch's InstanceNorm1d, MaxPool1d, LSTM and LeakyReLU),
// over a PyTorch state dict: it shares nothing with the ggml graph nor the
// converter (the sinc filters are written in closed form here).

// randomStateDict is a segmentation-3.0 state dict of random weights with
// PyTorch's initial scales, and sinc band edges near ParamSincFB's mel
// initialisation.
func randomStateDict(seed uint64) map[string]tensor {
	r := rand.New(rand.NewPCG(seed, 7))
	sd := map[string]tensor{}
	uni := func(name string, bound float64, shape ...int) {
		d := make([]float32, elements(shape))
		for i := range d {
			d[i] = float32((2*r.Float64() - 1) * bound)
		}
		sd[name] = tensor{Shape: shape, Data: d}
	}
	around := func(name string, centre, spread float64, shape ...int) {
		d := make([]float32, elements(shape))
		for i := range d {
			d[i] = float32(centre + spread*r.NormFloat64())
		}
		sd[name] = tensor{Shape: shape, Data: d}
	}
	around("sincnet.wav_norm1d.weight", 1, 0.1, 1)
	around("sincnet.wav_norm1d.bias", 0, 0.1, 1)
	// Mel-spaced band edges from 30 Hz to 7900 Hz, perturbed.
	mel := func(hz float64) float64 { return 2595 * math.Log10(1+hz/700) }
	hz := func(m float64) float64 { return 700 * (math.Pow(10, m/2595) - 1) }
	nb := sincFilters / 2
	low, band := make([]float32, nb), make([]float32, nb)
	for i := range nb {
		a := hz(mel(30) + (mel(7900)-mel(30))*float64(i)/float64(nb))
		b := hz(mel(30) + (mel(7900)-mel(30))*float64(i+1)/float64(nb))
		low[i] = float32(a * (1 + 0.1*r.NormFloat64()))
		band[i] = float32((b - a) * (1 + 0.1*r.NormFloat64()))
	}
	sd["sincnet.conv1d.0.filterbank.low_hz_"] = tensor{Shape: []int{nb, 1}, Data: low}
	sd["sincnet.conv1d.0.filterbank.band_hz_"] = tensor{Shape: []int{nb, 1}, Data: band}
	uni("sincnet.conv1d.0.filterbank.window_", 1, sincKernel/2)
	uni("sincnet.conv1d.0.filterbank.n_", 1, 1, sincKernel/2)
	uni("sincnet.conv1d.1.weight", 1/math.Sqrt(80*5), convChannels, sincFilters, convKernel)
	uni("sincnet.conv1d.1.bias", 1/math.Sqrt(80*5), convChannels)
	uni("sincnet.conv1d.2.weight", 1/math.Sqrt(60*5), convChannels, convChannels, convKernel)
	uni("sincnet.conv1d.2.bias", 1/math.Sqrt(60*5), convChannels)
	for i, c := range []int{sincFilters, convChannels, convChannels} {
		around(fmt.Sprintf("sincnet.norm1d.%d.weight", i), 1, 0.1, c)
		around(fmt.Sprintf("sincnet.norm1d.%d.bias", i), 0, 0.1, c)
	}
	// LSTM weights twice PyTorch's initial bound, so that the state
	// carries more than a few steps (a trained model's does).
	k := 2 / math.Sqrt(lstmHidden)
	for l := range lstmLayers {
		in := convChannels
		if l > 0 {
			in = 2 * lstmHidden
		}
		for _, sfx := range []string{"", "_reverse"} {
			uni(fmt.Sprintf("lstm.weight_ih_l%d%s", l, sfx), k, 4*lstmHidden, in)
			uni(fmt.Sprintf("lstm.weight_hh_l%d%s", l, sfx), k, 4*lstmHidden, lstmHidden)
			uni(fmt.Sprintf("lstm.bias_ih_l%d%s", l, sfx), k, 4*lstmHidden)
			uni(fmt.Sprintf("lstm.bias_hh_l%d%s", l, sfx), k, 4*lstmHidden)
		}
	}
	uni("linear.0.weight", 1/math.Sqrt(256), linearHidden, 2*lstmHidden)
	uni("linear.0.bias", 1/math.Sqrt(256), linearHidden)
	uni("linear.1.weight", 1/math.Sqrt(128), linearHidden, linearHidden)
	uni("linear.1.bias", 1/math.Sqrt(128), linearHidden)
	// A larger classifier than PyTorch's initial one, so that the classes'
	// log probabilities spread (a trained model's are confident).
	uni("classifier.weight", 3, Classes, linearHidden)
	uni("classifier.bias", 1, Classes)
	return sd
}

// randomWindow is 10 s of one-second stretches of different sounds:
// near silence, noise at several levels, tones and chirps.
func randomWindow(seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 11))
	w := make([]float32, WindowSamples)
	for s := range 10 {
		kind := r.IntN(4)
		level := math.Pow(10, -2*r.Float64())
		f0 := 80 + 3000*r.Float64()
		for i := s * SampleRate; i < (s+1)*SampleRate; i++ {
			t := float64(i) / SampleRate
			var v float64
			switch kind {
			case 0:
				v = 0.001 * r.NormFloat64()
			case 1:
				v = level * r.NormFloat64()
			case 2:
				v = level * (math.Sin(2*math.Pi*f0*t) + 0.5*math.Sin(2*math.Pi*2.5*f0*t))
			case 3:
				v = level * math.Sin(2*math.Pi*(f0+400*(t-float64(s)))*t)
			}
			w[i] = float32(v)
		}
	}
	return w
}

// refNet is the state dict in float64.
type refNet map[string][]float64

func newRefNet(sd map[string]tensor) refNet {
	n := refNet{}
	for k, t := range sd {
		v := make([]float64, len(t.Data))
		for i, x := range t.Data {
			v[i] = float64(x)
		}
		n[k] = v
	}
	return n
}

// refSincFilters: for tap k = -125..125 (t = k/16000 s) and a Hamming
// window h, the even filter is h·(sin(2π·high·t) - sin(2π·low·t))/(π·t)
// and the odd one h·(cos(2π·low·t) - cos(2π·high·t))/(π·t), each over
// 2·(high-low); at t = 0 they are 1 and 0.
func refSincFilters(n refNet) [][]float64 {
	lowP, bandP := n["sincnet.conv1d.0.filterbank.low_hz_"], n["sincnet.conv1d.0.filterbank.band_hz_"]
	nb := len(lowP)
	out := make([][]float64, 2*nb)
	for i := range nb {
		low := 50 + math.Abs(lowP[i])
		high := math.Min(math.Max(low+50+math.Abs(bandP[i]), 50), 8000)
		band := high - low
		even, odd := make([]float64, sincKernel), make([]float64, sincKernel)
		for j := range sincKernel {
			k := j - sincKernel/2
			if k == 0 {
				even[j] = 1
				continue
			}
			t := float64(k) / 16000
			h := 0.54 - 0.46*math.Cos(2*math.Pi*float64(j)/(sincKernel-1))
			even[j] = h * (math.Sin(2*math.Pi*high*t) - math.Sin(2*math.Pi*low*t)) / (math.Pi * t) / (2 * band)
			odd[j] = h * (math.Cos(2*math.Pi*low*t) - math.Cos(2*math.Pi*high*t)) / (math.Pi * t) / (2 * band)
		}
		out[i], out[nb+i] = even, odd
	}
	return out
}

// conv1d is PyTorch's Conv1d without padding: x [cin][T], w [cout][cin][k].
func conv1d(x [][]float64, w []float64, bias []float64, cout, k, stride int) [][]float64 {
	cin, T := len(x), len(x[0])
	n := (T-k)/stride + 1
	y := make([][]float64, cout)
	for o := range cout {
		y[o] = make([]float64, n)
		for t := range n {
			s := 0.0
			if bias != nil {
				s = bias[o]
			}
			for c := range cin {
				wr := w[(o*cin+c)*k : (o*cin+c+1)*k]
				xr := x[c][t*stride : t*stride+k]
				for j, v := range wr {
					s += v * xr[j]
				}
			}
			y[o][t] = s
		}
	}
	return y
}

func maxPool3(x [][]float64) [][]float64 {
	y := make([][]float64, len(x))
	for c, row := range x {
		n := (len(row)-3)/3 + 1
		y[c] = make([]float64, n)
		for t := range n {
			y[c][t] = math.Max(row[3*t], math.Max(row[3*t+1], row[3*t+2]))
		}
	}
	return y
}

// instanceNorm normalises each channel over time (biased variance).
func instanceNorm(x [][]float64, w, b []float64) {
	for c, row := range x {
		var mean, v float64
		for _, a := range row {
			mean += a
		}
		mean /= float64(len(row))
		for _, a := range row {
			v += (a - mean) * (a - mean)
		}
		v /= float64(len(row))
		s := 1 / math.Sqrt(v+1e-5)
		for t, a := range row {
			row[t] = (a-mean)*s*w[c] + b[c]
		}
	}
}

func leakyRelu(v float64) float64 {
	if v < 0 {
		return 0.01 * v
	}
	return v
}

func leakyAll(x [][]float64) {
	for _, row := range x {
		for i, v := range row {
			row[i] = leakyRelu(v)
		}
	}
}

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

// lstmDir runs one direction of an LSTM layer over x [T][in] (backward
// from the end when reverse), returning h [T][hidden] in time order.
func lstmDir(n refNet, x [][]float64, l int, reverse bool) [][]float64 {
	sfx := ""
	if reverse {
		sfx = "_reverse"
	}
	wih := n[fmt.Sprintf("lstm.weight_ih_l%d%s", l, sfx)]
	whh := n[fmt.Sprintf("lstm.weight_hh_l%d%s", l, sfx)]
	bih := n[fmt.Sprintf("lstm.bias_ih_l%d%s", l, sfx)]
	bhh := n[fmt.Sprintf("lstm.bias_hh_l%d%s", l, sfx)]
	H, T, in := lstmHidden, len(x), len(x[0])
	h, c := make([]float64, H), make([]float64, H)
	out := make([][]float64, T)
	z := make([]float64, 4*H)
	for step := range T {
		t := step
		if reverse {
			t = T - 1 - step
		}
		for r := range 4 * H {
			s := bih[r] + bhh[r]
			for j := range in {
				s += wih[r*in+j] * x[t][j]
			}
			for j := range H {
				s += whh[r*H+j] * h[j]
			}
			z[r] = s
		}
		nh := make([]float64, H)
		for j := range H {
			i, f, g, o := sigmoid(z[j]), sigmoid(z[H+j]), math.Tanh(z[2*H+j]), sigmoid(z[3*H+j])
			c[j] = f*c[j] + i*g
			nh[j] = o * math.Tanh(c[j])
		}
		h = nh
		out[t] = nh
	}
	return out
}

func linear(x []float64, w, b []float64) []float64 {
	in := len(x)
	y := make([]float64, len(b))
	for o := range y {
		s := b[o]
		for j, v := range x {
			s += w[o*in+j] * v
		}
		y[o] = s
	}
	return y
}

// refSegment is PyanNet's forward pass over one window: [Frames][Classes]
// log probabilities.
func refSegment(n refNet, wav []float32) [][]float64 {
	x := [][]float64{make([]float64, len(wav))}
	for i, v := range wav {
		x[0][i] = float64(v)
	}
	instanceNorm(x, n["sincnet.wav_norm1d.weight"], n["sincnet.wav_norm1d.bias"])
	var flat []float64
	for _, f := range refSincFilters(n) {
		flat = append(flat, f...)
	}
	y := conv1d(x, flat, nil, sincFilters, sincKernel, sincStride)
	for _, row := range y {
		for i, v := range row {
			row[i] = math.Abs(v)
		}
	}
	for i := range 3 {
		if i > 0 {
			y = conv1d(y, n[fmt.Sprintf("sincnet.conv1d.%d.weight", i)], n[fmt.Sprintf("sincnet.conv1d.%d.bias", i)], convChannels, convKernel, 1)
		}
		y = maxPool3(y)
		instanceNorm(y, n[fmt.Sprintf("sincnet.norm1d.%d.weight", i)], n[fmt.Sprintf("sincnet.norm1d.%d.bias", i)])
		leakyAll(y)
	}
	T := len(y[0])
	seq := make([][]float64, T) // batch first: [T][features]
	for t := range T {
		seq[t] = make([]float64, len(y))
		for c := range y {
			seq[t][c] = y[c][t]
		}
	}
	for l := range lstmLayers {
		f, b := lstmDir(n, seq, l, false), lstmDir(n, seq, l, true)
		for t := range T {
			seq[t] = append(append([]float64{}, f[t]...), b[t]...)
		}
	}
	out := make([][]float64, T)
	for t, v := range seq {
		for i := range linearLayers {
			v = linear(v, n[fmt.Sprintf("linear.%d.weight", i)], n[fmt.Sprintf("linear.%d.bias", i)])
			for j := range v {
				v[j] = leakyRelu(v[j])
			}
		}
		z := linear(v, n["classifier.weight"], n["classifier.bias"])
		mx := math.Inf(-1)
		for _, a := range z {
			mx = math.Max(mx, a)
		}
		s := 0.0
		for _, a := range z {
			s += math.Exp(a - mx)
		}
		for j := range z {
			z[j] -= mx + math.Log(s)
		}
		out[t] = z
	}
	return out
}
