package testmodels

import (
	"fmt"
	"math"

	"boxd/engine/models"
	"boxd/engine/models/gguf"
)

// Vision describes a random-weight Gemma 3 vision projector (an mmproj
// file, llama.cpp's clip format): a SigLIP encoder over square patches,
// average pooling of the patch grid by ScaleFactor, an RMS norm and a
// projection into the chat model's embedding. The real Gemma 3 projector
// is 896 px, patches of 14, 27 layers of 1152 and pools by 4 into 256
// tokens; this one is the same graph in miniature so that llama.cpp's mtmd
// path runs for real in tests.
type Vision struct {
	Name        string
	Seed        uint64
	ImageSize   int // pixels a side (images are resized to it)
	PatchSize   int
	ScaleFactor int // patch grid pooled by this a side
	Embd        int
	Heads       int
	FF          int
	Layers      int
	ProjDim     int // the chat model's embedding
}

// TinyVision is the projector beside the tiny chat model: 64 px, patches
// of 8 (an 8 × 8 grid) pooled by 2 into 16 image tokens of 64.
func TinyVision() Vision {
	return Vision{Name: "boxd-tiny-vision", Seed: 5, ImageSize: 64, PatchSize: 8, ScaleFactor: 2, Embd: 32, Heads: 2, FF: 48, Layers: 2, ProjDim: TinyChat().Embd}
}

// Tokens is how many embeddings one image becomes.
func (v Vision) Tokens() int {
	side := v.ImageSize / v.PatchSize / v.ScaleFactor
	return side * side
}

// WriteVision writes the projector to path.
func WriteVision(path string, v Vision) error {
	if v.ImageSize%v.PatchSize != 0 || (v.ImageSize/v.PatchSize)%v.ScaleFactor != 0 || v.Embd%v.Heads != 0 {
		return fmt.Errorf("testmodels: vision shape %+v does not divide", v)
	}
	if v.FF == v.Embd {
		// llama.cpp swaps a Gemma 3 projector's ffn_up and ffn_down when
		// ffn_down's rows are n_embd long (an old export's naming).
		return fmt.Errorf("testmodels: vision feed-forward %d must differ from its width", v.FF)
	}
	w := gguf.NewWriter()
	w.Set("general.architecture", "clip")
	w.Set("general.name", v.Name)
	w.Set(models.RandomWeightsKey, true) // generated: random weights, noise out
	w.Set("general.file_type", uint32(0))
	w.Set("clip.has_vision_encoder", true)
	w.Set("clip.projector_type", "gemma3")
	w.Set("clip.use_gelu", true)
	w.Set("clip.vision.image_size", uint32(v.ImageSize))
	w.Set("clip.vision.patch_size", uint32(v.PatchSize))
	w.Set("clip.vision.embedding_length", uint32(v.Embd))
	w.Set("clip.vision.feed_forward_length", uint32(v.FF))
	w.Set("clip.vision.block_count", uint32(v.Layers))
	w.Set("clip.vision.projection_dim", uint32(v.ProjDim))
	w.Set("clip.vision.attention.head_count", uint32(v.Heads))
	w.Set("clip.vision.attention.layer_norm_epsilon", float32(1e-6))
	w.Set("clip.vision.image_mean", []float32{0.5, 0.5, 0.5})
	w.Set("clip.vision.image_std", []float32{0.5, 0.5, 0.5})
	w.Set("clip.vision.projector.scale_factor", uint32(v.ScaleFactor))

	g := newRNG(v.Seed)
	patches := (v.ImageSize / v.PatchSize) * (v.ImageSize / v.PatchSize)
	add := func(name string, std float64, dims ...int) error {
		n, d := 1, make([]uint64, len(dims))
		for i, x := range dims {
			n *= x
			d[i] = uint64(x)
		}
		return w.AddFloats(name, gguf.F32, d, g.normal(n, std))
	}
	vec := func(name string, n int) error { return w.AddFloats(name, gguf.F32, []uint64{uint64(n)}, ones(n)) }
	std := func(in int) float64 { return 1 / math.Sqrt(float64(in)) }
	pix := v.PatchSize * v.PatchSize * 3
	steps := []error{
		add("v.patch_embd.weight", std(pix), v.PatchSize, v.PatchSize, 3, v.Embd),
		add("v.patch_embd.bias", 0.02, v.Embd),
		add("v.position_embd.weight", 0.02, v.Embd, patches),
	}
	for l := range v.Layers {
		p := fmt.Sprintf("v.blk.%d.", l)
		for _, t := range []string{"attn_q", "attn_k", "attn_v", "attn_out"} {
			steps = append(steps, add(p+t+".weight", std(v.Embd), v.Embd, v.Embd), add(p+t+".bias", 0.02, v.Embd))
		}
		steps = append(steps,
			vec(p+"ln1.weight", v.Embd), add(p+"ln1.bias", 0.02, v.Embd),
			vec(p+"ln2.weight", v.Embd), add(p+"ln2.bias", 0.02, v.Embd),
			add(p+"ffn_up.weight", std(v.Embd), v.Embd, v.FF), add(p+"ffn_up.bias", 0.02, v.FF),
			add(p+"ffn_down.weight", std(v.FF), v.FF, v.Embd), add(p+"ffn_down.bias", 0.02, v.Embd),
		)
	}
	steps = append(steps,
		vec("v.post_ln.weight", v.Embd), add("v.post_ln.bias", 0.02, v.Embd),
		vec("mm.soft_emb_norm.weight", v.Embd),
		add("mm.input_projection.weight", std(v.Embd), v.ProjDim, v.Embd),
	)
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	return write(path, w)
}
