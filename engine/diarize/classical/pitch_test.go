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
