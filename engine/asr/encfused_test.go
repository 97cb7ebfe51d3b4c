package asr

import (
	"context"
	"slices"
	"testing"

	"boxd/engine/asr/frontend"
	"boxd/engine/models/testmodels"
)

// TestFusedEncoderMatches: on the CPU the encoder's blocks run in package
// cpuenc (encodeCPU), or with ggmlBlocks only their self-attention does,
// between ggml graphs (encodeFused); both encode a window as the one-graph
// encoder (ggml's products and softmax) does, within the summation-order
// tolerance, with one thread or two, and decode the same tokens. Loading
// with unfused gives the one-graph encoder.
func TestFusedEncoderMatches(t *testing.T) {
	for _, c := range []struct {
		name string
		tol  float64
	}{
		{testmodels.WhisperGGUF, 1e-4},
		// F16 projections round their inputs (2^-11 relative).
		{testmodels.WhisperF16GGUF, 1e-3},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := testmodels.Generated(t, c.name)
			load := func(o Options) *Model { return loadWith(t, path, o) }
			plain := load(Options{Threads: 2, unfused: true})
			fused := load(Options{Threads: 2, ggmlBlocks: true})
			cpu := load(Options{Threads: 2})
			one := load(Options{Threads: 1})
			if plain.fused || plain.cpu != nil || !fused.fused || fused.cpu != nil || cpu.cpu == nil || one.cpu == nil {
				t.Fatalf("unfused gave fused %v cpu %v; ggmlBlocks fused %v cpu %v; the default cpu %v", plain.fused, plain.cpu != nil, fused.fused, fused.cpu != nil, cpu.cpu != nil)
			}
			pcm := jfk(t)
			spec, err := plain.mel.Compute(pcm, frontend.NSamples)
			if err != nil {
				t.Fatal(err)
			}
			enc := func(m *Model, frames int) []float32 {
				out, err := m.encode(m.caches.slots[0], spec.WindowN(0, frames), true)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			for _, frames := range []int{frontend.NFrames, 1100} { // a whole window, and a part (550 positions)
				want := enc(plain, frames)
				for name, m := range map[string]*Model{"fused attention": fused, "cpuenc, 2 threads": cpu, "cpuenc, 1 thread": one} {
					if d := maxRelDiff(want, enc(m, frames)); d > c.tol {
						t.Errorf("%d frames, %s: the fused encoder differs by %.2g (relative to the largest)", frames, name, d)
					}
				}
			}
			opts := DecodeOptions{Language: "en", Temperatures: []float64{0}, MaxTokens: 48, Timestamps: true}
			tokens := func(m *Model) []int32 {
				tr, err := m.Transcribe(context.Background(), pcm, opts)
				if err != nil {
					t.Fatal(err)
				}
				var out []int32
				for _, s := range tr.Segments {
					out = append(out, s.Tokens...)
				}
				return out
			}
			want := tokens(plain)
			for name, m := range map[string]*Model{"fused attention": fused, "cpuenc": cpu} {
				if got := tokens(m); len(want) == 0 || !slices.Equal(got, want) {
					t.Errorf("%s decoded %v; one graph %v", name, got, want)
				}
			}
		})
	}
}

// TestThreadsFollowTheStep: with cpuenc's kernels the model reaches ggml's
// CPU threads (ggmlcpu: the pinned module's layout is as expected): a
// decoder step of one sequence in ggml (a model whose decoder stays there:
// quantized, or too big for the CPU decoder) runs on one thread, an
// encoder graph on all of them; fixedThreads leaves them alone.
func TestThreadsFollowTheStep(t *testing.T) {
	path := testmodels.Generated(t, testmodels.WhisperGGUF)
	m, err := Load(context.Background(), path, Options{Threads: 2, ggmlDecoder: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	if m.ggmlThreads == nil || m.ggmlNow != 2 {
		t.Fatalf("no thread setter (%v) or threads %d: ollama's ggml backend layout changed (engine/asr/ggmlcpu)", m.ggmlThreads != nil, m.ggmlNow)
	}
	spec, err := m.mel.Compute(jfk(t), frontend.NSamples)
	if err != nil {
		t.Fatal(err)
	}
	sl := m.caches.slots[0]
	if _, err := m.encode(sl, spec.WindowN(0, frontend.NFrames), false); err != nil || m.ggmlNow != 2 {
		t.Fatalf("after the encoder: threads %d (%v)", m.ggmlNow, err)
	}
	prompt := []int32{m.tok.SOT, m.tok.NoTimestamps}
	if _, err := m.logits(sl, [][]int32{prompt}, 0, []int{1}); err != nil || m.ggmlNow != 2 {
		t.Fatalf("after a prompt of two tokens: threads %d (%v)", m.ggmlNow, err)
	}
	if _, err := m.step(sl, []int32{440}, len(prompt), nil); err != nil || m.ggmlNow != 1 {
		t.Fatalf("after a step of one sequence: threads %d (%v)", m.ggmlNow, err)
	}
	fixed, err := Load(context.Background(), path, Options{Threads: 2, fixedThreads: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fixed.Close)
	if fixed.ggmlThreads != nil {
		t.Error("fixedThreads: a thread setter")
	}
}
