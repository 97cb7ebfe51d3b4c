// Package whispercpp runs whisper.cpp, the reference for boxd's Whisper
// engine, from the npm registry: npm ci here installs the nodejs-whisper
// package, whose whisper.cpp source build.mjs builds into whisper-cli
// (x86-64-v3, as boxd's ggml), and transcribe.mjs runs it and prints one
// JSON line. Tests compare boxd's transcripts with it; benchmarks read its
// timings (whisper_print_timings).
package whispercpp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Package is the npm package (its version is pinned in package-lock.json)
// whose whisper.cpp source build.mjs builds whisper-cli from.
const Package = "nodejs-whisper"

// Options say how whisper.cpp runs. The zero value is greedy decoding at
// temperature 0 with no fallback and no timestamps, English, one thread,
// no flash attention.
type Options struct {
	Threads   int  // n_threads (0: 1)
	FlashAttn bool // whisper_context_params.flash_attn
	Language  string
	// Timestamps decodes with timestamp tokens (whisper.cpp's own rules,
	// not openai/whisper's; see README.md).
	Timestamps bool
	// TemperatureInc above 0 turns on the temperature fallback (0, inc,
	// 2·inc, ... ≤ 1) with BestOf decoders at T > 0.
	TemperatureInc float64
	BeamSize       int // at T = 0 (0 or 1: greedy)
	BestOf         int
	// MaxContext, when set, is n_max_text_ctx (0: earlier windows' text is
	// never the prompt); nil keeps whisper.cpp's default.
	MaxContext *int
	// SuppressNST suppresses non-speech tokens (suppress_nst).
	SuppressNST bool
}

// Segment is one of whisper.cpp's segments; Tokens are its token ids,
// special ones included.
type Segment struct {
	T0MS   float64 `json:"t0_ms"`
	T1MS   float64 `json:"t1_ms"`
	Text   string  `json:"text"`
	Tokens []int32 `json:"tokens"`
}

// Timings are whisper_print_timings' lines for the run: milliseconds in
// all and, where it counts them, runs. Decode runs are one-token decoder
// calls (text generation), batchd runs batched ones (the task prompt of
// fewer than 16 tokens among them), prompt runs longer prompts.
type Timings struct {
	LoadMS     float64 `json:"load_ms"`
	MelMS      float64 `json:"mel_ms"`
	SampleMS   float64 `json:"sample_ms"`
	SampleRuns int     `json:"sample_runs"`
	EncodeMS   float64 `json:"encode_ms"`
	EncodeRuns int     `json:"encode_runs"`
	DecodeMS   float64 `json:"decode_ms"`
	DecodeRuns int     `json:"decode_runs"`
	BatchdMS   float64 `json:"batchd_ms"`
	BatchdRuns int     `json:"batchd_runs"`
	PromptMS   float64 `json:"prompt_ms"`
	PromptRuns int     `json:"prompt_runs"`
	TotalMS    float64 `json:"total_ms"`
	FallbacksP int     `json:"fallbacks_p"` // fallbacks on log-probability
	FallbacksH int     `json:"fallbacks_h"` // fallbacks on entropy
}

// Result is transcribe.mjs's line.
type Result struct {
	Text       string    `json:"text"` // the segments' texts joined, as whisper.cpp gives them
	Language   string    `json:"language"`
	Segments   []Segment `json:"segments"`
	Threads    int       `json:"threads"`
	FlashAttn  bool      `json:"flash_attn"`
	Args       []string  `json:"args"` // whisper-cli's command line
	Timings    Timings   `json:"timings"`
	WhisperCPP struct {
		Version      string `json:"version"`
		Package      string `json:"package"`
		FlashAttnLog string `json:"flash_attn_log"` // as whisper_init logged it: "0" or "1"
		SystemInfo   string `json:"system_info"`
	} `json:"whisper_cpp"`
}

// Dir is the npm project: package.json, the lock, node_modules and
// transcribe.mjs. It is under testdata, which the go tool skips: whisper.cpp's
// source in node_modules carries Go bindings that ./... must not build.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata")
}

// CLI is the whisper-cli that npm ci built (build.mjs).
func CLI() string {
	return filepath.Join(Dir(), "node_modules", ".boxd-whisper-cpp", "build", "bin", "whisper-cli")
}

// ErrMissing says node or the npm package is not installed.
var ErrMissing = errors.New("whispercpp: node or whisper-cli is missing (make deps, or npm ci in engine/asr/whispercpp)")

// Available reports whether node and whisper-cli are installed.
func Available() error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("%w: %v", ErrMissing, err)
	}
	if _, err := os.Stat(CLI()); err != nil {
		return fmt.Errorf("%w: %v", ErrMissing, err)
	}
	return nil
}

// Require skips the test when whisper.cpp is not installed, or fails it
// under CI=true.
func Require(tb testing.TB) {
	tb.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal(err)
		}
		tb.Skip(err)
	}
}

// Run transcribes a WAV (16 kHz mono PCM16, as boxd reads) with
// whisper.cpp's whisper_full, through whisper-cli, on a whisper.cpp model
// file (ggml .bin).
func Run(ctx context.Context, modelBin, wav string, o Options) (*Result, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	args := map[string]any{
		"threads": max(1, o.Threads), "flash_attn": o.FlashAttn, "timestamps": o.Timestamps,
		"temperature_inc": o.TemperatureInc, "beam_size": max(1, o.BeamSize), "best_of": max(1, o.BestOf),
		"suppress_nst": o.SuppressNST,
	}
	if o.Language != "" {
		args["language"] = o.Language
	}
	if o.MaxContext != nil {
		args["max_context"] = *o.MaxContext
	}
	for k, p := range map[string]string{"model": modelBin, "wav": wav} {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		args[k] = abs
	}
	a, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", "transcribe.mjs", string(a))
	cmd.Dir = Dir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("whispercpp: node transcribe.mjs: %w: %s", err, tail(stderr.String()))
	}
	var r Result
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &r); err != nil {
		return nil, fmt.Errorf("whispercpp: transcribe.mjs printed %q: %w", tail(stdout.String()), err)
	}
	return &r, nil
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}
