package models

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"boxd/engine/asr/vad"
	"boxd/engine/models/testmodels"
)

// TestModelsConvertAndInspect: whisper.cpp model and VAD files convert to
// GGUFs that inspect describes and the engine loads; refusals say why.
func TestModelsConvertAndInspect(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "w.gguf")
	code, out, errOut := runCLI(t, "models", "convert", testmodels.Generated(t, testmodels.WhisperF16Bin), model, "--name", "my-tiny")
	if code != 0 {
		t.Fatalf("convert: %d %s", code, errOut)
	}
	for _, want := range []string{"name           my-tiny", "architecture   whisper", "size           tiny (multilingual, 99 languages)", "weights root"} {
		if !strings.Contains(out, want) {
			t.Errorf("convert output lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = runCLI(t, "models", "inspect", model, "--json")
	if code != 0 {
		t.Fatalf("inspect: %d %s", code, errOut)
	}
	var info struct {
		Architecture string `json:"architecture"`
		Parameters   uint64 `json:"parameters"`
		WeightsRoot  string `json:"weights_root"`
		Whisper      struct {
			Size       string `json:"size"`
			AudioLayer int    `json:"audio_layers"`
		} `json:"whisper"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if info.Architecture != "whisper" || info.Whisper.Size != "tiny" || info.Whisper.AudioLayer != 4 || len(info.WeightsRoot) != 64 {
		t.Errorf("inspect --json: %s", out)
	}

	vadPath := filepath.Join(dir, "vad.gguf")
	code, out, errOut = runCLI(t, "models", "convert", testmodels.Shared(t, "ggml-silero-v6.2.0.bin"), vadPath)
	if code != 0 || !strings.Contains(out, "silero-vad") || !strings.Contains(out, "6.2.0") {
		t.Fatalf("convert vad: %d %s %s", code, out, errOut)
	}
	v, err := vad.Load(vadPath)
	if err != nil {
		t.Fatalf("the converted VAD does not load: %v", err)
	}
	v.Close()

	junk := filepath.Join(dir, "junk.bin")
	if err := os.WriteFile(junk, []byte("not a model at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"models", "convert", testmodels.Generated(t, testmodels.WhisperBin), model}, "exists: pass --force"},
		{[]string{"models", "convert", model, filepath.Join(dir, "again.gguf")}, "already GGUF"},
		{[]string{"models", "convert", junk, filepath.Join(dir, "x.gguf")}, "not a whisper.cpp model or VAD file, a Hugging Face checkpoint directory (config.json with model.safetensors) nor a PyTorch checkpoint"},
		{[]string{"models", "convert", testmodels.Shared(t, "whisper-vocab-tiny.bin"), filepath.Join(dir, "v.gguf")}, "vocabulary-only"},
		{[]string{"models", "inspect", testmodels.Generated(t, testmodels.WhisperBin)}, "convert it first"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, errOut, c.want)
		}
	}
	if code, _, errOut := runCLI(t, "models", "convert", testmodels.Generated(t, testmodels.WhisperBin), model, "--force"); code != 0 {
		t.Errorf("--force: %d %s", code, errOut)
	}
}
