package asr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	"boxd/engine/asr/frontend"
	"boxd/engine/models/testmodels"
)

// TestBatchedStepMatchesAlone: one graph over several slots' steps (each
// with its own window, audio context, prompt length and beams) gives each
// slot the logits its step gives alone.
func TestBatchedStepMatchesAlone(t *testing.T) {
	m := loadTiny(t, testmodels.WhisperGGUF)
	pcm := jfk(t)
	spec, err := m.mel.Compute(pcm, frontend.NSamples)
	if err != nil {
		t.Fatal(err)
	}
	tk := m.tok
	type setup struct {
		frames, seek int
		prompt       []int32
		beams        int
	}
	setups := []setup{
		{frames: frontend.NFrames, prompt: []int32{tk.SOT, tk.NoTimestamps, 440, 1119}, beams: 1},
		{frames: 600, seek: 200, prompt: []int32{tk.SOT, tk.NoTimestamps}, beams: 3},
		{frames: frontend.NFrames, seek: 100, prompt: []int32{tk.Prev, 50, 60, 70, tk.SOT, tk.NoTimestamps, 9}, beams: 1},
	}
	var reqs []*stepReq
	for i, s := range setups {
		sl := m.caches.slots[i]
		if _, err := m.encode(sl, spec.WindowN(s.seek, s.frames), false); err != nil {
			t.Fatal(err)
		}
		if _, err := m.logits(sl, [][]int32{s.prompt}, 0, []int{len(s.prompt) - 1}); err != nil {
			t.Fatal(err)
		}
		if s.beams > 1 {
			if err := m.reorderAlone(sl, make([]int32, s.beams), len(s.prompt)); err != nil {
				t.Fatal(err)
			}
		}
		toks := make([]int32, s.beams)
		for b := range toks {
			toks[b] = int32(300 + 17*i + b)
		}
		reqs = append(reqs, &stepReq{g: group{sl: sl, tokens: toks, B: s.beams, past: len(s.prompt)}})
	}
	// Alone: one step per slot (a step rewrites the same cache positions
	// with the same values, so it can run again batched).
	alone := make([][][]float32, len(reqs))
	for i, r := range reqs {
		out, err := m.step(r.g.sl, r.g.tokens, r.g.past, nil)
		if err != nil {
			t.Fatal(err)
		}
		alone[i] = out
	}
	before := m.Stats().Steps
	for _, r := range reqs {
		r.done = make(chan struct{})
	}
	m.exec.Lock()
	m.runSteps(reqs)
	m.exec.Unlock()
	if got := m.Stats().Steps - before; got != 1 {
		t.Errorf("the batch ran %d graphs, want 1", got)
	}
	for i, r := range reqs {
		if r.err != nil {
			t.Fatal(r.err)
		}
		if len(r.out) != len(alone[i]) {
			t.Fatalf("slot %d: %d sequences, want %d", i, len(r.out), len(alone[i]))
		}
		for b := range r.out {
			if d := maxRelDiff(r.out[b], alone[i][b]); d > 1e-4 {
				t.Errorf("slot %d sequence %d: batched logits differ from alone by %.2g (relative to the largest)", i, b, d)
			}
			if argmaxF32(r.out[b]) != argmaxF32(alone[i][b]) {
				t.Errorf("slot %d sequence %d: batched best token %d, alone %d", i, b, argmaxF32(r.out[b]), argmaxF32(alone[i][b]))
			}
		}
	}
}

func maxRelDiff(a, b []float32) float64 {
	var d, scale float64
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
		scale = math.Max(scale, math.Abs(float64(b[i])))
	}
	return d / math.Max(scale, 1e-9)
}

func argmaxF32(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// TestConcurrentTranscriptionsMatchAlone: transcriptions running at once
// (greedy, beams, sampling, a short audio context, language detection)
// give what each gives alone, in fewer decoder graphs than alone.
func TestConcurrentTranscriptionsMatchAlone(t *testing.T) {
	m := loadTiny(t, testmodels.WhisperGGUF)
	pcm := jfk(t)
	opts := []DecodeOptions{
		{Language: "en", Temperatures: []float64{0}, MaxTokens: 40},
		{Language: "en", Temperatures: []float64{0}, MaxTokens: 25, AudioContext: 400},
		{Language: "auto", DetectAmong: []string{"en", "es"}, Temperatures: []float64{0}, MaxTokens: 30, Timestamps: true},
		{Language: "en", Temperatures: []float64{0}, BeamSize: 3, MaxTokens: 20},
		{Language: "en", Temperatures: []float64{0.5}, BestOf: 2, Seed: 3, MaxTokens: 20},
	}
	inputs := [][]float32{pcm, pcm[8000:], pcm[:len(pcm)/2], pcm[16000:], pcm}
	ctx := context.Background()
	want := make([]string, len(opts))
	before := m.Stats().Steps
	for i, o := range opts {
		tr, err := m.Transcribe(ctx, inputs[i], o)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = fmt.Sprintf("%s|%q", tr.Language, tr.Text())
	}
	aloneSteps := m.Stats().Steps - before
	before = m.Stats().Steps
	got := make([]string, len(opts))
	var wg sync.WaitGroup
	for i, o := range opts {
		wg.Go(func() {
			tr, err := m.Transcribe(ctx, inputs[i], o)
			if err != nil {
				got[i] = err.Error()
				return
			}
			got[i] = fmt.Sprintf("%s|%q", tr.Language, tr.Text())
		})
	}
	wg.Wait()
	togetherSteps := m.Stats().Steps - before
	for i := range opts {
		if got[i] != want[i] {
			t.Errorf("%+v: together %s, alone %s", opts[i], got[i], want[i])
		}
	}
	t.Logf("decoder graphs: alone %d, together %d", aloneSteps, togetherSteps)
	if togetherSteps >= aloneSteps*3/4 {
		t.Errorf("together the transcriptions ran %d decoder graphs, alone %d: the steps were not batched", togetherSteps, aloneSteps)
	}
}

// TestStepReturnsWhenRunByAnother: a step another slot's batch has run
// returns at once, though that slot still holds the backend (waiting for
// more requests, or running the next graph). It used to queue for the
// backend first, and with four transcriptions at once the one holding it
// waited batchWait in vain for the slots stuck behind it: they split into
// pairs that took turns (336 decoder graphs for four 221-step windows, 225
// once fixed; 4 at once went from 5.5 to 3.8 s of wall time).
func TestStepReturnsWhenRunByAnother(t *testing.T) {
	m := loadTiny(t, testmodels.WhisperGGUF)
	spec, err := m.mel.Compute(jfk(t), frontend.NSamples)
	if err != nil {
		t.Fatal(err)
	}
	sl := m.caches.slots[0]
	if _, err := m.encode(sl, spec.WindowN(0, frontend.NFrames), false); err != nil {
		t.Fatal(err)
	}
	prompt := []int32{m.tok.SOT, m.tok.NoTimestamps}
	if _, err := m.logits(sl, [][]int32{prompt}, 0, []int{1}); err != nil {
		t.Fatal(err)
	}
	m.exec.Lock() // another slot holds the backend
	done := make(chan error, 1)
	go func() {
		_, err := m.step(sl, []int32{440}, len(prompt), nil)
		done <- err
	}()
	// The holder takes the request and runs it, and keeps the backend.
	var reqs []*stepReq
	for deadline := time.Now().Add(5 * time.Second); len(reqs) == 0 && time.Now().Before(deadline); {
		reqs = m.batch.take(0)
	}
	if len(reqs) != 1 {
		m.exec.Unlock()
		t.Fatalf("%d requests came", len(reqs))
	}
	m.runSteps(reqs)
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the step did not return while another slot held the backend")
	}
	m.exec.Unlock()
}

// TestSlotsBoundConcurrency: with one slot, transcriptions wait for it
// (and give up when their context ends); Close waits for the running one
// and later calls fail.
func TestSlotsBoundConcurrency(t *testing.T) {
	m, err := Load(context.Background(), testmodels.Generated(t, testmodels.WhisperGGUF), Options{Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	pcm := jfk(t)
	o := DecodeOptions{Language: "en", Temperatures: []float64{0}, MaxTokens: 30}
	running := make(chan error, 1)
	go func() {
		_, err := m.Transcribe(context.Background(), pcm, o)
		running <- err
	}()
	for len(m.free) == 0 { // until the first holds the slot
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := m.Transcribe(ctx, pcm, o); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a second transcription with one slot: %v, want it to wait until its deadline", err)
	}
	m.Close()
	if err := <-running; err != nil {
		t.Errorf("the running transcription: %v (Close must wait for it)", err)
	}
	if _, err := m.Transcribe(context.Background(), pcm, o); !errors.Is(err, errClosed) {
		t.Errorf("after Close: %v, want %v", err, errClosed)
	}
	m.Close() // twice is fine
}

// BenchmarkBatchedStep times one decoder step of 1 to 4 slots in one graph
// (tiny F16 shape, each slot with a whole window encoded): step_ms, and
// per_slot_ms, the step's time over the slots it serves.
func BenchmarkBatchedStep(b *testing.B) {
	m, err := Load(context.Background(), testmodels.Generated(b, testmodels.WhisperF16GGUF), Options{Slots: 4})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	spec, err := m.mel.Compute(jfk(b), frontend.NSamples)
	if err != nil {
		b.Fatal(err)
	}
	tk := m.tok
	prompt := []int32{tk.SOT, tk.NoTimestamps}
	for _, sl := range m.caches.slots {
		if _, err := m.encode(sl, spec.WindowN(0, frontend.NFrames), false); err != nil {
			b.Fatal(err)
		}
		if _, err := m.logits(sl, [][]int32{prompt}, 0, []int{1}); err != nil {
			b.Fatal(err)
		}
	}
	if a := os.Getenv("BOXD_BENCH_AUDIO_CTX"); a != "" {
		for _, sl := range m.caches.slots {
			fmt.Sscan(a, &sl.audioCtx)
		}
	}
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var total time.Duration
			for i := range b.N {
				reqs := make([]*stepReq, n)
				for s := range n {
					reqs[s] = &stepReq{g: group{sl: m.caches.slots[s], tokens: []int32{int32(400 + s)}, B: 1, past: len(prompt) + i%100}, done: make(chan struct{})}
				}
				start := time.Now()
				m.exec.Lock()
				m.runSteps(reqs)
				m.exec.Unlock()
				total += time.Since(start)
			}
			ms := float64(total.Microseconds()) / 1000 / float64(b.N)
			b.ReportMetric(ms, "step_ms")
			b.ReportMetric(ms/float64(n), "per_slot_ms")
		})
	}
}

// TestEncoderKeyPaddingChangesNothing: the encoder's keys padded for the
// CPU kernel (a multiple of 8, masked) and unpadded, as on a GPU, give the
// same encoding.
func TestEncoderKeyPaddingChangesNothing(t *testing.T) {
	m := loadTiny(t, testmodels.WhisperGGUF)
	spec, err := m.mel.Compute(jfk(t), frontend.NSamples)
	if err != nil {
		t.Fatal(err)
	}
	sl := m.caches.slots[0]
	enc := func(pad bool) []float32 {
		m.padKeys = pad
		out, err := m.encode(sl, spec.WindowN(0, frontend.NFrames), true)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	padded, plain := enc(true), enc(false)
	if d := maxRelDiff(padded, plain); d > 1e-5 {
		t.Errorf("padded and unpadded encoder outputs differ by %.2g (relative to the largest)", d)
	}
}
