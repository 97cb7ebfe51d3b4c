package tokenizer

import (
	"slices"
	"strings"
	"testing"

	"boxd/engine/models/testmodels"
	"boxd/engine/models/whisperbin"
)

func realTokenizer(t *testing.T, file string, nVocab int) *Tokenizer {
	t.Helper()
	m, err := whisperbin.ReadFile(testmodels.Shared(t, file))
	if err != nil {
		t.Fatal(err)
	}
	toks := make([]string, len(m.Vocab))
	for i, b := range m.Vocab {
		toks[i] = string(b)
	}
	tk, err := New(toks, nVocab)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestSpecialTokenIDs(t *testing.T) {
	cases := []struct {
		file                                                           string
		n                                                              int
		eot, sot, translate, transcribe, solm, prev, nosp, nots, begin int32
		en, es                                                         int32
	}{
		{"whisper-vocab-tiny.bin", 51865, 50257, 50258, 50358, 50359, 50360, 50361, 50362, 50363, 50364, 50259, 50262},
		{"whisper-vocab-tiny.en.bin", 51864, 50256, 50257, 50357, 50358, 50359, 50360, 50361, 50362, 50363, 0, 0},
	}
	for _, c := range cases {
		tk := realTokenizer(t, c.file, c.n)
		got := []int32{tk.EOT, tk.SOT, tk.Translate, tk.Transcribe, tk.SOLM, tk.Prev, tk.NoSpeech, tk.NoTimestamps, tk.TimestampBegin}
		want := []int32{c.eot, c.sot, c.translate, c.transcribe, c.solm, c.prev, c.nosp, c.nots, c.begin}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: special %d = %d, want %d", c.file, i, got[i], want[i])
			}
		}
		if tk.Multilingual {
			if en, _ := tk.LanguageToken("en"); en != c.en {
				t.Errorf("en = %d", en)
			}
			if es, _ := tk.LanguageToken("es"); es != c.es {
				t.Errorf("es = %d", es)
			}
			if _, err := tk.LanguageToken("yue"); err == nil {
				t.Error("a 99-language model knows yue")
			}
		}
		if tk.Name(tk.TimestampBegin+150) != "<|3.00|>" || tk.Name(int32(c.n-1)) != "<|30.00|>" {
			t.Errorf("timestamp names: %s", tk.Name(tk.TimestampBegin+150))
		}
	}
	if _, err := New(make([]string, 50257), 51866); err != nil {
		t.Errorf("large-v3 layout: %v", err)
	}
	if _, err := New(make([]string, 50257), 40000); err == nil {
		t.Error("a vocabulary that fits no layout was accepted")
	}
}

func TestTokenizerRoundTrip(t *testing.T) {
	tk := realTokenizer(t, "whisper-vocab-tiny.bin", 51865)
	texts := []string{
		" And so, my fellow Americans, ask not what your country can do for you, ask what you can do for your country.",
		"The patient reports lower back pain (3 days), BP 128/82; plan: ibuprofen 400 mg.",
		"  leading spaces and\ttabs\nnewlines",
		"hello<|endoftext|>",
	}
	for _, s := range texts {
		ids := tk.Encode(s)
		if got := tk.Decode(ids) + map[bool]string{true: "<|endoftext|>", false: ""}[ids[len(ids)-1] == tk.EOT]; got != s {
			t.Errorf("round trip:\n got  %q\n want %q", got, s)
		}
	}
	// Known ids from openai/whisper's tokenizer: " the" and "Hello".
	if ids := tk.Encode(" the"); len(ids) != 1 || ids[0] != 264 {
		t.Errorf(`" the" = %v, want [264]`, ids)
	}
	// Special and timestamp tokens by name, and back.
	seq := "<|startoftranscript|><|en|><|transcribe|><|0.00|> Hello<|1.50|><|endoftext|>"
	ids := tk.Encode(seq)
	if ids[0] != tk.SOT || ids[1] != 50259 || ids[2] != tk.Transcribe || ids[3] != tk.TimestampBegin || ids[len(ids)-2] != tk.TimestampBegin+75 || ids[len(ids)-1] != tk.EOT {
		t.Errorf("special sequence ids %v", ids)
	}
	var back string
	for _, id := range ids {
		back += tk.Name(id)
	}
	if back != seq {
		t.Errorf("names:\n got  %q\n want %q", back, seq)
	}
	if tk.Decode(ids) != " Hello" {
		t.Errorf("decode skips special tokens: %q", tk.Decode(ids))
	}
}

func TestNormalizeLanguage(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"", "", ""}, {"auto", "", ""}, {" AUTO ", "", ""}, {"en", "en", ""}, {"pt-BR", "pt", ""}, {"zh_Hans", "zh", ""},
		{"ES", "es", ""}, {"yue", "", "not one of auto, ar, de"}, {"english", "", "not one of"}, {"-", "", "not one of"},
	} {
		got, err := NormalizeLanguage(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, l := range SpokenLanguages {
		if !slices.Contains(Languages, l) {
			t.Errorf("spoken language %s has no Whisper token", l)
		}
	}
}
