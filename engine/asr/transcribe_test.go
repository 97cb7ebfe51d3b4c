package asr

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"boxd/engine/asr/frontend"
	"boxd/engine/asr/tokenizer"
	"boxd/engine/models/testmodels"
)

func loadTiny(t testing.TB, name string) *Model {
	t.Helper()
	return loadWith(t, testmodels.Generated(t, name), Options{})
}

// loadWith loads the model at path with o, closed when the test ends.
func loadWith(t testing.TB, path string, o Options) *Model {
	t.Helper()
	m, err := Load(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func jfk(t testing.TB) []float32 {
	pcm, err := frontend.ReadWAV(testmodels.Shared(t, "jfk.wav"))
	if err != nil {
		t.Fatal(err)
	}
	return pcm
}

func TestTranscribeRuns(t *testing.T) {
	m := loadTiny(t, testmodels.WhisperGGUF)
	pcm := jfk(t)
	for _, o := range []DecodeOptions{
		{Language: "en", Temperatures: []float64{0}},
		{Language: "en", Timestamps: true, Temperatures: []float64{0}},
		{Language: "auto", DetectAmong: []string{"en", "es", "de"}, Temperatures: []float64{0}},
		{Language: "es", Task: TaskTranslate, BeamSize: 5, Temperatures: []float64{0}},
		{Language: "en", Temperatures: []float64{0.5}, BestOf: 3, Seed: 7},
	} {
		start := time.Now()
		o.MaxTokens = 30 // random weights never stop on their own
		tr, err := m.Transcribe(context.Background(), pcm, o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		t.Logf("%+v: %s lang=%s segments=%d text=%.60q", o, time.Since(start), tr.Language, len(tr.Segments), tr.Text())
		if o.Language == "auto" && tr.Language != "en" && tr.Language != "es" && tr.Language != "de" {
			t.Errorf("detected %q outside the allowed set", tr.Language)
		}
		for _, s := range tr.Segments {
			if s.Start < 0 || s.End < s.Start || s.End > tr.Duration+30 {
				t.Errorf("segment %+v out of range", s)
			}
		}
		if len(tr.Segments) == 0 || strings.TrimSpace(tr.Text()) == "" {
			t.Errorf("%+v: no text", o)
		}
	}
}

// TestLargeV3Layout: the same code loads a model with large-v3's front end
// and vocabulary (128 mel bins, 51866 tokens, 100 languages) and runs it,
// detecting among the contract's languages.
func TestLargeV3Layout(t *testing.T) {
	m := loadTiny(t, testmodels.WhisperMicroV3GGUF)
	tk := m.Tokenizer()
	if m.HParams().NMels != 128 || m.Mel().NMels() != 128 || tk.NLanguages != 100 || !tk.Multilingual {
		t.Fatalf("hparams %+v, languages %d", m.HParams(), tk.NLanguages)
	}
	if yue, err := tk.LanguageToken("yue"); err != nil || yue != tk.SOT+100 {
		t.Errorf("<|yue|> = %d, %v; want SOT+100", yue, err)
	}
	if tk.Name(tk.TimestampBegin) != "<|0.00|>" || tk.TimestampBegin != 51866-1501 {
		t.Errorf("timestamps begin at %d (%s)", tk.TimestampBegin, tk.Name(tk.TimestampBegin))
	}
	tr, err := m.Transcribe(context.Background(), jfk(t)[:3*frontend.SampleRate], DecodeOptions{DetectAmong: tokenizer.SpokenLanguages, Temperatures: []float64{0}, MaxTokens: 10, NoSpeechThreshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tokenizer.SpokenLanguages, tr.Language) || len(tr.Segments) == 0 {
		t.Errorf("transcript %+v", tr)
	}
}

// TestPlacedCopiesDecodeTheSame: with layers on a GPU, the tensors the
// backend leaves on the CPU (positions, final norms, the output
// projection) are used through copies beside their layers. Forced on this
// CPU-only machine the copies are plain CPU tensors, so greedy and beam
// decodes must give exactly the text of the model without them; unforced,
// a machine without a GPU makes none (they would only cost memory).
func TestPlacedCopiesDecodeTheSame(t *testing.T) {
	plain := loadTiny(t, testmodels.WhisperF16GGUF)
	unforced, err := Load(context.Background(), testmodels.Generated(t, testmodels.WhisperF16GGUF), Options{GPULayers: -1})
	if err != nil {
		t.Fatal(err)
	}
	if unforced.placed != nil {
		t.Error("copies made with no GPU")
	}
	unforced.Close()
	placed, err := Load(context.Background(), testmodels.Generated(t, testmodels.WhisperF16GGUF), Options{GPULayers: -1, placeAlways: true})
	if err != nil {
		t.Fatal(err)
	}
	defer placed.Close()
	if placed.placed == nil || placed.weights.outProj == placed.weights.tokEmb {
		t.Fatal("placeAlways made no copies")
	}
	pcm := jfk(t)
	for _, o := range []DecodeOptions{
		{Language: "en", Temperatures: []float64{0}, MaxTokens: 24},
		{Language: "en", BeamSize: 3, Temperatures: []float64{0}, MaxTokens: 12, Timestamps: true},
	} {
		a, err := plain.Transcribe(context.Background(), pcm, o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := placed.Transcribe(context.Background(), pcm, o)
		if err != nil {
			t.Fatal(err)
		}
		if a.Text() != b.Text() || a.Text() == "" {
			t.Errorf("%+v: %q without copies, %q with", o, a.Text(), b.Text())
		}
	}
}
