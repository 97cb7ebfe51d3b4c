// Package neural is the neural diarizer: pyannote's speaker-diarization
// pipeline (3.1 / community-1) written in Go around two networks it
// reaches through small interfaces, a Segmenter (pyannote
// segmentation-3.0, package segnet) and an Embedder (WeSpeaker ResNet34,
// package embnet), and the clustering of package cluster.
//
// The pipeline, step by step (pyannote's names in brackets):
//
//  1. Windows. 10 s windows (WindowSamples) slide over the audio every
//     Config.Step seconds; the last one is padded with zeros so that the
//     windows cover the whole audio, and audio shorter than a window is one
//     padded window [Inference.slide]. They go to the Segmenter
//     Config.Batch at a time.
//  2. Local segmentation. For each of the 589 frames of a window the
//     Segmenter gives log-probabilities of the 7 powerset classes {}, {0},
//     {1}, {2}, {0,1}, {0,2}, {1,2}; the most likely class says which of
//     three local speakers are active (hard multilabel, at most two at
//     once) [Powerset.to_multilabel].
//  3. Embeddings. For each window with speech, Fbank features of the
//     window and one EmbedMasks call: one mask per active local speaker,
//     the speaker's frames mapped onto fbank frames. Frames where another
//     local speaker also talks are left out of the mask when enough clean
//     frames remain [get_embeddings with exclude_overlap].
//  4. Clustering. The embeddings of local speakers that talk alone for at
//     least Config.MinActiveRatio of the window [filter_embeddings] are
//     clustered by cluster.Agglomerative (average linkage, cosine
//     distance, Config.Threshold, bounded by Options); clusters smaller
//     than pyannote's min_cluster_size heuristic give their members to the
//     large ones; every active local speaker then goes to the nearest
//     centroid, two local speakers of a window never to the same cluster
//     [assign_embeddings, constrained as community-1's VBx clustering].
//  5. Speaker count. Per global frame, the number of active local
//     speakers averaged over the windows that cover the frame and rounded,
//     capped at MaxSpeakers [speaker_count].
//  6. Reconstruction. Each window's local activity is added, per cluster,
//     onto the global frame grid (overlap-add without averaging, no
//     Hamming window); per frame the count most active clusters are kept
//     [reconstruct, to_diarization].
//  7. Turns. Each cluster's frames become turns from frame middle to frame
//     middle; a speaker's gaps shorter than Config.MinDurationOff are
//     filled and turns shorter than Config.MinDurationOn dropped
//     [to_annotation, Binarize]; turns are clipped to the audio and
//     speakers renumbered in order of first appearance.
//
// Cost. The Embedder dominates: one ResNet34 trunk pass over 10 s of fbank
// per window with speech, so the cost is proportional to 10/Step windows
// per 10 s of audio. pyannote slides by 1 s (90 % overlap, ten windows
// over every frame). The default Step here is 10/3 s: every frame is seen
// by three windows, a third of pyannote's cost, and an odd number, so the
// averaged speaker count never falls on .5 (with two windows, 5 s, a
// frame where they disagree between one speaker and none rounds to none).
// Step 5 s is 1.5 times cheaper again; 10 s (no overlap) three times, with
// no averaging at all. Measured with random weights on 2 shared CPU cores
// the embedder takes seconds per window (see BenchmarkNeural10Min), so on
// a small CPU box Step is the knob that matters.
//
// Memory. Windows are slices of the caller's audio (only the padded last
// one is a copy); one batch of Segmenter outputs (Batch × 589 × 7 float32,
// 0.5 MB at 32), one window's fbank (about 1000 × 80 float32, 0.3 MB) and
// what the pipeline keeps for the whole audio: 3 bytes of activity per
// window frame, up to three 256-d embeddings per window, the clustering's
// n² float64 distances and per-cluster activations on the global frame
// grid. For 10 minutes at the default Step (179 windows): about 0.3 MB of
// activity, 0.5 MB of embeddings, 2.3 MB of distances (534 embeddings at
// most) and 2.3 MB of activations (16 clusters × 35,600 frames): under
// 10 MB besides the audio itself (38 MB of float32) and the networks'
// own buffers. With fake networks the whole run allocates 18 MB in all
// (BenchmarkFakes10Min).
package neural

import (
	"context"
	"errors"
	"fmt"
	"math"

	"boxd/engine/diarize"
)

// Segmentation frame timing of pyannote segmentation-3.0 on a 10 s window
// at 16 kHz. Its SincNet front end is a stride-10 sinc convolution (kernel
// 251) followed by three max-pools of 3, with two kernel-5 convolutions
// without padding in between: 160000 samples give 15975, 5325, 5321,
// 1773, 1769 and finally 589 frames. One frame steps 10·3·3·3 = 270
// samples (0.016875 s) and sees 991 samples (0.0619375 s), the receptive
// field pyannote uses as the frame grid of speaker counting and
// reconstruction.
const (
	WindowSamples   = 10 * diarize.SampleRate // samples in a segmentation window (10 s)
	FramesPerWindow = 589                     // segmentation frames per window
	FrameStepSample = 270                     // samples between segmentation frames
	FrameSizeSample = 991                     // samples one segmentation frame sees
	LocalSpeakers   = 3                       // local speakers per window
	PowersetClasses = 7                       // {}, {0}, {1}, {2}, {0,1}, {0,2}, {1,2}

	// FrameStep and FrameDuration are the frame timing in seconds.
	FrameStep     = float64(FrameStepSample) / diarize.SampleRate // 0.016875 s
	FrameDuration = float64(FrameSizeSample) / diarize.SampleRate // 0.0619375 s
)

// powerset lists the local speakers of each powerset class, in the order
// of the Segmenter's output.
var powerset = [PowersetClasses][]int{{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}}

// Segmenter is pyannote segmentation-3.0 (package segnet): windows of
// exactly WindowSamples samples in; per window, frame-major powerset
// log-probabilities, FramesPerWindow × PowersetClasses values, out.
type Segmenter interface {
	Segment(ctx context.Context, windows [][]float32) ([][]float32, error)
}

// Embedder is WeSpeaker ResNet34 (package embnet): one trunk pass over a
// window's fbank features, one embedding per mask (a weight per fbank
// frame).
type Embedder interface {
	EmbedMasks(ctx context.Context, feats [][]float32, masks [][]float32) ([][]float32, error)
}

// DefaultName is the model name Name reports unless Config.Name is set.
const DefaultName = "pyannote-segmentation-3.0+wespeaker-resnet34"

// Config tunes the pipeline. The zero value of each field means its
// default; MinDurationOn and MinDurationOff take a negative value to mean
// zero (off).
type Config struct {
	// Name is the model name Name reports. Default DefaultName.
	Name string
	// Step is the time between window starts in seconds, in (0, 10].
	// Default 10/3 (see the package doc for the cost trade-off).
	Step float64
	// Batch is how many windows go to the Segmenter at once. Default 32.
	Batch int
	// Threshold is the average-linkage cosine distance at which
	// clustering stops merging. Default 0.6.
	//
	// pyannote 3.1 cuts a centroid-linkage dendrogram of unit-normalised
	// embeddings at a Euclidean distance of 0.7045654963945799, that is a
	// cosine distance of 0.70457²/2 = 0.248 between cluster means. Average
	// linkage measures 1 - mean pairwise cosine similarity instead, which
	// for unit vectors is 1 - <mean a, mean b>: the centroid distance plus
	// 1 - (|mean a|² + |mean b|²)/2, the clusters' own spread. WeSpeaker
	// embeddings of one speaker across windows have a mean cosine
	// similarity of about 0.65, so 0.248 + 0.35 ≈ 0.6. Untuned on real
	// data: tune it with the scorer on a labelled set.
	Threshold float64
	// MinActiveRatio is the share of a window's frames a local speaker
	// must talk alone for its embedding to take part in clustering (the
	// others are only assigned to the clusters found). Default 0.2, as
	// pyannote.
	MinActiveRatio float64
	// MinClusterSize is pyannote 3.1's min_cluster_size: clusters with
	// fewer embeddings (scaled down to 10 % of the embeddings on short
	// audio) give them to the nearest large cluster. Default 12.
	MinClusterSize int
	// MinDurationOn drops turns shorter than this many seconds. Default
	// 0.1 (pyannote: 0; a turn of a few 17 ms frames is noise to a
	// transcript).
	MinDurationOn float64
	// MinDurationOff fills a speaker's gaps shorter than this many
	// seconds. Default 0.25 (pyannote: 0; a quarter-second pause does not
	// end a turn in a transcript).
	MinDurationOff float64
}

// Defaults.
const (
	DefaultStep           = 10.0 / 3
	DefaultBatch          = 32
	DefaultThreshold      = 0.6
	DefaultMinActiveRatio = 0.2
	DefaultMinClusterSize = 12
	DefaultMinDurationOn  = 0.1
	DefaultMinDurationOff = 0.25
)

// withDefaults fills the zero fields of c.
func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Step == 0 {
		c.Step = DefaultStep
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
	}
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
	if c.MinActiveRatio == 0 {
		c.MinActiveRatio = DefaultMinActiveRatio
	}
	if c.MinClusterSize == 0 {
		c.MinClusterSize = DefaultMinClusterSize
	}
	switch {
	case c.MinDurationOn == 0:
		c.MinDurationOn = DefaultMinDurationOn
	case c.MinDurationOn < 0:
		c.MinDurationOn = 0
	}
	switch {
	case c.MinDurationOff == 0:
		c.MinDurationOff = DefaultMinDurationOff
	case c.MinDurationOff < 0:
		c.MinDurationOff = 0
	}
	return c
}

// check says what is wrong with c (after withDefaults), naming the field.
func (c Config) check() error {
	switch {
	case !(c.Step > 0 && c.Step <= 10):
		return fmt.Errorf("neural: step is %g s; it must be in (0, 10]", c.Step)
	case c.Batch < 1:
		return fmt.Errorf("neural: batch is %d; it must be at least 1", c.Batch)
	case !(c.Threshold > 0) || math.IsInf(c.Threshold, 0):
		return fmt.Errorf("neural: threshold is %g; it must be a positive number", c.Threshold)
	case !(c.MinActiveRatio > 0 && c.MinActiveRatio <= 1):
		return fmt.Errorf("neural: min active ratio is %g; it must be in (0, 1]", c.MinActiveRatio)
	case c.MinClusterSize < 1:
		return fmt.Errorf("neural: min cluster size is %d; it must be at least 1", c.MinClusterSize)
	case math.IsNaN(c.MinDurationOn) || math.IsInf(c.MinDurationOn, 0):
		return errors.New("neural: min duration on is not a number")
	case math.IsNaN(c.MinDurationOff) || math.IsInf(c.MinDurationOff, 0):
		return errors.New("neural: min duration off is not a number")
	}
	return nil
}

// Diarizer is the neural diarizer; it implements diarize.Diarizer. It
// keeps no state between calls, so it is safe for concurrent use when its
// Segmenter, Embedder and fbank are.
type Diarizer struct {
	seg   Segmenter
	emb   Embedder
	fbank func([]float32) [][]float32
	cfg   Config
}

var _ diarize.Diarizer = (*Diarizer)(nil)

// New returns the pipeline over seg, emb and fbank (embnet.Fbank: 10 ms
// fbank frames of a window's samples) with cfg's zero fields set to their
// defaults. A Config out of range makes Diarize fail, naming the field.
func New(seg Segmenter, emb Embedder, fbank func([]float32) [][]float32, cfg Config) *Diarizer {
	return &Diarizer{seg: seg, emb: emb, fbank: fbank, cfg: cfg.withDefaults()}
}

// Name is the model name final_transcript.model reports.
func (d *Diarizer) Name() string { return d.cfg.Name }

// Config is the configuration in use, defaults filled in.
func (d *Diarizer) Config() Config { return d.cfg }

// Diarize labels the speakers of pcm (16 kHz mono) within o's bounds.
func (d *Diarizer) Diarize(ctx context.Context, pcm []float32, o diarize.Options) (diarize.Result, error) {
	if err := o.Check(); err != nil {
		return diarize.Result{}, err
	}
	if err := d.cfg.check(); err != nil {
		return diarize.Result{}, err
	}
	if d.seg == nil || d.emb == nil || d.fbank == nil {
		return diarize.Result{}, errors.New("neural: segmenter, embedder and fbank are required")
	}
	if err := ctx.Err(); err != nil {
		return diarize.Result{}, err
	}
	if len(pcm) == 0 {
		return diarize.Result{Turns: []diarize.Turn{}}, nil
	}
	wins, err := d.analyse(ctx, pcm)
	if err != nil {
		return diarize.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return diarize.Result{}, err
	}
	clusters, k := d.assign(wins, o)
	if k == 0 {
		return diarize.Result{Turns: []diarize.Turn{}}, nil
	}
	binary, frames := reconstruct(wins, clusters, k, o.MaxSpeakers)
	duration := float64(len(pcm)) / diarize.SampleRate
	turns := toTurns(binary, frames, k, duration, d.cfg.MinDurationOn, d.cfg.MinDurationOff)
	return renumber(turns), nil
}
