package neural

import (
	"context"
	"fmt"
	"math"

	"boxd/engine/diarize"
)

// minCleanFrames is how many frames a local speaker must talk alone in a
// window for its embedding mask to leave out the frames where another
// local speaker talks too (12 frames, 0.2 s); with fewer, the mask is all
// its active frames. pyannote's bar is the shortest input its embedding
// model accepts, a handful of frames; an embedding of a handful of frames
// is mostly noise, so this one is a little higher.
const minCleanFrames = 12

// fbankHop and fbankWin are the Embedder's fbank framing in samples:
// 25 ms frames every 10 ms.
const (
	fbankHop = diarize.SampleRate / 100
	fbankWin = diarize.SampleRate / 40
)

// window is what the pipeline keeps of one analysed window.
type window struct {
	// startFrame is the window's first frame on the global frame grid.
	startFrame int
	// act is frame-major local activity: act[f*LocalSpeakers+s] is 1
	// when local speaker s is active in frame f.
	act []uint8
	// active says which local speakers are active in some frame.
	active [LocalSpeakers]bool
	// emb is the unit-length embedding of each active local speaker; nil
	// for inactive speakers and for embeddings that were not finite.
	emb [LocalSpeakers][]float32
	// train says which embeddings take part in clustering: their speaker
	// talks alone for at least Config.MinActiveRatio of the window.
	train [LocalSpeakers]bool
}

// windowStarts returns the first sample of each window over n samples
// stepping by step samples: the windows that fit, then one more starting
// a step after the last of them when they leave samples uncovered (all of
// it when n < WindowSamples), which windowAt pads.
func windowStarts(n, step int) []int {
	full := 0
	if n >= WindowSamples {
		full = (n-WindowSamples)/step + 1
	}
	starts := make([]int, 0, full+1)
	for c := range full {
		starts = append(starts, c*step)
	}
	if n < WindowSamples || (n-WindowSamples)%step > 0 {
		starts = append(starts, full*step)
	}
	return starts
}

// windowAt returns the window of pcm starting at sample start: a slice of
// pcm (capacity capped so nothing can append into pcm) when it fits, else
// a zero-padded copy.
func windowAt(pcm []float32, start int) []float32 {
	end := start + WindowSamples
	if end <= len(pcm) {
		return pcm[start:end:end]
	}
	w := make([]float32, WindowSamples)
	copy(w, pcm[start:])
	return w
}

// analyse runs the Segmenter over every window of pcm, Config.Batch
// windows at a time, and the Embedder over each window with speech.
func (d *Diarizer) analyse(ctx context.Context, pcm []float32) ([]window, error) {
	step := max(int(math.Round(d.cfg.Step*diarize.SampleRate)), 1)
	starts := windowStarts(len(pcm), step)
	wins := make([]window, len(starts))
	batch := make([][]float32, 0, min(d.cfg.Batch, len(starts)))
	dim := 0
	for b := 0; b < len(starts); b += d.cfg.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e := min(b+d.cfg.Batch, len(starts))
		batch = batch[:0]
		for _, s := range starts[b:e] {
			batch = append(batch, windowAt(pcm, s))
		}
		out, err := d.seg.Segment(ctx, batch)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("neural: segmenting windows %d to %d of %d: %w", b+1, e, len(starts), err)
		}
		if len(out) != len(batch) {
			return nil, fmt.Errorf("neural: segmenter gave %d outputs for %d windows", len(out), len(batch))
		}
		for i, lp := range out {
			c := b + i
			act, err := decodePowerset(lp)
			if err != nil {
				return nil, fmt.Errorf("neural: window %d: %w", c+1, err)
			}
			wins[c] = window{
				startFrame: int(math.Round(float64(starts[c]) / FrameStepSample)),
				act:        act,
			}
		}
		for i, samples := range batch {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := d.embed(ctx, &wins[b+i], samples, &dim); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, fmt.Errorf("neural: window %d: %w", b+i+1, err)
			}
		}
	}
	return wins, nil
}

// decodePowerset turns one window's powerset log-probabilities into hard
// local speaker activity: per frame, the speakers of the most likely class.
func decodePowerset(lp []float32) ([]uint8, error) {
	if len(lp) != FramesPerWindow*PowersetClasses {
		return nil, fmt.Errorf("segmenter gave %d values; want %d frames × %d classes", len(lp), FramesPerWindow, PowersetClasses)
	}
	act := make([]uint8, FramesPerWindow*LocalSpeakers)
	for f := range FramesPerWindow {
		row := lp[f*PowersetClasses : (f+1)*PowersetClasses]
		best := 0
		for k, v := range row {
			if math.IsNaN(float64(v)) {
				return nil, fmt.Errorf("segmenter gave NaN in frame %d", f)
			}
			if v > row[best] {
				best = k
			}
		}
		for _, s := range powerset[best] {
			act[f*LocalSpeakers+s] = 1
		}
	}
	return act, nil
}

// embed computes the embeddings of w's active local speakers from the
// window's samples: one fbank, one EmbedMasks call. dim is the embedding
// size seen so far (0 before the first), which every embedding must have.
func (d *Diarizer) embed(ctx context.Context, w *window, samples []float32, dim *int) error {
	var on, clean [LocalSpeakers]int
	for f := range FramesPerWindow {
		row := w.act[f*LocalSpeakers : (f+1)*LocalSpeakers]
		n := int(row[0]) + int(row[1]) + int(row[2])
		for s, a := range row {
			if a == 0 {
				continue
			}
			on[s]++
			if n == 1 {
				clean[s]++
			}
		}
	}
	var speakers []int
	for s := range LocalSpeakers {
		if on[s] > 0 {
			w.active[s] = true
			speakers = append(speakers, s)
		}
	}
	if len(speakers) == 0 {
		return nil
	}
	feats := d.fbank(samples)
	if len(feats) == 0 {
		return fmt.Errorf("fbank gave no frames for %d samples", len(samples))
	}
	masks := make([][]float32, len(speakers))
	for i, s := range speakers {
		masks[i] = fbankMask(w.act, s, len(feats), clean[s] >= minCleanFrames)
	}
	embs, err := d.emb.EmbedMasks(ctx, feats, masks)
	if err != nil {
		return fmt.Errorf("embedding %d speakers: %w", len(speakers), err)
	}
	if len(embs) != len(masks) {
		return fmt.Errorf("embedder gave %d embeddings for %d masks", len(embs), len(masks))
	}
	minClean := d.cfg.MinActiveRatio * FramesPerWindow
	for i, s := range speakers {
		e := embs[i]
		if *dim == 0 {
			*dim = len(e)
		}
		if len(e) != *dim || len(e) == 0 {
			return fmt.Errorf("embedder gave a %d-d embedding after %d-d ones", len(e), *dim)
		}
		if u := unit(e); u != nil {
			w.emb[s] = u
			w.train[s] = float64(clean[s]) >= minClean
		}
	}
	return nil
}

// fbankMask maps local speaker s's segmentation frames onto n fbank
// frames by time: fbank frame j (Kaldi framing, 25 ms every 10 ms, its
// middle at 160j + 200 samples) takes the segmentation frame whose middle
// (270f + 495 samples) is nearest. pyannote stretches its 589 weights
// onto the feature frames by index (F.interpolate, nearest), which drifts
// by up to 40 ms towards the window's end; by time the two grids agree
// within half a frame. With onlyClean, frames where another local speaker
// is active too are left out.
func fbankMask(act []uint8, s, n int, onlyClean bool) []float32 {
	m := make([]float32, n)
	for j := range m {
		f := (j*fbankHop + fbankWin/2 - FrameSizeSample/2 + FrameStepSample/2) / FrameStepSample
		f = min(max(f, 0), FramesPerWindow-1)
		row := act[f*LocalSpeakers : (f+1)*LocalSpeakers]
		if row[s] == 0 {
			continue
		}
		if onlyClean && int(row[0])+int(row[1])+int(row[2]) > 1 {
			continue
		}
		m[j] = 1
	}
	return m
}

// unit returns e scaled to unit length, or nil when e is zero or not
// finite.
func unit(e []float32) []float32 {
	var ss float64
	for _, v := range e {
		ss += float64(v) * float64(v)
	}
	if !(ss > 0) || math.IsInf(ss, 0) {
		return nil
	}
	inv := 1 / math.Sqrt(ss)
	u := make([]float32, len(e))
	for i, v := range e {
		u[i] = float32(float64(v) * inv)
	}
	return u
}
