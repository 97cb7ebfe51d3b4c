package classical

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pitchOf tracks pcm as one speech span and returns its voiced frames' F0.
func pitchOf(t *testing.T, pcm []float32) (voiced []float64, frames int) {
	t.Helper()
	fe := newFrontEnd()
	f, err := fe.compute(context.Background(), pcm)
	if err != nil {
		t.Fatal(err)
	}
	_, level := levels(f)
	if err := newPitchTracker(fe).track(context.Background(), pcm, f, []span{{0, f.n}}, level); err != nil {
		t.Fatal(err)
	}
	for _, v := range f.f0 {
		if v > 0 {
			voiced = append(voiced, float64(v))
		}
	}
	return voiced, f.n
}

// TestPitch: the tracker finds the F0 of synthetic voices from 70 to
// 380 Hz within 2% in nearly every frame, and none in noise.
func TestPitch(t *testing.T) {
	for _, f0 := range []float64{70, 98, 110, 147, 196, 220, 262, 330, 380} {
		voiced, n := pitchOf(t, tone(1.5, f0, 500, 1500, 1))
		if len(voiced) < n*9/10 {
			t.Errorf("%.0f Hz: %d of %d frames voiced", f0, len(voiced), n)
			continue
		}
		off := 0
		for _, v := range voiced {
			if math.Abs(v/f0-1) > 0.02 {
				off++
			}
		}
		slices.Sort(voiced)
		t.Logf("%.0f Hz: median %.1f Hz, %d of %d voiced, %d off by more than 2%%", f0, voiced[len(voiced)/2], len(voiced), n, off)
		if off > len(voiced)/20 {
			t.Errorf("%.0f Hz: %d of %d voiced frames off by more than 2%%", f0, off, len(voiced))
		}
	}
	r := rand.New(rand.NewPCG(3, 3))
	noise := make([]float32, 2*sampleRate)
	for i := range noise {
		noise[i] = float32(0.1 * r.NormFloat64())
	}
	if voiced, n := pitchOf(t, noise); len(voiced) > n/50 {
		t.Errorf("white noise: %d of %d frames voiced", len(voiced), n)
	}
}

// TestPitchEmbedding: a segment's pitch turns the constant component by
// pitchAngle per unit of log F0 from the recording's median, keeping its
// length; a segment with too few voiced frames keeps the constant.
func TestPitchEmbedding(t *testing.T) {
	const n = 300
	f := &features{n: n, db: make([]float32, n), ceps: make([]float32, n*nCeps), f0: make([]float32, n)}
	r := rand.New(rand.NewPCG(5, 5))
	for i := range f.ceps {
		f.ceps[i] = float32(r.NormFloat64())
	}
	for t := range 100 {
		f.f0[t], f.f0[100+t] = 100, 200
	}
	for t := 200; t < 200+minVoiced-1; t++ {
		f.f0[t] = 400
	}
	emb := embed(f, []span{{0, 100}, {100, 200}, {200, 300}})
	// the median of all voiced frames lies just above ln 200 (a few at 400)
	med := math.Log(200)
	for i, want := range []float64{pitchAngle * (math.Log(100) - med), 0, 0} {
		e := emb[i]
		got := math.Atan2(float64(e[len(e)-1]), float64(e[0]))
		if math.Abs(got-want) > 1e-5 {
			t.Errorf("segment %d: angle %.4f, want %.4f", i, got, want)
		}
		if l := math.Hypot(float64(e[0]), float64(e[len(e)-1])); math.Abs(l-embedBias) > 1e-5 {
			t.Errorf("segment %d: constant and pitch of length %.4f, want %v", i, l, embedBias)
		}
	}
}
