// Package vad finds speech in 16 kHz audio: Silero VAD v6 run on ggml
// (Model, one State a stream), and its segmenting into spans of speech
// (Spans, and the streaming Segmenter), as silero-vad's
// get_speech_timestamps does.
package vad

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/ollama/ollama/ml"
	_ "github.com/ollama/ollama/ml/backend" // registers the ggml backend

	"boxd/engine/models/convert"
	"boxd/engine/models/gguf"
)

// Silero VAD v6 at 16 kHz: 512-sample windows (32 ms) with the previous
// 64 samples as context.
const (
	sampleRate  = 16000
	Window      = 512
	contextSize = 64
	hidden      = 128
)

// Model is Silero VAD run on ggml. It is safe for concurrent use; each
// stream keeps its own State.
type Model struct {
	mu                               sync.Mutex
	b                                ml.Backend
	enc                              [4]struct{ w, b ml.Tensor }
	stft, wih, whh, bih, bhh, wf, bf ml.Tensor
}

// State is one stream's recurrent state and context.
type State struct {
	h, c [hidden]float32
	ctx  [contextSize]float32
}

// Load loads Silero VAD from whisper.cpp's ggml-silero-*.bin (converted
// to a GGUF in the system temp directory on first use) or from a GGUF that
// boxd models convert wrote.
func Load(path string) (*Model, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vad: %w", err)
	}
	gpath := path
	if !bytes.HasPrefix(raw, []byte(gguf.Magic)) {
		s, err := convert.ReadSilero(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("vad: %w", err)
		}
		sum := sha256.Sum256(raw)
		gpath = filepath.Join(os.TempDir(), "boxd-vad-"+hex.EncodeToString(sum[:8])+".gguf")
		if _, err := os.Stat(gpath); err != nil {
			w, err := convert.SileroGGUF(s)
			if err != nil {
				return nil, err
			}
			if err := w.WriteFile(gpath); err != nil {
				return nil, err
			}
		}
	}
	f, err := gguf.ReadFile(gpath)
	if err != nil {
		return nil, fmt.Errorf("vad: %w", err)
	}
	if f.String("general.architecture") != convert.ArchSilero {
		return nil, fmt.Errorf("vad: %s is not a Silero VAD model (want whisper.cpp's ggml-silero-v6.2.0.bin or its GGUF from boxd models convert)", path)
	}
	b, err := ml.NewBackend(gpath, ml.BackendParams{AllocMemory: true, NumThreads: 1})
	if err != nil {
		return nil, fmt.Errorf("vad: %w", err)
	}
	if err := b.Load(context.Background(), nil); err != nil {
		b.Close()
		return nil, fmt.Errorf("vad: %w", err)
	}
	v := &Model{b: b}
	var missing []string
	get := func(name string) ml.Tensor {
		t := b.Get(name)
		if t == nil {
			missing = append(missing, name)
		}
		return t
	}
	for i := range 4 {
		v.enc[i].w = get(fmt.Sprintf("_model.encoder.%d.reparam_conv.weight", i))
		v.enc[i].b = get(fmt.Sprintf("_model.encoder.%d.reparam_conv.bias", i))
	}
	v.stft = get("_model.stft.forward_basis_buffer")
	v.wih, v.whh = get("_model.decoder.rnn.weight_ih"), get("_model.decoder.rnn.weight_hh")
	v.bih, v.bhh = get("_model.decoder.rnn.bias_ih"), get("_model.decoder.rnn.bias_hh")
	v.wf, v.bf = get("_model.decoder.decoder.2.weight"), get("_model.decoder.decoder.2.bias")
	if len(missing) > 0 {
		b.Close()
		return nil, fmt.Errorf("vad: missing tensors %v", missing)
	}
	return v, nil
}

// Close frees the model.
func (v *Model) Close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.b != nil {
		v.b.Close()
		v.b = nil
	}
}

// Reset clears a stream's state.
func (s *State) Reset() { *s = State{} }

// Prob returns the speech probability of one 512-sample window and
// advances the stream's state: the window follows its 64 samples of context
// and is reflect-padded by 64 on the right (Silero's own scheme), an STFT
// as a convolution, four convolutions, an LSTM cell and a sigmoid.
func (v *Model) Prob(st *State, window []float32) (p float32, err error) {
	if len(window) != Window {
		return 0, fmt.Errorf("asr: vad window of %d samples, want %d", len(window), Window)
	}
	x := make([]float32, 0, contextSize+Window+contextSize)
	x = append(x, st.ctx[:]...)
	x = append(x, window...)
	n := len(x)
	for i := 1; i <= contextSize; i++ { // reflect, not repeating the edge
		x = append(x, x[n-1-i])
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.b == nil {
		return 0, errors.New("asr: vad closed")
	}
	ctx := v.b.NewContext()
	defer ctx.Close()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("vad: %v", r)
		}
	}()
	in := ctx.Input()
	sig := in.FromFloats(x, len(x), 1, 1, 1)
	// STFT: 258 filters of 256 taps, hop 128 -> [4, 1, 258].
	spec := v.stft.Reshape(ctx, 256, 1, 1, 258).Conv2D(ctx, sig, 128, 1, 0, 0, 1, 1)
	spec = spec.Reshape(ctx, 4, 258)
	re := spec.View(ctx, 0, 4, spec.Stride(1), 129)
	im := spec.View(ctx, 129*spec.Stride(1), 4, spec.Stride(1), 129)
	mag := re.Mul(ctx, re).Add(ctx, im.Mul(ctx, im)).Sqrt(ctx) // [4, 129]
	h := mag.Contiguous(ctx).Reshape(ctx, 4, 1, 129, 1)
	strides := [4]int{1, 2, 2, 1}
	for i, layer := range v.enc {
		k := layer.w
		cin, cout := k.Dim(1), k.Dim(2)
		h = k.Reshape(ctx, 3, 1, cin, cout).Conv2D(ctx, h, strides[i], 1, 1, 0, 1, 1)
		h = h.Add(ctx, layer.b.Reshape(ctx, 1, 1, cout, 1)).RELU(ctx)
	}
	feat := h.Reshape(ctx, hidden, 1)
	hPrev := in.FromFloats(st.h[:], hidden, 1)
	cPrev := in.FromFloats(st.c[:], hidden, 1)
	gates := v.wih.Mulmat(ctx, feat).Add(ctx, v.bih).Add(ctx, v.whh.Mulmat(ctx, hPrev)).Add(ctx, v.bhh) // [512, 1]
	gate := func(i int) ml.Tensor { return gates.View(ctx, i*hidden*gates.Stride(0), hidden) }
	ig, fg, gg, og := gate(0).Sigmoid(ctx), gate(1).Sigmoid(ctx), gate(2).Tanh(ctx), gate(3).Sigmoid(ctx)
	c := fg.Mul(ctx, cPrev.Reshape(ctx, hidden)).Add(ctx, ig.Mul(ctx, gg))
	// Tanh, ReLU and sigmoid work in place on ggml: act on copies where the
	// input is needed again (c and h are the carried state).
	hNew := og.Mul(ctx, c.Duplicate(ctx).Tanh(ctx))
	logit := v.wf.Reshape(ctx, hidden, 1).Mulmat(ctx, hNew.Duplicate(ctx).RELU(ctx).Reshape(ctx, hidden, 1)).Add(ctx, v.bf)
	prob := logit.Sigmoid(ctx).Reshape(ctx, 1)
	out := prob.Concat(ctx, hNew, 0).Concat(ctx, c, 0) // [1 + 128 + 128]
	ctx.Forward(out).Compute(out)
	vals := out.Floats()
	copy(st.h[:], vals[1:1+hidden])
	copy(st.c[:], vals[1+hidden:])
	copy(st.ctx[:], window[Window-contextSize:])
	return vals[0], nil
}

// Probs runs a fresh state over audio in 512-sample windows (the last one
// zero-padded) and returns one probability per window.
func (v *Model) Probs(pcm []float32) ([]float32, error) {
	var st State
	out := make([]float32, 0, (len(pcm)+Window-1)/Window)
	win := make([]float32, Window)
	for off := 0; off < len(pcm); off += Window {
		clear(win)
		copy(win, pcm[off:min(len(pcm), off+Window)])
		p, err := v.Prob(&st, win)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
