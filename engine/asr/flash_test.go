package asr

import (
	"context"
	"slices"
	"sync"
	"testing"

	"boxd/engine/asr/frontend"
	"boxd/engine/models/testmodels"
)

// TestFlashAttentionMatches: the backend opened with flash attention (for
// a GPU; here ggml's CPU kernel) encodes a window as the products and
// softmax do, and its decoder, reading values cached in the kernel's
// layout, decodes the same tokens: greedy alone, greedy with two
// transcriptions batched (cross attention over two slots, masked), and
// beam search (keys shared by the beams, caches reordered).
func TestFlashAttentionMatches(t *testing.T) {
	for _, c := range []struct {
		name string
		tol  float64
	}{
		{testmodels.WhisperGGUF, 1e-4},
		// The projections round their inputs to F16 (2^-11 relative),
		// so a last-bit difference in the attention can show that large.
		{testmodels.WhisperF16GGUF, 1e-3},
	} {
		name := c.name
		t.Run(name, func(t *testing.T) {
			path := testmodels.Generated(t, name)
			load := func(flash bool) *Model {
				mode := FlashOff
				if flash {
					mode = FlashOn
				}
				m, err := Load(context.Background(), path, Options{Threads: 2, Flash: mode})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(m.Close)
				return m
			}
			plain, flash := load(false), load(true)
			if plain.flash || !plain.padKeys || !flash.flash || flash.padKeys {
				t.Fatalf("off gave flash %v padKeys %v; on gave flash %v padKeys %v", plain.flash, plain.padKeys, flash.flash, flash.padKeys)
			}
			pcm := jfk(t)
			spec, err := plain.mel.Compute(pcm, frontend.NSamples)
			if err != nil {
				t.Fatal(err)
			}
			enc := func(m *Model) []float32 {
				out, err := m.encode(m.caches.slots[0], spec.WindowN(0, frontend.NFrames), true)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			// ggml's CPU kernel sums in another order (online softmax).
			if d := maxRelDiff(enc(plain), enc(flash)); d > c.tol {
				t.Errorf("encoder outputs with and without flash attention differ by %.2g (relative to the largest)", d)
			}
			tokens := func(m *Model, n int, opts DecodeOptions) [][]int32 {
				out := make([][]int32, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						tr, err := m.Transcribe(context.Background(), pcm, opts)
						if err != nil {
							t.Error(err)
							return
						}
						for _, s := range tr.Segments {
							out[i] = append(out[i], s.Tokens...)
						}
					})
				}
				wg.Wait()
				return out
			}
			greedy := DecodeOptions{Language: "en", Temperatures: []float64{0}, MaxTokens: 48, Timestamps: true}
			beam := greedy
			beam.BeamSize, beam.MaxTokens = 5, 24
			for _, c := range []struct {
				what string
				n    int
				opts DecodeOptions
			}{{"greedy", 1, greedy}, {"greedy, two batched", 2, greedy}, {"beam 5", 1, beam}} {
				want := tokens(plain, 1, c.opts)[0]
				if len(want) == 0 {
					t.Fatalf("%s: no tokens decoded", c.what)
				}
				for i, got := range tokens(flash, c.n, c.opts) {
					if !slices.Equal(got, want) {
						t.Errorf("%s, run %d: with flash attention decoded %v; without, %v", c.what, i, got, want)
					}
				}
			}
		})
	}
}

// TestFlashAuto: asr.flash_attention auto is off when the layers stay on
// the CPU (where ggml's kernel made the encoder 1.7x slower) and on when
// they are on a GPU; on and off are taken as given. The words are the
// setting's, and anything else is refused.
func TestFlashAuto(t *testing.T) {
	for _, c := range []struct {
		word     string
		cpu, gpu bool
	}{
		{"auto", false, true},
		{"on", true, true},
		{"off", false, false},
	} {
		f, err := ParseFlash(c.word)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.resolve(false); got != c.cpu {
			t.Errorf("%s on the CPU: flash %v, want %v", c.word, got, c.cpu)
		}
		if got := f.resolve(true); got != c.gpu {
			t.Errorf("%s on a GPU: flash %v, want %v", c.word, got, c.gpu)
		}
	}
	for _, bad := range []string{"", "true", "Auto", "yes"} {
		if _, err := ParseFlash(bad); err == nil {
			t.Errorf("ParseFlash(%q) took it", bad)
		}
	}
	if FlashOff != Flash(0) {
		t.Error("the zero Flash must be off: callers that do not say get the CPU's choice")
	}
	// A real load: auto with no GPU layers opens the backend without
	// flash attention and pads the keys, as off does.
	m, err := Load(context.Background(), testmodels.Generated(t, testmodels.WhisperGGUF), Options{Threads: 2, Flash: FlashAuto, GPULayers: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.FlashAttention() || !m.padKeys {
		t.Errorf("auto on the CPU: flash %v, padKeys %v; want off and padded", m.FlashAttention(), m.padKeys)
	}
}
