package soak

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"boxd/engine/models/testmodels"
)

// TestSoak runs the soak against the real boxd binary: 4 live sessions
// replaying the demo scripts' speech (demo tokens) and 16 chat streams
// (developer keys) for BOXD_SOAK_DURATION (default 60 s; make soak runs
// 10 m), sampled every BOXD_SOAK_INTERVAL (10 s; a short run more often),
// with the models make test uses: stories260K.gguf with the mistral
// template make run sets, a generated random-weight Whisper
// (BOXD_SOAK_ASR, default the micro one), Silero VAD. It fails on any of
// the pass rules of the package documentation. BOXD_SOAK_BIN names a built
// binary (make soak passes bin/boxd); without it the test builds one.
// BOXD_SOAK_DIR keeps the box's state directory and log there (default: a
// temporary directory).
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak runs for a minute or more")
	}
	duration := envDuration(t, "BOXD_SOAK_DURATION", time.Minute)
	// A sample every 10 s; a short run samples more often (a thirtieth of
	// it, at least every 2 s), so that each third of it has several.
	interval := envDuration(t, "BOXD_SOAK_INTERVAL", min(max(duration/30, 2*time.Second), 10*time.Second))
	// Warm-up: a fifth of the run, at least 20 s and at most 2 minutes
	// (the models' caches and the Go heap reach their working size while
	// every path runs at full concurrency; see the package notes).
	warmup := envDuration(t, "BOXD_SOAK_WARMUP", min(max(duration/5, 20*time.Second), 2*time.Minute))
	// Each live session replays the next line of its vertical's scripts
	// (BOXD_SOAK_CLIP_S: the next lines up to that many seconds; 0: whole
	// scripts): on a CPU a session's model lanes cost far more than its
	// audio, and many short sessions open and close more often.
	clipS := 0.1 // one line
	if v := os.Getenv("BOXD_SOAK_CLIP_S"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			t.Fatalf("BOXD_SOAK_CLIP_S=%q: want seconds (0: whole scripts)", v)
		}
		clipS = f
	}
	data := os.Getenv("BOXD_TEST_DATA")
	if data == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("BOXD_TEST_DATA is not set (the Makefile sets it)")
		}
		t.Skip("BOXD_TEST_DATA is not set; run through make")
	}
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("espeak-ng is missing (make deps installs it)")
		}
		t.Skip("espeak-ng is not installed: the demo scripts' speech cannot be synthesised")
	}
	// The priming round (the idle checks' baseline) takes a minute or two
	// on a busy 2-core machine: on by default from 5 minutes.
	prime := duration >= 5*time.Minute
	if v := os.Getenv("BOXD_SOAK_PRIME"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			t.Fatalf("BOXD_SOAK_PRIME=%q: want true or false", v)
		}
		prime = b
	}
	// Speech: a generated random-weight Whisper (real vocabulary and
	// contexts): the micro one by default, as cmd/boxd's serve tests use;
	// BOXD_SOAK_ASR=tiny-whisper.gguf runs the tiny shape (about three
	// times slower on a CPU).
	asrFile := testmodels.WhisperMicroGGUF
	if v := os.Getenv("BOXD_SOAK_ASR"); v != "" {
		asrFile = v
	}
	llmPath := testmodels.Shared(t, "stories260K.gguf")
	vad := testmodels.Shared(t, "ggml-silero-v6.2.0.bin")
	asr := testmodels.Generated(t, asrFile)

	work := os.Getenv("BOXD_SOAK_DIR")
	if work == "" {
		work = t.TempDir()
	} else if err := os.RemoveAll(filepath.Join(work, "state")); err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("BOXD_SOAK_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "boxd")
		began := time.Now()
		build := exec.Command("go", "build", "-ldflags", "-s -w", "-o", bin, "boxd/cmd/boxd")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build boxd: %v\n%s", err, out)
		}
		t.Logf("built %s in %s", bin, time.Since(began).Round(time.Millisecond))
	}
	cfg := Config{
		Box: BoxOptions{Bin: bin, WorkDir: work, DataDir: data, LLM: llmPath, Template: "mistral", ASR: asr, VAD: vad},
		// Kept between runs: `boxd demo audio` finds it cached.
		AudioDir: filepath.Join(os.TempDir(), "boxd-soak-audio"),
		Duration: duration, Interval: interval, Warmup: warmup, ClipS: clipS,
		LiveSessions: 4, ChatStreams: 16, Prime: prime, Limits: DefaultLimits,
		Logf: t.Logf,
	}
	t.Logf("soak: %s (warm-up %s, a sample every %s, priming %v), %d live sessions (clips of at most %g s, speech %s), %d chat streams",
		duration, warmup, interval, prime, cfg.LiveSessions, clipS, asrFile, cfg.ChatStreams)
	began := time.Now()
	report, err := Run(context.Background(), cfg)
	if report != nil {
		t.Logf("samples:\n%s", Table(report.Samples))
		t.Logf("pass figures (warm-up %s):\n%s", warmup, report.Summary())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("soak took %s", time.Since(began).Round(time.Second))
	if !report.OK() {
		t.Errorf("the soak failed (box log: %s)", filepath.Join(work, "boxd.log"))
	}
}

// envDuration reads a duration setting, def when unset.
func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a duration such as 60s or 10m", name, v)
	}
	return d
}
