package chunker

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// checkChunks holds what every cut must: offsets in order and without
// overlap, the chunk's text is the document's bytes there, its hash, at
// most max characters, no white space at either end, and every
// non-space character of the document in some chunk.
func checkChunks(t *testing.T, text string, cs []Chunk, max int) {
	t.Helper()
	prev := 0
	covered := make([]bool, len(text))
	for i, c := range cs {
		if c.ByteStart < prev || c.ByteEnd <= c.ByteStart || c.ByteEnd > len(text) {
			t.Fatalf("chunk %d: bytes %d..%d after %d in %d bytes", i, c.ByteStart, c.ByteEnd, prev, len(text))
		}
		if text[c.ByteStart:c.ByteEnd] != c.Text {
			t.Fatalf("chunk %d: text is not the document's bytes %d..%d", i, c.ByteStart, c.ByteEnd)
		}
		if !utf8.ValidString(c.Text) {
			t.Fatalf("chunk %d cuts a character", i)
		}
		sum := sha256.Sum256([]byte(c.Text))
		if hex.EncodeToString(sum[:]) != c.SHA256 {
			t.Fatalf("chunk %d: sha256", i)
		}
		if n := utf8.RuneCountInString(c.Text); n > max {
			t.Fatalf("chunk %d has %d characters, max %d", i, n, max)
		}
		if strings.TrimSpace(c.Text) != c.Text {
			t.Fatalf("chunk %d has white space at an end: %q", i, c.Text)
		}
		for j := c.ByteStart; j < c.ByteEnd; j++ {
			covered[j] = true
		}
		prev = c.ByteEnd
	}
	for i, r := range text {
		if !unicode.IsSpace(r) && !covered[i] {
			t.Fatalf("byte %d (%q) is in no chunk", i, r)
		}
	}
}

func TestCutRules(t *testing.T) {
	s := Settings{Version: "t", MaxChars: 40}
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"packs short paragraphs", "One.\n\nTwo.\n\nThree.", []string{"One.\n\nTwo.\n\nThree."}},
		{"paragraphs over the limit stay apart", "Alpha beta gamma delta epsilon.\n\nZeta eta theta iota kappa lambda.", []string{"Alpha beta gamma delta epsilon.", "Zeta eta theta iota kappa lambda."}},
		{"CRLF paragraphs", "First line here and more words.\r\n\r\nSecond one with several words.", []string{"First line here and more words.", "Second one with several words."}},
		{"blank line of spaces", "aaaa aaaa aaaa aaaa aaaa aaaa.\n  \t \nbbbb bbbb bbbb bbbb bbbb.", []string{"aaaa aaaa aaaa aaaa aaaa aaaa.", "bbbb bbbb bbbb bbbb bbbb."}},
		{"sentences", "The first sentence is here. The second one follows it! Is this the third? Yes.", []string{"The first sentence is here.", "The second one follows it!", "Is this the third? Yes."}},
		{"closing quotes", `He said "stop here now." Then the rest went on and on and on.`, []string{`He said "stop here now."`, "Then the rest went on and on and on."}},
		{"no cut inside a number", "Version 1.25 of the tool is out now and more text here to pass.", []string{"Version 1.25 of the tool is out now and", "more text here to pass."}},
		{"words", "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk", []string{"aaaa bbbb cccc dddd eeee ffff gggg hhhh", "iiii jjjj kkkk"}},
		{"a run without spaces", strings.Repeat("x", 90), []string{strings.Repeat("x", 40), strings.Repeat("x", 40), strings.Repeat("x", 10)}},
		{"multi-byte characters count once", strings.Repeat("é", 45), []string{strings.Repeat("é", 40), strings.Repeat("é", 5)}},
		{"CJK sentences", "これは最初の文です。これは二番目の文です。これは三番目の文でとてもとてもとても長いです。", []string{"これは最初の文です。これは二番目の文です。", "これは三番目の文でとてもとてもとても長いです。"}},
		{"only white space", " \n\n \t ", nil},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := Cut("d", tc.text, s)
			if err != nil {
				t.Fatal(err)
			}
			checkChunks(t, tc.text, cs, s.MaxChars)
			var got []string
			for _, c := range cs {
				got = append(got, c.Text)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("chunks %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCutRejectsInvalidUTF8(t *testing.T) {
	if _, err := Cut("d", "ok \xff no", Default); err == nil {
		t.Error("invalid UTF-8 was cut")
	}
}

// TestCutRandomDocuments: the invariants hold on random text of words,
// multi-byte characters, CRLF and blank lines, sentence marks and long
// runs, and the cut is the same twice.
func TestCutRandomDocuments(t *testing.T) {
	pieces := []string{"word", "ünïcödé", "数据", "🙂", ".", "!", "?", "…", " ", " ", " ", "\n", "\r\n", "\n\n", "\r\n\r\n", "\t", "\"", ")", strings.Repeat("y", 300), "Dr.", "3.14"}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		var b strings.Builder
		n := rng.IntN(3000)
		for b.Len() < n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		max := []int{1, 7, 50, 1200}[i%4]
		s := Settings{Version: "t", MaxChars: max}
		cs, err := Cut("d", text, s)
		if err != nil {
			t.Fatal(err)
		}
		checkChunks(t, text, cs, max)
		again, _ := Cut("d", text, s)
		if len(again) != len(cs) {
			t.Fatal("the cut is not deterministic")
		}
	}
}
