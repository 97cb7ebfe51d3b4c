package main

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"boxd/engine/asr"
	"boxd/engine/asr/asrtest"
	"boxd/engine/asr/stream"
	"boxd/engine/models/testmodels"
)

// shortJFK writes the first four seconds of jfk.wav (two sentences).
func shortJFK(t *testing.T) string {
	pcm, err := asr.ReadWAV(testmodels.Shared(t, "jfk.wav"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "jfk4.wav")
	asrtest.WriteWAV(t, p, pcm[:4*asr.SampleRate], asr.SampleRate)
	return p
}

// TestTranscribeCommand: the batch transcript and the --stream event
// stream agree (finals equal the sentences), both as JSON.
func TestTranscribeCommand(t *testing.T) {
	model := testmodels.Generated(t, testmodels.WhisperMicroGGUF)
	vad := testmodels.Shared(t, "ggml-silero-v6.2.0.bin")
	wav := shortJFK(t)
	cfg := writeConfig(t, "")
	common := []string{"--config", cfg, "--model", model, "--vad", vad, "--lang", "en", "--beam", "1"}

	code, out, errOut := runCLI(t, append([]string{"transcribe", wav, "--json"}, common...)...)
	if code != 0 {
		t.Fatalf("transcribe: %d %s", code, errOut)
	}
	var batch struct {
		Model     string            `json:"model"`
		Language  string            `json:"language"`
		Duration  float64           `json:"duration_s"`
		Sentences []stream.Sentence `json:"sentences"`
	}
	if err := json.Unmarshal([]byte(out), &batch); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if batch.Model != "boxd-micro-whisper" || batch.Language != "en" || batch.Duration != 4 || len(batch.Sentences) == 0 {
		t.Fatalf("batch: %+v", batch)
	}

	code, out, errOut = runCLI(t, append([]string{"transcribe", wav, "--stream", "--json"}, common...)...)
	if code != 0 {
		t.Fatalf("transcribe --stream: %d %s", code, errOut)
	}
	var finals []stream.Sentence
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ev struct {
			Type string `json:"type"`
			AtMS *int64 `json:"at_ms"`
			stream.Event
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		if ev.Type != "transcript" || ev.AtMS == nil {
			t.Errorf("event %s: want type transcript and at_ms", sc.Text())
		}
		if ev.Final {
			finals = append(finals, stream.Sentence{I: ev.I, Start: ev.T, Text: ev.Text})
		}
	}
	if len(finals) != len(batch.Sentences) {
		t.Fatalf("stream finals %+v, batch %+v", finals, batch.Sentences)
	}
	for i, f := range finals {
		b := batch.Sentences[i]
		if f.I != b.I || f.Start != b.Start || f.Text != b.Text {
			t.Errorf("sentence %d: stream %+v, batch %+v", i, f, b)
		}
	}

	// Plain text: one line per sentence with its times.
	code, out, _ = runCLI(t, append([]string{"transcribe", wav}, common...)...)
	if code != 0 || strings.Count(out, "\n") != len(batch.Sentences) || !strings.Contains(out, batch.Sentences[0].Text) {
		t.Errorf("text output (%d):\n%s", code, out)
	}
}

func TestTranscribeCommandErrors(t *testing.T) {
	vad := testmodels.Shared(t, "ggml-silero-v6.2.0.bin")
	micro := testmodels.Generated(t, testmodels.WhisperMicroGGUF)
	english := testmodels.Generated(t, testmodels.WhisperENGGUF)
	wav := filepath.Join(t.TempDir(), "x.wav")
	asrtest.WriteWAV(t, wav, make([]float32, 1600), asr.SampleRate)
	narrow := filepath.Join(t.TempDir(), "8k.wav")
	asrtest.WriteWAV(t, narrow, make([]float32, 800), 8000)
	cfg := writeConfig(t, "")
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no model", []string{wav}, exitConfig, []string{"no speech model", "--model", "BOXD_MODELS_ASR_PATH"}},
		{"not whisper", []string{wav, "--model", testmodels.Shared(t, "stories260K.gguf"), "--vad", vad}, 1, []string{"not a Whisper GGUF", "boxd models convert"}},
		{"bad language", []string{wav, "--model", micro, "--vad", vad, "--lang", "klingon"}, 1, []string{`language "klingon"`, "auto, ar, de, en"}},
		{"bad task", []string{wav, "--model", micro, "--vad", vad, "--task", "summarise"}, 1, []string{`task "summarise"`, "transcribe or translate"}},
		{"english-only model", []string{wav, "--model", english, "--vad", vad, "--lang", "es"}, 1, []string{"English-only", "use lang en or auto"}},
		{"8 kHz wav", []string{narrow, "--model", micro, "--vad", vad}, 1, []string{"8000 Hz", "sox"}},
		{"missing wav", []string{"/nonexistent.wav", "--model", micro, "--vad", vad}, 1, []string{"/nonexistent.wav"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, append(append([]string{"transcribe"}, c.args...), "--config", cfg)...)
			if code != c.code {
				t.Errorf("exit %d, want %d: %s", code, c.code, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q: %s", w, errOut)
				}
			}
		})
	}
}
