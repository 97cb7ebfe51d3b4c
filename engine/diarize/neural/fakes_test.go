package neural

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"boxd/engine/diarize"
	"boxd/engine/diarize/score"
)

// The fakes know who speaks from the signal itself: speaker i's samples
// carry bit i of a code (speaker 0 → 1, 1 → 2, 2 → 4), overlapped speech
// the sum, and a sample is code/10. The fake Segmenter reads the code at
// each frame's middle, the fake fbank at each 10 ms frame's middle, and
// the fake Embedder turns the speakers under a mask into a direction.

// refTurn is a ground-truth turn of speaker 0, 1 or 2.
type refTurn struct {
	start, end float64
	spk        int
}

// synth returns dur seconds of the coded signal for turns.
func synth(dur float64, turns []refTurn) []float32 {
	pcm := make([]float32, int(dur*diarize.SampleRate))
	codes := make([]uint8, len(pcm))
	for _, t := range turns {
		a := int(t.start * diarize.SampleRate)
		b := min(int(t.end*diarize.SampleRate), len(pcm))
		for i := a; i < b; i++ {
			codes[i] |= 1 << t.spk
		}
	}
	for i, c := range codes {
		pcm[i] = float32(c) / 10
	}
	return pcm
}

// decode is the code of sample value v.
func decode(v float32) int { return int(math.Round(float64(v) * 10)) }

// fakeSeg is a Segmenter that reads the code at each frame's middle and
// labels local speakers in order of first appearance in the window.
type fakeSeg struct {
	mu       sync.Mutex
	calls    int
	windows  int
	maxBatch int
	badLen   int            // windows of the wrong length seen
	onCall   func(call int) // called before each call's work
	err      error          // returned by every call when set
	mangle   func([][]float32) [][]float32
}

func (f *fakeSeg) Segment(ctx context.Context, windows [][]float32) ([][]float32, error) {
	f.mu.Lock()
	f.calls++
	call := f.calls
	f.windows += len(windows)
	f.maxBatch = max(f.maxBatch, len(windows))
	f.mu.Unlock()
	if f.onCall != nil {
		f.onCall(call)
	}
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]float32, len(windows))
	for i, w := range windows {
		if len(w) != WindowSamples {
			f.mu.Lock()
			f.badLen++
			f.mu.Unlock()
			return nil, fmt.Errorf("window of %d samples", len(w))
		}
		lp := make([]float32, FramesPerWindow*PowersetClasses)
		for j := range lp {
			lp[j] = float32(math.Log(0.01))
		}
		slot := map[int]int{}
		for fr := range FramesPerWindow {
			code := decode(w[fr*FrameStepSample+FrameSizeSample/2])
			var locals []int
			for bit := range 3 {
				if code&(1<<bit) == 0 {
					continue
				}
				s, ok := slot[bit]
				if !ok {
					s = len(slot)
					slot[bit] = s
				}
				locals = append(locals, s)
			}
			slices.Sort(locals)
			class := slices.IndexFunc(powerset[:], func(p []int) bool { return slices.Equal(p, locals) })
			if class < 0 {
				return nil, fmt.Errorf("no powerset class for %v", locals)
			}
			lp[fr*PowersetClasses+class] = float32(math.Log(0.94))
		}
		out[i] = lp
	}
	if f.mangle != nil {
		out = f.mangle(out)
	}
	return out, nil
}

// fakeFbank is one feature per 10 ms frame (25 ms long, Kaldi's framing):
// the sample value at the frame's middle.
func fakeFbank(pcm []float32) [][]float32 {
	if len(pcm) < 400 {
		return nil
	}
	n := (len(pcm)-400)/160 + 1
	feats := make([][]float32, n)
	for j := range feats {
		feats[j] = []float32{pcm[j*160+200]}
	}
	return feats
}

// fakeEmb is an Embedder whose embedding of a mask is the mask-weighted
// sum of the directions of the speakers in its frames, normalised, plus
// Gaussian noise of standard deviation noise per component.
type fakeEmb struct {
	mu    sync.Mutex
	dirs  [3][]float32
	noise float64
	rng   *rand.Rand
	calls int
	// maxOverlapInMask is the most frames of overlapped speech seen in
	// one mask.
	maxOverlapInMask int
	err              error
}

const embDim = 256

func newFakeEmb(seed uint64, noise float64) *fakeEmb {
	rng := rand.New(rand.NewPCG(seed, 7))
	f := &fakeEmb{noise: noise, rng: rng}
	for i := range f.dirs {
		f.dirs[i] = make([]float32, embDim)
		for j := range f.dirs[i] {
			f.dirs[i][j] = float32(rng.NormFloat64())
		}
		f.dirs[i] = unit(f.dirs[i])
	}
	return f
}

func (f *fakeEmb) EmbedMasks(ctx context.Context, feats [][]float32, masks [][]float32) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]float32, len(masks))
	for i, m := range masks {
		if len(m) != len(feats) {
			return nil, fmt.Errorf("mask of %d frames for %d fbank frames", len(m), len(feats))
		}
		acc := make([]float32, embDim)
		overlap := 0
		for j, w := range m {
			if w == 0 {
				continue
			}
			code := decode(feats[j][0])
			bits := 0
			for b := range 3 {
				if code&(1<<b) != 0 {
					bits++
					for k, x := range f.dirs[b] {
						acc[k] += w * x
					}
				}
			}
			if bits > 1 {
				overlap++
			}
		}
		f.maxOverlapInMask = max(f.maxOverlapInMask, overlap)
		u := unit(acc)
		if u == nil {
			out[i] = acc
			continue
		}
		for k := range u {
			u[k] += float32(f.rng.NormFloat64() * f.noise)
		}
		out[i] = u
	}
	return out, nil
}

// frameDER is the diarization error rate (a fraction) of res against ref
// over [0, dur] as package score (dscore) computes it: no collar,
// overlapped speech scored.
func frameDER(ref []refTurn, res diarize.Result, dur float64) float64 {
	var refSegs []score.Segment
	for _, t := range ref {
		refSegs = append(refSegs, score.Segment{File: "f", Speaker: fmt.Sprint("R", t.spk), Start: t.start, End: t.end})
	}
	sc, err := score.Score(refSegs, score.FromResult("f", res), score.Options{UEM: score.UEM{"f": {{0, dur}}}})
	if err != nil {
		panic(err)
	}
	return sc.DER / 100
}

// speakersAt is the set of system speakers talking at time t.
func speakersAt(res diarize.Result, t float64) []int {
	var s []int
	for _, tr := range res.Turns {
		if tr.Start <= t && t < tr.End && !slices.Contains(s, tr.Speaker) {
			s = append(s, tr.Speaker)
		}
	}
	slices.Sort(s)
	return s
}
