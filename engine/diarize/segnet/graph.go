package segnet

import (
	"context"
	"fmt"
	"slices"

	"github.com/ollama/ollama/ml"
)

// Tensor layouts below are ggml's, fastest dimension first: a SincNet
// activation is [time, channels, windows]; the LSTM's are [features,
// windows, time], with a direction dimension last where both run together.

// instanceNormEps is InstanceNorm1d's epsilon.
const instanceNormEps = 1e-5

// leakySlope is LeakyReLU's negative slope (PyTorch's default).
const leakySlope = 0.01

type affine struct{ w, b ml.Tensor }

type lstmLayer struct {
	ihSig, ihTanh, hhSig, hhTanh, bSig, bTanh ml.Tensor
}

type weights struct {
	wav   affine
	sinc  ml.Tensor
	conv  [2]affine
	norm  [3]affine
	lstm  [lstmLayers]lstmLayer
	lin   [linearLayers]affine
	class affine
}

// bind looks every tensor up and checks its ggml shape.
func (m *Model) bind() error {
	var bad []string
	get := func(name string, dims ...int) ml.Tensor {
		t := m.b.Get(blockPrefix + name)
		switch {
		case t == nil:
			bad = append(bad, name+" missing")
		case !slices.Equal(trim(t.Shape()), trim(dims)):
			bad = append(bad, fmt.Sprintf("%s has shape %v, want %v", name, t.Shape(), dims))
		case t.DType() != ml.DTypeF32:
			bad = append(bad, name+" is not F32")
		}
		return t
	}
	aff := func(prefix string, n int) affine {
		return affine{w: get(prefix+".weight", n), b: get(prefix+".bias", n)}
	}
	w := &m.w
	w.wav = aff("sincnet.wav_norm1d", 1)
	w.sinc = get("sincnet.conv1d.0.weight", sincKernel, 1, sincFilters)
	w.conv[0] = affine{w: get("sincnet.conv1d.1.weight", convKernel, sincFilters, convChannels), b: get("sincnet.conv1d.1.bias", convChannels)}
	w.conv[1] = affine{w: get("sincnet.conv1d.2.weight", convKernel, convChannels, convChannels), b: get("sincnet.conv1d.2.bias", convChannels)}
	w.norm[0] = aff("sincnet.norm1d.0", sincFilters)
	w.norm[1] = aff("sincnet.norm1d.1", convChannels)
	w.norm[2] = aff("sincnet.norm1d.2", convChannels)
	H := lstmHidden
	for l := range lstmLayers {
		in := convChannels
		if l > 0 {
			in = 2 * H
		}
		p := fmt.Sprintf("lstm.%d.", l)
		w.lstm[l] = lstmLayer{
			ihSig: get(p+"ih_sig", in, 3*H, 2), ihTanh: get(p+"ih_tanh", in, H, 2),
			hhSig: get(p+"hh_sig", H, 3*H, 2), hhTanh: get(p+"hh_tanh", H, H, 2),
			bSig: get(p+"b_sig", 3*H, 1, 2), bTanh: get(p+"b_tanh", H, 1, 2),
		}
	}
	w.lin[0] = affine{w: get("linear.0.weight", 2*H, linearHidden), b: get("linear.0.bias", linearHidden)}
	w.lin[1] = affine{w: get("linear.1.weight", linearHidden, linearHidden), b: get("linear.1.bias", linearHidden)}
	w.class = affine{w: get("classifier.weight", linearHidden, Classes), b: get("classifier.bias", Classes)}
	if len(bad) > 0 {
		return fmt.Errorf("tensors: %v: %w", bad[:min(len(bad), 5)], ErrNotSegmentation)
	}
	return nil
}

// trim drops trailing dimensions of 1 (ggml reports [n, 1, 2] as such but
// [n, 1] as [n]).
func trim(s []int) []int {
	for len(s) > 1 && s[len(s)-1] == 1 {
		s = s[:len(s)-1]
	}
	return s
}

// pass runs the network on up to m.batch windows and returns the
// classifier's scores (before the log-softmax), frame-major per window.
// It runs several graphs (see the package comment); every graph's context
// stays open until the output is read, so that no input buffer is freed
// while a device may still read it.
func (m *Model) pass(ctx context.Context, windows [][]float32) (out []float32, err error) {
	B := len(windows)
	var ctxs []ml.Context
	defer func() {
		for _, c := range ctxs {
			c.Close()
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("segnet: compute: %v", r)
		}
	}()
	run := func(threads int, build func(g ml.Context) ml.Tensor) ml.Tensor {
		m.useThreads(threads)
		g := m.b.NewContext()
		ctxs = append(ctxs, g)
		t := build(g)
		if t == nil {
			g.Compute()
			return nil
		}
		g.Forward(t).Compute(t)
		return t
	}
	// SincNet, and the first layer's input projections.
	run(m.threads, func(g ml.Context) ml.Tensor {
		m.project(g, 0, m.sincnet(g, windows), B)
		return nil
	})
	// Steps per graph: each takes about 20 nodes. They run on one CPU
	// thread: their operations are too small to share.
	chunk := max(1, (m.maxNodes-64)/24)
	for l := range lstmLayers {
		for t0 := 0; t0 < Frames; t0 += chunk {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			run(1, func(g ml.Context) ml.Tensor {
				m.steps(g, l, B, t0, min(Frames, t0+chunk))
				return nil
			})
		}
		if l+1 < lstmLayers {
			run(m.threads, func(g ml.Context) ml.Tensor {
				m.project(g, l+1, m.layerOutput(g, B), B)
				return nil
			})
		}
	}
	logits := run(m.threads, func(g ml.Context) ml.Tensor { return m.head(g, m.layerOutput(g, B), B) })
	return logits.Floats(), nil
}

// sincnet is SincNet over the windows: [60, B, Frames].
func (m *Model) sincnet(g ml.Context, windows [][]float32) ml.Tensor {
	B := len(windows)
	w := &m.w
	flat := make([]float32, 0, B*WindowSamples)
	for _, win := range windows {
		flat = append(flat, win...)
	}
	x := g.Input().FromFloats(flat, WindowSamples, B)
	x = x.LayerNorm(g, nil, nil, instanceNormEps).Mul(g, w.wav.w).Add(g, w.wav.b)
	x = x.Reshape(g, WindowSamples, 1, 1, B)
	// The sinc filters, as a 2-D convolution of height 1, [T, 1, 80, B];
	// its kernel padded with zeros from 251 to 256 taps (see conv).
	y, valid := conv(g, w.sinc.Pad(g, 256-sincKernel, 0, 0, 0).Reshape(g, 256, 1, 1, sincFilters), x, sincKernel, sincStride)
	y = y.Sqr(g).Sqrt(g) // abs
	y = m.poolNorm(g, y.Reshape(g, y.Dim(0), sincFilters, B), valid, w.norm[0])
	for i, c := range w.conv {
		C := c.w.Dim(2)
		y, valid = conv(g, c.w.Reshape(g, convKernel, 1, c.w.Dim(1), C), y.Reshape(g, y.Dim(0), 1, y.Dim(1), B), convKernel, 1)
		y = y.Add(g, c.b.Reshape(g, 1, 1, C, 1))
		y = m.poolNorm(g, y.Reshape(g, y.Dim(0), C, B), valid, w.norm[i+1])
	}
	// [Frames, 60, B] → [60, B, Frames].
	return y.Permute(g, 2, 0, 1, 3).Contiguous(g)
}

// conv is a 1-D convolution without padding of x [T, 1, Cin, B] by k
// [KW, 1, Cin, Cout] (whose first kw taps are the real kernel's, the rest
// zeros) with the stride: [OW, 1, Cout, B], of which the first valid
// frames are the convolution's. ggml's fast CPU matrix kernel (llamafile's
// tinyBLAS) takes a product whose sums are a multiple of 8 long (KW·Cin)
// and whose rows (OW·B) are a multiple of 4; otherwise ggml falls back to
// dot products, several times slower. So x is padded with zeros at the end
// to make OW a multiple of 4, the frames past valid left unread.
func conv(g ml.Context, k, x ml.Tensor, kw, stride int) (ml.Tensor, int) {
	T := x.Dim(0)
	valid := (T-kw)/stride + 1
	ow := (valid + 3) / 4 * 4
	if need := (ow-1)*stride + k.Dim(0) - T; need > 0 {
		x = x.Pad(g, need, 0, 0, 0)
	}
	return k.Conv2D(g, x, stride, 1, 0, 0, 1, 1), valid
}

// poolNorm is MaxPool1d(3, 3), InstanceNorm1d (affine) and LeakyReLU over
// the first T frames of x [≥T, C, B]: [T/3, C, B].
func (m *Model) poolNorm(g ml.Context, x ml.Tensor, T int, n affine) ml.Tensor {
	C, B := x.Dim(1), x.Dim(2)
	// Time second, so that the three taps of a pooling window are rows of
	// C values: max(a, b) = a + relu(b - a).
	p := x.Permute(g, 1, 0, 2, 3).Contiguous(g) // [C, T, B]
	out := T / 3
	tap := func(j int) ml.Tensor {
		return p.View(g, j*p.Stride(1), C, 3*p.Stride(1), out, p.Stride(2), B)
	}
	mx := tap(0)
	for j := 1; j < 3; j++ {
		mx = mx.Add(g, tap(j).Sub(g, mx).RELU(g))
	}
	y := mx.Permute(g, 1, 0, 2, 3).Contiguous(g) // [T/3, C, B]
	y = y.Reshape(g, out, C*B).LayerNorm(g, nil, nil, instanceNormEps).Reshape(g, out, C, B)
	y = y.Mul(g, n.w.Reshape(g, 1, C, 1)).Add(g, n.b.Reshape(g, 1, C, 1))
	return leaky(g, y)
}

// leaky is LeakyReLU: relu(x) - 0.01·relu(-x). ggml's ReLU works in
// place, so it acts on copies.
func leaky(g ml.Context, x ml.Tensor) ml.Tensor {
	pos := x.Duplicate(g).RELU(g)
	neg := x.Neg(g).RELU(g).Scale(g, leakySlope)
	return pos.Sub(g, neg)
}

// reverse is a time-reversal index for Rows.
func reverse(g ml.Context) ml.Tensor {
	idx := make([]int32, Frames)
	for i := range idx {
		idx[i] = int32(Frames - 1 - i)
	}
	return g.Input().FromInts(idx, Frames)
}

// project writes layer l's input projections of every step for both
// directions (the reverse direction over the time-reversed input x,
// [in, B, Frames]) into m.gs (sigmoid gates, [384, B, Frames, 2]) and
// m.gt (tanh gate, [128, B, Frames, 2]), biases added.
func (m *Model) project(g ml.Context, l int, x ml.Tensor, B int) {
	w := m.w.lstm[l]
	in, T := x.Dim(0), Frames
	xr := x.Reshape(g, in*B, T).Rows(g, reverse(g))
	xs := x.Reshape(g, in, B*T, 1).Concat(g, xr.Reshape(g, in, B*T, 1), 2) // [in, B·T, 2]
	ps := w.ihSig.Mulmat(g, xs).Add(g, w.bSig)
	pt := w.ihTanh.Mulmat(g, xs).Add(g, w.bTanh)
	g.Forward(ps.Copy(g, m.gs.View(g, 0, 3*lstmHidden*B*T*2)))
	g.Forward(pt.Copy(g, m.gt.View(g, 0, lstmHidden*B*T*2)))
}

// steps runs layer l's steps t0..t1-1 of both directions (the reverse
// direction's step t is time Frames-1-t), reading the state left by the
// previous steps (none at t0 = 0) and leaving it in m.hs and m.cs; step
// t's outputs go to m.seq [128, B, Frames, 2] at t.
func (m *Model) steps(g ml.Context, l, B, t0, t1 int) {
	w := m.w.lstm[l]
	H, T, f := lstmHidden, Frames, 4 // f: bytes of a float32
	var h, c ml.Tensor
	if t0 > 0 {
		h = m.hs.View(g, 0, H*B*2).Reshape(g, H, B, 2)
		c = m.cs.View(g, 0, H*B*2).Reshape(g, H, B, 2)
	}
	for t := t0; t < t1; t++ {
		xs := m.gs.View(g, t*3*H*B*f, 3*H, 3*H*f, B, 3*H*B*T*f, 2)
		xt := m.gt.View(g, t*H*B*f, H, H*f, B, H*B*T*f, 2)
		var as, at ml.Tensor
		if h == nil {
			as, at = xs.Contiguous(g), xt.Contiguous(g)
		} else {
			as = w.hhSig.Mulmat(g, h).Add(g, xs) // [384, B, 2]
			at = w.hhTanh.Mulmat(g, h).Add(g, xt)
		}
		s := as.Sigmoid(g) // in place, on this step's own tensors
		gg := at.Tanh(g)
		gate := func(k int) ml.Tensor { return s.View(g, k*H*f, H, s.Stride(1), B, s.Stride(2), 2) }
		i, fg, o := gate(0), gate(1), gate(2)
		if c == nil {
			c = i.Mul(g, gg)
		} else {
			c = fg.Mul(g, c).Add(g, i.Mul(g, gg))
		}
		h = o.Mul(g, c.Duplicate(g).Tanh(g))
		g.Forward(h.Copy(g, m.seq.View(g, t*H*B*f, H, H*f, B, H*B*T*f, 2)))
	}
	g.Forward(h.Copy(g, m.hs.View(g, 0, H*B*2)), c.Copy(g, m.cs.View(g, 0, H*B*2)))
}

// layerOutput is the finished layer's output in time order, directions
// concatenated: [256, B, Frames].
func (m *Model) layerOutput(g ml.Context, B int) ml.Tensor {
	H, T := lstmHidden, Frames
	fwd := m.seq.View(g, 0, H*B*T).Reshape(g, H, B, T)
	rev := m.seq.View(g, H*B*T*4, H*B*T).Reshape(g, H*B, T).Rows(g, reverse(g)).Reshape(g, H, B, T)
	return fwd.Concat(g, rev, 0)
}

// head is the linear layers and the classifier over x [256, B, Frames]:
// the scores [Classes, Frames, B].
func (m *Model) head(g ml.Context, x ml.Tensor, B int) ml.Tensor {
	y := x.Reshape(g, x.Dim(0), B*Frames)
	for _, l := range m.w.lin {
		y = leaky(g, l.w.Mulmat(g, y).Add(g, l.b))
	}
	y = m.w.class.w.Mulmat(g, y).Add(g, m.w.class.b) // [7, B·Frames]
	return y.Reshape(g, Classes, B, Frames).Permute(g, 0, 2, 1, 3).Contiguous(g)
}
