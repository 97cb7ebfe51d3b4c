// Package whispercpp runs whisper.cpp, the reference for boxd's Whisper
// engine, from the npm registry: @fugood/node-whisper-linux-x64 (whisper.cpp
// prebuilt for linux-x64 as a Node addon) installed here by npm ci, driven
// by transcribe.mjs in this directory. Tests compare boxd's transcripts
// with it; benchmarks read its timings.
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

// Package is the npm package (and version, pinned in package-lock.json)
// that carries whisper.cpp.
const Package = "@fugood/node-whisper-linux-x64"

// Options say how whisper.cpp runs. The zero value is greedy decoding at
// temperature 0 with no fallback, English, one thread, no flash attention.
type Options struct {
	Threads   int  // n_threads (0: 1)
	FlashAttn bool // whisper_context_params.flash_attn
	Language  string
	// TemperatureInc above 0 turns on whisper.cpp's temperature fallback
	// (0, inc, 2·inc, ... ≤ 1) with BestOf decoders at T > 0.
	TemperatureInc float64
	BestOf         int
	// MaxContext, when set, is n_max_text_ctx (0: earlier windows' text is
	// never the prompt); nil keeps whisper.cpp's default.
	MaxContext *int
	// Bench also runs whisper.cpp's bench (as whisper-bench) and reports
	// its per-run timings.
	Bench bool
	// Runs transcribes this many times (0: once); each wall time is kept.
	Runs int
}

// Segment is one of whisper.cpp's segments.
type Segment struct {
	T0MS float64 `json:"t0_ms"`
	T1MS float64 `json:"t1_ms"`
	Text string  `json:"text"`
}

// Bench is whisper_get_timings after whisper.cpp's bench: milliseconds
// per run of one encode of a 30 s window, a one-token decode (text
// generation), a five-token batched decode and a 256-token prompt.
type Bench struct {
	EncodeMS   float64 `json:"encode_ms"`
	DecodeMS   float64 `json:"decode_ms"`
	BatchdMS   float64 `json:"batchd_ms"`
	PromptMS   float64 `json:"prompt_ms"`
	SystemInfo string  `json:"system_info"`
}

// Result is transcribe.mjs's line.
type Result struct {
	Text      string    `json:"text"`
	Language  string    `json:"language"`
	Segments  []Segment `json:"segments"`
	Threads   int       `json:"threads"`
	FlashAttn bool      `json:"flash_attn"`
	Timings   struct {
		LoadMS       float64   `json:"load_ms"`
		TranscribeMS []float64 `json:"transcribe_ms"` // wall time of each whisper_full
	} `json:"timings"`
	Bench     *Bench `json:"bench"`
	WhisperCPP struct {
		Package      string `json:"package"`
		FlashAttnLog string `json:"flash_attn_log"` // as whisper_init logged it
		// NoTimestampsForced: whisper_full took the model for a
		// first-release distil-whisper (2 decoder layers) and decoded it
		// without timestamps.
		NoTimestampsForced bool `json:"no_timestamps_forced"`
		SystemInfo   string `json:"system_info"`
	} `json:"whisper_cpp"`
}

// Dir is this package's directory: package.json, the lock, node_modules
// and transcribe.mjs.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// ErrMissing says node or the npm package is not installed.
var ErrMissing = errors.New("whispercpp: node or " + Package + " is missing (make deps, or npm ci in engine/asr/whispercpp)")

// Available reports whether node and the package are installed.
func Available() error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("%w: %v", ErrMissing, err)
	}
	if _, err := os.Stat(filepath.Join(Dir(), "node_modules", filepath.FromSlash(Package), "index.node")); err != nil {
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

// Run transcribes a 16 kHz mono PCM16 WAV with whisper.cpp's whisper_full
// on a whisper.cpp model file (ggml .bin).
func Run(ctx context.Context, modelBin, wav string, o Options) (*Result, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	args := map[string]any{
		"model": modelBin, "wav": wav, "threads": max(1, o.Threads), "flash_attn": o.FlashAttn,
		"temperature": 0, "temperature_inc": o.TemperatureInc, "best_of": max(1, o.BestOf),
		"bench": o.Bench, "runs": max(1, o.Runs),
	}
	if o.Language != "" {
		args["language"] = o.Language
	}
	if o.MaxContext != nil {
		args["max_context"] = *o.MaxContext
	}
	for _, k := range []string{"model", "wav"} {
		p, err := filepath.Abs(args[k].(string))
		if err != nil {
			return nil, err
		}
		args[k] = p
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
