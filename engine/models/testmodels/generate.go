package testmodels

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"boxd/engine/models"
	"boxd/engine/models/gguf"
)

// LLM describes a random-weight llama-architecture chat model.
type LLM struct {
	Name     string
	Seed     uint64
	Template models.Template // chatml, gemma, llama3 or mistral
	Vocab    int             // total vocabulary (merges fill it, then unused tokens)
	Embd     int
	Layers   int
	Heads    int
	KVHeads  int
	FF       int
	Context  int
	// Type is the weight type of the matrices (norms stay F32). Q4_K
	// means llama.cpp's Q4_K_M mix: Q4_K matrices, Q6_K for the output
	// (or the tied embedding) and for attn_v and ffn_down in the layers
	// llama.cpp gives more bits; their blocks are random bytes with small
	// finite scales, written as the file is written.
	Type gguf.Type
	// HeadDim is the attention head size when it is not Embd/Heads
	// (llama.attention.key_length, as Mistral-Nemo and Gemma use).
	HeadDim int
	// Tied leaves out output.weight: the output reuses token_embd.
	Tied bool
	// UserDefinedMarkers types the template's control tokens as
	// user-defined (4) instead of control (3), as some GGUFs mark turn
	// markers: llama.cpp then matches them even with special-token
	// parsing off (it still makes end-of-turn tokens control).
	UserDefinedMarkers bool
}

// Bert describes a random-weight BERT embedder or reranker.
type Bert struct {
	Name    string
	Seed    uint64
	Rerank  bool // classification head, rank pooling
	Pooling uint32
	Vocab   int
	Embd    int
	Layers  int
	Heads   int
	FF      int
	Context int
}

// TinyChat is the default unit-test chat model: small enough to load and
// decode in milliseconds, with a ChatML template and a real BPE tokenizer.
func TinyChat() LLM {
	return LLM{Name: "boxd-tiny-chat", Seed: 1, Template: models.TemplateChatML, Vocab: 512, Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, Context: 4096, Type: gguf.F32}
}

// BenchChat is a realistic small shape for throughput benchmarks (about
// 110M parameters, llama layout, Q8_0).
func BenchChat() LLM {
	return LLM{Name: "boxd-bench-110m", Seed: 7, Template: models.TemplateChatML, Vocab: 32000, Embd: 768, Layers: 12, Heads: 12, KVHeads: 4, FF: 2048, Context: 4096, Type: gguf.Q8_0}
}

// LargeChat is a 27B-class shape for GPU benchmarks: Gemma-3-27B's
// dimensions (hidden 5376, 62 layers, 32 query and 16 KV heads of 128,
// feed-forward 21504, 262,144 tokens, tied embedding) in the llama
// architecture, quantised as Q4_K_M: about 16.5 GB. Only the dimensions and
// types matter for speed; the weights are random.
func LargeChat() LLM {
	return LLM{Name: "boxd-bench-27b", Seed: 27, Template: models.TemplateGemma, Vocab: 262144, Embd: 5376, Layers: 62,
		Heads: 32, KVHeads: 16, HeadDim: 128, FF: 21504, Context: 8192, Type: gguf.Q4_K, Tied: true}
}

// TinyEmbedder is the default BERT embedder (mean pooling).
func TinyEmbedder() Bert {
	return Bert{Name: "boxd-tiny-embed", Seed: 2, Pooling: 1, Vocab: 400, Embd: 64, Layers: 2, Heads: 4, FF: 128, Context: 512}
}

// TinyReranker is the default BERT cross-encoder reranker (rank pooling).
func TinyReranker() Bert {
	return Bert{Name: "boxd-tiny-rerank", Seed: 3, Rerank: true, Pooling: 4, Vocab: 400, Embd: 64, Layers: 2, Heads: 4, FF: 128, Context: 512}
}

// specials are the control tokens of each template family and the ids of
// bos and eos among them.
func specials(t models.Template) (toks []string, bos, eos int, addBOS bool, jinja string, err error) {
	switch t {
	case models.TemplateChatML:
		return []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}, 0, 2, false,
			`{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`, nil
	case models.TemplateGemma:
		return []string{"<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"}, 2, 1, true,
			`{{ bos_token }}{% for message in messages %}{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}`, nil
	case models.TemplateLlama3:
		return []string{"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"}, 0, 4, true,
			`{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}`, nil
	case models.TemplateMistral:
		return []string{"<unk>", "<s>", "</s>", "[INST]", "[/INST]"}, 1, 2, true,
			`{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% else %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}`, nil
	}
	return nil, 0, 0, false, "", fmt.Errorf("testmodels: no template family %q", t)
}

// rng is a deterministic normal generator.
type rng struct{ r *rand.Rand }

func newRNG(seed uint64) *rng { return &rng{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

func (g *rng) normal(n int, std float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(g.r.NormFloat64() * std)
	}
	return out
}

func ones(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// WriteLLM writes a random-weight chat model to path.
func WriteLLM(path string, s LLM) error {
	toks, bosOff, eosOff, addBOS, jinja, err := specials(s.Template)
	if err != nil {
		return err
	}
	headDim := s.HeadDim
	if headDim == 0 {
		if s.Embd%s.Heads != 0 {
			return fmt.Errorf("testmodels: %d heads do not divide %d", s.Heads, s.Embd)
		}
		headDim = s.Embd / s.Heads
	}
	if s.Heads%s.KVHeads != 0 {
		return fmt.Errorf("testmodels: %d kv heads do not divide %d heads", s.KVHeads, s.Heads)
	}
	// Vocabulary: control tokens, the 256 byte tokens, merges, then unused
	// tokens up to the size asked for.
	nSpecial := len(toks)
	b := trainBPE(corpus, max(0, s.Vocab-nSpecial-256))
	types := make([]int32, 0, s.Vocab)
	special := int32(3)
	if s.UserDefinedMarkers {
		special = 4
	}
	for range toks {
		types = append(types, special)
	}
	toks = append(toks, b.tokens...)
	for len(types) < len(toks) {
		types = append(types, 1)
	}
	for i := 0; len(toks) < s.Vocab; i++ {
		toks = append(toks, fmt.Sprintf("<unused%d>", i))
		types = append(types, 5)
	}
	if len(toks) > s.Vocab && s.Vocab > 0 {
		return fmt.Errorf("testmodels: vocabulary of %d is smaller than the %d base tokens", s.Vocab, len(toks))
	}
	n := len(toks)

	w := gguf.NewWriter()
	w.Set("general.architecture", "llama")
	w.Set("general.name", s.Name)
	w.Set(models.RandomWeightsKey, true) // generated: random weights, noise out
	w.Set("general.file_type", fileType(s.Type))
	w.Set("llama.context_length", uint32(s.Context))
	w.Set("llama.embedding_length", uint32(s.Embd))
	w.Set("llama.block_count", uint32(s.Layers))
	w.Set("llama.feed_forward_length", uint32(s.FF))
	w.Set("llama.attention.head_count", uint32(s.Heads))
	w.Set("llama.attention.head_count_kv", uint32(s.KVHeads))
	w.Set("llama.attention.layer_norm_rms_epsilon", float32(1e-5))
	w.Set("llama.rope.dimension_count", uint32(headDim))
	if s.HeadDim != 0 {
		w.Set("llama.attention.key_length", uint32(headDim))
		w.Set("llama.attention.value_length", uint32(headDim))
	}
	w.Set("llama.rope.freq_base", float32(10000))
	w.Set("llama.vocab_size", uint32(n))
	w.Set("tokenizer.ggml.model", "gpt2")
	w.Set("tokenizer.ggml.pre", "default")
	w.Set("tokenizer.ggml.tokens", toks)
	w.Set("tokenizer.ggml.token_type", types)
	w.Set("tokenizer.ggml.merges", b.merges)
	w.Set("tokenizer.ggml.bos_token_id", uint32(bosOff))
	w.Set("tokenizer.ggml.eos_token_id", uint32(eosOff))
	w.Set("tokenizer.ggml.add_bos_token", addBOS)
	w.Set("tokenizer.ggml.add_eos_token", false)
	w.Set("tokenizer.chat_template", jinja)

	g := newRNG(s.Seed)
	kv := headDim * s.KVHeads
	q := headDim * s.Heads
	kquant := s.Type == gguf.Q4_K
	var blocks *kBlocks
	if kquant {
		blocks = newKBlocks(s.Seed)
	}
	// typed adds a matrix of type t (K-quants: random blocks, streamed).
	typed := func(name string, t gguf.Type, in, out int, std float64) error {
		dims := []uint64{uint64(in), uint64(out)}
		if kquant {
			if in%256 != 0 {
				return fmt.Errorf("testmodels: %s: rows of %d do not fill K-quant blocks of 256", name, in)
			}
			return w.AddStream(name, t, dims, blocks.writer(t, uint64(in)*uint64(out)))
		}
		return w.AddFloats(name, matType(t, in), dims, g.normal(in*out, std))
	}
	matStd := func(in int) float64 { return 0.02 * math.Sqrt(64/float64(in)) * 5 }
	mat := func(name string, in, out int) error { return typed(name, s.Type, in, out, matStd(in)) }
	// more is the type of the tensors Q4_K_M gives more bits in layer l.
	more := func(l int) gguf.Type {
		if kquant && useMoreBits(l, s.Layers) {
			return gguf.Q6_K
		}
		return s.Type
	}
	vec := func(name string, dim int) error {
		return w.AddFloats(name, gguf.F32, []uint64{uint64(dim)}, ones(dim))
	}
	embdType := s.Type
	if kquant && s.Tied {
		embdType = gguf.Q6_K // the output reads it too
	}
	if err := typed("token_embd.weight", embdType, s.Embd, n, 1); err != nil {
		return err
	}
	if err := vec("output_norm.weight", s.Embd); err != nil {
		return err
	}
	if !s.Tied {
		outType := s.Type
		if kquant {
			outType = gguf.Q6_K
		}
		if err := typed("output.weight", outType, s.Embd, n, matStd(s.Embd)); err != nil {
			return err
		}
	}
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		for _, e := range []error{
			vec(p+"attn_norm.weight", s.Embd),
			mat(p+"attn_q.weight", s.Embd, q),
			mat(p+"attn_k.weight", s.Embd, kv),
			typed(p+"attn_v.weight", more(l), s.Embd, kv, matStd(s.Embd)),
			typed(p+"attn_output.weight", s.Type, q, s.Embd, matStd(q)),
			vec(p+"ffn_norm.weight", s.Embd),
			mat(p+"ffn_gate.weight", s.Embd, s.FF),
			mat(p+"ffn_up.weight", s.Embd, s.FF),
			typed(p+"ffn_down.weight", more(l), s.FF, s.Embd, matStd(s.FF)),
		} {
			if e != nil {
				return e
			}
		}
	}
	return write(path, w)
}

// matType keeps a matrix in F32 when its rows do not fill Q8_0 or Q4_0
// blocks.
func matType(t gguf.Type, rowLen int) gguf.Type {
	if (t == gguf.Q8_0 || t == gguf.Q4_0) && rowLen%32 != 0 {
		return gguf.F32
	}
	return t
}

// fileType is general.file_type for the weight type.
func fileType(t gguf.Type) uint32 {
	switch t {
	case gguf.F16:
		return 1
	case gguf.Q4_0:
		return 2
	case gguf.Q8_0:
		return 7
	case gguf.Q4_K:
		return 15 // LLAMA_FTYPE_MOSTLY_Q4_K_M
	}
	return 0
}

// useMoreBits is llama.cpp's rule (llama-quant.cpp) for the layers whose
// attn_v and ffn_down Q4_K_M stores as Q6_K.
func useMoreBits(l, n int) bool {
	return l < n/8 || l >= 7*n/8 || (l-n/8)%3 == 2
}

// kBlocks holds a megabyte of random K-quant blocks of each type, repeated
// to fill a tensor: the bytes are random, the f16 scales small and finite.
type kBlocks struct{ q4, q6 []byte }

func newKBlocks(seed uint64) *kBlocks {
	r := rand.New(rand.NewPCG(seed, 0x4b51))
	fill := func(size, n int, scales func(b []byte)) []byte {
		out := make([]byte, size*n)
		for i := range out {
			out[i] = byte(r.Uint32())
		}
		for k := 0; k < n; k++ {
			scales(out[k*size : (k+1)*size])
		}
		return out
	}
	half := func(b []byte, v float32) { binary.LittleEndian.PutUint16(b, gguf.Float16(v)) }
	return &kBlocks{
		// block_q4_K: d, dmin, scales[12], qs[128]: w = d·sc·q − dmin·m
		q4: fill(144, 7280, func(b []byte) { half(b[0:], 1.0/8192); half(b[2:], 1.0/16384) }),
		// block_q6_K: ql[128], qh[64], scales[16], d: w = d·scale·(q−32)
		q6: fill(210, 4993, func(b []byte) { half(b[208:], 1.0/65536) }),
	}
}

// writer returns a function that writes n elements of type t.
func (k *kBlocks) writer(t gguf.Type, n uint64) func(io.Writer) error {
	return func(out io.Writer) error {
		pool := k.q4
		if t == gguf.Q6_K {
			pool = k.q6
		}
		size, err := gguf.ByteSize(t, n)
		if err != nil {
			return err
		}
		for size > 0 {
			c := min(size, uint64(len(pool)))
			if _, err := out.Write(pool[:c]); err != nil {
				return err
			}
			size -= c
		}
		return nil
	}
}

// WriteBert writes a random-weight BERT embedder or reranker to path.
func WriteBert(path string, s Bert) error {
	toks := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	types := []int32{3, 2, 3, 3, 3}
	for _, p := range wordPieces(corpus, s.Vocab-len(toks)) {
		toks = append(toks, p)
		types = append(types, 1)
	}
	n := len(toks)
	w := gguf.NewWriter()
	w.Set("general.architecture", "bert")
	w.Set("general.name", s.Name)
	w.Set(models.RandomWeightsKey, true) // generated: random weights, noise out
	w.Set("general.file_type", uint32(0))
	w.Set("bert.context_length", uint32(s.Context))
	w.Set("bert.embedding_length", uint32(s.Embd))
	w.Set("bert.block_count", uint32(s.Layers))
	w.Set("bert.feed_forward_length", uint32(s.FF))
	w.Set("bert.attention.head_count", uint32(s.Heads))
	w.Set("bert.attention.layer_norm_epsilon", float32(1e-12))
	w.Set("bert.attention.causal", false)
	w.Set("bert.pooling_type", s.Pooling)
	w.Set("tokenizer.ggml.model", "bert")
	w.Set("tokenizer.ggml.tokens", toks)
	w.Set("tokenizer.ggml.token_type", types)
	w.Set("tokenizer.ggml.token_type_count", uint32(2))
	w.Set("tokenizer.ggml.padding_token_id", uint32(0))
	w.Set("tokenizer.ggml.unknown_token_id", uint32(1))
	w.Set("tokenizer.ggml.cls_token_id", uint32(2))
	w.Set("tokenizer.ggml.seperator_token_id", uint32(3))
	// As llama.cpp's converter writes them for BERT: [CLS] is the
	// beginning-of-sequence token and [SEP] the end. Without them llama.cpp
	// takes BERT's usual ids (101, 102), words in this small vocabulary.
	w.Set("tokenizer.ggml.bos_token_id", uint32(2))
	w.Set("tokenizer.ggml.eos_token_id", uint32(3))
	w.Set("tokenizer.ggml.mask_token_id", uint32(4))
	if s.Rerank {
		w.Set("bert.classifier.output_labels", []string{"relevance"})
	}

	g := newRNG(s.Seed)
	mat := func(name string, in, out int) error {
		return w.AddFloats(name, gguf.F32, []uint64{uint64(in), uint64(out)}, g.normal(in*out, 0.1))
	}
	vecv := func(name string, dim int, v []float32) error {
		return w.AddFloats(name, gguf.F32, []uint64{uint64(dim)}, v)
	}
	zeros := func(d int) []float32 { return make([]float32, d) }
	steps := []error{
		w.AddFloats("token_embd.weight", gguf.F32, []uint64{uint64(s.Embd), uint64(n)}, g.normal(s.Embd*n, 1)),
		w.AddFloats("token_types.weight", gguf.F32, []uint64{uint64(s.Embd), 2}, g.normal(s.Embd*2, 0.1)),
		w.AddFloats("position_embd.weight", gguf.F32, []uint64{uint64(s.Embd), uint64(s.Context)}, g.normal(s.Embd*s.Context, 0.1)),
		vecv("token_embd_norm.weight", s.Embd, ones(s.Embd)),
		vecv("token_embd_norm.bias", s.Embd, zeros(s.Embd)),
	}
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		steps = append(steps,
			mat(p+"attn_q.weight", s.Embd, s.Embd), vecv(p+"attn_q.bias", s.Embd, g.normal(s.Embd, 0.02)),
			mat(p+"attn_k.weight", s.Embd, s.Embd), vecv(p+"attn_k.bias", s.Embd, g.normal(s.Embd, 0.02)),
			mat(p+"attn_v.weight", s.Embd, s.Embd), vecv(p+"attn_v.bias", s.Embd, g.normal(s.Embd, 0.02)),
			mat(p+"attn_output.weight", s.Embd, s.Embd), vecv(p+"attn_output.bias", s.Embd, g.normal(s.Embd, 0.02)),
			vecv(p+"attn_output_norm.weight", s.Embd, ones(s.Embd)), vecv(p+"attn_output_norm.bias", s.Embd, zeros(s.Embd)),
			mat(p+"ffn_up.weight", s.Embd, s.FF), vecv(p+"ffn_up.bias", s.FF, g.normal(s.FF, 0.02)),
			mat(p+"ffn_down.weight", s.FF, s.Embd), vecv(p+"ffn_down.bias", s.Embd, g.normal(s.Embd, 0.02)),
			vecv(p+"layer_output_norm.weight", s.Embd, ones(s.Embd)), vecv(p+"layer_output_norm.bias", s.Embd, zeros(s.Embd)),
		)
	}
	if s.Rerank {
		steps = append(steps,
			mat("cls.weight", s.Embd, s.Embd), vecv("cls.bias", s.Embd, g.normal(s.Embd, 0.02)),
			mat("cls.output.weight", s.Embd, 1), vecv("cls.output.bias", 1, []float32{0}),
		)
	}
	for _, e := range steps {
		if e != nil {
			return e
		}
	}
	return write(path, w)
}

func write(path string, w *gguf.Writer) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("testmodels: %w", err)
	}
	if err := w.WriteFile(path); err != nil {
		return fmt.Errorf("testmodels: %w", err)
	}
	return nil
}

// Names of the files MakeAll writes.
const (
	ChatFile   = "tiny-chat.gguf"
	EmbedFile  = "tiny-embed.gguf"
	RerankFile = "tiny-rerank.gguf"
	BenchFile  = "bench-110m-q8_0.gguf"
	LargeFile  = "bench-27b-q4_k_m.gguf"
	// VisionFile is the tiny chat model's vision projector (mmproj).
	VisionFile = "tiny-chat-mmproj.gguf"
)

// TemplateFile is the name of a tiny chat model with another template.
func TemplateFile(t models.Template) string { return "tiny-chat-" + string(t) + ".gguf" }

// MakeAll writes the tiny chat model (and one per other template family),
// the embedder and the reranker into dir; with bench, also the benchmark
// model. It returns the paths written.
func MakeAll(dir string, bench bool) ([]string, error) {
	var paths []string
	add := func(name string, f func(string) error) error {
		p := filepath.Join(dir, name)
		if err := f(p); err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	}
	if err := add(ChatFile, func(p string) error { return WriteLLM(p, TinyChat()) }); err != nil {
		return nil, err
	}
	for _, t := range []models.Template{models.TemplateGemma, models.TemplateLlama3, models.TemplateMistral} {
		spec := TinyChat()
		spec.Template = t
		spec.Name = "boxd-tiny-chat-" + string(t)
		if err := add(TemplateFile(t), func(p string) error { return WriteLLM(p, spec) }); err != nil {
			return nil, err
		}
	}
	if err := add(VisionFile, func(p string) error { return WriteVision(p, TinyVision()) }); err != nil {
		return nil, err
	}
	if err := add(EmbedFile, func(p string) error { return WriteBert(p, TinyEmbedder()) }); err != nil {
		return nil, err
	}
	if err := add(RerankFile, func(p string) error { return WriteBert(p, TinyReranker()) }); err != nil {
		return nil, err
	}
	if bench {
		if err := add(BenchFile, func(p string) error { return WriteLLM(p, BenchChat()) }); err != nil {
			return nil, err
		}
	}
	return paths, nil
}
