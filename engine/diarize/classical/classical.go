// Package classical is boxd-classical-1, the diarizer that needs no model
// file, so that every box can say who spoke when. It is plain signal
// processing and clustering, pure Go:
//
//  1. Features (features.go): 25 ms frames every 10 ms; each frame's power
//     in dB and 19 mel-frequency cepstra (40 HTK mel filters, 60-7600 Hz,
//     c1..c19).
//  2. Speech (segment.go): an energy detector. The noise floor is the
//     10th percentile of frame power (no lower than -70 dBFS), the speech
//     level the 95th; frames louder than the floor plus 30% of the
//     difference (at least 6 dB) are speech. Audio whose speech level is
//     below -55 dBFS, or less than 10 dB above its floor (steady noise,
//     hum), has no speech. Pauses under 0.25 s are bridged, bursts under
//     0.12 s dropped, and speech padded by 50 ms.
//  3. Pitch (pitch.go): the F0 of each speech frame by normalised
//     autocorrelation (Boersma 1993) of 40 ms of the audio low-passed at
//     1 kHz and decimated to 8 kHz, 60-400 Hz; a frame is voiced when the
//     autocorrelation peak reaches 0.5 and it is within 25 dB of the
//     speech level.
//  4. Speaker changes inside speech: ΔBIC between diagonal Gaussians of
//     the cepstra of the 1 s before and after each frame, with penalty
//     weight lambda; local maxima above zero at least 1 s apart are
//     changes. Pauses are boundaries too. Segments longer than 1.5 s are cut
//     into equal pieces, so that a missed change costs at most a piece.
//  5. Embeddings: a segment's cepstral means and log standard deviations,
//     relative to the recording's speech frames (z-scores and log ratios),
//     a constant component, and the segment's pitch. The constant turns
//     cosine distance into a distance between the statistics themselves:
//     segments near the recording's average stay near each other instead
//     of pointing in random directions. The pitch, the median log F0 of
//     the segment's voiced frames less the recording's, turns the
//     constant component by pitchAngle radians per unit of log F0 (1.39
//     rad an octave) into a component of its own, keeping the vector's
//     length: voices that differ mostly in pitch (one espeak-ng voice at
//     two pitches, two male voices 13% apart) come apart, while the
//     distances between voices of one pitch do not shrink, as they would
//     if pitch were an extra component lengthening the vector (which
//     merged two female voices of a four-speaker dialogue). A segment
//     with under 0.2 s voiced keeps the plain constant. The scale is
//     fixed, not the recording's spread of log F0, which in a one-voice
//     recording is just intonation; 1.5 rad per unit loses a two-pitch
//     dialogue, 2.5 splits a demo voice with wide intonation.
//  6. Clustering: cluster.Agglomerative (average linkage, cosine) of the
//     segments of at least 0.5 s weighted by duration, at distance
//     threshold Threshold, bounded by Options. The count may then grow:
//     while the dendrogram's next cut (one more cluster) keeps every
//     cluster at least SplitThreshold apart (0.30, average linkage) and
//     each with at least 12% of the clustered speech and 10 s, that cut
//     is taken, up to MaxSpeakers. One fixed threshold had to sit high
//     enough that a voice's odd sentence does not split off, which merged
//     third and fourth speakers; a split below it is accepted only for a
//     substantial speaker (three- and four-speaker conversations), never
//     for a few seconds (a short two-voice dialogue keeps two). Shorter
//     segments join the nearest cluster; a cluster with under 1 s of
//     speech, or under 3 s whose centroid lies within 0.5 (cosine) of
//     another's (backchannels, an odd sentence), joins its nearest
//     neighbour while there are more than MinSpeakers.
//  7. Turns: segments labelled by cluster; adjacent turns of one speaker
//     less than 0.6 s apart are merged. It finds no overlapped speech.
//
// Features per segment: 19 cepstral means, 19 cepstral log deviations,
// the median log F0, all relative to the recording.
//
// Ten minutes of audio take 1.5-2 s on a shared two-core machine, a
// real-time factor of 0.0025-0.0035 (BenchmarkDiarize10Min; the pitch
// tracker is about half of it); it allocates about 33 MiB for them
// (features, 84 bytes per 10 ms frame, the change detector's prefix sums,
// 304 bytes per frame, and the pitch tracker's copy of the longest speech
// stretch, 12 bytes per sample), besides the caller's samples.
package classical

import (
	"context"
	"fmt"
	"math"
	"slices"

	"boxd/engine/diarize"
	"boxd/engine/diarize/cluster"
)

// Name is the model name of this diarizer.
const Name = "boxd-classical-1"

const sampleRate = diarize.SampleRate

// Threshold is the cosine distance below which clusters of segments merge
// (see package cluster). Tuned on the demo scripts, synthetic dialogues of
// other voices (TestVoices) and the pyannote sample: segments of one demo
// voice lie about 0.15 apart on average, of two voices about 0.45-0.5. With
// the pitch angle, 0.30 splits a male-female dialogue into three, 0.40
// merges two male voices 13% apart in pitch; 0.35 finds every asserted
// pair.
const Threshold = 0.35

// Diarizer is boxd-classical-1. Its zero value is ready; it is safe for
// concurrent use.
type Diarizer struct{}

var _ diarize.Diarizer = Diarizer{}

// Name returns "boxd-classical-1".
func (Diarizer) Name() string { return Name }

// Diarize labels the speakers in pcm (16 kHz mono, samples in [-1, 1];
// NaN and infinities count as 0, samples outside the range are
// clipped). Audio
// without speech gives no turns and no speakers. It returns o.Check's
// error for bad options and ctx.Err() when ctx is done.
func (Diarizer) Diarize(ctx context.Context, pcm []float32, o diarize.Options) (diarize.Result, error) {
	if err := o.Check(); err != nil {
		return diarize.Result{}, err
	}
	fe := newFrontEnd()
	f, err := fe.compute(ctx, pcm)
	if err != nil {
		return diarize.Result{}, fmt.Errorf("classical: %w", err)
	}
	speech := detectSpeech(f)
	if len(speech) == 0 {
		return diarize.Result{Turns: []diarize.Turn{}}, ctx.Err()
	}
	_, level := levels(f)
	if err := newPitchTracker(fe).track(ctx, pcm, f, speech, level); err != nil {
		return diarize.Result{}, fmt.Errorf("classical: pitch: %w", err)
	}
	segs := splitChanges(f, speech)
	if err := ctx.Err(); err != nil {
		return diarize.Result{}, fmt.Errorf("classical: %w", err)
	}
	emb := embed(f, segs)
	labels := label(segs, emb, o)
	return turns(segs, labels, float64(len(pcm))/sampleRate), nil
}

// Tuning of clustering and turns.
const (
	minClusterSeg = 0.5 // seconds: shorter segments are assigned, not clustered
	minCluster    = 1.0 // seconds of speech a cluster needs to stand alone
	mergeGap      = 0.6 // seconds: a speaker's turns closer than this merge
	// minSpeaker is the speech (seconds) under which a cluster whose
	// centroid lies within minSpeakerDistance (cosine) of another's joins
	// it: a few backchannels or an odd sentence of one voice.
	minSpeaker         = 3.0
	minSpeakerDistance = 0.5
	// SplitThreshold and minShare: one more speaker than Threshold gives
	// is taken while the next cut of the dendrogram separates clusters at
	// least SplitThreshold apart (average linkage) and every cluster of it
	// holds at least minShare of the clustered speech and minSplit
	// seconds.
	SplitThreshold = 0.30
	minShare       = 0.12
	minSplit       = 10.0
)

// moreSpeakers returns the cut of the dendrogram of vecs (weights w) with
// more clusters than got while that cut's clusters are all at least
// SplitThreshold apart and hold at least minShare of the weight and
// minSplit seconds each, at most most clusters.
func moreSpeakers(vecs [][]float32, w []float64, got []int, most int) []int {
	var total float64
	for _, x := range w {
		total += x
	}
	for k := slices.Max(got) + 1; k < most && k < len(vecs); k++ {
		next := cluster.Agglomerative(vecs, w, Threshold, k+1, k+1)
		d, smallest := separation(vecs, w, next, k+1)
		if d < SplitThreshold || smallest < max(minShare*total, minSplit) {
			break
		}
		got = next
	}
	return got
}

// separation returns the smallest average-linkage cosine distance between
// the k clusters of labels and the smallest cluster's weight.
func separation(vecs [][]float32, w []float64, labels []int, k int) (float64, float64) {
	sum := make([]float64, k*k)
	wt := make([]float64, k)
	for i := range vecs {
		wt[labels[i]] += w[i]
		for j := i + 1; j < len(vecs); j++ {
			if a, b := labels[i], labels[j]; a != b {
				d := w[i] * w[j] * (1 - cosine(vecs[i], vecs[j]))
				sum[a*k+b] += d
				sum[b*k+a] += d
			}
		}
	}
	dmin := math.Inf(1)
	for a := range k {
		for b := a + 1; b < k; b++ {
			dmin = min(dmin, sum[a*k+b]/(wt[a]*wt[b]))
		}
	}
	return dmin, slices.Min(wt)
}

// label returns a cluster per segment, numbered in order of first
// appearance.
func label(segs []span, emb [][]float32, o diarize.Options) []int {
	var long []int
	for i, s := range segs {
		if s.seconds() >= minClusterSeg {
			long = append(long, i)
		}
	}
	if len(long) == 0 {
		long = make([]int, len(segs))
		for i := range long {
			long[i] = i
		}
	}
	vecs := make([][]float32, len(long))
	w := make([]float64, len(long))
	for j, i := range long {
		vecs[j], w[j] = emb[i], segs[i].seconds()
	}
	got := cluster.Agglomerative(vecs, w, Threshold, o.MinSpeakers, o.MaxSpeakers)
	got = moreSpeakers(vecs, w, got, o.MaxSpeakers)
	labels := make([]int, len(segs))
	for i := range labels {
		labels[i] = -1
	}
	for j, i := range long {
		labels[i] = got[j]
	}
	for {
		k := slices.Max(labels) + 1
		cent, dur := centroids(segs, emb, labels, k)
		// the smallest cluster under minCluster joins its nearest
		small := -1
		for c := range k {
			if k > o.MinSpeakers && (small < 0 || dur[c] < dur[small]) && (dur[c] < minCluster ||
				dur[c] < minSpeaker && 1-cosine(cent[c], cent[nearest(cent, cent[c], c)]) < minSpeakerDistance) {
				small = c
			}
		}
		if small < 0 {
			// unlabelled (short) segments join the nearest centroid
			for i, l := range labels {
				if l < 0 {
					labels[i] = nearest(cent, emb[i], -1)
				}
			}
			return renumber(labels)
		}
		to := nearest(cent, cent[small], small)
		for i, l := range labels {
			switch {
			case l == small:
				labels[i] = to
			case l > small:
				labels[i]--
			}
		}
	}
}

// centroids returns each cluster's duration-weighted mean embedding and
// its total duration; labels below 0 are skipped.
func centroids(segs []span, emb [][]float32, labels []int, k int) ([][]float32, []float64) {
	cent := make([][]float32, k)
	dur := make([]float64, k)
	for c := range cent {
		cent[c] = make([]float32, len(emb[0]))
	}
	for i, l := range labels {
		if l < 0 {
			continue
		}
		w := segs[i].seconds()
		dur[l] += w
		for j, v := range emb[i] {
			cent[l][j] += float32(w) * v
		}
	}
	return cent, dur
}

// nearest returns the index of the centroid nearest v in cosine distance,
// other than skip.
func nearest(cent [][]float32, v []float32, skip int) int {
	best, bestCos := 0, math.Inf(-1)
	for c, u := range cent {
		if c == skip {
			continue
		}
		if cs := cosine(u, v); cs > bestCos || best == skip {
			best, bestCos = c, cs
		}
	}
	return best
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// renumber numbers labels in order of first appearance.
func renumber(labels []int) []int {
	ids := map[int]int{}
	for i, l := range labels {
		n, ok := ids[l]
		if !ok {
			n = len(ids)
			ids[l] = n
		}
		labels[i] = n
	}
	return labels
}

// turns makes turns of labelled segments, merging a speaker's turns that
// are less than mergeGap apart, clipped to [0, duration].
func turns(segs []span, labels []int, duration float64) diarize.Result {
	out := []diarize.Turn{}
	last := map[int]int{} // speaker -> index in out of their latest turn
	speakers := 0
	for i, s := range segs {
		start := float64(s.start) / frameRate
		end := min(duration, (float64(s.end-1)*hop+frameLen)/sampleRate)
		sp := labels[i]
		speakers = max(speakers, sp+1)
		if j, ok := last[sp]; ok && start-out[j].End < mergeGap && j == len(out)-1 {
			out[j].End = max(out[j].End, end)
			continue
		}
		last[sp] = len(out)
		out = append(out, diarize.Turn{Start: start, End: end, Speaker: sp})
	}
	for i := range out {
		out[i].Start = math.Round(out[i].Start*1000) / 1000
		out[i].End = math.Round(out[i].End*1000) / 1000
	}
	return diarize.Result{Turns: out, Speakers: speakers}
}
