package convert_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"boxd/engine/models/convert"
	"boxd/engine/models/testmodels"
)

func TestSniffAndDescribe(t *testing.T) {
	dir := t.TempDir()
	silero := filepath.Join(dir, "vad.gguf")
	if err := convert.SileroFile(testmodels.Shared(t, "ggml-silero-v6.2.0.bin"), silero); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk")
	if err := os.WriteFile(junk, []byte("hello, world"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]convert.Format{
		testmodels.Generated(t, testmodels.WhisperBin):  convert.FormatWhisperBin,
		testmodels.Shared(t, "whisper-vocab-tiny.bin"):  convert.FormatWhisperBin,
		testmodels.Shared(t, "ggml-silero-v6.2.0.bin"):  convert.FormatSileroBin,
		testmodels.Generated(t, testmodels.WhisperGGUF): convert.FormatGGUF,
		silero: convert.FormatGGUF,
		junk:   convert.FormatUnknown,
	} {
		if got, err := convert.Sniff(path); err != nil || got != want {
			t.Errorf("convert.Sniff(%s) = %v, %v; want %v", filepath.Base(path), got, err, want)
		}
	}

	w, err := convert.Describe(testmodels.Generated(t, testmodels.WhisperF16GGUF))
	if err != nil {
		t.Fatal(err)
	}
	if w.Architecture != "whisper" || w.Whisper == nil || w.Whisper.Size != "tiny" || !w.Whisper.Multilingual || w.Whisper.Languages != 99 ||
		w.Whisper.Mels != 80 || w.Whisper.Tokens != 50257 || w.Tensors != 167 || !strings.Contains(w.Types, "F16") {
		t.Errorf("whisper info %+v %+v", w, w.Whisper)
	}
	// tiny: 37.8M parameters (39M with the decoder's tied output).
	if w.Parameters < 37_000_000 || w.Parameters > 38_500_000 {
		t.Errorf("tiny has %d parameters", w.Parameters)
	}
	v, err := convert.Describe(silero)
	if err != nil {
		t.Fatal(err)
	}
	if v.Silero == nil || v.Silero.Version != "6.2.0" || v.Silero.Window != 512 || v.Silero.Context != 64 {
		t.Errorf("silero info %+v %+v", v, v.Silero)
	}
	if _, err := convert.Describe(testmodels.Shared(t, "stories260K.gguf")); err == nil || !strings.Contains(err.Error(), `architecture "llama"`) {
		t.Errorf("llama GGUF: %v", err)
	}
}

func TestWhisperSizeNames(t *testing.T) {
	for _, c := range []struct {
		w    convert.WhisperInfo
		want string
	}{
		{convert.WhisperInfo{Width: 384, AudioLayers: 4, TextLayers: 4, Vocab: 51865, Multilingual: true}, "tiny"},
		{convert.WhisperInfo{Width: 384, AudioLayers: 4, TextLayers: 4, Vocab: 51864}, "tiny.en"},
		{convert.WhisperInfo{Width: 512, AudioLayers: 6, TextLayers: 6, Vocab: 51865, Multilingual: true}, "base"},
		{convert.WhisperInfo{Width: 1280, AudioLayers: 32, TextLayers: 32, Vocab: 51865, Multilingual: true}, "large"},
		{convert.WhisperInfo{Width: 1280, AudioLayers: 32, TextLayers: 32, Vocab: 51866, Multilingual: true}, "large-v3"},
		{convert.WhisperInfo{Width: 1280, AudioLayers: 32, TextLayers: 4, Vocab: 51866, Multilingual: true}, "large-v3-turbo"},
		{convert.WhisperInfo{Width: 64, AudioLayers: 1, TextLayers: 1, Vocab: 51865, Multilingual: true}, "custom"},
		{convert.WhisperInfo{Width: 384, AudioLayers: 4, TextLayers: 2, Vocab: 51865, Multilingual: true}, "custom"},
	} {
		if got := convert.WhisperSize(&c.w); got != c.want {
			t.Errorf("%+v: %s, want %s", c.w, got, c.want)
		}
	}
}
