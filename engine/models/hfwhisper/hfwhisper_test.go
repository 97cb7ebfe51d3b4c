package hfwhisper_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"boxd/engine/asr"
	"boxd/engine/asr/tokenizer"
	"boxd/engine/models/convert"
	"boxd/engine/models/gguf"
	"boxd/engine/models/hfwhisper"
	"boxd/engine/models/testmodels"
	"boxd/engine/models/whisperbin"
)

var (
	modelOnce sync.Once
	modelVal  *whisperbin.Model
	modelErr  error
)

// microModel is the random-weight micro Whisper (all F32) the checkpoints
// are made from. Tests must not modify it.
func microModel(t *testing.T) *whisperbin.Model {
	t.Helper()
	vocab := testmodels.Shared(t, "whisper-vocab-tiny.bin")
	modelOnce.Do(func() {
		modelVal, modelErr = testmodels.WhisperModel(vocab, testmodels.Whisper{Name: "x", Seed: 5, Micro: true})
		if modelErr == nil {
			modelVal.Vocab, modelErr = uniqueVocab(modelVal.Vocab)
		}
	})
	if modelErr != nil {
		t.Fatal(modelErr)
	}
	return modelVal
}

// uniqueVocab repairs the shared vocabulary file, whose maker decoded
// partial UTF-8 tokens lossily (many tokens are U+FFFD, so they repeat),
// into one a vocab.json can hold: ids 0..255 get GPT-2's single bytes
// (printable bytes ascending, then the others), later repeats unique raw
// bytes that are not UTF-8 (0xC0 0xC1 and the id).
func uniqueVocab(in [][]byte) ([][]byte, error) {
	var order []byte
	for pass := range 2 {
		for b := range 256 {
			printable := b >= 0x21 && b <= 0x7e || b >= 0xa1 && b <= 0xac || b >= 0xae
			if printable == (pass == 0) {
				order = append(order, byte(b))
			}
		}
	}
	out := make([][]byte, len(in))
	seen := map[string]bool{}
	for i, tok := range in {
		switch {
		case i < 256:
			if !bytes.Contains(tok, []byte("\uFFFD")) && !bytes.Equal(tok, []byte{order[i]}) {
				return nil, fmt.Errorf("token %d is %q, not GPT-2's byte %#02x", i, tok, order[i])
			}
			tok = []byte{order[i]}
		case seen[string(tok)]:
			tok = fmt.Appendf([]byte{0xc0, 0xc1}, "%d", i)
		}
		seen[string(tok)] = true
		out[i] = tok
	}
	return out, nil
}

// hfGlobal maps whisper.cpp's global tensor names to Hugging Face's.
var hfGlobal = map[string]string{
	"encoder.positional_embedding":   "encoder.embed_positions.weight",
	"encoder.conv1.weight":           "encoder.conv1.weight",
	"encoder.conv1.bias":             "encoder.conv1.bias",
	"encoder.conv2.weight":           "encoder.conv2.weight",
	"encoder.conv2.bias":             "encoder.conv2.bias",
	"encoder.ln_post.weight":         "encoder.layer_norm.weight",
	"encoder.ln_post.bias":           "encoder.layer_norm.bias",
	"decoder.positional_embedding":   "decoder.embed_positions.weight",
	"decoder.token_embedding.weight": "decoder.embed_tokens.weight",
	"decoder.ln.weight":              "decoder.layer_norm.weight",
	"decoder.ln.bias":                "decoder.layer_norm.bias",
}

// hfLayer maps whisper.cpp's per-layer name prefixes to Hugging Face's.
var hfLayer = [][2]string{
	{"attn.query.", "self_attn.q_proj."},
	{"attn.key.", "self_attn.k_proj."},
	{"attn.value.", "self_attn.v_proj."},
	{"attn.out.", "self_attn.out_proj."},
	{"attn_ln.", "self_attn_layer_norm."},
	{"cross_attn.query.", "encoder_attn.q_proj."},
	{"cross_attn.key.", "encoder_attn.k_proj."},
	{"cross_attn.value.", "encoder_attn.v_proj."},
	{"cross_attn.out.", "encoder_attn.out_proj."},
	{"cross_attn_ln.", "encoder_attn_layer_norm."},
	{"mlp.0.", "fc1."},
	{"mlp.2.", "fc2."},
	{"mlp_ln.", "final_layer_norm."},
}

// hfName is the Hugging Face name (without "model.") of a whisper.cpp tensor.
func hfName(t *testing.T, cpp string) string {
	t.Helper()
	if g, ok := hfGlobal[cpp]; ok {
		return g
	}
	p := strings.SplitN(cpp, ".", 4) // side, blocks, N, rest
	if len(p) != 4 || p[1] != "blocks" {
		t.Fatalf("no Hugging Face name for %s", cpp)
	}
	for _, m := range hfLayer {
		if rest, ok := strings.CutPrefix(p[3], m[0]); ok {
			return p[0] + ".layers." + p[2] + "." + m[1] + rest
		}
	}
	t.Fatalf("no Hugging Face name for %s", cpp)
	return ""
}

// storedF32 reports whether whisper.cpp keeps a tensor F32 even in F16
// files: 1-D tensors, conv biases and positional embeddings.
func storedF32(tn whisperbin.Tensor) bool {
	return len(tn.Dims) == 1 || strings.HasPrefix(tn.Name, "encoder.conv") && strings.HasSuffix(tn.Name, ".bias") ||
		strings.HasSuffix(tn.Name, "positional_embedding")
}

func floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func bf16(f float32) uint16 {
	b := math.Float32bits(f)
	return uint16((b + 0x7fff + (b>>16)&1) >> 16) // round to nearest even (no NaNs here)
}

// encodeAs stores F32 values as a safetensors dtype.
func encodeAs(t *testing.T, v []float32, dtype string) []byte {
	t.Helper()
	switch dtype {
	case "F32", "I32":
		b, _ := gguf.Encode(gguf.F32, v)
		return b
	case "F16":
		b, _ := gguf.Encode(gguf.F16, v)
		return b
	case "BF16":
		out := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], bf16(x))
		}
		return out
	}
	t.Fatalf("dtype %s", dtype)
	return nil
}

// stored is the float32 a value becomes when stored as dtype.
func stored(x float32, dtype string) float32 {
	switch dtype {
	case "F16":
		return gguf.HalfToFloat(gguf.Float16(x))
	case "BF16":
		return math.Float32frombits(uint32(bf16(x)) << 16)
	}
	return x
}

// byteEncoder is GPT-2's bytes_to_unicode.
func byteEncoder() [256]rune {
	var enc [256]rune
	n := 0
	for b := range 256 {
		if b >= 0x21 && b <= 0x7e || b >= 0xa1 && b <= 0xac || b >= 0xae {
			enc[b] = rune(b)
		} else {
			enc[b] = rune(256 + n)
			n++
		}
	}
	return enc
}

type hfTensor struct {
	name  string
	dtype string
	shape []int64
	data  []byte
}

// checkpoint is a Hugging Face checkpoint before it is written.
type checkpoint struct {
	config  map[string]any
	tensors []hfTensor
	vocab   map[string]int64
	added   map[string]int64 // nil: no added_tokens.json
	// tokenizerJSON writes tokenizer.json instead of vocab.json and
	// added_tokens.json.
	tokenizerJSON bool
	shards        int
	// header edits a safetensors header (tensor → fields) before it is
	// written; order is the file's tensors in data order.
	header func(h map[string]any, order []string)
	// index edits the weight_map of a sharded checkpoint.
	index func(wm map[string]string)
}

// specialIDs is Whisper's special-token layout for a vocabulary size:
// regular ids 0..E-1, then <|endoftext|>, <|startoftranscript|>, L
// languages, six task tokens and 1501 timestamps.
func specialIDs(t *testing.T, nVocab int) map[string]int64 {
	t.Helper()
	E, L := int64(50256), 99
	if nVocab >= 51865 {
		E, L = 50257, nVocab-51765-1
	}
	ids := map[string]int64{"<|endoftext|>": E, "<|startoftranscript|>": E + 1}
	for i, code := range tokenizer.Languages[:L] {
		ids["<|"+code+"|>"] = E + 2 + int64(i)
	}
	next := E + 2 + int64(L)
	for _, s := range []string{"<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"} {
		ids[s] = next
		next++
	}
	for i := range 1501 {
		ids[fmt.Sprintf("<|%.2f|>", float64(i)*0.02)] = next + int64(i)
	}
	if next+1501 != int64(nVocab) {
		t.Fatalf("layout for %d ends at %d", nVocab, next+1501)
	}
	return ids
}

// newCheckpoint makes the checkpoint of m, each tensor stored as
// dtype(tensor), with the "model." prefix unless bare, and an (ignored)
// proj_out.weight.
func newCheckpoint(t *testing.T, m *whisperbin.Model, dtype func(whisperbin.Tensor) string, bare bool) *checkpoint {
	t.Helper()
	h := m.HParams
	c := &checkpoint{
		config: map[string]any{
			"_name_or_path":           "openai/whisper-micro",
			"architectures":           []string{"WhisperForConditionalGeneration"},
			"model_type":              "whisper",
			"activation_function":     "gelu",
			"vocab_size":              h.NVocab,
			"num_mel_bins":            h.NMels,
			"d_model":                 h.NAudioState,
			"encoder_layers":          h.NAudioLayer,
			"encoder_attention_heads": h.NAudioHead,
			"decoder_layers":          h.NTextLayer,
			"decoder_attention_heads": h.NTextHead,
			"encoder_ffn_dim":         4 * h.NAudioState,
			"decoder_ffn_dim":         4 * h.NTextState,
			"max_source_positions":    h.NAudioCtx,
			"max_target_positions":    h.NTextCtx,
			"max_length":              h.NTextCtx,
			"scale_embedding":         false,
			"torch_dtype":             "float32",
		},
		vocab:  map[string]int64{},
		shards: 1,
	}
	prefix := "model."
	if bare {
		prefix = ""
	}
	for _, tn := range m.Tensors {
		shape := make([]int64, len(tn.Dims))
		for i, d := range tn.Dims {
			shape[len(shape)-1-i] = int64(d)
		}
		if strings.HasPrefix(tn.Name, "encoder.conv") && strings.HasSuffix(tn.Name, ".bias") {
			shape = shape[:1] // torch [D]; whisper.cpp [D, 1]
		}
		dt := dtype(tn)
		c.tensors = append(c.tensors, hfTensor{prefix + hfName(t, tn.Name), dt, shape, encodeAs(t, floats(tn.Data), dt)})
		if tn.Name == "decoder.token_embedding.weight" && !bare {
			c.tensors = append(c.tensors, hfTensor{"proj_out.weight", dt, shape, encodeAs(t, floats(tn.Data), dt)})
		}
	}
	// Write the data in another order than whisper.cpp's.
	slices.Reverse(c.tensors)
	enc := byteEncoder()
	for id, tok := range m.Vocab {
		var s []rune
		for _, b := range tok {
			s = append(s, enc[b])
		}
		c.vocab[string(s)] = int64(id)
	}
	c.added = specialIDs(t, int(h.NVocab))
	c.vocab["<|endoftext|>"] = c.added["<|endoftext|>"]
	if len(c.vocab) != len(m.Vocab)+1 {
		t.Fatalf("the test vocabulary has duplicate tokens")
	}
	return c
}

func (c *checkpoint) tensor(t *testing.T, name string) *hfTensor {
	t.Helper()
	for i := range c.tensors {
		if c.tensors[i].name == name {
			return &c.tensors[i]
		}
	}
	t.Fatalf("no tensor %s", name)
	return nil
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeSafetensors writes tensors in the given order: 8-byte header
// length, the JSON header (with __metadata__, padded with spaces), data.
func (c *checkpoint) writeSafetensors(t *testing.T, path string, ts []hfTensor) {
	t.Helper()
	h := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data bytes.Buffer
	var order []string
	for _, x := range ts {
		begin := int64(data.Len())
		data.Write(x.data)
		h[x.name] = map[string]any{"dtype": x.dtype, "shape": x.shape, "data_offsets": []int64{begin, int64(data.Len())}}
		order = append(order, x.name)
	}
	if c.header != nil {
		c.header(h, order)
	}
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	js = append(js, bytes.Repeat([]byte(" "), 8+(8-len(js)%8)%8)...)
	var out bytes.Buffer
	binary.Write(&out, binary.LittleEndian, uint64(len(js)))
	out.Write(js)
	out.Write(data.Bytes())
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// write writes the checkpoint into a new temporary directory.
func (c *checkpoint) write(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "config.json"), c.config)
	if c.tokenizerJSON {
		var added []map[string]any
		for s, id := range c.added {
			added = append(added, map[string]any{"id": id, "content": s, "special": true, "lstrip": false, "rstrip": false, "normalized": false, "single_word": false})
		}
		writeJSON(t, filepath.Join(dir, "tokenizer.json"), map[string]any{
			"version":      "1.0",
			"added_tokens": added,
			"model":        map[string]any{"type": "BPE", "vocab": c.vocab, "merges": []string{}},
		})
	} else {
		writeJSON(t, filepath.Join(dir, "vocab.json"), c.vocab)
		if c.added != nil {
			writeJSON(t, filepath.Join(dir, "added_tokens.json"), c.added)
		}
	}
	if c.shards <= 1 {
		c.writeSafetensors(t, filepath.Join(dir, "model.safetensors"), c.tensors)
		return dir
	}
	wm := map[string]string{}
	per := (len(c.tensors) + c.shards - 1) / c.shards
	for s := range c.shards {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", s+1, c.shards)
		part := c.tensors[min(s*per, len(c.tensors)):min((s+1)*per, len(c.tensors))]
		for _, x := range part {
			wm[x.name] = name
		}
		c.writeSafetensors(t, filepath.Join(dir, name), part)
	}
	if c.index != nil {
		c.index(wm)
	}
	writeJSON(t, filepath.Join(dir, "model.safetensors.index.json"), map[string]any{
		"metadata":   map[string]any{"total_size": 0},
		"weight_map": wm,
	})
	return dir
}

// checkConverted compares a converted model with the model the checkpoint
// was made from: hyper-parameters, vocabulary and tensor names and dims
// exactly; filters within 1e-6; each tensor's values are the stored values
// (dtype(tensor)) widened exactly or rounded to F16 (for F16 matrices).
func checkConverted(t *testing.T, got, orig *whisperbin.Model, f16 bool, dtype func(whisperbin.Tensor) string) {
	t.Helper()
	want := orig.HParams
	want.FType = 0
	if f16 {
		want.FType = 1
	}
	if got.HParams != want {
		t.Errorf("hparams %+v, want %+v", got.HParams, want)
	}
	if len(got.Vocab) != len(orig.Vocab) {
		t.Fatalf("%d tokens, want %d", len(got.Vocab), len(orig.Vocab))
	}
	for i := range orig.Vocab {
		if !bytes.Equal(got.Vocab[i], orig.Vocab[i]) {
			t.Fatalf("token %d is %q, want %q", i, got.Vocab[i], orig.Vocab[i])
		}
	}
	if got.FilterMels != orig.FilterMels || got.FilterFFT != orig.FilterFFT || len(got.Filters) != len(orig.Filters) {
		t.Fatalf("filters %d x %d (%d values), want %d x %d (%d)", got.FilterMels, got.FilterFFT, len(got.Filters), orig.FilterMels, orig.FilterFFT, len(orig.Filters))
	}
	for i, v := range orig.Filters {
		if d := math.Abs(float64(got.Filters[i] - v)); d > 1e-6 {
			t.Fatalf("filter value %d is %g, want %g", i, got.Filters[i], v)
		}
	}
	if len(got.Tensors) != len(orig.Tensors) {
		t.Errorf("%d tensors, want %d", len(got.Tensors), len(orig.Tensors))
	}
	byName := map[string]whisperbin.Tensor{}
	for _, tn := range got.Tensors {
		byName[tn.Name] = tn
	}
	for _, o := range orig.Tensors {
		g, ok := byName[o.Name]
		if !ok {
			t.Errorf("tensor %s is missing", o.Name)
			continue
		}
		if !slices.Equal(g.Dims, o.Dims) {
			t.Errorf("%s: dims %v, want %v", o.Name, g.Dims, o.Dims)
			continue
		}
		wantType := int32(gguf.F32)
		if f16 && !storedF32(o) {
			wantType = int32(gguf.F16)
		}
		if g.Type != wantType {
			t.Errorf("%s: type %d, want %d", o.Name, g.Type, wantType)
			continue
		}
		dt := dtype(o)
		if dt == "F32" && wantType == int32(gguf.F32) {
			if !bytes.Equal(g.Data, o.Data) {
				t.Errorf("%s: data differs", o.Name)
			}
			continue
		}
		ov := floats(o.Data)
		if int64(len(g.Data)) != o.Elements()*(4-2*int64(g.Type)) {
			t.Errorf("%s: %d bytes", o.Name, len(g.Data))
			continue
		}
		for i, x := range ov {
			s := stored(x, dt)
			var v float32
			if wantType == int32(gguf.F32) {
				v = math.Float32frombits(binary.LittleEndian.Uint32(g.Data[4*i:]))
				if v != s {
					t.Errorf("%s[%d] = %g, want %g (%s widened exactly)", o.Name, i, v, s, dt)
					break
				}
			} else {
				h := binary.LittleEndian.Uint16(g.Data[2*i:])
				if want := gguf.Float16(s); h != want {
					t.Errorf("%s[%d] = %#04x, want %#04x (%g rounded to nearest even)", o.Name, i, h, want, s)
					break
				}
				v = gguf.HalfToFloat(h)
			}
			// Independently of the rounding rule: within BF16 + F16 rounding.
			if d := math.Abs(float64(v - x)); d > math.Abs(float64(x))/128+1.0/(1<<14) {
				t.Errorf("%s[%d] = %g, stored from %g", o.Name, i, v, x)
				break
			}
		}
	}
}

func all(dt string) func(whisperbin.Tensor) string {
	return func(whisperbin.Tensor) string { return dt }
}

func TestRoundTrip(t *testing.T) {
	orig := microModel(t)
	mixed := func(tn whisperbin.Tensor) string {
		if storedF32(tn) {
			return "F16"
		}
		return "BF16"
	}
	for _, tc := range []struct {
		name    string
		dtype   func(whisperbin.Tensor) string
		f16     bool
		bare    bool // no "model." prefix, no proj_out.weight
		tokJSON bool // tokenizer.json instead of vocab.json + added_tokens.json
		noAdded bool // vocab.json only
		shards  int
		viaFile bool // Read the path of model.safetensors
	}{
		{name: "F32 to F32", dtype: all("F32")},
		{name: "F32 to F16", dtype: all("F32"), f16: true},
		{name: "F16 to F16", dtype: all("F16"), f16: true},
		{name: "BF16 to F16", dtype: all("BF16"), f16: true},
		{name: "F16 to F32", dtype: all("F16")},
		{name: "BF16 to F32", dtype: all("BF16")},
		{name: "BF16 matrices F16 vectors to F16", dtype: mixed, f16: true},
		{name: "bare names", dtype: all("F32"), bare: true},
		{name: "tokenizer.json", dtype: all("F32"), tokJSON: true},
		{name: "no added tokens", dtype: all("F32"), noAdded: true},
		{name: "two shards", dtype: all("F32"), shards: 2},
		{name: "three shards F16", dtype: all("F16"), shards: 3, f16: true},
		{name: "model.safetensors path", dtype: all("F32"), viaFile: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCheckpoint(t, orig, tc.dtype, tc.bare)
			c.tokenizerJSON = tc.tokJSON
			if tc.noAdded {
				c.added = nil
			}
			if tc.shards > 0 {
				c.shards = tc.shards
			}
			dir := c.write(t)
			path := dir
			if tc.viaFile {
				path = filepath.Join(dir, "model.safetensors")
			}
			if !hfwhisper.IsCheckpoint(path) {
				t.Errorf("IsCheckpoint(%s) = false", path)
			}
			got, err := hfwhisper.Read(path, hfwhisper.Options{F16: tc.f16})
			if err != nil {
				t.Fatal(err)
			}
			checkConverted(t, got, orig, tc.f16, tc.dtype)
		})
	}
}

// TestMissingEncoderPositions: a checkpoint without the (frozen,
// sinusoidal) encoder position table gets OpenAI's sinusoids.
func TestMissingEncoderPositions(t *testing.T) {
	orig := microModel(t)
	c := newCheckpoint(t, orig, all("F32"), false)
	c.tensors = slices.DeleteFunc(c.tensors, func(x hfTensor) bool { return x.name == "model.encoder.embed_positions.weight" })
	got, err := hfwhisper.Read(c.write(t), hfwhisper.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// testmodels fills the table with the same sinusoids.
	checkConverted(t, got, orig, false, all("F32"))
}

func TestIsCheckpoint(t *testing.T) {
	orig := microModel(t)
	single := newCheckpoint(t, orig, all("F16"), false).write(t)
	sharded := newCheckpoint(t, orig, all("F16"), false)
	sharded.shards = 2
	shardedDir := sharded.write(t)
	empty := t.TempDir()
	configOnly := t.TempDir()
	writeJSON(t, filepath.Join(configOnly, "config.json"), map[string]any{})
	noConfig := t.TempDir()
	if err := os.WriteFile(filepath.Join(noConfig, "model.safetensors"), []byte{}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{single, true},
		{filepath.Join(single, "model.safetensors"), true},
		{shardedDir, true},
		{filepath.Join(shardedDir, "model.safetensors.index.json"), true},
		{filepath.Join(single, "config.json"), false},
		{empty, false},
		{configOnly, false},
		{noConfig, false},
		{filepath.Join(empty, "nonexistent"), false},
	} {
		if got := hfwhisper.IsCheckpoint(tc.path); got != tc.want {
			t.Errorf("IsCheckpoint(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestBadCheckpoints(t *testing.T) {
	orig := microModel(t)
	D := int64(orig.HParams.NAudioState)
	E := specialIDs(t, int(orig.HParams.NVocab))["<|endoftext|>"]
	const ln = "model.encoder.layer_norm.weight"
	setOffsets := func(h map[string]any, name string, f func(o []int64)) {
		f(h[name].(map[string]any)["data_offsets"].([]int64))
	}
	vocabID := func(c *checkpoint, id int64) string {
		for s, i := range c.vocab {
			if i == id {
				return s
			}
		}
		t.Fatalf("no token %d", id)
		return ""
	}
	editFile := func(t *testing.T, path string, f func([]byte) []byte) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, c *checkpoint)
		post func(t *testing.T, dir string)
		want string
	}{
		{
			name: "truncated file",
			post: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "model.safetensors"), func(b []byte) []byte { return b[:len(b)-10] })
			},
			want: "(truncated?)",
		},
		{
			name: "file truncated to half",
			post: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "model.safetensors"), func(b []byte) []byte { return b[:len(b)/2] })
			},
			want: "are out of range",
		},
		{
			name: "header length over 100 MB",
			post: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "model.safetensors"), func(b []byte) []byte {
					binary.LittleEndian.PutUint64(b, 200<<20)
					return b
				})
			},
			want: "model.safetensors: header length 209715200 exceeds the 100 MB limit",
		},
		{
			name: "header length past the end of the file",
			post: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "model.safetensors"), func(b []byte) []byte {
					binary.LittleEndian.PutUint64(b, uint64(len(b)))
					return b
				})
			},
			want: "(truncated?)",
		},
		{
			name: "not JSON",
			post: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "model.safetensors"), func(b []byte) []byte {
					b[8] = '['
					return b
				})
			},
			want: "model.safetensors: header: not a JSON object",
		},
		{
			name: "overlapping offsets",
			edit: func(t *testing.T, c *checkpoint) {
				c.header = func(h map[string]any, order []string) {
					setOffsets(h, order[1], func(o []int64) { o[0] -= 4; o[1] -= 4 })
				}
			},
			want: "overlap tensor",
		},
		{
			name: "offsets out of range",
			edit: func(t *testing.T, c *checkpoint) {
				c.header = func(h map[string]any, order []string) {
					setOffsets(h, order[len(order)-1], func(o []int64) { o[0] += 4; o[1] += 4 })
				}
			},
			want: "are out of range: the data buffer has",
		},
		{
			name: "gap between tensors",
			edit: func(t *testing.T, c *checkpoint) {
				c.header = func(h map[string]any, order []string) { delete(h, order[1]) }
			},
			want: "leave a gap of",
		},
		{
			name: "trailing bytes",
			post: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "model.safetensors"), func(b []byte) []byte { return append(b, 0, 0, 0, 0) })
			},
			want: "(trailing bytes)",
		},
		{
			name: "byte size does not match the shape",
			edit: func(t *testing.T, c *checkpoint) {
				c.tensor(t, ln).shape = []int64{D + 1}
			},
			want: fmt.Sprintf("tensor %s: %d bytes for shape [%d] of F32 (want %d)", ln, 4*D, D+1, 4*(D+1)),
		},
		{
			name: "wrong shape",
			edit: func(t *testing.T, c *checkpoint) {
				c.tensor(t, ln).shape = []int64{D / 2, 2}
			},
			want: fmt.Sprintf("tensor %s has shape [%d 2], config.json implies [%d]", ln, D/2, D),
		},
		{
			name: "unknown tensor",
			edit: func(t *testing.T, c *checkpoint) {
				c.tensors = append(c.tensors, hfTensor{"model.encoder.layers.0.foo.weight", "F32", []int64{2}, make([]byte, 8)})
			},
			want: "tensor model.encoder.layers.0.foo.weight is not a Whisper tensor (unknown tensor name)",
		},
		{
			name: "cross-attention in the encoder",
			edit: func(t *testing.T, c *checkpoint) {
				c.tensors = append(c.tensors, hfTensor{"model.encoder.layers.0.encoder_attn.q_proj.bias", "F32", []int64{D}, make([]byte, 4*D)})
			},
			want: "is cross-attention in an encoder layer",
		},
		{
			name: "layer past the config",
			edit: func(t *testing.T, c *checkpoint) {
				c.tensors = append(c.tensors, hfTensor{"model.decoder.layers.1.fc1.bias", "F32", []int64{4 * D}, make([]byte, 16*D)})
			},
			want: "tensor model.decoder.layers.1.fc1.bias is in layer 1 but config.json has decoder_layers 1",
		},
		{
			name: "missing tensor",
			edit: func(t *testing.T, c *checkpoint) {
				c.tensors = slices.DeleteFunc(c.tensors, func(x hfTensor) bool { return x.name == "model.decoder.layers.0.fc2.bias" })
			},
			want: "checkpoint is missing tensor(s) model.decoder.layers.0.fc2.bias",
		},
		{
			name: "key bias",
			edit: func(t *testing.T, c *checkpoint) {
				c.tensors = append(c.tensors, hfTensor{"model.decoder.layers.0.encoder_attn.k_proj.bias", "F32", []int64{D}, make([]byte, 4*D)})
			},
			want: "tensor model.decoder.layers.0.encoder_attn.k_proj.bias is a key-projection bias",
		},
		{
			name: "same tensor with and without prefix",
			edit: func(t *testing.T, c *checkpoint) {
				x := *c.tensor(t, ln)
				x.name = strings.TrimPrefix(x.name, "model.")
				c.tensors = append(c.tensors, x)
			},
			want: "are the same tensor",
		},
		{
			name: "unsupported dtype I32",
			edit: func(t *testing.T, c *checkpoint) {
				c.tensor(t, ln).dtype = "I32"
			},
			want: fmt.Sprintf("tensor %s has dtype I32; only F32, F16 and BF16 convert", ln),
		},
		{
			name: "unknown dtype",
			edit: func(t *testing.T, c *checkpoint) {
				c.tensor(t, ln).dtype = "F31"
			},
			want: `has unknown dtype "F31"`,
		},
		{
			name: "ffn dim not 4*d_model",
			edit: func(t *testing.T, c *checkpoint) { c.config["encoder_ffn_dim"] = 2 * D },
			want: fmt.Sprintf("config.json: encoder_ffn_dim %d is not 4*d_model (%d); whisper.cpp models need 4*d_model", 2*D, 4*D),
		},
		{
			name: "config key missing",
			edit: func(t *testing.T, c *checkpoint) { delete(c.config, "num_mel_bins") },
			want: "config.json: num_mel_bins is missing",
		},
		{
			name: "not whisper",
			edit: func(t *testing.T, c *checkpoint) { c.config["model_type"] = "llama" },
			want: `model_type is "llama"`,
		},
		{
			name: "vocab_size too small",
			edit: func(t *testing.T, c *checkpoint) { c.config["vocab_size"] = 51000 },
			want: "vocab_size 51000 is outside",
		},
		{
			name: "vocab gap",
			edit: func(t *testing.T, c *checkpoint) { delete(c.vocab, vocabID(c, 100)) },
			want: "vocab.json: no token has id 100",
		},
		{
			name: "vocab duplicate",
			edit: func(t *testing.T, c *checkpoint) { c.vocab[vocabID(c, 101)] = 100 },
			want: "both have id 100",
		},
		{
			name: "vocab character outside the byte alphabet",
			edit: func(t *testing.T, c *checkpoint) {
				delete(c.vocab, vocabID(c, 100))
				c.vocab["a€"] = 100
			},
			want: `token "a€" (id 100): character U+20AC is outside GPT-2's byte alphabet`,
		},
		{
			name: "endoftext misplaced",
			edit: func(t *testing.T, c *checkpoint) { c.added["<|endoftext|>"] = E + 1 },
			want: fmt.Sprintf("added_tokens.json: <|endoftext|> has id %d, but whisper.cpp puts it at %d", E+1, E),
		},
		{
			name: "startoftranscript misplaced",
			edit: func(t *testing.T, c *checkpoint) { c.added["<|startoftranscript|>"] = E + 5 },
			want: fmt.Sprintf(`special token "<|startoftranscript|>" has id %d, but whisper.cpp puts it at %d`, E+5, E+1),
		},
		{
			name: "timestamps shifted",
			edit: func(t *testing.T, c *checkpoint) { c.added["<|0.00|>"]-- },
			want: `special token "<|0.00|>" has id`,
		},
		{
			name: "language order",
			edit: func(t *testing.T, c *checkpoint) {
				c.added["<|en|>"], c.added["<|zh|>"] = c.added["<|zh|>"], c.added["<|en|>"]
			},
			want: `special token "<|en|>" has id`,
		},
		{
			name: "extra added token",
			edit: func(t *testing.T, c *checkpoint) { c.added["<|custom|>"] = E + 3 },
			want: fmt.Sprintf(`token "<|custom|>" (id %d) is not one of Whisper's special tokens`, E+3),
		},
		{
			name: "added token inside the regular vocabulary",
			edit: func(t *testing.T, c *checkpoint) { c.added["<|custom|>"] = 7 },
			want: `added token "<|custom|>" has id 7, inside the regular vocabulary`,
		},
		{
			name: "no tokenizer",
			post: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, "vocab.json"))
			},
			want: "has neither vocab.json nor tokenizer.json",
		},
		{
			name: "no config",
			post: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, "config.json"))
			},
			want: "config.json is missing",
		},
		{
			name: "tensor in the wrong shard",
			edit: func(t *testing.T, c *checkpoint) {
				c.shards = 2
				c.index = func(wm map[string]string) { wm[ln] = "model-00001-of-00002.safetensors" }
			},
			want: "but model.safetensors.index.json maps it to model-00001-of-00002.safetensors",
		},
		{
			name: "shard missing",
			edit: func(t *testing.T, c *checkpoint) {
				c.shards = 2
				c.index = func(wm map[string]string) { wm[ln] = "model-00003-of-00002.safetensors" }
			},
			want: "lists shard model-00003-of-00002.safetensors, which is missing",
		},
		{
			name: "shard outside the directory",
			edit: func(t *testing.T, c *checkpoint) {
				c.shards = 2
				c.index = func(wm map[string]string) { wm[ln] = "../model-00001-of-00002.safetensors" }
			},
			want: "which is not a shard file name in the checkpoint directory",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCheckpoint(t, orig, all("F32"), false)
			if tc.edit != nil {
				tc.edit(t, c)
			}
			dir := c.write(t)
			if tc.post != nil {
				tc.post(t, dir)
			}
			m, err := hfwhisper.Read(dir, hfwhisper.Options{})
			if err == nil {
				t.Fatalf("Read succeeded (%d tensors), want an error containing %q", len(m.Tensors), tc.want)
			}
			if !strings.HasPrefix(err.Error(), "hfwhisper: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want one containing %q", err, tc.want)
			}
			t.Log(err)
		})
	}
}

// TestGGUFTranscribes converts a checkpoint, writes the GGUF and runs it.
func TestGGUFTranscribes(t *testing.T) {
	orig := microModel(t)
	m, err := hfwhisper.Read(newCheckpoint(t, orig, all("F32"), false).write(t), hfwhisper.Options{F16: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := convert.WhisperGGUF(m, "hf-micro-whisper")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	am, err := asr.Load(ctx, path, asr.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer am.Close()
	tr, err := am.Transcribe(ctx, make([]float32, 16000), asr.DecodeOptions{Language: "en", Temperatures: []float64{0}, MaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(tr.Duration-1) > 1e-9 {
		t.Errorf("duration %g s, want 1", tr.Duration)
	}
	t.Logf("language %q, %d segments, text %q", tr.Language, len(tr.Segments), tr.Text())
}
