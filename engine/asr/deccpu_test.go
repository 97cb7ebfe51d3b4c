package asr

import (
	"testing"

	"boxd/engine/asr/frontend"
	"boxd/engine/models/testmodels"
)

// TestCPUDecoderMatchesGGML: on the CPU the decoder runs in cpuenc
// (loadCPUDecoder), F32 and F16 models alike, with one thread or two, and
// its logits are ggml's decoder's within the summation-order tolerance:
// a prompt (every row), steps of three beams after a reorder, and steps of
// two slots batched, whose windows differ in length.
func TestCPUDecoderMatchesGGML(t *testing.T) {
	for _, c := range []struct {
		name string
		tol  float64
	}{
		{testmodels.WhisperGGUF, 1e-4},
		{testmodels.WhisperF16GGUF, 1e-3},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := testmodels.Generated(t, c.name)
			load := func(o Options) *Model { return loadWith(t, path, o) }
			ref := load(Options{Threads: 2, ggmlDecoder: true})
			cpus := []*Model{load(Options{Threads: 2}), load(Options{Threads: 1})}
			if ref.dec != nil || cpus[0].dec == nil || cpus[1].dec == nil || cpus[0].out != nil {
				t.Fatalf("ggmlDecoder gave a CPU decoder %v; the default %v %v (and an output projection %v)", ref.dec != nil, cpus[0].dec != nil, cpus[1].dec != nil, cpus[0].out != nil)
			}
			spec, err := ref.mel.Compute(jfk(t), frontend.NSamples)
			if err != nil {
				t.Fatal(err)
			}
			tk := ref.tok
			prompt := []int32{tk.Prev, 50, 60, 70, tk.SOT, tk.NoTimestamps, 440}
			run := func(m *Model) [][]float32 {
				var out [][]float32
				s0, s1 := m.caches.slots[0], m.caches.slots[1]
				for i, w := range []struct {
					sl           *slot
					seek, frames int
				}{{s0, 0, frontend.NFrames}, {s1, 300, 700}} {
					if _, err := m.encode(w.sl, spec.WindowN(w.seek, w.frames), false); err != nil {
						t.Fatal(err)
					}
					rows := []int{len(prompt) - 1}
					if i == 0 {
						rows = []int{0, 1, 2, 3, 4, 5, 6}
					}
					lg, err := m.logits(w.sl, [][]int32{prompt}, 0, rows)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, lg[0]...)
				}
				past := len(prompt)
				if err := m.reorderAlone(s0, []int32{0, 0, 0}, past); err != nil {
					t.Fatal(err)
				}
				for step := range 3 {
					toks := []int32{int32(300 + step), int32(400 + step), int32(500 + step)}
					var parents []int32
					if step == 2 {
						parents = []int32{2, 0, 1}
					}
					lg, err := m.step(s0, toks, past+step, parents)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, lg...)
				}
				r0 := &stepReq{g: group{sl: s0, tokens: []int32{7, 8, 9}, B: 3, past: past + 3}, done: make(chan struct{})}
				r1 := &stepReq{g: group{sl: s1, tokens: []int32{11}, B: 1, past: past}, done: make(chan struct{})}
				m.exec.Lock()
				m.runSteps([]*stepReq{r1, r0})
				m.exec.Unlock()
				for _, r := range []*stepReq{r0, r1} {
					if r.err != nil {
						t.Fatal(r.err)
					}
					out = append(out, r.out...)
				}
				return out
			}
			want := run(ref)
			for i, m := range cpus {
				got := run(m)
				if len(got) != len(want) {
					t.Fatalf("%d rows of logits, ggml %d", len(got), len(want))
				}
				for r := range want {
					if d := maxRelDiff(got[r], want[r]); d > c.tol {
						t.Errorf("%d threads, row %d: the CPU decoder differs from ggml's by %.2g of the largest logit", 2-i, r, d)
					}
					if argmaxF32(got[r]) != argmaxF32(want[r]) {
						t.Errorf("%d threads, row %d: best token %d, ggml's %d", 2-i, r, argmaxF32(got[r]), argmaxF32(want[r]))
					}
				}
			}
		})
	}
}
