// Package asr is boxd's speech recogniser: Whisper implemented in Go on
// ggml's tensor API (the same runtime as the LLM): loading the model, the
// encoder and decoder graphs (and their CPU paths in package cpuenc),
// decoder steps batched across transcriptions, decoding (greedy, beam
// search, temperature fallback, timestamps, language detection) and
// Transcribe. Its parts without the model are sub-packages: the audio front
// end (frontend: WAV and PCM16 input, the log-mel spectrogram), the
// vocabulary (tokenizer), the decoding rules over logits (decoding), Silero
// VAD (vad) and streaming transcription (stream).
package asr

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/ml"
	_ "github.com/ollama/ollama/ml/backend" // registers the ggml backend

	"boxd/engine/asr/cpuenc"
	"boxd/engine/asr/frontend"
	"boxd/engine/asr/ggmlcpu"
	"boxd/engine/asr/tokenizer"
	"boxd/engine/models/convert"
	"boxd/engine/models/gguf"
)

// HParams are a Whisper model's dimensions.
type HParams struct {
	NVocab      int
	NAudioCtx   int // 1500 encoder positions
	NAudioState int
	NAudioHead  int
	NAudioLayer int
	NTextCtx    int // 448 decoder positions
	NTextState  int
	NTextHead   int
	NTextLayer  int
	NMels       int
}

// Options say how to load a model.
type Options struct {
	// Threads for CPU work; 0 picks the number of CPUs.
	Threads int
	// GPULayers offloads this many layers when a GPU backend is loaded
	// (0: CPU only; -1: all).
	GPULayers int
	// Slots is how many transcriptions run at once, each with its own
	// caches, their decoder steps batched into one graph (0:
	// DefaultSlots). More wait for a free slot.
	Slots int
	// Flash says whether every attention runs as ggml's fused flash
	// attention (setting asr.flash_attention), the caches' values kept as
	// it reads them. Off, attention is the products and a softmax: faster
	// on the CPU, where ggml's kernel is slower than the encoder's own
	// products. FlashAuto turns it on when the layers are on a GPU.
	Flash Flash
	// placeAlways makes placeUnnumbered's copies without a GPU too (tests).
	placeAlways bool
	// unfused keeps the encoder's attention in one ggml graph on the CPU
	// too (tests compare the two); ggmlBlocks keeps the blocks' other work
	// in ggml, only the attention fused (encodeFused).
	unfused, ggmlBlocks bool
	// ggmlDecoder keeps the decoder in ggml on the CPU too (tests compare
	// it with cpuenc's).
	ggmlDecoder bool
	// fixedThreads keeps ggml's threads at Threads for every graph.
	fixedThreads bool
}

// Flash is the flash-attention choice. The zero value is off.
type Flash int

const (
	FlashOff  Flash = iota // products and a softmax
	FlashOn                // ggml's fused kernel, on the CPU too
	FlashAuto              // on when the layers are on a GPU, off on the CPU
)

// ParseFlash reads the setting's words: auto, on or off.
func ParseFlash(s string) (Flash, error) {
	switch s {
	case "auto":
		return FlashAuto, nil
	case "on":
		return FlashOn, nil
	case "off":
		return FlashOff, nil
	}
	return FlashOff, fmt.Errorf("asr: flash attention %q is not auto, on or off", s)
}

// resolve is the choice once it is known whether the layers are on a GPU.
func (f Flash) resolve(offloaded bool) bool {
	return f == FlashOn || (f == FlashAuto && offloaded)
}

// Model is a loaded Whisper model. Its methods are safe for concurrent use:
// up to Options.Slots transcriptions run at once, each on its own caches;
// computations on the backend run one at a time, and concurrent
// transcriptions' decoder steps run together (batch.go).
type Model struct {
	hp     HParams
	b      ml.Backend
	mel    *frontend.Mel
	tok    *tokenizer.Tokenizer
	path   string
	name   string
	exec   execLock      // one graph at a time on the backend
	free   chan struct{} // a token for each slot in use
	slotMu sync.Mutex
	inUse  []bool // by slot index
	closed atomic.Bool
	// padKeys pads the encoder's keys for the CPU's matrix kernel
	// (encoderAttention); a GPU's needs no padding.
	padKeys bool
	// flash: the backend was opened with flash attention, which every
	// attention uses (encoderAttention, cachedAttention).
	flash bool
	// fused: on the CPU, the encoder's self-attention runs as package
	// attn's fused kernel between ggml graphs (encodeFused), with threads
	// workers.
	fused   bool
	threads int
	// cpu, when set, runs the encoder's blocks in package cpuenc (its own
	// float32 copy of their weights): see encodeCPU.
	cpu *cpuenc.Encoder
	// ggmlThreads, when set, changes ggml's CPU threads between graphs
	// (useThreads); ggmlNow is its current count.
	ggmlThreads func(int)
	ggmlNow     int
	// out, when set, is the decoder's output projection on the CPU
	// (decode).
	out *cpuenc.Logits
	// dec, when set, is the decoder on the CPU (cpuenc.Decoder), with the
	// decoder's caches: see loadCPUDecoder.
	dec     *cpuenc.Decoder
	batch   *batcher
	caches  *caches
	placed  ml.Context // copies made by placeUnnumbered
	weights weights
	stats   stats
}

// Stats are a model's cumulative work since it was loaded: time in the
// log-mel front end, the encoder and the decoder (every decoder step and
// beam reorder), and the windows and decoder steps run.
type Stats struct {
	Mel, Encoder, Decoder time.Duration
	Windows, Steps        int64
}

type stats struct {
	mel, encode, decode atomic.Int64 // nanoseconds
	windows, steps      atomic.Int64
}

func (s *stats) add(d *atomic.Int64, since time.Time) { d.Add(int64(time.Since(since))) }

// Stats returns the work done so far.
func (m *Model) Stats() Stats {
	s := &m.stats
	return Stats{
		Mel: time.Duration(s.mel.Load()), Encoder: time.Duration(s.encode.Load()), Decoder: time.Duration(s.decode.Load()),
		Windows: s.windows.Load(), Steps: s.steps.Load(),
	}
}

// lnEps is Whisper's layer-norm epsilon.
const lnEps = 1e-5

// ErrNotWhisper is returned for a GGUF that is not a Whisper model.
var ErrNotWhisper = errors.New("asr: not a Whisper GGUF (convert whisper.cpp or Hugging Face files with boxd models convert)")

// Load reads a Whisper GGUF (boxd models convert) and its weights.
func Load(ctx context.Context, path string, o Options) (*Model, error) {
	f, err := gguf.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("asr: %w", err)
	}
	if f.String("general.architecture") != convert.ArchWhisper {
		return nil, fmt.Errorf("%w: architecture %q", ErrNotWhisper, f.String("general.architecture"))
	}
	u := func(key string) int {
		v, _ := f.Uint(key)
		return int(v)
	}
	hp := HParams{
		NVocab: u(convert.KeyVocabSize), NAudioCtx: u(convert.KeyAudioCtx), NAudioState: u(convert.KeyAudioState),
		NAudioHead: u(convert.KeyAudioHead), NAudioLayer: u(convert.KeyAudioLayer), NTextCtx: u(convert.KeyTextCtx),
		NTextState: u(convert.KeyTextState), NTextHead: u(convert.KeyTextHead), NTextLayer: u(convert.KeyTextLayer),
		NMels: u(convert.KeyMels),
	}
	if hp.NVocab == 0 || hp.NAudioState == 0 || hp.NAudioHead == 0 || hp.NTextHead == 0 || hp.NMels == 0 ||
		hp.NAudioState%hp.NAudioHead != 0 || hp.NTextState != hp.NAudioState || hp.NAudioCtx*2 != frontend.NFrames {
		return nil, fmt.Errorf("%w: hyper-parameters %+v", ErrNotWhisper, hp)
	}
	mel, err := frontend.NewMel(f.Floats(convert.KeyMelFilters), hp.NMels)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.New(f.Strings(convert.KeyTokens), hp.NVocab)
	if err != nil {
		return nil, err
	}
	threads := o.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	params := ml.BackendParams{AllocMemory: true, NumThreads: threads}
	b, offloaded, flash, err := newBackend(path, params, o.Flash, o.GPULayers, max(hp.NAudioLayer, hp.NTextLayer, 3))
	if err != nil {
		return nil, fmt.Errorf("asr: %w", err)
	}
	if err := b.Load(ctx, nil); err != nil {
		b.Close()
		return nil, fmt.Errorf("asr: load weights: %w", err)
	}
	m := &Model{hp: hp, b: b, mel: mel, tok: tok, path: path, name: f.String("general.name"), exec: make(execLock, 1)}
	if err := m.bind(); err != nil {
		b.Close()
		return nil, err
	}
	m.padKeys = !offloaded && !flash
	m.flash = flash
	m.fused = !offloaded && !flash && !o.unfused && cpuenc.Supported(hp.NAudioState/max(1, hp.NAudioHead))
	m.threads = threads
	slots := o.Slots
	if slots <= 0 {
		slots = DefaultSlots
	}
	fail := func(err error) (*Model, error) {
		if m.dec != nil {
			m.dec.Close()
		}
		b.Close()
		return nil, err
	}
	if m.fused && !o.ggmlDecoder {
		if err := m.loadCPUDecoder(slots); err != nil {
			return fail(err)
		}
	}
	if m.fused && !o.unfused && !o.ggmlBlocks {
		if err := m.loadCPUEncoder(); err != nil {
			return fail(err)
		}
		if m.cpu != nil && !o.fixedThreads {
			m.ggmlThreads, m.ggmlNow = ggmlcpu.Threads(b), threads
		}
	}
	if offloaded || o.placeAlways {
		if err := m.placeUnnumbered(); err != nil {
			return fail(err)
		}
	}
	m.caches = newCaches(m, slots)
	m.batch = newBatcher()
	m.free = make(chan struct{}, slots)
	m.inUse = make([]bool, slots)
	return m, nil
}

// newBackend opens the ggml backend, offloading layers to GPUs when asked
// and present.
func newBackend(path string, params ml.BackendParams, fl Flash, gpuLayers, blocks int) (b ml.Backend, offloaded, flash bool, err error) {
	defer func() {
		// The ggml backend panics when memory runs out.
		if r := recover(); r != nil {
			err = fmt.Errorf("backend: %v", r)
		}
	}()
	if gpuLayers != 0 {
		probe, err := ml.NewBackend(path, ml.BackendParams{AllocMemory: false, NumThreads: params.NumThreads})
		if err == nil {
			devs := probe.BackendDevices()
			probe.Close()
			if len(devs) > 0 {
				n := blocks + 1
				if gpuLayers > 0 {
					n = min(n, gpuLayers)
				}
				layers := make([]int, n)
				for i := range layers {
					layers[i] = blocks + 1 - n + i
				}
				params.GPULayers = ml.GPULayersList{{DeviceID: devs[0].DeviceID, Layers: layers}}
				offloaded = true
			}
		}
	}
	flash = fl.resolve(offloaded)
	params.FlashAttention = ml.FlashAttentionDisabled
	if flash {
		params.FlashAttention = ml.FlashAttentionEnabled
	}
	b, err = ml.NewBackend(path, params)
	return b, offloaded, flash, err
}

// placeUnnumbered copies the tensors whose names hold no layer number
// next to the layers that use them. The ggml backend places a tensor by
// the first number in its name and keeps the others on the CPU with the
// input, so with layers on a GPU every decoder step would multiply by the
// whole token embedding (51,865 rows) on the CPU, and the positional
// embeddings and the final layer norms would move activations between the
// devices. The token embedding stays where it is for the input lookup.
func (m *Model) placeUnnumbered() (err error) {
	defer func() {
		// The ggml backend panics when memory runs out.
		if r := recover(); r != nil {
			err = fmt.Errorf("asr: place tensors: %v", r)
		}
	}()
	ctx := m.b.NewContextSize(8)
	m.placed = ctx
	w := &m.weights
	firstEnc, lastEnc, lastDec := 0, max(0, m.hp.NAudioLayer-1), max(0, m.hp.NTextLayer-1)
	var copies []func(ml.Context) ml.Tensor
	place := func(t ml.Tensor, layer int) ml.Tensor {
		dst := ctx.Layer(layer).Empty(t.DType(), t.Shape()...)
		copies = append(copies, func(g ml.Context) ml.Tensor { return t.Copy(g, dst) })
		return dst
	}
	w.encPos = place(w.encPos, firstEnc)
	w.encLN = norm{w: place(w.encLN.w, lastEnc), b: place(w.encLN.b, lastEnc)}
	w.decPos = place(w.decPos, 0)
	w.decLN = norm{w: place(w.decLN.w, lastDec), b: place(w.decLN.b, lastDec)}
	w.outProj = place(w.tokEmb, lastDec)
	_, err = m.run(func(g ml.Context) ml.Tensor {
		for _, c := range copies {
			g.Forward(c(g))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("asr: copy tensors to the GPU: %w", err)
	}
	return nil
}

// HParams are the model's dimensions.
func (m *Model) HParams() HParams { return m.hp }

// Tokenizer is the model's tokenizer.
func (m *Model) Tokenizer() *tokenizer.Tokenizer { return m.tok }

// Mel is the model's front end.
func (m *Model) Mel() *frontend.Mel { return m.mel }

// FlashAttention says whether the attention runs as ggml's fused kernel
// (asr.flash_attention resolved: auto is on when the layers are on a GPU).
func (m *Model) FlashAttention() bool { return m.flash }

// Name is the model's general.name.
func (m *Model) Name() string { return m.name }

// Close frees the model once the transcriptions running finish; later
// ones fail.
func (m *Model) Close() {
	if m.free != nil {
		// Every slot's token: no transcription runs. Then they are given
		// back for the waiters, who find the model closed.
		for range cap(m.free) {
			m.free <- struct{}{}
		}
		m.closed.Store(true)
		defer func() {
			for range cap(m.free) {
				<-m.free
			}
		}()
	}
	m.exec.Lock()
	defer m.exec.Unlock()
	if m.caches != nil {
		m.caches.close()
		m.caches = nil
	}
	if m.dec != nil {
		m.dec.Close()
		m.dec = nil
	}
	if m.placed != nil {
		m.placed.Close()
		m.placed = nil
	}
	if m.b != nil {
		m.b.Close()
		m.b = nil
	}
}

// linear is a weight and an optional bias.
type linear struct{ w, b ml.Tensor }

func (l linear) forward(ctx ml.Context, x ml.Tensor) ml.Tensor {
	y := l.w.Mulmat(ctx, x)
	if l.b != nil {
		y = y.Add(ctx, l.b)
	}
	return y
}

type norm struct{ w, b ml.Tensor }

func (n norm) forward(ctx ml.Context, x ml.Tensor) ml.Tensor {
	return x.LayerNorm(ctx, n.w, n.b, lnEps)
}

type attnWeights struct {
	q, k, v, o linear
	ln         norm
}

type block struct {
	attn  attnWeights
	cross attnWeights // decoder only
	mlp0  linear
	mlp2  linear
	mlpLN norm
}

type weights struct {
	conv1w, conv1b, conv2w, conv2b ml.Tensor
	encPos                         ml.Tensor
	enc                            []block
	encLN                          norm
	tokEmb, decPos                 ml.Tensor
	dec                            []block
	decLN                          norm
	// outProj is the output projection: the token embedding, or its copy
	// beside the last decoder layer when layers are offloaded.
	outProj ml.Tensor
}

// bind looks every tensor up by its whisper.cpp name.
func (m *Model) bind() error {
	var missing []string
	get := func(name string, required bool) ml.Tensor {
		t := m.b.Get(name)
		if t == nil && required {
			missing = append(missing, name)
		}
		return t
	}
	lin := func(p string, bias bool) linear {
		l := linear{w: get(p+".weight", true)}
		if bias {
			l.b = get(p+".bias", true)
		}
		return l
	}
	nrm := func(p string) norm { return norm{w: get(p+".weight", true), b: get(p+".bias", true)} }
	attn := func(p, ln string) attnWeights {
		return attnWeights{q: lin(p+".query", true), k: lin(p+".key", false), v: lin(p+".value", true), o: lin(p+".out", true), ln: nrm(ln)}
	}
	w := &m.weights
	w.conv1w, w.conv1b = get("encoder.conv1.weight", true), get("encoder.conv1.bias", true)
	w.conv2w, w.conv2b = get("encoder.conv2.weight", true), get("encoder.conv2.bias", true)
	w.encPos = get("encoder.positional_embedding", true)
	for l := range m.hp.NAudioLayer {
		p := fmt.Sprintf("encoder.blocks.%d.", l)
		w.enc = append(w.enc, block{attn: attn(p+"attn", p+"attn_ln"), mlp0: lin(p+"mlp.0", true), mlp2: lin(p+"mlp.2", true), mlpLN: nrm(p + "mlp_ln")})
	}
	w.encLN = nrm("encoder.ln_post")
	w.tokEmb = get("decoder.token_embedding.weight", true)
	w.decPos = get("decoder.positional_embedding", true)
	for l := range m.hp.NTextLayer {
		p := fmt.Sprintf("decoder.blocks.%d.", l)
		w.dec = append(w.dec, block{attn: attn(p+"attn", p+"attn_ln"), cross: attn(p+"cross_attn", p+"cross_attn_ln"),
			mlp0: lin(p+"mlp.0", true), mlp2: lin(p+"mlp.2", true), mlpLN: nrm(p + "mlp_ln")})
	}
	w.decLN = nrm("decoder.ln")
	w.outProj = w.tokEmb
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing tensors %v", ErrNotWhisper, missing[:min(len(missing), 5)])
	}
	return nil
}
