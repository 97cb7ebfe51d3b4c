package whispercpp_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"boxd/engine/asr"
	"boxd/engine/asr/whispercpp"
	"boxd/engine/models/testmodels"
)

func TestScratch(t *testing.T) {
	seed, _ := strconv.Atoi(os.Getenv("SEED"))
	tokStd, _ := strconv.ParseFloat(os.Getenv("TOKSTD"), 64)
	spec := testmodels.Whisper{Name: os.Getenv("NAME"), Seed: uint64(seed), Micro: os.Getenv("MICRO") == "1", TextLayers: 2, F16: os.Getenv("F16") == "1", TokenStd: tokStd}
	bin, gg := testmodels.WhisperFiles(t, spec)
	wav := "/work/shared/models/jfk.wav"
	m, err := asr.Load(context.Background(), gg, asr.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	pcm, _ := asr.ReadWAV(wav)
	tr, err := m.Transcribe(context.Background(), pcm, asr.DecodeOptions{Language: "en", Temperatures: []float64{0}, KeepNonSpeech: true, MaxTokens: 220})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tr.Segments {
		t.Logf("boxd seg %.2f-%.2f %d tokens", s.Start, s.End, len(s.Tokens))
	}
	r, err := whispercpp.Run(context.Background(), bin, wav, whispercpp.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Segments {
		t.Logf("wcpp seg %v-%v", s.T0MS, s.T1MS)
	}
	t.Logf("forced=%v equal=%v", r.WhisperCPP.NoTimestampsForced, r.Text == tr.Text())
	a, b := strings.Fields(tr.Text()), strings.Fields(r.Text)
	t.Logf("boxd words %d wcpp words %d", len(a), len(b))
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			t.Logf("first diff at word %d: %q vs %q", i, a[i], b[i])
			break
		}
	}
	t.Logf("boxd: %.300q\nwcpp: %.300q", tr.Text(), r.Text)
}
