package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/engine/asr"
	"boxd/engine/asr/stream"
	"boxd/engine/asr/tokenizer"
	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/gpu"
	"boxd/pipelines/chat"
	"boxd/pipelines/live"
	"boxd/pipelines/live/field"
	"boxd/pipelines/live/livetest"
	"boxd/pipelines/live/sales"
	"boxd/pipelines/live/scripts"
	"boxd/pipelines/live/translate"
	"boxd/pipelines/replay"
)

// The live benchmarks replay demo scripts at 1.0× through real live
// sessions: the real speech engine (the random-weight tiny Whisper, so the
// text is meaningless but every decode costs what tiny costs, and the real
// Silero VAD), the vertical's real lanes on the generated tiny chat model,
// the box's defaults (asr.beam_size 5, asr.partial_step_ms 1000,
// asr.max_sentence_s 20, lane debounce 1 s, 4 parallel LLM sequences of
// 8,192 tokens) and one GPU arbiter as boxd serve has (asr.parallel
// speech decodes at once in its "asr" pool, their decoder steps batched). The method and the figures of a run are in
// docs/decisions.md ("Live latency benchmark").
//
// Environment:
//
//	BOXD_BENCH_LIVE_SCRIPTS      scripts BenchmarkReplayLatency replays
//	                             (default sales-discovery-logistics,field-roof-inspection)
//	BOXD_BENCH_LIVE_SECONDS      cut each of its replays to the first N s (default: whole script)
//	BOXD_BENCH_CONCURRENT_SECONDS audio each concurrent session plays (default 60)
//	BOXD_BENCH_MAX_SESSIONS      most concurrent sessions tried (default 8)
//	BOXD_BENCH_BEAM              beam width of finals (default 5, asr.beam_size's default; 1: greedy)
//	BOXD_BENCH_LLM_THREADS       the chat model's CPU threads (default 1)
//	BOXD_BENCH_ASR_THREADS       Whisper's CPU threads (default: the CPUs the chat model leaves,
//	                             at least 1; boxd serve gives both every CPU, and on a small
//	                             box the two then spin against each other)
//	BOXD_BENCH_ASR_PARALLEL      transcriptions at once, their decoder steps batched (default 4,
//	                             asr.parallel's default; 1: one at a time, as before batching)
//	BOXD_BENCH_SESSIONS          BenchmarkConcurrentLiveSessions runs just these counts (e.g. 4)
//	                             instead of 1, 2, … up to the first that falls behind
//	BOXD_BENCH_ASR_MODEL         the Whisper GGUF (default: the generated random tiny F16 model)
//	BOXD_BENCH_CHAT_MODEL        the chat GGUF of the lanes (default: the generated tiny chat model)
//	BOXD_BENCH_GPU_LAYERS        layers both models offload (default 0: CPU; -1 or 999: all)
//	BOXD_BENCH_ASR_FLASH         1: asr.flash_attention on (default off)
//	BOXD_BENCH_LLM_PARALLEL      the chat model's sequences (default 4, models.llm.parallel's default)
//	BOXD_BENCH_CHAT_STREAMS      chat streams BenchmarkLiveUnderChatLoad runs beside the session (default 8)
//
// Latencies: final_* run from the end of a spoken line to its final
// transcript event; partial_* from the moment the last audio a partial
// re-decode covers was spoken to the end of that decode, whether or not
// its text changed what is shown (random weights rarely agree with
// themselves, so shown partials are too few to time).

const (
	// realTimeLag is how far a final may trail the end of its line, and
	// how long the transcriber may take to drain at stop, for a session to
	// count as keeping up. One session on an idle 2-CPU box stays within
	// about 3 s (the VAD's wait for the pause plus a beam-5 decode of the
	// whole 30 s window); a box that cannot keep up falls further behind
	// with every sentence, so within the minute played it crosses any fixed
	// bound. 5 s leaves room for a long sentence's decode and still reads
	// as live captions.
	realTimeLag = 5 * time.Second
	// lineSlack is how far before a script line's start a final's t may lie
	// and still belong to that line (Silero starts early, the VAD pads
	// 30 ms). Lines are separated by 0.7 s pauses, so no piece of the line
	// before can start this late.
	lineSlack = 0.5
	// benchTokens is the chat budget: ample, never the limit.
	benchTokens = 100_000_000
)

// BenchmarkReplayLatency replays each script once per iteration at 1.0×
// through one session and reports, over the script's lines, the delay from
// the end of each spoken line to its final transcript event and to the
// first lane event whose run saw that final (median and p95, ms).
func BenchmarkReplayLatency(b *testing.B) {
	ids := strings.Split(envString("BOXD_BENCH_LIVE_SCRIPTS", "sales-discovery-logistics,field-roof-inspection"), ",")
	cut := envFloat(b, "BOXD_BENCH_LIVE_SECONDS", 0)
	m := loadBenchModels(b)
	for _, id := range ids {
		id = strings.TrimSpace(id)
		b.Run(id, func(b *testing.B) {
			sc, pcm, lines := benchScript(b, id, cut)
			var all lineDelays
			var stopDone time.Duration
			load := startLoadMeter(m)
			for range b.N {
				r := runSession(b, m, sc, pcm, lines, 0)
				all.add(r.delays)
				stopDone += r.stopDone
				b.Logf("%s: %.1f s of audio, %d lines, %d matched a final, %d finals, %d lane events, %d error events%s; drain at stop %s, stop to done %s",
					id, float64(len(pcm))/32000, len(lines), len(r.delays.final), r.finals, r.lanes, len(r.errors), firstError(r.errors), r.drain.Round(time.Millisecond), r.stopDone.Round(time.Millisecond))
			}
			all.report(b)
			b.ReportMetric(ms(stopDone)/float64(b.N), "stop_done_ms")
			load.report(b, float64(b.N)*float64(len(pcm))/32000)
		})
	}
}

// BenchmarkConcurrentLiveSessions runs 1, 2, 3, … sessions at once, each
// replaying the first BOXD_BENCH_CONCURRENT_SECONDS of
// sales-discovery-logistics at 1.0× on the shared engines, their starts
// spread evenly over 3 s (people do not all stop talking at once). A run
// keeps up in real time when, in every session, every line's final
// arrives within realTimeLag of the line's end and the transcriber drains
// what is queued at stop within realTimeLag. It stops at the first run
// that does not, or at BOXD_BENCH_MAX_SESSIONS, and reports the largest
// number that kept up as sessions_realtime (sub-benchmark "sustained").
func BenchmarkConcurrentLiveSessions(b *testing.B) {
	const id = "sales-discovery-logistics"
	m := loadBenchModels(b)
	sc, pcm, lines := benchScript(b, id, envFloat(b, "BOXD_BENCH_CONCURRENT_SECONDS", 60))
	maxN := int(envFloat(b, "BOXD_BENCH_MAX_SESSIONS", 8))
	counts := make([]int, 0, maxN)
	for n := 1; n <= maxN; n++ {
		counts = append(counts, n)
	}
	fixed := os.Getenv("BOXD_BENCH_SESSIONS") != ""
	if fixed {
		counts = counts[:0]
		for _, f := range strings.Split(os.Getenv("BOXD_BENCH_SESSIONS"), ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("BOXD_BENCH_SESSIONS=%q: want session counts such as 4 or 1,4", os.Getenv("BOXD_BENCH_SESSIONS"))
			}
			counts = append(counts, n)
		}
	}
	sustained := 0
	for _, n := range counts {
		kept := true
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			var all lineDelays
			load := startLoadMeter(m)
			for range b.N {
				results := make([]sessionResult, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						results[i] = runSession(b, m, sc, pcm, lines, time.Duration(i)*3*time.Second/time.Duration(n))
					})
				}
				wg.Wait()
				var worst, drain time.Duration
				var errs []string
				for i, r := range results {
					all.add(r.delays)
					errs = append(errs, r.errors...)
					w := slices.Max(append([]time.Duration{0}, r.delays.final...))
					worst, drain = max(worst, w), max(drain, r.drain)
					if w > realTimeLag || r.drain > realTimeLag || len(r.delays.final) == 0 {
						kept = false
					}
					if len(r.delays.final) < len(lines)/2 {
						b.Logf("session %d: only %d of %d lines matched a final", i, len(r.delays.final), len(lines))
					}
				}
				b.Logf("%d sessions × %.0f s: worst final delay %s, worst drain at stop %s, %d error events%s, real time %v",
					n, float64(len(pcm))/32000, worst.Round(time.Millisecond), drain.Round(time.Millisecond), len(errs), firstError(errs), kept)
				b.ReportMetric(ms(worst), "final_max_ms")
				b.ReportMetric(ms(drain), "drain_max_ms")
			}
			all.report(b)
			load.report(b, float64(b.N*n)*float64(len(pcm))/32000)
			realtime := 0.0
			if kept {
				realtime = 1
			}
			b.ReportMetric(realtime, "realtime")
		})
		if !kept {
			if fixed {
				continue
			}
			break
		}
		sustained = n
	}
	if !fixed {
		b.Run("sustained", func(b *testing.B) {
			b.ReportMetric(float64(sustained), "sessions_realtime")
		})
	}
}

// BenchmarkLiveUnderChatLoad is the arbiter's test: one session replays
// the first BOXD_BENCH_LIVE_SECONDS (default 30) of the first script of
// BOXD_BENCH_LIVE_SCRIPTS alone, then again while BOXD_BENCH_CHAT_STREAMS
// chat streams (128-token greedy requests, one after another, at the
// interactive priority chat completions use) run on the same chat model;
// the chat streams also run alone for the same time. Live must keep its
// latency; chat_cost is the share of chat throughput the session takes.
func BenchmarkLiveUnderChatLoad(b *testing.B) {
	id := strings.TrimSpace(strings.Split(envString("BOXD_BENCH_LIVE_SCRIPTS", "sales-discovery-logistics"), ",")[0])
	m := loadBenchModels(b)
	sc, pcm, lines := benchScript(b, id, envFloat(b, "BOXD_BENCH_LIVE_SECONDS", 30))
	streams := int(envFloat(b, "BOXD_BENCH_CHAT_STREAMS", 8))
	audio := time.Duration(len(pcm)/32) * time.Millisecond
	var alone float64
	b.Run("chat-alone", func(b *testing.B) {
		for range b.N {
			ctx, cancel := context.WithTimeout(context.Background(), audio)
			alone = chatLoad(ctx, b, m, streams)
			cancel()
		}
		b.ReportMetric(alone, "chat_tok/s")
	})
	b.Run("live-alone", func(b *testing.B) {
		var all lineDelays
		for range b.N {
			all.add(runSession(b, m, sc, pcm, lines, 0).delays)
		}
		all.report(b)
	})
	b.Run(fmt.Sprintf("live+chat%d", streams), func(b *testing.B) {
		var all lineDelays
		var rate float64
		for range b.N {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan float64, 1)
			go func() { done <- chatLoad(ctx, b, m, streams) }()
			all.add(runSession(b, m, sc, pcm, lines, 0).delays)
			cancel()
			rate = <-done
		}
		all.report(b)
		b.ReportMetric(rate, "chat_tok/s")
		if alone > 0 {
			b.ReportMetric(1-rate/alone, "chat_cost")
		}
	})
}

// chatLoad runs streams greedy chat requests back to back until ctx ends
// and returns the tokens generated per second over all of them.
func chatLoad(ctx context.Context, b *testing.B, m *benchModels, streams int) float64 {
	var mu sync.Mutex
	total := 0
	start := time.Now()
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() {
			for k := 0; ctx.Err() == nil; k++ {
				toks, err := m.llm.Tokenize(fmt.Sprintf("Stream %d, request %d. Summarise the roof inspection and the next steps for the crew.", i, k), true, true)
				if err != nil {
					b.Error(err)
					return
				}
				j, err := m.llm.Generate(ctx, llm.Request{Prompt: toks, MaxTokens: 128, Priority: gpu.Interactive})
				if err != nil {
					if ctx.Err() == nil {
						b.Error(err)
					}
					return
				}
				r, _ := j.Wait(context.Background())
				mu.Lock()
				total += r.CompletionTokens
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return float64(total) / time.Since(start).Seconds()
}

// benchModels are the engines every session shares, as in boxd serve.
type benchModels struct {
	speech *stream.Engine
	chat   *chat.Service
	llm    *llm.Engine
}

func loadBenchModels(b *testing.B) *benchModels {
	b.Helper()
	ctx := context.Background()
	arb := gpu.NewArbiter()
	llmThreads := int(envFloat(b, "BOXD_BENCH_LLM_THREADS", 1))
	asrThreads := int(envFloat(b, "BOXD_BENCH_ASR_THREADS", float64(max(1, runtime.NumCPU()-llmThreads))))
	b.Logf("%d CPUs: Whisper %d threads, chat model %d", runtime.NumCPU(), asrThreads, llmThreads)
	gpuLayers := int(envSigned(b, "BOXD_BENCH_GPU_LAYERS", 0))
	asrModel := envString("BOXD_BENCH_ASR_MODEL", "")
	if asrModel == "" {
		asrModel = testmodels.Generated(b, testmodels.WhisperF16GGUF)
	}
	chatModel := envString("BOXD_BENCH_CHAT_MODEL", "")
	if chatModel == "" {
		chatModel = testmodels.Generated(b, testmodels.ChatFile)
	}
	// As serve: asr.parallel transcriptions at once (their steps batched),
	// as many arbiter slots.
	parallel := int(envFloat(b, "BOXD_BENCH_ASR_PARALLEL", asr.DefaultSlots))
	e, err := stream.Load(ctx, asrModel, testmodels.Shared(b, "ggml-silero-v6.2.0.bin"),
		stream.Settings{BeamSize: int(envFloat(b, "BOXD_BENCH_BEAM", 5)), PartialStepMS: 1000, MaxSentenceS: 20, Threads: asrThreads, GPULayers: gpuLayers, Parallel: parallel, Flash: benchFlash()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Close)
	pool := arb.Pool("asr", parallel, 256)
	e.Defaults.Acquire = func(ctx context.Context) (func(), error) { return pool.Acquire(ctx, gpu.Live) }
	// Random weights: the fallback schedule would run on every window and
	// the no-speech probability is noise, so decode once at T=0 and never
	// skip a window (real speech rarely needs either).
	e.Defaults.Final.Temperatures = []float64{0}
	e.Defaults.Final.NoSpeechThreshold = 1
	e.Defaults.Partial = asr.DecodeOptions{Temperatures: []float64{0}, NoSpeechThreshold: 1}

	llmLayers := gpuLayers
	if llmLayers < 0 {
		llmLayers = 999 // llama.cpp: every layer
	}
	le, err := llm.Open(ctx, llm.EngineOptions{Options: llm.Options{Path: chatModel,
		ContextLength: 8192, Parallel: int(envFloat(b, "BOXD_BENCH_LLM_PARALLEL", 4)), Threads: llmThreads, GPULayers: llmLayers}, Arbiter: arb})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(le.Close)
	return &benchModels{speech: e, llm: le, chat: &chat.Service{Engine: le, ModelID: "model-27b", WeightsRoot: strings.Repeat("ab", 32),
		Upstream: "tiny-chat", Provider: "bench", Receipts: benchReceipts{}}}
}

type benchReceipts struct{}

func (benchReceipts) Issue(ctx context.Context, mc attest.ModelCall, upstream string) (attest.SignedModelCall, error) {
	return attest.SignedModelCall{ModelCall: mc, Commitment: "c", Sig: "ab"}, nil
}

// benchScript returns a script, its audio cut to the first cut seconds
// (0: all of it) and the lines that end inside that audio.
func benchScript(b *testing.B, id string, cut float64) (scripts.Script, []byte, []scripts.LineTiming) {
	b.Helper()
	sc, ok := scripts.Lookup(id)
	if !ok {
		b.Fatalf("unknown script %q", id)
	}
	pcm, lines, err := scripts.Audio(context.Background(), filepath.Join(os.TempDir(), "boxd-bench-demo-audio"), id)
	if errors.Is(err, scripts.ErrNoSynthesizer) && os.Getenv("CI") != "true" {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	if cut > 0 && int(cut*16000)*2 < len(pcm) {
		pcm = pcm[:int(cut*16000)*2]
	}
	audioS := float64(len(pcm)) / 32000
	var in []scripts.LineTiming
	for _, l := range lines {
		if l.End <= audioS {
			in = append(in, l)
		}
	}
	if len(in) == 0 {
		b.Fatalf("%s: no line ends in the first %.1f s", id, audioS)
	}
	if verticalFor(sc) == nil {
		b.Fatalf("%s: the %s vertical is not benchmarked (clinical needs the code tables)", id, sc.Vertical)
	}
	return sc, pcm, in
}

// verticalFor is the script's vertical as a box serves it.
func verticalFor(sc scripts.Script) *live.Vertical {
	switch sc.Vertical {
	case "sales":
		return sales.New()
	case "field":
		return field.New()
	case "translate":
		return translate.New()
	}
	return nil
}

// sessionResult is what one replay measured.
type sessionResult struct {
	delays        lineDelays
	finals, lanes int
	errors        []string
	drain         time.Duration // the transcriber's Close: the backlog at stop plus the last flush
	// stopDone is from the end of the audio (the speaker's stop) to done:
	// the transcriber's backlog, the final lanes and pass 2.
	stopDone time.Duration
}

// runSession starts a session after delay and replays pcm through it at
// 1.0×, recording when each final and each lane event was sent.
func runSession(b *testing.B, m *benchModels, sc scripts.Script, pcm []byte, lines []scripts.LineTiming, delay time.Duration) sessionResult {
	time.Sleep(delay)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute+time.Duration(len(pcm)/32)*3*time.Millisecond)
	defer cancel()
	tl := &timeline{seen: map[string][]coverage{}}
	var drain time.Duration
	var drainMu sync.Mutex
	start := func(ctx context.Context, lang string, emit func(stream.Event)) (live.Transcriber, error) {
		// As web.SpeechTranscriber, with decodes held to the script's real
		// token rate: random weights never stop on their own.
		o, err := m.speech.Options(lang, asr.TaskTranscribe)
		if err != nil {
			return nil, err
		}
		o.TokensPerSecond, o.MinTokens = tokenRate(m.speech.Model.Tokenizer(), lines), 1
		o.OnPartialDecode = func(heard float64) { tl.partial(heard, time.Now()) }
		return &timedClose{Transcriber: stream.Start(ctx, m.speech.Session(o), emit), d: &drain, mu: &drainMu}, nil
	}
	lang, target := "", ""
	if sc.Vertical == "translate" {
		lang, target = sc.Lang, sc.Target
	}
	s, err := live.Start(ctx, live.Config{
		Vertical: tl.instrument(verticalFor(sc)), Lang: lang, Target: target,
		Models: live.Models{ASR: "tiny-whisper-f16", LLM: "model-27b"}, Transcribe: start, Chat: m.chat,
		Budget: &livetest.Budget{Tokens: benchTokens, AudioMS: 24 * 3600 * 1000, StopReserveTokens: 2000},
		Send:   tl.send,
	})
	if err != nil {
		b.Error(err)
		return sessionResult{}
	}
	defer s.Close()
	tl.mu.Lock()
	tl.start = time.Now()
	tl.mu.Unlock()
	if err := replay.Run(ctx, s, pcm, 1.0, nil); err != nil {
		b.Errorf("%s: replay: %v", sc.ID, err)
	}
	// replay.Run sends stop after the last frame, at the audio's end, and
	// returns once done was sent.
	tl.mu.Lock()
	stopDone := time.Since(tl.start.Add(time.Duration(len(pcm)/32) * time.Millisecond))
	tl.mu.Unlock()
	s.Close()
	drainMu.Lock()
	defer drainMu.Unlock()
	r := tl.result(lines, drain)
	r.stopDone = stopDone
	return r
}

// timedClose measures the transcriber's Close.
type timedClose struct {
	live.Transcriber
	d  *time.Duration
	mu *sync.Mutex
}

func (t *timedClose) Close(ctx context.Context) error {
	began := time.Now()
	err := t.Transcriber.Close(ctx)
	t.mu.Lock()
	*t.d = time.Since(began)
	t.mu.Unlock()
	return err
}

// tokenRate is the script's Whisper tokens per second of speech.
func tokenRate(tk *tokenizer.Tokenizer, lines []scripts.LineTiming) float64 {
	toks, secs := 0, 0.0
	for _, l := range lines {
		toks += len(tk.Encode(" " + strings.TrimSpace(l.Text)))
		secs += l.End - l.Start
	}
	return math.Ceil(10*float64(toks)/secs) / 10
}

// coverage is the sentences a lane run saw: I from lo to hi.
type coverage struct{ lo, hi int }

type sentAt struct {
	i    int
	t    float64
	wall time.Time
}

type laneAt struct {
	lane string
	cov  coverage
	run  time.Duration // the run's latency_ms
	wall time.Time
}

// timeline records a session's events as they are handed to the
// transport, and, through instrumented lanes, which sentences each lane
// event was computed from.
type timeline struct {
	mu     sync.Mutex
	start  time.Time // the replay's start: audio second x is spoken at start + x
	finals []sentAt
	lanes  []laneAt
	errors []string
	seen   map[string][]coverage // lane → runs finished but not yet sent, in order
	// partials: when each partial re-decode ended, and the audio it covered
	partials []partialAt
}

type partialAt struct {
	heard float64 // seconds of audio the session had received at its start
	wall  time.Time
}

func (tl *timeline) partial(heard float64, wall time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.partials = append(tl.partials, partialAt{heard, wall})
}

// instrument wraps each lane's Finish to note the sentences its run saw.
// Prompts, schemas and results are the vertical's own. A lane runs once
// at a time and its event is emitted right after Finish, so the events of
// one lane are sent in the order of these notes.
func (tl *timeline) instrument(v *live.Vertical) *live.Vertical {
	w := *v
	wrap := func(specs []*live.LaneSpec) []*live.LaneSpec {
		out := make([]*live.LaneSpec, len(specs))
		for k, spec := range specs {
			c := *spec
			finish := spec.Finish
			c.Finish = func(st *live.State, sentence int, answer json.RawMessage) (string, any, error) {
				body, data, err := finish(st, sentence, answer)
				if err == nil {
					cov := coverage{0, -1}
					for _, s := range st.Sentences {
						cov.hi = max(cov.hi, s.I)
					}
					if c.PerSentence {
						cov = coverage{sentence, sentence}
					}
					tl.mu.Lock()
					tl.seen[c.ID] = append(tl.seen[c.ID], cov)
					tl.mu.Unlock()
				}
				return body, data, err
			}
			out[k] = &c
		}
		return out
	}
	w.Live, w.Final = wrap(v.Live), wrap(v.Final)
	return &w
}

func (tl *timeline) send(e live.Event) error {
	now := time.Now()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	switch b := e.Body.(type) {
	case live.TranscriptBody:
		if b.Final {
			tl.finals = append(tl.finals, sentAt{b.I, b.T, now})
		}
	case live.LaneBody:
		if q := tl.seen[b.Lane]; len(q) > 0 {
			tl.lanes = append(tl.lanes, laneAt{b.Lane, q[0], time.Duration(b.LatencyMS) * time.Millisecond, now})
			tl.seen[b.Lane] = q[1:]
		}
	case live.ErrorBody:
		tl.errors = append(tl.errors, b.Message)
	}
	return nil
}

// result matches lines to finals and lane events. A line's final is the
// last final whose t lies in [start − lineSlack, end): the sentence that
// holds the line's end (a line the VAD cut in two has its end in the
// second piece). Its lane event is the first lane event whose run saw
// that final. Delays run from the line's end on the replay's clock.
func (tl *timeline) result(lines []scripts.LineTiming, drain time.Duration) sessionResult {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	r := sessionResult{finals: len(tl.finals), lanes: len(tl.lanes), errors: tl.errors, drain: drain}
	for _, la := range tl.lanes {
		r.delays.run = append(r.delays.run, la.run)
	}
	for _, p := range tl.partials {
		r.delays.partial = append(r.delays.partial, p.wall.Sub(tl.start.Add(time.Duration(p.heard*float64(time.Second)))))
	}
	for _, l := range lines {
		var f *sentAt
		for k := range tl.finals {
			if c := &tl.finals[k]; c.t >= l.Start-lineSlack && c.t < l.End {
				f = c
			}
		}
		if f == nil {
			continue
		}
		end := tl.start.Add(time.Duration(l.End * float64(time.Second)))
		r.delays.final = append(r.delays.final, f.wall.Sub(end))
		for _, la := range tl.lanes {
			if la.cov.lo <= f.i && f.i <= la.cov.hi {
				r.delays.lane = append(r.delays.lane, la.wall.Sub(end))
				break
			}
		}
	}
	return r
}

// lineDelays are per-line delays to the final and to the first lane event
// that includes it, every lane run's own time (its latency_ms), and every
// partial's delay behind the audio it covers.
type lineDelays struct{ final, lane, run, partial []time.Duration }

func (d *lineDelays) add(o lineDelays) {
	d.final = append(d.final, o.final...)
	d.lane = append(d.lane, o.lane...)
	d.run = append(d.run, o.run...)
	d.partial = append(d.partial, o.partial...)
}

func (d *lineDelays) report(b *testing.B) {
	b.ReportMetric(percentileMS(d.final, 50), "final_p50_ms")
	b.ReportMetric(percentileMS(d.final, 95), "final_p95_ms")
	b.ReportMetric(percentileMS(d.partial, 50), "partial_p50_ms")
	b.ReportMetric(percentileMS(d.partial, 95), "partial_p95_ms")
	b.ReportMetric(percentileMS(d.lane, 50), "lane_p50_ms")
	b.ReportMetric(percentileMS(d.lane, 95), "lane_p95_ms")
	b.ReportMetric(percentileMS(d.run, 50), "lane_run_p50_ms")
	b.ReportMetric(float64(len(d.final))/float64(b.N), "lines_timed/op")
}

// percentileMS is the nearest-rank percentile in milliseconds (NaN for no
// values).
func percentileMS(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return ms(s[max(0, int(math.Ceil(p/100*float64(len(s))))-1)])
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// loadMeter measures how busy the machine was with other processes while
// a benchmark ran (Linux /proc; 0 elsewhere), so runs on a shared machine
// can be read for what they are, and how long Whisper computed.
type loadMeter struct {
	m          *benchModels
	began      time.Time
	busy, self int64
	asr        asr.Stats
}

func startLoadMeter(m *benchModels) loadMeter {
	busy, self := cpuTicks()
	return loadMeter{m, time.Now(), busy, self, m.speech.Model.Stats()}
}

// report adds other_cpus, the CPUs other processes kept busy on average,
// and asr_s_per_audio_s, Whisper's compute time (log-mel, encoder,
// decoder; not the VAD) per second of audio replayed: above 1 divided by
// its threads' share of the CPUs, speech recognition cannot keep up.
func (l loadMeter) report(b *testing.B, audioS float64) {
	busy, self := cpuTicks()
	wall := time.Since(l.began).Seconds()
	other := float64((busy-l.busy)-(self-l.self)) / 100 / wall // USER_HZ is 100
	b.ReportMetric(math.Max(0, other), "other_cpus")
	st := l.m.speech.Model.Stats()
	asrS := (st.Mel - l.asr.Mel + st.Encoder - l.asr.Encoder + st.Decoder - l.asr.Decoder).Seconds()
	b.ReportMetric(asrS/audioS, "asr_s_per_audio_s")
}

// cpuTicks returns the ticks every CPU spent busy and those this process
// spent, from /proc/stat and /proc/self/stat.
func cpuTicks() (busy, self int64) {
	if raw, err := os.ReadFile("/proc/stat"); err == nil {
		f := strings.Fields(strings.SplitN(string(raw), "\n", 2)[0])
		for k, v := range f {
			// user nice system idle iowait irq softirq steal
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && k >= 1 && k <= 8 && k != 4 && k != 5 {
				busy += n
			}
		}
	}
	if raw, err := os.ReadFile("/proc/self/stat"); err == nil {
		s := string(raw)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			k, _ := strconv.ParseInt(f[12], 10, 64)
			self = u + k
		}
	}
	return busy, self
}

func firstError(errs []string) string {
	if len(errs) == 0 {
		return ""
	}
	return fmt.Sprintf(" (first: %q)", errs[0])
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// envSigned reads a number that may be negative (-1: every layer).
func envSigned(b *testing.B, name string, def float64) float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		b.Fatalf("%s=%q: want a number", name, v)
	}
	return f
}

func envFloat(b *testing.B, name string, def float64) float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		b.Fatalf("%s=%q: want a number of 0 or more", name, v)
	}
	return f
}

// benchFlash is asr.flash_attention for a bench: BOXD_BENCH_ASR_FLASH=1 on,
// else off (the GPU check measures both, so neither is left to auto).
func benchFlash() asr.Flash {
	if os.Getenv("BOXD_BENCH_ASR_FLASH") == "1" {
		return asr.FlashOn
	}
	return asr.FlashOff
}
