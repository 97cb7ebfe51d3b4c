// Package embnet is the speaker-embedding network of boxd's neural
// diarizer: WeSpeaker's ResNet34 (the checkpoint pyannote publishes as
// pyannote/wespeaker-voxceleb-resnet34-LM, file pytorch_model.bin,
// CC-BY-4.0) run in Go on ggml through ollama's ml API, the backend of the
// Whisper engine (CPU, or CUDA when a GPU backend is present).
//
// Why this network: it is the embedding pyannote's speaker-diarization-3.1
// and community-1 pipelines pair with segmentation-3.0, so the pair's
// published thresholds and behaviour carry over; and it is convolutions,
// batch norms and a linear layer, which map straight onto ggml's Conv2D and
// matrix products.
//
// Front end (Fbank): torchaudio's Kaldi fbank as pyannote calls it: samples
// scaled by 2^15, 25 ms frames every 10 ms, DC offset removed,
// pre-emphasis 0.97, Hamming window (pyannote's WeSpeakerResNet34 default,
// saved with the checkpoint, and WeSpeaker's training window), 512-point
// power spectrum, 80 mel bins from 20 Hz to 8 kHz, log floored at float32's
// epsilon, no dither; then each bin's mean over time is subtracted.
//
// Network, on the fbank as a one-channel image (frequency x time): conv
// 3x3 1->32 with batch norm and ReLU; four stages of BasicBlocks (3x3 conv,
// BN, ReLU, 3x3 conv, BN, plus the input or a 1x1 conv+BN shortcut where
// the shape changes, ReLU) with 32, 64, 128 and 256 channels, 3, 4, 6 and 3
// blocks, strides 1, 2, 2, 2 (both axes); TSTP pooling: the mean and
// standard deviation over time of the 256 x 10 channel-frequency features
// (5120 numbers), weighted by per-frame weights as pyannote's StatsPool
// does (unbiased: the sum of squares over v1 - v2/v1, v1 and v2 the sums of
// the weights and of their squares, with its 1e-8 terms; the weights are
// resampled to the network's frames by nearest neighbour); seg_1, a linear
// layer 5120->256, gives the embedding (not normalised; the checkpoint has
// one embedding layer, no seg_2). The batch norms are folded into the
// convolutions when the checkpoint is converted (running statistics, eps
// 1e-5); the pooling runs in Go in float64 over the trunk's output.
//
// Tolerance: on random weights of the real shapes and 1 s of audio (three
// masks), the ggml path (float32) agrees with a float64 reference written
// from the architecture (reference_test.go) to cosine similarity >=
// 0.99999 and max |difference| <= 1e-4 of the largest |value| (reached on
// the CPU: 1 - cosine 1.3e-13, max relative difference 6.8e-7). The front end
// agrees with a direct DFT calculation to 2e-7.
//
// Speed: the network is about 47 GFLOP for a 10 s window (998 frames);
// EmbedMasks and EmbedChunks run it once per window and pool any number of
// masks over its output, so several speakers' embeddings of one window cost
// one pass (BenchmarkEmbed).
package embnet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/ollama/ollama/ml"
	_ "github.com/ollama/ollama/ml/backend" // registers the ggml backend

	"boxd/engine/models/gguf"
)

// Options say how to load a model.
type Options struct {
	// Threads for ggml's CPU work; 0 picks the number of CPUs. ggml's
	// threads spin while they wait for each other: on a machine other work
	// keeps busy, fewer threads than CPUs waste much less time.
	Threads int
	// GPU puts every layer on the first GPU when a GPU backend is loaded.
	GPU bool
	// Batch is how many sequences of one length run through the network
	// in one graph (0: 16 on a GPU, 2 on the CPU).
	Batch int
}

// Model is a loaded WeSpeaker ResNet34. Its methods are safe for
// concurrent use; graphs run one at a time.
type Model struct {
	mu        sync.Mutex // one graph at a time; b is nil once closed
	b         ml.Backend
	stem      conv
	blocks    []block
	outW      ml.Tensor // [5120, 256]
	outB      ml.Tensor // [256]
	batch     int
	offloaded bool
}

type conv struct {
	w, b   ml.Tensor // [k, k, in, out], [out]
	stride int
}

type block struct {
	c1, c2, sc conv // sc.w nil: identity shortcut
}

// Load reads a GGUF that ConvertFile wrote.
func Load(path string, o Options) (*Model, error) {
	f, err := gguf.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("embnet: %w", err)
	}
	if a := f.String("general.architecture"); a != Arch {
		return nil, fmt.Errorf("embnet: %s: %w (architecture %q, want %q; convert pytorch_model.bin with ConvertFile)", path, ErrNotResNet34, a, Arch)
	}
	u := func(k string) uint64 { v, _ := f.Uint(k); return v }
	ints := func(k string) []int32 { v, _ := f.Get(k); a, _ := v.([]int32); return a }
	if u(KeyBlockCount) != 1+nBlocks || u(KeyEmbedding) != Embedding || u(KeyMels) != NMels ||
		!slices.Equal(ints(KeyChannels), []int32{32, 64, 128, 256}) || !slices.Equal(ints(KeyBlocks), []int32{3, 4, 6, 3}) {
		return nil, fmt.Errorf("embnet: %s: %w: hyper-parameters differ from ResNet34's", path, ErrNotResNet34)
	}
	threads := o.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	b, offloaded, err := newBackend(path, ml.BackendParams{AllocMemory: true, NumThreads: threads}, o.GPU)
	if err != nil {
		return nil, fmt.Errorf("embnet: %w", err)
	}
	if err := b.Load(context.Background(), nil); err != nil {
		b.Close()
		return nil, fmt.Errorf("embnet: load weights: %w", err)
	}
	m := &Model{b: b, batch: o.Batch, offloaded: offloaded}
	if m.batch <= 0 {
		m.batch = 2
		if offloaded {
			m.batch = 16
		}
	}
	if err := m.bind(); err != nil {
		b.Close()
		return nil, fmt.Errorf("embnet: %s: %w", path, err)
	}
	return m, nil
}

// newBackend opens the ggml backend, with every layer on the first GPU
// when asked and there is one.
func newBackend(path string, params ml.BackendParams, gpu bool) (b ml.Backend, offloaded bool, err error) {
	defer func() {
		// The ggml backend panics when memory runs out.
		if r := recover(); r != nil {
			err = fmt.Errorf("backend: %v", r)
		}
	}()
	if gpu {
		probe, err := ml.NewBackend(path, ml.BackendParams{AllocMemory: false, NumThreads: params.NumThreads})
		if err == nil {
			devs := probe.BackendDevices()
			probe.Close()
			if len(devs) > 0 {
				layers := make([]int, nBlocks+2) // the stem, the blocks and the output
				for i := range layers {
					layers[i] = i
				}
				params.GPULayers = ml.GPULayersList{{DeviceID: devs[0].DeviceID, Layers: layers}}
				offloaded = true
			}
		}
	}
	b, err = ml.NewBackend(path, params)
	return b, offloaded, err
}

// Offloaded says whether the layers are on a GPU.
func (m *Model) Offloaded() bool { return m.offloaded }

func (m *Model) bind() error {
	var errs []error
	get := func(name string, shape ...int) ml.Tensor {
		t := m.b.Get(name)
		switch {
		case t == nil:
			errs = append(errs, fmt.Errorf("%w: no tensor %s", ErrNotResNet34, name))
		case !slices.Equal(t.Shape(), shape):
			errs = append(errs, fmt.Errorf("%w: %s has shape %v, want %v", ErrNotResNet34, name, t.Shape(), shape))
		}
		return t
	}
	cv := func(name string, k, in, out, stride int) conv {
		return conv{w: get(name+".weight", k, k, in, out), b: get(name+".bias", out), stride: stride}
	}
	m.stem = cv("blk.0.conv", 3, 1, baseCh, 1)
	for i, s := range blockSpecs() {
		p := fmt.Sprintf("blk.%d.", i+1)
		blk := block{c1: cv(p+"conv1", 3, s.in, s.out, s.str), c2: cv(p+"conv2", 3, s.out, s.out, 1)}
		if s.shortcut() {
			blk.sc = cv(p+"shortcut", 1, s.in, s.out, s.str)
		}
		m.blocks = append(m.blocks, blk)
	}
	m.outW = get("output.weight", statsDim, Embedding)
	m.outB = get("output.bias", Embedding)
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// Close frees the model; later calls fail.
func (m *Model) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.b != nil {
		m.b.Close()
		m.b = nil
	}
}

var errClosed = errors.New("embnet: model closed")

// Chunk is one window's fbank (frames of NMels, as Fbank returns) and the
// weights of the embeddings wanted from it: one embedding per mask, each
// mask any number of per-frame weights in [0, 1] (pyannote passes a local
// speaker's activity at the segmentation model's frame rate), resampled to
// the network's frames by nearest neighbour; a nil mask weighs every frame
// 1 (an empty one too). No masks: one embedding of the whole chunk.
type Chunk struct {
	Feats [][]float32
	Masks [][]float32
}

// Embed returns one 256-dim embedding per sequence: feats[i] is a fbank
// sequence flattened frame by frame (frames x NMels, as Flatten(Fbank(pcm))
// gives), weights[i] its per-frame weights (nil, or weights nil: every
// frame weighs 1). Sequences of one length run through the network
// together, Options.Batch at a time; lengths are not padded to each other,
// since padding would change the convolutions near the end.
func (m *Model) Embed(ctx context.Context, feats [][]float32, weights [][]float32) ([][]float32, error) {
	if weights != nil && len(weights) != len(feats) {
		return nil, fmt.Errorf("embnet: %d weight sequences for %d fbank sequences", len(weights), len(feats))
	}
	chunks := make([]chunk, len(feats))
	for i, f := range feats {
		if len(f) == 0 || len(f)%NMels != 0 {
			return nil, fmt.Errorf("embnet: fbank sequence %d has %d values, not a positive multiple of %d", i, len(f), NMels)
		}
		chunks[i] = chunk{flat: f, frames: len(f) / NMels, masks: [][]float32{nil}}
		if weights != nil {
			chunks[i].masks[0] = weights[i]
		}
	}
	out, err := m.embed(ctx, chunks)
	if err != nil {
		return nil, err
	}
	embs := make([][]float32, len(out))
	for i, e := range out {
		embs[i] = e[0]
	}
	return embs, nil
}

// EmbedMasks runs the network once over feats (frames of NMels, as Fbank
// returns) and pools it once per mask: one embedding per mask (see Chunk).
func (m *Model) EmbedMasks(ctx context.Context, feats [][]float32, masks [][]float32) ([][]float32, error) {
	out, err := m.EmbedChunks(ctx, []Chunk{{Feats: feats, Masks: masks}})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// EmbedPCM is EmbedMasks on Fbank(pcm): weights are per fbank frame (or
// any rate: see Chunk).
func (m *Model) EmbedPCM(ctx context.Context, pcm []float32, weights [][]float32) ([][]float32, error) {
	feats := Fbank(pcm)
	if len(feats) == 0 {
		return nil, fmt.Errorf("embnet: %d samples is shorter than one fbank frame (%d)", len(pcm), FrameLength)
	}
	return m.EmbedMasks(ctx, feats, weights)
}

// EmbedChunks embeds several windows, each with its masks: out[i][j] is
// chunk i's embedding under mask j. Windows of one length run through the
// network together, Options.Batch at a time.
func (m *Model) EmbedChunks(ctx context.Context, chunks []Chunk) ([][][]float32, error) {
	cs := make([]chunk, len(chunks))
	for i, c := range chunks {
		if len(c.Feats) == 0 {
			return nil, fmt.Errorf("embnet: chunk %d has no fbank frames", i)
		}
		flat, err := flatten(c.Feats)
		if err != nil {
			return nil, fmt.Errorf("embnet: chunk %d: %w", i, err)
		}
		cs[i] = chunk{flat: flat, frames: len(c.Feats), masks: c.Masks}
		if len(c.Masks) == 0 {
			cs[i].masks = [][]float32{nil}
		}
	}
	return m.embed(ctx, cs)
}

// Flatten lays fbank frames end to end (the form Embed takes).
func Flatten(feats [][]float32) []float32 {
	out, _ := flatten(feats)
	return out
}

func flatten(feats [][]float32) ([]float32, error) {
	out := make([]float32, 0, len(feats)*NMels)
	for t, f := range feats {
		if len(f) != NMels {
			return nil, fmt.Errorf("fbank frame %d has %d bins, want %d", t, len(f), NMels)
		}
		out = append(out, f...)
	}
	return out, nil
}

// chunk is a fbank sequence flattened frame-major, and its masks.
type chunk struct {
	flat   []float32
	frames int
	masks  [][]float32
}

// embed runs the trunk over the chunks, in batches of equal length, pools
// every mask in float64 and runs seg_1 over all the pooled statistics in
// one graph.
func (m *Model) embed(ctx context.Context, cs []chunk) ([][][]float32, error) {
	byLen := map[int][]int{}
	var lens []int
	for i, c := range cs {
		if _, ok := byLen[c.frames]; !ok {
			lens = append(lens, c.frames)
		}
		byLen[c.frames] = append(byLen[c.frames], i)
	}
	stats := make([][][]float32, len(cs)) // chunk, mask: 5120 numbers
	nStats := 0
	for _, T := range lens {
		idx := byLen[T]
		for from := 0; from < len(idx); from += m.batch {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			part := idx[from:min(len(idx), from+m.batch)]
			seqs := make([][]float32, len(part))
			for j, i := range part {
				seqs[j] = cs[i].flat
			}
			out, tOut, err := m.trunk(seqs, T)
			if err != nil {
				return nil, err
			}
			per := len(out) / len(part)
			for j, i := range part {
				feat := out[j*per : (j+1)*per]
				for _, mask := range cs[i].masks {
					stats[i] = append(stats[i], pool(feat, tOut, mask))
					nStats++
				}
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	flat := make([]float32, 0, nStats*statsDim)
	for _, s := range stats {
		for _, v := range s {
			flat = append(flat, v...)
		}
	}
	embs, err := m.project(flat, nStats)
	if err != nil {
		return nil, err
	}
	out := make([][][]float32, len(cs))
	k := 0
	for i, s := range stats {
		out[i] = make([][]float32, len(s))
		for j := range s {
			out[i][j] = embs[k*Embedding : (k+1)*Embedding : (k+1)*Embedding]
			k++
		}
	}
	return out, nil
}

// run builds and computes one graph.
func (m *Model) run(build func(ctx ml.Context) ml.Tensor) (out []float32, shape []int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.b == nil {
		return nil, nil, errClosed
	}
	ctx := m.b.NewContext()
	defer ctx.Close()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("embnet: compute: %v", r)
		}
	}()
	t := build(ctx)
	ctx.Forward(t).Compute(t)
	return t.Floats(), t.Shape(), nil
}

func (c conv) forward(ctx ml.Context, x ml.Tensor) ml.Tensor {
	k := c.w.Dim(0)
	y := c.w.Conv2D(ctx, x, c.stride, c.stride, k/2, k/2, 1, 1)
	return y.Add(ctx, c.b.Reshape(ctx, 1, 1, c.b.Dim(0), 1))
}

// trunk runs the convolutions over sequences of T frames and returns the
// last stage's output, sequence by sequence [256][10][T'] (time fastest),
// and T'.
func (m *Model) trunk(seqs [][]float32, T int) ([]float32, int, error) {
	// ggml's image is [W=time, H=frequency, C=1, N]: transpose each
	// frame-major sequence.
	in := make([]float32, len(seqs)*T*NMels)
	for n, s := range seqs {
		dst := in[n*T*NMels:]
		for t := range T {
			for f := range NMels {
				dst[f*T+t] = s[t*NMels+f]
			}
		}
	}
	out, shape, err := m.run(func(ctx ml.Context) ml.Tensor {
		x := ctx.Input().FromFloats(in, T, NMels, 1, len(seqs))
		x = m.stem.forward(ctx, x).RELU(ctx)
		for _, b := range m.blocks {
			h := b.c1.forward(ctx, x).RELU(ctx)
			h = b.c2.forward(ctx, h)
			sc := x
			if b.sc.w != nil {
				sc = b.sc.forward(ctx, x)
			}
			x = h.Add(ctx, sc).RELU(ctx)
		}
		return x
	})
	if err != nil {
		return nil, 0, err
	}
	if len(shape) < 3 || shape[1] != NMels/8 || shape[2] != Embedding {
		return nil, 0, fmt.Errorf("embnet: trunk output of shape %v", shape)
	}
	return out, shape[0], nil
}

// project runs seg_1 over n pooled statistics.
func (m *Model) project(stats []float32, n int) ([]float32, error) {
	if n == 0 {
		return nil, nil
	}
	out, _, err := m.run(func(ctx ml.Context) ml.Tensor {
		s := ctx.Input().FromFloats(stats, statsDim, n)
		return m.outW.Mulmat(ctx, s).Add(ctx, m.outB)
	})
	return out, err
}

// pool is TSTP with pyannote's weighted statistics over one sequence's
// trunk output feat ([2560][T], time fastest): the weighted mean and the
// unbiased weighted standard deviation of each row, mask resampled to T
// frames by nearest neighbour (nil: every frame 1).
func pool(feat []float32, T int, mask []float32) []float32 {
	w := resample(mask, T)
	var v1, v2 float64
	for _, x := range w {
		v1 += x
		v2 += x * x
	}
	v1 += 1e-8
	den := v1 - v2/v1 + 1e-8
	rows := len(feat) / T
	out := make([]float32, 2*rows)
	for r := range rows {
		row := feat[r*T : (r+1)*T]
		var s float64
		for t, x := range row {
			s += float64(x) * w[t]
		}
		mean := s / v1
		var ss float64
		for t, x := range row {
			d := float64(x) - mean
			ss += d * d * w[t]
		}
		out[r] = float32(mean)
		out[rows+r] = float32(math.Sqrt(ss / den))
	}
	return out
}

// resample gives mask's weights at T frames as torch's nearest
// interpolation picks them: frame i takes weight floor(i * len/T) (the
// scale in float32, as torch computes it).
func resample(mask []float32, T int) []float64 {
	w := make([]float64, T)
	switch {
	case len(mask) == 0:
		for i := range w {
			w[i] = 1
		}
	case len(mask) == T:
		for i, x := range mask {
			w[i] = float64(x)
		}
	default:
		scale := float32(len(mask)) / float32(T)
		for i := range w {
			w[i] = float64(mask[min(int(float32(i)*scale), len(mask)-1)])
		}
	}
	return w
}
