package hfwhisper

import (
	"encoding/binary"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"boxd/engine/models/gguf"
	"boxd/engine/models/whisperbin"
)

// store is how whisper.cpp stores a tensor.
type store int

const (
	alwaysF32 store = iota // 1-D tensors, conv biases, positional embeddings
	matrix                 // linear and conv weights, token embedding: F16 in ftype 1
)

// spec is one tensor whisper.cpp expects.
type spec struct {
	hf    string  // Hugging Face name without the optional "model." prefix
	cpp   string  // whisper.cpp name
	shape []int64 // torch shape
	dims  []int32 // ggml dims (reversed torch shape; conv biases (1, D))
	store store
}

// perLayer maps Hugging Face layer suffixes to whisper.cpp's, in
// whisper.cpp's order. cross marks the decoder-only (cross-attention)
// ones: HF's "encoder_attn" is the decoder's attention over the encoder.
var perLayer = []struct {
	hf, cpp string
	cross   bool
}{
	{"self_attn.q_proj", "attn.query", false},
	{"self_attn.k_proj", "attn.key", false},
	{"self_attn.v_proj", "attn.value", false},
	{"self_attn.out_proj", "attn.out", false},
	{"self_attn_layer_norm", "attn_ln", false},
	{"encoder_attn.q_proj", "cross_attn.query", true},
	{"encoder_attn.k_proj", "cross_attn.key", true},
	{"encoder_attn.v_proj", "cross_attn.value", true},
	{"encoder_attn.out_proj", "cross_attn.out", true},
	{"encoder_attn_layer_norm", "cross_attn_ln", true},
	{"fc1", "mlp.0", false},
	{"fc2", "mlp.2", false},
	{"final_layer_norm", "mlp_ln", false},
}

// specs lists every tensor of the model the config describes, in
// whisper.cpp's (OpenAI state_dict) order.
func specs(c *config) []spec {
	D, M, V := c.DModel, c.NMels, c.NVocab
	A, T, F := c.AudioCtx, c.TextCtx, 4*c.DModel
	var out []spec
	add := func(hf, cpp string, st store, shape ...int64) {
		dims := make([]int32, len(shape))
		for i, d := range shape {
			dims[len(shape)-1-i] = int32(d)
		}
		if strings.HasSuffix(cpp, ".bias") && strings.HasPrefix(cpp, "encoder.conv") {
			dims = []int32{1, int32(D)} // torch [D] → [D, 1]: broadcasts over time
		}
		out = append(out, spec{hf: hf, cpp: cpp, shape: shape, dims: dims, store: st})
	}
	norm := func(hf, cpp string) {
		add(hf+".weight", cpp+".weight", alwaysF32, D)
		add(hf+".bias", cpp+".bias", alwaysF32, D)
	}
	layer := func(side string, n int64, decoder bool) {
		hp := fmt.Sprintf("%s.layers.%d.", side, n)
		cp := fmt.Sprintf("%s.blocks.%d.", side, n)
		for _, p := range perLayer {
			if p.cross && !decoder {
				continue
			}
			hf, cpp := hp+p.hf, cp+p.cpp
			switch {
			case strings.HasSuffix(p.hf, "layer_norm"):
				norm(hf, cpp)
			case p.hf == "fc1":
				add(hf+".weight", cpp+".weight", matrix, F, D)
				add(hf+".bias", cpp+".bias", alwaysF32, F)
			case p.hf == "fc2":
				add(hf+".weight", cpp+".weight", matrix, D, F)
				add(hf+".bias", cpp+".bias", alwaysF32, D)
			default:
				add(hf+".weight", cpp+".weight", matrix, D, D)
				if !strings.HasSuffix(p.hf, "k_proj") {
					add(hf+".bias", cpp+".bias", alwaysF32, D)
				}
			}
		}
	}
	add("encoder.embed_positions.weight", "encoder.positional_embedding", alwaysF32, A, D)
	add("encoder.conv1.weight", "encoder.conv1.weight", matrix, D, M, 3)
	add("encoder.conv1.bias", "encoder.conv1.bias", alwaysF32, D)
	add("encoder.conv2.weight", "encoder.conv2.weight", matrix, D, D, 3)
	add("encoder.conv2.bias", "encoder.conv2.bias", alwaysF32, D)
	for n := range c.AudioLayer {
		layer("encoder", n, false)
	}
	norm("encoder.layer_norm", "encoder.ln_post")
	add("decoder.embed_positions.weight", "decoder.positional_embedding", alwaysF32, T, D)
	add("decoder.embed_tokens.weight", "decoder.token_embedding.weight", matrix, V, D)
	for n := range c.TextLayer {
		layer("decoder", n, true)
	}
	norm("decoder.layer_norm", "decoder.ln")
	return out
}

// projOut is the output projection, tied to the token embedding, which
// whisper.cpp does not store.
const projOut = "proj_out.weight"

var layerRE = regexp.MustCompile(`^(encoder|decoder)\.layers\.(\d+)\.(.+)$`)

// unknownName explains why a (prefix-stripped) name is not a tensor of
// this model.
func unknownName(name string, c *config) string {
	m := layerRE.FindStringSubmatch(name)
	if m == nil {
		return "is not a Whisper tensor (unknown tensor name)"
	}
	rest := m[3]
	if strings.HasSuffix(rest, "k_proj.bias") {
		return "is a key-projection bias: Whisper's k_proj has none and whisper.cpp cannot represent it (unknown tensor for whisper.cpp)"
	}
	n, err := strconv.ParseInt(m[2], 10, 64)
	layers, key := c.AudioLayer, "encoder_layers"
	if m[1] == "decoder" {
		layers, key = c.TextLayer, "decoder_layers"
	}
	if err == nil && n >= layers && strconv.FormatInt(n, 10) == m[2] {
		return fmt.Sprintf("is in layer %d but config.json has %s %d", n, key, layers)
	}
	if m[1] == "encoder" && strings.HasPrefix(rest, "encoder_attn") {
		return "is cross-attention in an encoder layer (unknown tensor name)"
	}
	return "is not a Whisper tensor (unknown tensor name)"
}

// convertTensors maps, checks and converts the checkpoint's tensors.
func convertTensors(src *source, c *config, o Options) ([]whisperbin.Tensor, error) {
	want := specs(c)
	byHF := make(map[string]int, len(want))
	for i, s := range want {
		byHF[s.hf] = i
	}
	found := make([]*entry, len(want))
	for _, stored := range src.names() {
		e := src.tensors[stored]
		name := strings.TrimPrefix(stored, "model.")
		if name == projOut {
			continue
		}
		i, ok := byHF[name]
		if !ok {
			return nil, fmt.Errorf("hfwhisper: %s: tensor %s %s", e.file, stored, unknownName(name, c))
		}
		if prev := found[i]; prev != nil {
			return nil, fmt.Errorf("hfwhisper: %s: tensors %s and %s are the same tensor (with and without the model. prefix); keep one", e.file, prev.name, stored)
		}
		if !slices.Equal(e.shape, want[i].shape) {
			return nil, fmt.Errorf("hfwhisper: %s: tensor %s has shape %v, config.json implies %v", e.file, stored, e.shape, want[i].shape)
		}
		switch e.dtype {
		case "F32", "F16", "BF16":
		default:
			return nil, fmt.Errorf("hfwhisper: %s: tensor %s has dtype %s; only F32, F16 and BF16 convert", e.file, stored, e.dtype)
		}
		found[i] = e
	}
	var missing []string
	for i, e := range found {
		if e == nil && want[i].cpp != "encoder.positional_embedding" {
			missing = append(missing, "model."+want[i].hf)
		}
	}
	if len(missing) > 0 {
		more := ""
		if len(missing) > 5 {
			more = fmt.Sprintf(" and %d more", len(missing)-5)
			missing = missing[:5]
		}
		return nil, fmt.Errorf("hfwhisper: checkpoint is missing tensor(s) %s%s (whisper.cpp needs all %d; is the checkpoint complete and config.json its own?)", strings.Join(missing, ", "), more, len(want))
	}
	out := make([]whisperbin.Tensor, 0, len(want))
	for i, s := range want {
		typ := gguf.F32
		if o.F16 && s.store == matrix {
			typ = gguf.F16
		}
		var data []byte
		if e := found[i]; e != nil {
			raw, err := e.read()
			if err != nil {
				return nil, err
			}
			if data, err = convertData(raw, e.dtype, typ); err != nil {
				return nil, fmt.Errorf("hfwhisper: %s: tensor %s: %w", e.file, e.name, err)
			}
		} else {
			// HF builds the frozen encoder table with OpenAI's sinusoids;
			// a checkpoint that left it out gets the same values.
			v := sinusoids(int(c.AudioCtx), int(c.DModel))
			var err error
			if data, err = gguf.Encode(typ, v); err != nil {
				return nil, fmt.Errorf("hfwhisper: %s: %w", s.cpp, err)
			}
		}
		out = append(out, whisperbin.Tensor{Name: s.cpp, Type: int32(typ), Dims: slices.Clone(s.dims), Data: data})
	}
	return out, nil
}

// convertData converts little-endian F32, F16 or BF16 values to F32 (exact
// widening) or F16 (round to nearest even).
func convertData(raw []byte, dtype string, to gguf.Type) ([]byte, error) {
	le := binary.LittleEndian
	var n int
	var at func(i int) float32
	switch dtype {
	case "F32":
		if to == gguf.F32 {
			return raw, nil
		}
		n = len(raw) / 4
		at = func(i int) float32 { return math.Float32frombits(le.Uint32(raw[4*i:])) }
	case "F16":
		if to == gguf.F16 {
			return raw, nil
		}
		n = len(raw) / 2
		at = func(i int) float32 { return gguf.HalfToFloat(le.Uint16(raw[2*i:])) }
	case "BF16":
		n = len(raw) / 2
		at = func(i int) float32 { return math.Float32frombits(uint32(le.Uint16(raw[2*i:])) << 16) }
	default:
		return nil, fmt.Errorf("dtype %s cannot be converted (F32, F16 and BF16 can)", dtype)
	}
	switch to {
	case gguf.F32:
		out := make([]byte, 4*n)
		for i := range n {
			le.PutUint32(out[4*i:], math.Float32bits(at(i)))
		}
		return out, nil
	case gguf.F16:
		out := make([]byte, 2*n)
		for i := range n {
			le.PutUint16(out[2*i:], gguf.Float16(at(i)))
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot store type %s", to)
}

// sinusoids is OpenAI's encoder position table: row t holds sin(t·inv[i])
// for i < ch/2, then cos(t·inv[i]), inv[i] = exp(-i·ln(10000)/(ch/2-1)).
func sinusoids(length, channels int) []float32 {
	half := channels / 2
	out := make([]float32, length*channels)
	inc := math.Log(10000) / float64(max(half-1, 1))
	for t := range length {
		for i := range half {
			a := float64(t) * math.Exp(-inc*float64(i))
			out[t*channels+i] = float32(math.Sin(a))
			out[t*channels+half+i] = float32(math.Cos(a))
		}
	}
	return out
}
