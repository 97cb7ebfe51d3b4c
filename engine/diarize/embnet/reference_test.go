package embnet

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"boxd/engine/models/torchfile"
)

// This file is a float64 reference of pyannote's WeSpeakerResNet34 written
// from the architecture (pyannote's resnet.py and pooling.py): NCHW
// convolutions, batch norms in eval mode (unfolded), the BasicBlocks, the
// weighted TSTP pooling and seg_1. It shares no code with the ggml path.

// randomStateDict is a state dict with pyannote's names and the real
// shapes, random weights scaled so that activations stay of order one.
func randomStateDict(seed uint64) map[string]torchfile.Tensor {
	rng := rand.New(rand.NewPCG(seed, 38))
	sd := map[string]torchfile.Tensor{}
	put := func(name string, shape []int, f func() float32) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		data := make([]float32, n)
		for i := range data {
			data[i] = f()
		}
		sd[name] = torchfile.Tensor{Shape: shape, Data: data}
	}
	convW := func(name string, out, in, k int) {
		s := math.Sqrt(2 / float64(in*k*k))
		put(name, []int{out, in, k, k}, func() float32 { return float32(rng.NormFloat64() * s) })
	}
	bn := func(name string, c int) {
		put(name+".weight", []int{c}, func() float32 { return float32(0.3 + 0.5*rng.Float64()) })
		put(name+".bias", []int{c}, func() float32 { return float32(0.2 * rng.NormFloat64()) })
		put(name+".running_mean", []int{c}, func() float32 { return float32(0.2 * rng.NormFloat64()) })
		put(name+".running_var", []int{c}, func() float32 { return float32(0.5 + rng.Float64()) })
		put(name+".num_batches_tracked", []int{}, func() float32 { return 1000 })
	}
	convW("resnet.conv1.weight", 32, 1, 3)
	bn("resnet.bn1", 32)
	in := 32
	for s, n := range []int{3, 4, 6, 3} {
		out := 32 << s
		for i := range n {
			p := fmt.Sprintf("resnet.layer%d.%d.", s+1, i)
			convW(p+"conv1.weight", out, in, 3)
			bn(p+"bn1", out)
			convW(p+"conv2.weight", out, out, 3)
			bn(p+"bn2", out)
			if i == 0 && s > 0 {
				convW(p+"shortcut.0.weight", out, in, 1)
				bn(p+"shortcut.1", out)
			}
			in = out
		}
	}
	s := 1 / math.Sqrt(5120)
	put("resnet.seg_1.weight", []int{256, 5120}, func() float32 { return float32(rng.NormFloat64() * s) })
	put("resnet.seg_1.bias", []int{256}, func() float32 { return float32(0.1 * rng.NormFloat64()) })
	return sd
}

// img is a C x H x W image in float64.
type img struct {
	c, h, w int
	v       []float64
}

// refConv is PyTorch's Conv2d without bias: weight [out, in, k, k],
// padding k/2, the stride on both axes.
func refConv(x img, wt torchfile.Tensor, stride int) img {
	out, in, k := wt.Shape[0], wt.Shape[1], wt.Shape[2]
	pad := k / 2
	oh, ow := (x.h+2*pad-k)/stride+1, (x.w+2*pad-k)/stride+1
	y := img{c: out, h: oh, w: ow, v: make([]float64, out*oh*ow)}
	for o := range out {
		dst := y.v[o*oh*ow : (o+1)*oh*ow]
		for i := range in {
			src := x.v[i*x.h*x.w : (i+1)*x.h*x.w]
			for kh := range k {
				for kw := range k {
					wv := float64(wt.Data[((o*in+i)*k+kh)*k+kw])
					for r := range oh {
						ih := r*stride + kh - pad
						if ih < 0 || ih >= x.h {
							continue
						}
						row := src[ih*x.w : (ih+1)*x.w]
						d := dst[r*ow : (r+1)*ow]
						for c := range ow {
							iw := c*stride + kw - pad
							if iw >= 0 && iw < x.w {
								d[c] += wv * row[iw]
							}
						}
					}
				}
			}
		}
	}
	return y
}

// refBN is BatchNorm2d in eval mode, eps 1e-5.
func refBN(x img, sd map[string]torchfile.Tensor, name string) img {
	g, b := sd[name+".weight"].Data, sd[name+".bias"].Data
	mu, va := sd[name+".running_mean"].Data, sd[name+".running_var"].Data
	n := x.h * x.w
	for c := range x.c {
		inv := 1 / math.Sqrt(float64(va[c])+1e-5)
		for i := range n {
			v := &x.v[c*n+i]
			*v = (*v-float64(mu[c]))*inv*float64(g[c]) + float64(b[c])
		}
	}
	return x
}

func refReLU(x img) img {
	for i, v := range x.v {
		x.v[i] = max(v, 0)
	}
	return x
}

// refTrunk is forward_frames: feats [T][80] as the image (1, 80, T).
func refTrunk(sd map[string]torchfile.Tensor, feats [][]float32) img {
	T := len(feats)
	x := img{c: 1, h: 80, w: T, v: make([]float64, 80*T)}
	for t, row := range feats {
		for f, v := range row {
			x.v[f*T+t] = float64(v)
		}
	}
	x = refReLU(refBN(refConv(x, sd["resnet.conv1.weight"], 1), sd, "resnet.bn1"))
	for s, n := range []int{3, 4, 6, 3} {
		for i := range n {
			p := fmt.Sprintf("resnet.layer%d.%d.", s+1, i)
			stride := 1
			if i == 0 && s > 0 {
				stride = 2
			}
			h := refReLU(refBN(refConv(x, sd[p+"conv1.weight"], stride), sd, p+"bn1"))
			h = refBN(refConv(h, sd[p+"conv2.weight"], 1), sd, p+"bn2")
			sc := x
			if _, ok := sd[p+"shortcut.0.weight"]; ok {
				sc = refBN(refConv(x, sd[p+"shortcut.0.weight"], stride), sd, p+"shortcut.1")
			}
			for j := range h.v {
				h.v[j] += sc.v[j]
			}
			x = refReLU(h)
		}
	}
	return x
}

// refEmbedding is forward_embedding: TSTP (pyannote's StatsPool, weights
// interpolated by nearest neighbour) and seg_1.
func refEmbedding(sd map[string]torchfile.Tensor, x img, weights []float32) []float64 {
	T := x.w
	D := x.c * x.h // (dimension channel): channel-major, then frequency
	w := make([]float64, T)
	for i := range w {
		switch {
		case weights == nil:
			w[i] = 1
		default:
			src := int(math.Floor(float64(i) * float64(len(weights)) / float64(T)))
			w[i] = float64(weights[min(src, len(weights)-1)])
		}
	}
	stats := make([]float64, 2*D)
	if weights == nil { // torch's mean and std(correction=1)
		for d := range D {
			var s float64
			for t := range T {
				s += x.v[d*T+t]
			}
			mean := s / float64(T)
			var ss float64
			for t := range T {
				ss += (x.v[d*T+t] - mean) * (x.v[d*T+t] - mean)
			}
			stats[d], stats[D+d] = mean, math.Sqrt(ss/float64(T-1))
		}
	} else {
		v1, v2 := 1e-8, 0.0
		for _, x := range w {
			v1 += x
			v2 += x * x
		}
		for d := range D {
			var s float64
			for t := range T {
				s += x.v[d*T+t] * w[t]
			}
			mean := s / v1
			var ss float64
			for t := range T {
				ss += (x.v[d*T+t] - mean) * (x.v[d*T+t] - mean) * w[t]
			}
			stats[d], stats[D+d] = mean, math.Sqrt(ss/(v1-v2/v1+1e-8))
		}
	}
	W, B := sd["resnet.seg_1.weight"], sd["resnet.seg_1.bias"]
	out := make([]float64, W.Shape[0])
	for o := range out {
		s := float64(B.Data[o])
		for i, v := range stats {
			s += float64(W.Data[o*len(stats)+i]) * v
		}
		out[o] = s
	}
	return out
}

// testAudio is a deterministic second-ish of a chirp and noise.
func testAudio(n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	pcm := make([]float32, n)
	for i := range pcm {
		t := float64(i) / SampleRate
		pcm[i] = float32(0.3*math.Sin(2*math.Pi*(200+400*t)*t) + 0.05*rng.NormFloat64())
	}
	return pcm
}

// compare reports the cosine similarity and max |a-b| / max |b|.
func compare(a []float32, b []float64) (cos, rel float64) {
	var ab, aa, bb, maxd, maxb float64
	for i := range b {
		x := float64(a[i])
		ab += x * b[i]
		aa += x * x
		bb += b[i] * b[i]
		maxd = max(maxd, math.Abs(x-b[i]))
		maxb = max(maxb, math.Abs(b[i]))
	}
	return ab / math.Sqrt(aa*bb), maxd / maxb
}

// loadRandom converts a random state dict and loads it on the CPU.
func loadRandom(t testing.TB, sd map[string]torchfile.Tensor, o Options) *Model {
	t.Helper()
	w, err := ConvertStateDict(sd)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "embnet.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// Tolerances of the ggml path against the float64 reference.
const (
	minCosine = 0.99999
	maxRelErr = 1e-4
)

func TestMatchesFloat64Reference(t *testing.T) {
	sd := randomStateDict(1)
	m := loadRandom(t, sd, Options{Threads: 1})
	feats := Fbank(testAudio(16000, 2)) // 1 s: 98 frames
	// Masks as the pipeline passes them: at the segmentation model's rate
	// (here 59 frames over the second), soft, and partly zero.
	seg := make([]float32, 59)
	soft := make([]float32, len(feats))
	for i := range seg {
		if i >= 20 && i < 45 {
			seg[i] = 1
		}
	}
	for i := range soft {
		soft[i] = float32(0.5 + 0.5*math.Sin(float64(i)/7))
	}
	masks := [][]float32{nil, seg, soft}
	got, err := m.EmbedMasks(context.Background(), feats, masks)
	if err != nil {
		t.Fatal(err)
	}
	trunk := refTrunk(sd, feats)
	if trunk.c != 256 || trunk.h != 10 || trunk.w != 13 {
		t.Fatalf("reference trunk %dx%dx%d, want 256x10x13", trunk.c, trunk.h, trunk.w)
	}
	for i, mask := range masks {
		want := refEmbedding(sd, trunk, mask)
		if len(got[i]) != Embedding {
			t.Fatalf("mask %d: embedding of %d", i, len(got[i]))
		}
		cos, rel := compare(got[i], want)
		t.Logf("mask %d: 1 - cosine %.2e, max |diff| / max |ref| %.2e", i, 1-cos, rel)
		if cos < minCosine || rel > maxRelErr {
			t.Errorf("mask %d: cosine %.8f (want >= %v), relative max diff %.2e (want <= %v)", i, cos, minCosine, rel, maxRelErr)
		}
	}
	// Different masks give different embeddings (the masks reach the
	// pooling).
	if c, _ := compare(got[0], f64(got[1])); c > 0.9999999 {
		t.Errorf("masks nil and seg give the same embedding (cosine %v)", c)
	}
}

func f64(a []float32) []float64 {
	out := make([]float64, len(a))
	for i, v := range a {
		out[i] = float64(v)
	}
	return out
}
