// Package tokenizer is Whisper's vocabulary: byte-level BPE encoding and
// decoding, the special and timestamp tokens (whose ids follow from the
// model's vocabulary size), the language codes in token order, and the
// spoken languages a live session accepts. It is pure Go, without cgo, so
// that the model converters can use it without the ggml runtime.
package tokenizer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Languages are Whisper's language codes in token order: the language
// token of Languages[i] is SOT+1+i.
var Languages = []string{
	"en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr",
	"pl", "ca", "nl", "ar", "sv", "it", "id", "hi", "fi", "vi",
	"he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no",
	"th", "ur", "hr", "bg", "lt", "la", "mi", "ml", "cy", "sk",
	"te", "fa", "lv", "bn", "sr", "az", "sl", "kn", "et", "mk",
	"br", "eu", "is", "hy", "ne", "mn", "bs", "kk", "sq", "sw",
	"gl", "mr", "pa", "si", "km", "sn", "yo", "so", "af", "oc",
	"ka", "be", "tg", "sd", "gu", "am", "yi", "lo", "uz", "fo",
	"ht", "ps", "tk", "nn", "mt", "sa", "lb", "my", "bo", "tl",
	"mg", "as", "tt", "haw", "ln", "ha", "ba", "jw", "su", "yue",
}

// Tokenizer is Whisper's byte-level BPE vocabulary with its special and
// timestamp tokens.
type Tokenizer struct {
	tokens [][]byte // regular tokens as raw bytes (id < EOT)
	index  map[string]int32

	NVocab       int
	Multilingual bool
	NLanguages   int

	EOT, SOT, Translate, Transcribe, SOLM, Prev, NoSpeech, NoTimestamps, TimestampBegin int32
}

// New builds the tokenizer from the regular tokens (raw bytes)
// and the model's vocabulary size, which decides the special ids.
func New(tokens []string, nVocab int) (*Tokenizer, error) {
	t := &Tokenizer{NVocab: nVocab, Multilingual: nVocab >= 51865, index: map[string]int32{}}
	// English-only layout, shifted for multilingual models.
	t.EOT, t.SOT = 50256, 50257
	t.Translate, t.Transcribe, t.SOLM, t.Prev, t.NoSpeech, t.NoTimestamps, t.TimestampBegin = 50357, 50358, 50359, 50360, 50361, 50362, 50363
	t.NLanguages = 99
	if t.Multilingual {
		t.NLanguages = nVocab - 51765 - 1
		dt := int32(t.NLanguages - 98)
		t.EOT++
		t.SOT++
		t.Translate += dt
		t.Transcribe += dt
		t.SOLM += dt
		t.Prev += dt
		t.NoSpeech += dt
		t.NoTimestamps += dt
		t.TimestampBegin += dt
	}
	if int(t.TimestampBegin)+1501 != nVocab {
		return nil, fmt.Errorf("asr: a vocabulary of %d does not fit Whisper's layout", nVocab)
	}
	if len(tokens) < int(t.EOT) {
		return nil, fmt.Errorf("asr: %d tokens, want at least %d", len(tokens), t.EOT)
	}
	t.tokens = make([][]byte, t.EOT)
	for i := range t.EOT {
		b := []byte(tokens[i])
		t.tokens[i] = b
		if _, dup := t.index[string(b)]; !dup && len(b) > 0 {
			t.index[string(b)] = i
		}
	}
	return t, nil
}

// LanguageToken is the token of a language code, or an error naming the
// codes this model knows.
func (t *Tokenizer) LanguageToken(code string) (int32, error) {
	for i, c := range Languages[:t.NLanguages] {
		if c == code {
			return t.SOT + 1 + int32(i), nil
		}
	}
	return 0, fmt.Errorf("asr: language %q is not one of this model's %d languages", code, t.NLanguages)
}

// Language is the code of a language token ("" if it is not one).
func (t *Tokenizer) Language(tok int32) string {
	i := int(tok - t.SOT - 1)
	if i >= 0 && i < t.NLanguages {
		return Languages[i]
	}
	return ""
}

// IsTimestamp reports whether tok is a timestamp token.
func (t *Tokenizer) IsTimestamp(tok int32) bool {
	return tok >= t.TimestampBegin && int(tok) < t.NVocab
}

// TimestampSeconds is the time a timestamp token stands for (0.02 s steps).
func (t *Tokenizer) TimestampSeconds(tok int32) float64 { return float64(tok-t.TimestampBegin) * 0.02 }

// IsSpecial reports whether tok is not a text token.
func (t *Tokenizer) IsSpecial(tok int32) bool { return tok >= t.EOT }

// Bytes is the raw bytes of a text token (nil for special tokens).
func (t *Tokenizer) Bytes(tok int32) []byte {
	if tok < 0 || tok >= t.EOT {
		return nil
	}
	return t.tokens[tok]
}

// Decode joins the text tokens' bytes (special tokens are skipped) and
// reads them as UTF-8.
func (t *Tokenizer) Decode(toks []int32) string {
	var b []byte
	for _, tok := range toks {
		b = append(b, t.Bytes(tok)...)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// Name is a token's printable form: its text, or <|...|> for special and
// timestamp tokens as OpenAI writes them.
func (t *Tokenizer) Name(tok int32) string {
	switch {
	case tok < t.EOT:
		return string(t.tokens[tok])
	case tok == t.EOT:
		return "<|endoftext|>"
	case tok == t.SOT:
		return "<|startoftranscript|>"
	case tok == t.Translate:
		return "<|translate|>"
	case tok == t.Transcribe:
		return "<|transcribe|>"
	case tok == t.SOLM:
		return "<|startoflm|>"
	case tok == t.Prev:
		return "<|startofprev|>"
	case tok == t.NoSpeech:
		return "<|nospeech|>"
	case tok == t.NoTimestamps:
		return "<|notimestamps|>"
	case t.IsTimestamp(tok):
		return "<|" + strconv.FormatFloat(t.TimestampSeconds(tok), 'f', 2, 64) + "|>"
	case t.Language(tok) != "":
		return "<|" + t.Language(tok) + "|>"
	}
	return fmt.Sprintf("<|extra_%d|>", tok)
}

// specialNames maps printable special names back to ids (for Encode).
func (t *Tokenizer) special(name string) (int32, bool) {
	switch name {
	case "<|endoftext|>":
		return t.EOT, true
	case "<|startoftranscript|>":
		return t.SOT, true
	case "<|translate|>":
		return t.Translate, true
	case "<|transcribe|>":
		return t.Transcribe, true
	case "<|startoflm|>":
		return t.SOLM, true
	case "<|startofprev|>":
		return t.Prev, true
	case "<|nospeech|>":
		return t.NoSpeech, true
	case "<|notimestamps|>":
		return t.NoTimestamps, true
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(name, "<|"), "|>")
	if f, err := strconv.ParseFloat(inner, 64); err == nil && f >= 0 && f <= 30 {
		return t.TimestampBegin + int32(f/0.02+0.5), true
	}
	if tok, err := t.LanguageToken(inner); err == nil {
		return tok, true
	}
	return 0, false
}

var (
	splitRE   = regexp.MustCompile(`'s|'t|'re|'ve|'m|'ll|'d| ?\pL+| ?\pN+| ?[^\s\pL\pN]+|\s+`)
	specialRE = regexp.MustCompile(`<\|[^|<>]{1,24}\|>`)
)

// Encode turns text into tokens with byte-pair merges in rank order (a
// token's id is its merge rank, as in tiktoken), after GPT-2's word split.
// Special and timestamp tokens written as <|...|> are read as such.
func (t *Tokenizer) Encode(text string) []int32 {
	var out []int32
	last := 0
	for _, loc := range specialRE.FindAllStringIndex(text, -1) {
		if id, ok := t.special(text[loc[0]:loc[1]]); ok {
			out = append(out, t.encodeText(text[last:loc[0]])...)
			out = append(out, id)
			last = loc[1]
		}
	}
	return append(out, t.encodeText(text[last:])...)
}

func (t *Tokenizer) encodeText(text string) []int32 {
	var out []int32
	for _, word := range splitRE.FindAllString(text, -1) {
		out = append(out, t.bpe([]byte(word))...)
	}
	return out
}

// bpe merges the pair whose joined bytes have the lowest token id until no
// pair is a token.
func (t *Tokenizer) bpe(word []byte) []int32 {
	if id, ok := t.index[string(word)]; ok {
		return []int32{id}
	}
	parts := make([][]byte, len(word))
	for i := range word {
		parts[i] = word[i : i+1]
	}
	for len(parts) > 1 {
		best, bestRank := -1, int32(1<<30)
		for i := 0; i+1 < len(parts); i++ {
			if r, ok := t.index[string(parts[i])+string(parts[i+1])]; ok && r < bestRank {
				best, bestRank = i, r
			}
		}
		if best < 0 {
			break
		}
		merged := append(append([]byte{}, parts[best]...), parts[best+1]...)
		parts = append(parts[:best], append([][]byte{merged}, parts[best+2:]...)...)
	}
	out := make([]int32, 0, len(parts))
	for _, p := range parts {
		if id, ok := t.index[string(p)]; ok {
			out = append(out, id)
		}
		// A byte the vocabulary lacks (vocabulary files that store byte
		// fragments as U+FFFD) is dropped.
	}
	return out
}

// SpokenLanguages are the languages a live session accepts (contract,
// platform section 6); auto-detection chooses among them.
var SpokenLanguages = []string{"ar", "de", "en", "es", "fr", "hi", "it", "ja", "ko", "nl", "pt", "ru", "zh"}

// NormalizeLanguage maps a language code as clients send it ("en",
// "pt-BR", "ZH", "auto", "") to the Whisper code Transcribe takes ("" for
// auto-detection), or explains what is accepted.
func NormalizeLanguage(code string) (string, error) {
	c := strings.ToLower(strings.TrimSpace(code))
	if c == "" || c == "auto" {
		return "", nil
	}
	if i := strings.IndexAny(c, "-_"); i > 0 {
		c = c[:i] // a region (pt-BR, zh-Hans) does not change the model's language
	}
	for _, l := range SpokenLanguages {
		if c == l {
			return c, nil
		}
	}
	return "", fmt.Errorf("asr: language %q is not one of auto, %s", code, strings.Join(SpokenLanguages, ", "))
}
