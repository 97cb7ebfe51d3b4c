package hfwhisper

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"

	"boxd/engine/asr/tokenizer"
)

// byteDecoder inverts GPT-2's bytes_to_unicode: the 188 printable bytes
// stand for themselves, the other 68 (ascending) for U+0100, U+0101, ...
var byteDecoder = func() map[rune]byte {
	dec := make(map[rune]byte, 256)
	n := 0
	for b := range 256 {
		if b >= 0x21 && b <= 0x7e || b >= 0xa1 && b <= 0xac || b >= 0xae {
			dec[rune(b)] = byte(b)
		} else {
			dec[rune(256+n)] = byte(b)
			n++
		}
	}
	return dec
}()

// tokenBytes decodes a byte-level BPE vocabulary string to raw bytes.
func tokenBytes(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		b, ok := byteDecoder[r]
		if !ok {
			return nil, fmt.Errorf("character %U is outside GPT-2's byte alphabet", r)
		}
		out = append(out, b)
	}
	return out, nil
}

// layout is whisper.cpp's special-token layout, which it derives from the
// vocabulary size alone.
type layout struct {
	eot, sot, translate, transcribe, solm, prev, nospeech, notimestamps, beg int64
	nLang                                                                    int
}

func newLayout(nVocab int) layout {
	l := layout{eot: 50256, nLang: 99}
	if nVocab >= 51865 { // multilingual
		l.eot = 50257
		l.nLang = nVocab - 51765 - 1
	}
	l.sot = l.eot + 1
	l.translate = l.sot + 1 + int64(l.nLang)
	l.transcribe = l.translate + 1
	l.solm = l.translate + 2
	l.prev = l.translate + 3
	l.nospeech = l.translate + 4
	l.notimestamps = l.translate + 5
	l.beg = l.translate + 6
	return l
}

var timestampRE = regexp.MustCompile(`^<\|(\d+)\.(\d\d)\|>$`)

// id is where the layout puts a special token (false: it has no place).
func (l layout) id(tok string, nVocab int) (int64, bool) {
	switch tok {
	case "<|endoftext|>":
		return l.eot, true
	case "<|startoftranscript|>":
		return l.sot, true
	case "<|translate|>":
		return l.translate, true
	case "<|transcribe|>":
		return l.transcribe, true
	case "<|startoflm|>":
		return l.solm, true
	case "<|startofprev|>":
		return l.prev, true
	case "<|nospeech|>", "<|nocaptions|>":
		return l.nospeech, true
	case "<|notimestamps|>":
		return l.notimestamps, true
	}
	if m := timestampRE.FindStringSubmatch(tok); m != nil {
		whole, err1 := strconv.ParseInt(m[1], 10, 32)
		frac, err2 := strconv.ParseInt(m[2], 10, 32)
		if err1 != nil || err2 != nil || frac%2 != 0 {
			return 0, false
		}
		id := l.beg + (whole*100+frac)/2
		return id, id < int64(nVocab)
	}
	for i, code := range tokenizer.Languages[:min(l.nLang, len(tokenizer.Languages))] {
		if tok == "<|"+code+"|>" {
			return l.sot + 1 + int64(i), true
		}
	}
	return 0, false
}

// tokenizerJSON is the part of tokenizer.json the converter reads.
type tokenizerJSON struct {
	Model struct {
		Vocab map[string]int64 `json:"vocab"`
	} `json:"model"`
	AddedTokens []struct {
		ID      int64  `json:"id"`
		Content string `json:"content"`
	} `json:"added_tokens"`
}

// readVocab reads the regular tokens (ids 0..EOT-1) as raw bytes and
// checks the special tokens against whisper.cpp's layout.
func readVocab(dir string, nVocab int) ([][]byte, error) {
	var tj *tokenizerJSON
	loadTJ := func() (*tokenizerJSON, error) {
		if tj != nil {
			return tj, nil
		}
		raw, err := os.ReadFile(filepath.Join(dir, TokenizerFile))
		if err != nil {
			return nil, fmt.Errorf("hfwhisper: %w", err)
		}
		tj = &tokenizerJSON{}
		if err := json.Unmarshal(raw, tj); err != nil {
			return nil, fmt.Errorf("hfwhisper: %s: %w", TokenizerFile, err)
		}
		return tj, nil
	}
	missing := func(err error) bool { return errors.Is(err, fs.ErrNotExist) }

	vocabLabel := VocabFile
	vocab, err := readJSONMap(filepath.Join(dir, VocabFile))
	if missing(err) {
		t, terr := loadTJ()
		if missing(terr) {
			return nil, fmt.Errorf("hfwhisper: %s has neither %s nor %s: copy the tokenizer files from the openai/whisper-* repository", dir, VocabFile, TokenizerFile)
		}
		if terr != nil {
			return nil, terr
		}
		if len(t.Model.Vocab) == 0 {
			return nil, fmt.Errorf("hfwhisper: %s: model.vocab is missing or empty (and there is no %s)", TokenizerFile, VocabFile)
		}
		vocab, vocabLabel = t.Model.Vocab, TokenizerFile
	} else if err != nil {
		return nil, fmt.Errorf("hfwhisper: %s: %w", VocabFile, err)
	}

	addedLabel := AddedTokensFile
	added, err := readJSONMap(filepath.Join(dir, AddedTokensFile))
	if missing(err) {
		added, addedLabel = nil, TokenizerFile
		t, terr := loadTJ()
		if terr != nil && !missing(terr) {
			return nil, terr
		}
		if terr == nil {
			added = map[string]int64{}
			for _, a := range t.AddedTokens {
				if prev, dup := added[a.Content]; dup && prev != a.ID {
					return nil, fmt.Errorf("hfwhisper: %s: added token %q has ids %d and %d", TokenizerFile, a.Content, prev, a.ID)
				}
				added[a.Content] = a.ID
			}
		}
	} else if err != nil {
		return nil, fmt.Errorf("hfwhisper: %s: %w", AddedTokensFile, err)
	}

	lay := newLayout(nVocab)
	for _, src := range []struct {
		label string
		m     map[string]int64
	}{{addedLabel, added}, {vocabLabel, vocab}} {
		if id, ok := src.m["<|endoftext|>"]; ok && id != lay.eot {
			return nil, fmt.Errorf("hfwhisper: %s: <|endoftext|> has id %d, but whisper.cpp puts it at %d for vocab_size %d (the special tokens follow from vocab_size; is config.json this tokenizer's?)", src.label, id, lay.eot, nVocab)
		}
	}

	// Regular tokens: ids 0..eot-1, every one exactly once. Entries at or
	// past eot are special tokens, checked below with the added ones.
	eot := lay.eot
	tokens := make([][]byte, eot)
	names := make([]string, eot)
	have := make([]bool, eot)
	specials := map[string]int64{}
	specialFrom := map[string]string{}
	for _, s := range sortedKeys(vocab) {
		id := vocab[s]
		if id < 0 || id >= int64(nVocab) {
			return nil, fmt.Errorf("hfwhisper: %s: token %q has id %d outside 0..%d (vocab_size %d)", vocabLabel, s, id, nVocab-1, nVocab)
		}
		if id >= eot {
			specials[s], specialFrom[s] = id, vocabLabel
			continue
		}
		if have[id] {
			return nil, fmt.Errorf("hfwhisper: %s: tokens %q and %q both have id %d", vocabLabel, names[id], s, id)
		}
		b, err := tokenBytes(s)
		if err != nil {
			return nil, fmt.Errorf("hfwhisper: %s: token %q (id %d): %w", vocabLabel, s, id, err)
		}
		tokens[id], names[id], have[id] = b, s, true
	}
	for id, ok := range have {
		if !ok {
			return nil, fmt.Errorf("hfwhisper: %s: no token has id %d (the regular ids 0..%d must all be present)", vocabLabel, id, eot-1)
		}
	}

	for _, s := range sortedKeys(added) {
		id := added[s]
		if prev, dup := specials[s]; dup && prev != id {
			return nil, fmt.Errorf("hfwhisper: token %q has id %d in %s but %d in %s", s, prev, specialFrom[s], id, addedLabel)
		}
		specials[s], specialFrom[s] = id, addedLabel
	}
	for _, s := range sortedKeys(specials) {
		id, from := specials[s], specialFrom[s]
		if id < eot {
			return nil, fmt.Errorf("hfwhisper: %s: added token %q has id %d, inside the regular vocabulary 0..%d", from, s, id, eot-1)
		}
		if id >= int64(nVocab) {
			return nil, fmt.Errorf("hfwhisper: %s: added token %q has id %d, past vocab_size %d (whisper.cpp cannot hold extra tokens)", from, s, id, nVocab)
		}
		want, ok := lay.id(s, nVocab)
		if !ok {
			return nil, fmt.Errorf("hfwhisper: %s: token %q (id %d) is not one of Whisper's special tokens; whisper.cpp derives ids past %d from vocab_size and cannot represent it", from, s, id, eot-1)
		}
		if id != want {
			return nil, fmt.Errorf("hfwhisper: %s: special token %q has id %d, but whisper.cpp puts it at %d for vocab_size %d: this special-token layout cannot be converted", from, s, id, want, nVocab)
		}
	}
	return tokens, nil
}

// readJSONMap reads a JSON object of string → integer id.
func readJSONMap(path string) (map[string]int64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]int64
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func sortedKeys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
