package llm

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"boxd/engine/models/gguf"
	"boxd/engine/models/testmodels"
)

func openVisionTiny(t testing.TB, parallel int) *Engine {
	t.Helper()
	e, err := Open(context.Background(), EngineOptions{Options: Options{
		Path: testmodels.Generated(t, testmodels.ChatFile), Projector: testmodels.Generated(t, testmodels.VisionFile),
		ContextLength: 1024, Parallel: parallel, GPULayers: testGPULayers(t),
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// picture is a w × h gradient, varied by seed.
func picture(w, h int, seed byte) Picture {
	p := Picture{Width: w, Height: h, RGB: make([]byte, w*h*3)}
	for y := range h {
		for x := range w {
			i := (y*w + x) * 3
			p.RGB[i], p.RGB[i+1], p.RGB[i+2] = byte(x*4)+seed, byte(y*4)^seed, byte(x+y)*seed
		}
	}
	return p
}

// generate runs r to its end.
func generate(t testing.TB, e *Engine, r Request) Result {
	t.Helper()
	j, err := e.Generate(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	res, err := j.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	return res
}

const visionPrompt = "<|im_start|>user\nWhat does the picture show? " + ImageMarker + " Say it briefly.<|im_end|>\n<|im_start|>assistant\n"

// TestVisionRealPath: the tiny Gemma 3 projector loads beside the tiny
// chat model through llama.cpp's mtmd, a picture becomes its 16
// embeddings between the prompt's tokens, the engine decodes them into
// the sequence and generates after them, the same picture again reuses
// the cached prefix, and another picture changes the embeddings.
func TestVisionRealPath(t *testing.T) {
	e := openVisionTiny(t, 2)
	if !e.Vision() {
		t.Fatal("the engine reports no vision")
	}
	ctx := context.Background()
	toks, ims, err := e.TokenizeImages(ctx, visionPrompt, []Picture{picture(100, 80, 1)}, true, true)
	if err != nil {
		t.Fatal(err)
	}
	want := testmodels.TinyVision().Tokens()
	if len(ims) != 1 || ims[0].Tokens != want || len(ims[0].Vectors) != want*testmodels.TinyChat().Embd {
		t.Fatalf("images %+v; want one of %d tokens", len(ims), want)
	}
	plain, err := e.Tokenize(strings.Replace(visionPrompt, ImageMarker, "", 1), true, true)
	if err != nil {
		t.Fatal(err)
	}
	// mtmd wraps the image in <start_of_image> … <end_of_image> text.
	if ims[0].At <= 0 || ims[0].At >= len(toks) || len(toks) <= len(plain) {
		t.Fatalf("image at %d of %d tokens (the text alone is %d)", ims[0].At, len(toks), len(plain))
	}
	r := Request{Prompt: toks, Images: ims, MaxTokens: 12}
	first := generate(t, e, r)
	if first.PromptTokens != len(toks)+want {
		t.Errorf("prompt tokens %d, want %d text + %d image", first.PromptTokens, len(toks), want)
	}
	if first.CompletionTokens == 0 {
		t.Error("nothing generated after the image")
	}
	before := e.Stats().PromptReused
	again := generate(t, e, r)
	if again.Text != first.Text {
		t.Errorf("the same picture twice: %q then %q", first.Text, again.Text)
	}
	if reused := e.Stats().PromptReused - before; reused < int64(ims[0].At+want) {
		t.Errorf("reused %d cached tokens; the image ends at %d", reused, ims[0].At+want)
	}
	_, other, err := e.TokenizeImages(ctx, visionPrompt, []Picture{picture(100, 80, 7)}, true, true)
	if err != nil {
		t.Fatal(err)
	}
	if other[0].Key == ims[0].Key || equalFloats(other[0].Vectors, ims[0].Vectors) {
		t.Error("another picture gave the same key or the same embeddings")
	}
}

func equalFloats(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestImageEmbeddingsDecodeAsTokens: an "image" whose embeddings are the
// token embedding rows of some prompt tokens (the llama architecture reads
// those rows unscaled) generates exactly what the tokens themselves do, so
// the engine puts embeddings at the right positions of the right sequence
// and goes on from them. Causal, as the tokens are (Gemma 3's images see
// each other both ways, which tokens cannot); a sequence beside it keeps
// generating meanwhile.
func TestImageEmbeddingsDecodeAsTokens(t *testing.T) {
	e := openVisionTiny(t, 2)
	e.vis.nonCausal = false
	path := testmodels.Generated(t, testmodels.ChatFile)
	f, err := gguf.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ti, ok := f.Tensor("token_embd.weight")
	if !ok || ti.Type != gguf.F32 {
		t.Fatalf("token_embd.weight: %+v", ti)
	}
	raw, err := f.TensorData(path, ti)
	if err != nil {
		t.Fatal(err)
	}
	embd := testmodels.TinyChat().Embd
	row := func(tok int32) []float32 {
		out := make([]float32, embd)
		for i := range out {
			out[i] = leFloat(raw[(int(tok)*embd+i)*4:])
		}
		return out
	}
	toks, err := e.Tokenize("<|im_start|>user\nThe patient reports lower back pain for three days.<|im_end|>\n<|im_start|>assistant\n", true, true)
	if err != nil {
		t.Fatal(err)
	}
	want := generate(t, e, Request{Prompt: toks, MaxTokens: 16})
	for _, span := range [][2]int{{0, 5}, {3, 9}, {len(toks) - 6, len(toks) - 1}} {
		a, b := span[0], span[1]
		var vec []float32
		for _, tok := range toks[a:b] {
			vec = append(vec, row(tok)...)
		}
		prompt := append(append([]int32{}, toks[:a]...), toks[b:]...)
		// Beside it, another sequence generates from other text.
		side, err := e.Generate(context.Background(), Request{Prompt: toks[:len(toks)/2], MaxTokens: 16})
		if err != nil {
			t.Fatal(err)
		}
		got := generate(t, e, Request{Prompt: prompt, Images: []ImageEmbedding{{At: a, Tokens: b - a, Vectors: vec, Key: uint64(a)}}, MaxTokens: 16})
		if _, err := side.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got.Text != want.Text || got.PromptTokens != len(toks) {
			t.Errorf("tokens %d..%d as embeddings: %q (%d prompt tokens); as tokens: %q (%d)", a, b, got.Text, got.PromptTokens, want.Text, len(toks))
		}
	}
}

func leFloat(b []byte) float32 {
	return math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
}

// TestVisionRefusals: what the engine refuses, and says why.
func TestVisionRefusals(t *testing.T) {
	e := openVisionTiny(t, 1)
	ctx := context.Background()
	pic := picture(32, 32, 3)
	toks, ims, err := e.TokenizeImages(ctx, visionPrompt, []Picture{pic}, true, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"two markers one picture", func() error {
			_, _, err := e.TokenizeImages(ctx, visionPrompt+ImageMarker, []Picture{pic}, true, true)
			return err
		}, "2 image markers for 1 pictures"},
		{"the legacy marker counts", func() error {
			_, _, err := e.TokenizeImages(ctx, visionPrompt+"<__image__>", []Picture{pic}, true, true)
			return err
		}, "2 image markers"},
		{"short pixels", func() error {
			_, _, err := e.TokenizeImages(ctx, visionPrompt, []Picture{{Width: 4, Height: 4, RGB: make([]byte, 47)}}, true, true)
			return err
		}, "47 bytes for 4 × 4"},
		{"image ends the prompt", func() error {
			_, err := e.Generate(ctx, Request{Prompt: toks, Images: []ImageEmbedding{{At: len(toks), Tokens: ims[0].Tokens, Vectors: ims[0].Vectors}}})
			return err
		}, "text must follow it"},
		{"wrong width", func() error {
			_, err := e.Generate(ctx, Request{Prompt: toks, Images: []ImageEmbedding{{At: 1, Tokens: ims[0].Tokens, Vectors: ims[0].Vectors[1:]}}})
			return err
		}, "values for 16 embeddings"},
		{"out of order", func() error {
			_, err := e.Generate(ctx, Request{Prompt: toks, Images: []ImageEmbedding{ims[0], {At: 1, Tokens: ims[0].Tokens, Vectors: ims[0].Vectors}}})
			return err
		}, "out of order"},
	} {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
	if !HasMarker("a "+ImageMarker) || !HasMarker("<__image__>") || HasMarker("<__media_>") {
		t.Error("HasMarker")
	}
	text := openTiny(t, 1)
	if _, _, err := text.TokenizeImages(ctx, visionPrompt, []Picture{pic}, true, true); !errors.Is(err, ErrNoVision) {
		t.Errorf("text-only engine: %v", err)
	}
	if _, err := text.Generate(ctx, Request{Prompt: toks, Images: ims}); !errors.Is(err, ErrNoVision) {
		t.Errorf("text-only engine, images in the request: %v", err)
	}
	if _, err := Open(ctx, EngineOptions{Options: Options{Path: testmodels.Generated(t, testmodels.ChatFile), Projector: testmodels.Generated(t, testmodels.EmbedFile), ContextLength: 256, Parallel: 1}}); err == nil || !strings.Contains(err.Error(), "did not load") {
		t.Errorf("an embedder as the projector: %v", err)
	}
}
