package main

import (
	"bufio"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"boxd/engine/asr"
	"boxd/engine/asr/asrtest"
	"boxd/engine/asr/frontend"
	"boxd/engine/asr/stream"
	"boxd/engine/models/testmodels"
)

// shortJFK writes the first four seconds of jfk.wav (two sentences).
func shortJFK(t *testing.T) string {
	pcm, err := frontend.ReadWAV(testmodels.Shared(t, "jfk.wav"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "jfk4.wav")
	asrtest.WriteWAV(t, p, pcm[:4*frontend.SampleRate], frontend.SampleRate)
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
	asrtest.WriteWAV(t, wav, make([]float32, 1600), frontend.SampleRate)
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

// TestTranscribeNoVADStats: --no-vad decodes the file as the model's
// long-form transcription (the same text asr.Model.Transcribe gives with
// the options the flags name), and --stats with --json adds one line
// {"stats": {...}} of the model's work.
func TestTranscribeNoVADStats(t *testing.T) {
	model := testmodels.Generated(t, testmodels.WhisperMicroGGUF)
	wav := shortJFK(t)
	cfg := writeConfig(t, "")
	code, out, errOut := runCLI(t, "transcribe", wav, "--config", cfg, "--model", model, "--lang", "en", "--beam", "1",
		"--no-vad", "--no-fallback", "--max-tokens", "24", "--threads", "1", "--json", "--stats")
	if code != 0 {
		t.Fatalf("transcribe --no-vad: %d %s", code, errOut)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var got struct {
		Model    string  `json:"model"`
		Text     string  `json:"text"`
		Duration float64 `json:"duration_s"`
		Segments []struct {
			Start, End float64
			Text       string
		} `json:"segments"`
	}
	if err := dec.Decode(&got); err != nil || got.Model != "boxd-micro-whisper" || got.Duration != 4 {
		t.Fatalf("transcript: %v %s", err, out)
	}
	var st struct {
		Stats Stats `json:"stats"`
	}
	if err := dec.Decode(&st); err != nil || st.Stats.Windows != 1 || st.Stats.DecoderSteps == 0 ||
		st.Stats.MelMS <= 0 || st.Stats.EncoderMS <= 0 || st.Stats.DecoderMS <= 0 || dec.More() {
		t.Fatalf("stats line: %v %s", err, out)
	}
	if last := strings.TrimSpace(out); !strings.HasPrefix(last[strings.LastIndex(last, "\n")+1:], `{"stats":{`) {
		t.Errorf("the stats are not one line of their own: %s", out)
	}
	// The same decode in-process.
	m, err := asr.Load(context.Background(), model, asr.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	pcm, _ := frontend.ReadWAV(wav)
	tr, err := m.Transcribe(context.Background(), pcm, asr.DecodeOptions{Language: "en", BeamSize: 1, Timestamps: true, MaxTokens: 24, Temperatures: []float64{0}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != tr.Text() || len(got.Segments) != len(tr.Segments) {
		t.Errorf("--no-vad text %q (%d segments), Transcribe %q (%d)", got.Text, len(got.Segments), tr.Text(), len(tr.Segments))
	}
	// Text output ends with a stats line.
	code, out, _ = runCLI(t, "transcribe", wav, "--config", cfg, "--model", model, "--lang", "en", "--no-vad", "--stats")
	if code != 0 || !strings.Contains(out, "stats: log-mel ") || !strings.Contains(out, "a step)") {
		t.Errorf("text --stats: %d %s", code, out)
	}
	for _, bad := range [][]string{{"--threads", "-1"}, {"--no-vad", "--stream"}} {
		if code, _, errOut := runCLI(t, append([]string{"transcribe", wav, "--config", cfg, "--model", model}, bad...)...); code != exitConfig {
			t.Errorf("%v: exit %d %s", bad, code, errOut)
		}
	}
}
