package testmodels

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"boxd/engine/asr/melbank"
	"boxd/engine/models"
	"boxd/engine/models/convert"
	"boxd/engine/models/gguf"
	"boxd/engine/models/whisperbin"
)

// Whisper describes a random-weight Whisper model with the real tiny
// header, mel filter bank and vocabulary (read from the shared
// whisper-vocab-tiny*.bin files) and the real tensor names and shapes.
type Whisper struct {
	Name    string
	Seed    uint64
	English bool // tiny.en vocabulary (51864) instead of multilingual (51865)
	F16     bool // whisper.cpp's default types (F16 matrices) instead of all F32
	// Micro shrinks the network (width 64, 2 heads, one layer each side)
	// and keeps the real context sizes, filters and vocabulary: the same
	// code paths at a fraction of the compute, for tests of what sits on
	// top of the model (streaming, routes).
	Micro bool
	// Shape, when set, is one of Whisper's released sizes: "base" (width
	// 512, 8 heads, 6 + 6 layers) or "small" (768, 12 heads, 12 + 12), for
	// speed comparisons at those sizes; "" is tiny (384, 6, 4 + 4).
	Shape string
	// V3 switches to large-v3's front end and vocabulary: 128 mel bins and
	// 51866 tokens (the <|yue|> language added).
	V3 bool
	// TokenStd, above 0, is the standard deviation of the token embedding
	// (default 0.5). The output projection is the same matrix, so with
	// the default each token's own row dominates its logits and greedy
	// decoding repeats the first token; a small one lets the audio and the
	// context choose, and the text varies.
	TokenStd float64
}

// TinyWhisper is the default: multilingual, all F32 (so a float64
// reference agrees closely).
func TinyWhisper() Whisper { return Whisper{Name: "boxd-tiny-whisper", Seed: 11} }

// Whisper file names MakeWhisper writes.
const (
	WhisperBin     = "tiny-whisper.bin"
	WhisperGGUF    = "tiny-whisper.gguf"
	WhisperF16Bin  = "tiny-whisper-f16.bin"
	WhisperF16GGUF = "tiny-whisper-f16.gguf"
	WhisperENGGUF  = "tiny-whisper-en.gguf"
	// WhisperMicroGGUF is the Micro model (real vocabulary and contexts,
	// width 64, one layer) for tests that need a fast Whisper.
	WhisperMicroGGUF = "micro-whisper.gguf"
	// WhisperMicroV3GGUF is the Micro model with large-v3's 128 mel bins
	// and 51866-token vocabulary.
	WhisperMicroV3GGUF = "micro-whisper-v3.gguf"
)

// WhisperModel builds the random-weight model on top of a vocabulary-only
// whisper.cpp file (its header, filters and vocabulary).
func WhisperModel(vocabFile string, s Whisper) (*whisperbin.Model, error) {
	m, err := whisperbin.ReadFile(vocabFile)
	if err != nil {
		return nil, err
	}
	if len(m.Tensors) != 0 {
		return nil, fmt.Errorf("testmodels: %s already has tensors", vocabFile)
	}
	h := &m.HParams
	h.FType = 0
	if s.Micro {
		h.NAudioState, h.NTextState, h.NAudioHead, h.NTextHead, h.NAudioLayer, h.NTextLayer = 64, 64, 2, 2, 1, 1
	}
	switch s.Shape {
	case "":
	case "base":
		h.NAudioState, h.NTextState, h.NAudioHead, h.NTextHead, h.NAudioLayer, h.NTextLayer = 512, 512, 8, 8, 6, 6
	case "small":
		h.NAudioState, h.NTextState, h.NAudioHead, h.NTextHead, h.NAudioLayer, h.NTextLayer = 768, 768, 12, 12, 12, 12
	default:
		return nil, fmt.Errorf("testmodels: Whisper shape %q: use base or small (or none for tiny)", s.Shape)
	}
	if s.V3 {
		h.NMels, h.NVocab = 128, 51866
		m.FilterMels, m.Filters = 128, melbank.Slaney(128)
	}
	if s.F16 {
		h.FType = 1
	}
	S, M, V := int(h.NAudioState), int(h.NMels), int(h.NVocab)
	A, T := int(h.NAudioCtx), int(h.NTextCtx)
	g := newRNG(s.Seed)
	add := func(name string, f16 bool, values []float32, dims ...int) error {
		typ := gguf.F32
		if f16 && s.F16 {
			typ = gguf.F16
		}
		data, err := gguf.Encode(typ, values)
		if err != nil {
			return err
		}
		d := make([]int32, len(dims))
		for i, x := range dims {
			d[i] = int32(x)
		}
		m.Tensors = append(m.Tensors, whisperbin.Tensor{Name: name, Type: int32(typ), Dims: d, Data: data})
		return nil
	}
	linear := func(name string, in, out int, bias bool) error {
		if err := add(name+".weight", true, g.normal(in*out, 0.8/math.Sqrt(float64(in))), in, out); err != nil {
			return err
		}
		if bias {
			return add(name+".bias", false, g.normal(out, 0.02), out)
		}
		return nil
	}
	norm := func(name string) error {
		w := g.normal(S, 0.1)
		for i := range w {
			w[i]++
		}
		if err := add(name+".weight", false, w, S); err != nil {
			return err
		}
		return add(name+".bias", false, g.normal(S, 0.1), S)
	}
	block := func(p string, cross bool) error {
		steps := []func() error{
			func() error { return linear(p+"attn.query", S, S, true) },
			func() error { return linear(p+"attn.key", S, S, false) },
			func() error { return linear(p+"attn.value", S, S, true) },
			func() error { return linear(p+"attn.out", S, S, true) },
			func() error { return norm(p + "attn_ln") },
		}
		if cross {
			steps = append(steps,
				func() error { return linear(p+"cross_attn.query", S, S, true) },
				func() error { return linear(p+"cross_attn.key", S, S, false) },
				func() error { return linear(p+"cross_attn.value", S, S, true) },
				func() error { return linear(p+"cross_attn.out", S, S, true) },
				func() error { return norm(p + "cross_attn_ln") },
			)
		}
		steps = append(steps,
			func() error { return linear(p+"mlp.0", S, 4*S, true) },
			func() error { return linear(p+"mlp.2", 4*S, S, true) },
			func() error { return norm(p + "mlp_ln") },
		)
		for _, f := range steps {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}
	// Encoder, in state_dict order.
	if err := add("encoder.positional_embedding", false, sinusoids(A, S), S, A); err != nil {
		return nil, err
	}
	if err := add("encoder.conv1.weight", true, g.normal(3*M*S, 0.8/math.Sqrt(float64(3*M))), 3, M, S); err != nil {
		return nil, err
	}
	if err := add("encoder.conv1.bias", false, g.normal(S, 0.02), 1, S); err != nil {
		return nil, err
	}
	if err := add("encoder.conv2.weight", true, g.normal(3*S*S, 0.8/math.Sqrt(float64(3*S))), 3, S, S); err != nil {
		return nil, err
	}
	if err := add("encoder.conv2.bias", false, g.normal(S, 0.02), 1, S); err != nil {
		return nil, err
	}
	for l := range int(h.NAudioLayer) {
		if err := block(fmt.Sprintf("encoder.blocks.%d.", l), false); err != nil {
			return nil, err
		}
	}
	if err := norm("encoder.ln_post"); err != nil {
		return nil, err
	}
	// Decoder.
	if err := add("decoder.positional_embedding", false, g.normal(T*S, 0.02), S, T); err != nil {
		return nil, err
	}
	tokStd := 0.5
	if s.TokenStd > 0 {
		tokStd = s.TokenStd
	}
	if err := add("decoder.token_embedding.weight", true, g.normal(V*S, tokStd), S, V); err != nil {
		return nil, err
	}
	for l := range int(h.NTextLayer) {
		if err := block(fmt.Sprintf("decoder.blocks.%d.", l), true); err != nil {
			return nil, err
		}
	}
	if err := norm("decoder.ln"); err != nil {
		return nil, err
	}
	return m, nil
}

// sinusoids is Whisper's encoder position table: row t holds
// sin(t·inv[i]) for i < S/2, then cos(t·inv[i]), inv[i] = exp(-i·ln(10000)/(S/2-1)).
func sinusoids(length, channels int) []float32 {
	half := channels / 2
	out := make([]float32, length*channels)
	inc := math.Log(10000) / float64(half-1)
	for t := range length {
		for i := range half {
			a := float64(t) * math.Exp(-inc*float64(i))
			out[t*channels+i] = float32(math.Sin(a))
			out[t*channels+half+i] = float32(math.Cos(a))
		}
	}
	return out
}

// WriteWhisper writes the model as a whisper.cpp file (bin, if not "") and
// as GGUF (gg, if not "").
func WriteWhisper(vocabFile, bin, gg string, s Whisper) error {
	m, err := WhisperModel(vocabFile, s)
	if err != nil {
		return err
	}
	if bin != "" {
		if err := m.WriteFile(bin); err != nil {
			return err
		}
	}
	if gg != "" {
		w, err := convert.WhisperGGUF(m, s.Name)
		if err != nil {
			return err
		}
		w.Set(models.RandomWeightsKey, true) // generated: random weights, noise out
		return write(gg, w)
	}
	return nil
}

// MakeWhisper writes the Whisper test models into dir, reading the
// vocabulary files from sharedDir.
func MakeWhisper(sharedDir, dir string) ([]string, error) {
	ml := filepath.Join(sharedDir, "whisper-vocab-tiny.bin")
	en := filepath.Join(sharedDir, "whisper-vocab-tiny.en.bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, job := range []struct {
		vocab, bin, gg string
		spec           Whisper
	}{
		{ml, WhisperBin, WhisperGGUF, TinyWhisper()},
		{ml, WhisperF16Bin, WhisperF16GGUF, Whisper{Name: "boxd-tiny-whisper-f16", Seed: 11, F16: true}},
		{en, "", WhisperENGGUF, Whisper{Name: "boxd-tiny-whisper-en", Seed: 12, English: true}},
		{ml, "", WhisperMicroGGUF, Whisper{Name: "boxd-micro-whisper", Seed: 13, Micro: true}},
		{ml, "", WhisperMicroV3GGUF, Whisper{Name: "boxd-micro-whisper-v3", Seed: 14, Micro: true, V3: true}},
	} {
		bin := ""
		if job.bin != "" {
			bin = filepath.Join(dir, job.bin)
		}
		gg := filepath.Join(dir, job.gg)
		if err := WriteWhisper(job.vocab, bin, gg, job.spec); err != nil {
			return nil, err
		}
		if bin != "" {
			out = append(out, bin)
		}
		out = append(out, gg)
	}
	return out, nil
}

// WhisperFiles returns the model s as a whisper.cpp file (.bin) and as
// GGUF, written on first use into GeneratedDir() as s.Name.bin and
// s.Name.gguf (so each spec needs its own name). It builds on the shared
// vocabulary files and skips or fails as Shared does without them.
func WhisperFiles(tb testing.TB, s Whisper) (bin, gg string) {
	tb.Helper()
	vocab := "whisper-vocab-tiny.bin"
	if s.English {
		vocab = "whisper-vocab-tiny.en.bin"
	}
	vocabFile := Shared(tb, vocab)
	generateMu.Lock()
	defer generateMu.Unlock()
	dir := GeneratedDir()
	bin, gg = filepath.Join(dir, s.Name+".bin"), filepath.Join(dir, s.Name+".gguf")
	_, errB := os.Stat(bin)
	_, errG := os.Stat(gg)
	if errB == nil && errG == nil {
		return bin, gg
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	// Through temporary names, so that a concurrent test process never
	// reads a partial file.
	tmpB, tmpG := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid()), fmt.Sprintf("%s.%d.tmp", gg, os.Getpid())
	defer os.Remove(tmpB)
	defer os.Remove(tmpG)
	if err := WriteWhisper(vocabFile, tmpB, tmpG, s); err != nil {
		tb.Fatalf("generate Whisper test model %s: %v", s.Name, err)
	}
	if err := os.Rename(tmpB, bin); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmpG, gg); err != nil {
		tb.Fatal(err)
	}
	return bin, gg
}
