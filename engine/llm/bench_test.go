package llm

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/engine/models/testmodels"
)

// The throughput benchmarks run the same GGUF (a 110M-parameter llama
// shape in Q8_0, random weights: speed does not depend on their values)
// through boxd's engine and through `ollama serve` built from the pinned
// module, in the same run, and report each side's tokens per second and
// boxd's ratio to ollama (medians over alternating rounds). Every request
// starts with a distinct line so neither side can reuse a cached prompt.
//
// Environment (the GPU check, gpu/check/check.sh, sets them):
//
//	BOXD_BENCH_LLM_MODEL   the GGUF both sides run (default: the generated 110M Q8_0 file)
//	BOXD_BENCH_GPU_LAYERS  layers boxd offloads (default 0: CPU; 999: all). Not 0: ollama
//	                       must hold most of the model in GPU memory (/api/ps), or the
//	                       benchmark fails; ollama_vram_frac reports its share
//	BOXD_BENCH_STREAMS     stream counts of BenchmarkAggregate (default 1,4,8)
//	BOXD_BENCH_ROUNDS      alternating rounds per iteration (default 5)
//	BOXD_BENCH_DECODE      tokens generated per stream (default 96)
//	BOXD_BENCH_THREADS     boxd's threads (default 0: as boxd serve picks them; to compare settings)
//	BOXD_BENCH_LOAD        busy processes BenchmarkDecodeLoaded runs beside both sides (default 2)

const (
	benchCtx     = 1024
	benchPrompt  = 150 // words (about 450 tokens) for the prompt-processing run
	benchThreads = 0   // all CPUs, as ollama uses
)

// benchModel is the GGUF the throughput benchmarks run.
func benchModel(b *testing.B) string {
	if p := os.Getenv("BOXD_BENCH_LLM_MODEL"); p != "" {
		return p
	}
	return testmodels.Generated(b, testmodels.BenchFile)
}

var benchRun int

func uniquePrompt(words int) string {
	benchRun++
	var b strings.Builder
	fmt.Fprintf(&b, "Run %d of the benchmark. ", benchRun)
	base := strings.Fields("the patient reports lower back pain after lifting a heavy box and the roof inspection found cracked shingles near the chimney")
	for i := range words {
		b.WriteString(base[i%len(base)])
		b.WriteByte(' ')
	}
	return b.String()
}

type sideResult struct {
	tokens int
	dur    time.Duration
}

func (s sideResult) rate() float64 { return float64(s.tokens) / s.dur.Seconds() }

// boxdStreams runs n concurrent greedy streams and counts generated (or,
// with countPrompt, prompt) tokens.
func boxdStreams(b *testing.B, e *Engine, n, words, maxTokens int, countPrompt bool) sideResult {
	b.Helper()
	prompts := make([][]int32, n)
	for i := range prompts {
		toks, err := e.Tokenize(uniquePrompt(words), true, true)
		if err != nil {
			b.Fatal(err)
		}
		prompts[i] = toks
	}
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j, err := e.Generate(context.Background(), Request{Prompt: prompts[i], MaxTokens: maxTokens})
			if err != nil {
				b.Error(err)
				return
			}
			r, _ := j.Wait(context.Background())
			mu.Lock()
			if countPrompt {
				total += r.PromptTokens
			} else {
				total += r.CompletionTokens
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return sideResult{tokens: total, dur: time.Since(start)}
}

func ollamaStreams(b *testing.B, o *ollama, n, words, maxTokens int, countPrompt bool) sideResult {
	b.Helper()
	prompts := make([]string, n)
	for i := range prompts {
		prompts[i] = uniquePrompt(words)
	}
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := o.generate(context.Background(), prompts[i], map[string]any{"temperature": 0, "num_predict": maxTokens, "num_ctx": benchCtx, "repeat_penalty": 1.0})
			if err != nil {
				b.Error(err)
				return
			}
			mu.Lock()
			if countPrompt {
				total += r.PromptEvalCount
			} else {
				total += r.EvalCount
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return sideResult{tokens: total, dur: time.Since(start)}
}

// benchRounds is how many alternating boxd/ollama runs one benchmark
// iteration makes by default. On a shared machine one run can be 15 % off
// (the two identical one-stream benchmarks have differed that much), so
// each iteration reports medians over the rounds, and the order alternates
// so a drift in machine speed does not always favour the side that runs
// first.
const benchRounds = 5

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// compare runs both sides benchRounds times per iteration, alternating
// which goes first, and reports each side's median rate, the median of the
// per-round ratios, and the lowest and highest ratio seen.
func compare(b *testing.B, parallel, streams, words, maxTokens int, countPrompt bool) {
	model := benchModel(b)
	gpuLayers := testmodels.EnvInt(b, "BOXD_BENCH_GPU_LAYERS", 0)
	rounds := max(1, testmodels.EnvInt(b, "BOXD_BENCH_ROUNDS", benchRounds))
	// As boxd serve: the file's facts first, then the engine.
	info, err := ReadInfo(context.Background(), model)
	if err != nil {
		b.Fatal(err)
	}
	o := startOllama(b, model, parallel)
	threads := testmodels.EnvInt(b, "BOXD_BENCH_THREADS", benchThreads)
	// Threads 0 is boxd serve's default: all the CPUs, tuned down when
	// fewer are measured faster (package threadtune).
	e, err := Open(context.Background(), EngineOptions{Options: Options{Path: model, ContextLength: benchCtx, Parallel: parallel, Threads: threads, GPULayers: gpuLayers, TuneThreads: threads == 0}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	// Warm both (model load, first graph).
	boxdStreams(b, e, 1, 8, 4, false)
	ollamaStreams(b, o, 1, 8, 4, false)
	if gpuLayers != 0 {
		// A GPU comparison is void if ollama left the model on the CPU.
		frac, err := o.vramFraction(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		defer b.ReportMetric(frac, "ollama_vram_frac") // after ResetTimer, which drops metrics
		if frac < 0.5 {
			b.Fatalf("ollama holds only %.0f%% of the model in GPU memory: the comparison would not be GPU against GPU", 100*frac)
		}
	}
	b.ResetTimer()
	var bx, ol, ratios []float64
	for i := range b.N * rounds {
		var rb, ro sideResult
		if i%2 == 0 {
			rb = boxdStreams(b, e, streams, words, maxTokens, countPrompt)
			ro = ollamaStreams(b, o, streams, words, maxTokens, countPrompt)
		} else {
			ro = ollamaStreams(b, o, streams, words, maxTokens, countPrompt)
			rb = boxdStreams(b, e, streams, words, maxTokens, countPrompt)
		}
		if rb.tokens == 0 || ro.tokens == 0 {
			b.Fatalf("a side generated nothing (boxd %d, ollama %d tokens)", rb.tokens, ro.tokens)
		}
		bx = append(bx, rb.rate())
		ol = append(ol, ro.rate())
		ratios = append(ratios, rb.rate()/ro.rate())
	}
	b.StopTimer()
	b.ReportMetric(median(bx), "boxd_tok/s")
	b.ReportMetric(median(ol), "ollama_tok/s")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(slices.Min(ratios), "ratio_min")
	b.ReportMetric(slices.Max(ratios), "ratio_max")
	b.ReportMetric(float64(info.SizeBytes)/1e9, "model_GB")
}

// BenchmarkDecodeSingle: one stream, short prompt, generated tokens/s.
func BenchmarkDecodeSingle(b *testing.B) {
	compare(b, 1, 1, 4, testmodels.EnvInt(b, "BOXD_BENCH_DECODE", 96), false)
}

// BenchmarkDecodeLoaded is BenchmarkDecodeSingle on a busy machine:
// BOXD_BENCH_LOAD processes (default 2) spin beside both sides for the
// whole run, as other work on an office box would, so the ratio shows
// how each side's threads fare when they do not have the CPUs to
// themselves (ggml's threads meet at barriers every layer, and a thread
// descheduled there stalls the others).
func BenchmarkDecodeLoaded(b *testing.B) {
	n := testmodels.EnvInt(b, "BOXD_BENCH_LOAD", 2)
	for range n {
		busy := exec.Command("/bin/sh", "-c", "while :; do :; done")
		if err := busy.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = busy.Process.Kill()
			_ = busy.Wait()
		})
	}
	b.ReportMetric(float64(n), "busy_procs")
	compare(b, 1, 1, 4, testmodels.EnvInt(b, "BOXD_BENCH_DECODE", 96), false)
}

// BenchmarkPromptProcessing: one stream, a long prompt, prompt tokens/s.
func BenchmarkPromptProcessing(b *testing.B) { compare(b, 1, 1, benchPrompt, 1, true) }

// BenchmarkAggregate: N concurrent streams (OLLAMA_NUM_PARALLEL = N),
// generated tokens/s over all of them.
func BenchmarkAggregate(b *testing.B) {
	var counts []int
	for _, f := range strings.Split(cmp.Or(os.Getenv("BOXD_BENCH_STREAMS"), "1,4,8"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("BOXD_BENCH_STREAMS=%q: want stream counts such as 1,4,8", os.Getenv("BOXD_BENCH_STREAMS"))
		}
		counts = append(counts, n)
	}
	decode := testmodels.EnvInt(b, "BOXD_BENCH_DECODE", 96)
	for _, n := range counts {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) { compare(b, n, n, 4, decode, false) })
	}
}
