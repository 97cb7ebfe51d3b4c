package chunker

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// clusters are text's extended grapheme clusters as byte spans, found by
// uniseg independently of the chunker.
func clusters(text string) [][2]int {
	var out [][2]int
	g := uniseg.NewGraphemes(text)
	for g.Next() {
		s, e := g.Positions()
		out = append(out, [2]int{s, e})
	}
	return out
}

// whiteCluster reports whether every code point of a cluster is white
// space.
func whiteCluster(c string) bool { return strings.TrimSpace(c) == "" && c != "" }

// checkClusters holds what every boxd-chunker-3 cut must: the checks of
// checkChunks with grapheme clusters for characters (chunks start and end
// between clusters; no white-space cluster at either end; at most max
// code points unless the chunk is one cluster; every cluster but white
// space in some chunk).
func checkClusters(t *testing.T, text string, cs []Chunk, max int) {
	t.Helper()
	bound := map[int]bool{0: true}
	cl := clusters(text)
	for _, c := range cl {
		bound[c[1]] = true
	}
	covered := make([]bool, len(text))
	prev := 0
	for i, c := range cs {
		if c.ByteStart < prev || c.ByteEnd <= c.ByteStart || c.ByteEnd > len(text) || text[c.ByteStart:c.ByteEnd] != c.Text {
			t.Fatalf("chunk %d: bytes %d..%d after %d in %d bytes", i, c.ByteStart, c.ByteEnd, prev, len(text))
		}
		if !bound[c.ByteStart] || !bound[c.ByteEnd] {
			t.Fatalf("chunk %d (%q) starts or ends inside a grapheme cluster of %q", i, c.Text, text)
		}
		if sum := sha256.Sum256([]byte(c.Text)); hex.EncodeToString(sum[:]) != c.SHA256 {
			t.Fatalf("chunk %d: sha256", i)
		}
		own := clusters(c.Text)
		if whiteCluster(c.Text[own[0][0]:own[0][1]]) || whiteCluster(c.Text[own[len(own)-1][0]:own[len(own)-1][1]]) {
			t.Fatalf("chunk %d has white space at an end: %q", i, c.Text)
		}
		if n := utf8.RuneCountInString(c.Text); n > max && len(own) > 1 {
			t.Fatalf("chunk %d has %d characters in %d clusters, max %d", i, n, len(own), max)
		}
		for j := c.ByteStart; j < c.ByteEnd; j++ {
			covered[j] = true
		}
		prev = c.ByteEnd
	}
	for _, c := range cl {
		if !whiteCluster(text[c[0]:c[1]]) && !covered[c[0]] {
			t.Fatalf("cluster %q at byte %d is in no chunk", text[c[0]:c[1]], c[0])
		}
	}
}

func texts(cs []Chunk) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Text)
	}
	return out
}

// TestGraphemeClustersStayWhole: boxd-chunker-3 never cuts inside a
// ZWJ emoji sequence, a flag, a letter with its combining marks, a
// Hangul syllable written in jamo, a space carrying a combining mark or a
// prepended mark, where boxd-chunker-2 (the same text, the same limit)
// cut them.
func TestGraphemeClustersStayWhole(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		v2, v3     []string
	}{
		{"ZWJ sequence at the limit", "abcdefgh👩‍👩‍👧xyz",
			[]string{"abcdefgh👩\u200d", "👩\u200d👧xyz"}, []string{"abcdefgh", "👩‍👩‍👧xyz"}},
		{"flag at the limit", "abcdefghi🇫🇷🇩🇪",
			[]string{"abcdefghi🇫", "🇷🇩🇪"}, []string{"abcdefghi", "🇫🇷🇩🇪"}},
		{"flags paired from their start", "xxxxxxxxx🇫🇷yyyyyyyyy",
			[]string{"xxxxxxxxx🇫", "🇷yyyyyyyyy"}, []string{"xxxxxxxxx", "🇫🇷yyyyyyyy", "y"}},
		{"combining marks at the limit", "abcdefghie\u0301\u0323xyz",
			[]string{"abcdefghie", "\u0301\u0323xyz"}, []string{"abcdefghi", "e\u0301\u0323xyz"}},
		{"Hangul jamo at the limit", "abcdefghi\u1100\u1161\u11A8xyz",
			[]string{"abcdefghi\u1100", "\u1161\u11A8xyz"}, []string{"abcdefghi", "\u1100\u1161\u11A8xyz"}},
		{"a space carrying a mark is not white space", "aaaa bbbb \u0301cccc",
			[]string{"aaaa bbbb", "\u0301cccc"}, []string{"aaaa", "bbbb \u0301cccc"}},
		{"a paragraph starting with a space and a mark", "abcdefgh\n\n \u0301cd",
			[]string{"abcdefgh", "\u0301cd"}, []string{"abcdefgh", " \u0301cd"}},
		{"a CJK sentence end carrying a mark", "これは文です。\u3099次の文です。",
			[]string{"これは文です。", "\u3099次の文です。"}, []string{"これは文です。\u3099", "次の文です。"}},
		{"a prepended mark before a space", "abcdefgh\u0600 xyz",
			[]string{"abcdefgh\u0600", "xyz"}, []string{"abcdefgh\u0600 ", "xyz"}},
		{"a cluster longer than the limit is one chunk", "ab e" + strings.Repeat("\u0301", 12) + " cd",
			[]string{"ab", "e" + strings.Repeat("\u0301", 9), strings.Repeat("\u0301", 3) + " cd"}, []string{"ab", "e" + strings.Repeat("\u0301", 12), "cd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []struct {
				version string
				want    []string
			}{{V2, tc.v2}, {V3, tc.v3}} {
				s := Settings{Version: v.version, MaxChars: 10}
				cs, err := Cut("d", tc.text, s)
				if err != nil {
					t.Fatal(err)
				}
				if got := texts(cs); !slices.Equal(got, v.want) {
					t.Errorf("%s: chunks %q, want %q", v.version, got, v.want)
				}
				if v.version == V3 {
					checkClusters(t, tc.text, cs, s.MaxChars)
				}
			}
		})
	}
}

// runeCounter counts one token per code point plus two special tokens,
// as the test models' tokenizers do on text without spaces; it records
// the calls and the bytes it read.
type runeCounter struct {
	max          int
	calls, bytes int
}

func (c *runeCounter) CountTokens(text string) (int, error) {
	c.calls++
	c.bytes += len(text)
	return utf8.RuneCountInString(text) + 2, nil
}

func (c *runeCounter) MaxTokens() int { return c.max }

// TestGraphemeTokenBounds: a piece over a token bound is cut again
// between clusters; a single cluster over the bound is a TokenError, not
// cut.
func TestGraphemeTokenBounds(t *testing.T) {
	text := strings.Repeat("👩‍👩‍👧🇫🇷e\u0301 ", 40)
	s, err := Bounded(Settings{Version: V3, MaxChars: 1200}, Counters{Embed: &runeCounter{max: 16}})
	if err != nil {
		t.Fatal(err)
	}
	c := &runeCounter{max: 16}
	cs, err := CutCounted("d", text, s, Counters{Embed: c})
	if err != nil {
		t.Fatal(err)
	}
	checkClusters(t, text, cs, s.MaxChars)
	for _, ch := range cs {
		if n, _ := c.CountTokens(ch.Text); n > 16 {
			t.Errorf("chunk %q takes %d tokens, over 16", ch.Text, n)
		}
	}
	// One cluster of 20 code points takes 22 tokens: no cut can fit it.
	long := "ab " + "e" + strings.Repeat("\u0301", 19) + " cd"
	_, err = CutCounted("d", long, s, Counters{Embed: c})
	var te *TokenError
	if !errors.As(err, &te) || te.ByteStart != 3 || te.ByteEnd != 3+1+19*2 || te.Tokens != 22 {
		t.Fatalf("%v, want a TokenError for the cluster at bytes 3..42", err)
	}
}

// graphemePieces are the pieces of random documents: words, white space,
// sentence marks, and clusters of several code points.
var graphemePieces = []string{"word", "ünïcödé", "数据", "🙂", ".", "!", "?", "。", " ", " ", " ", "\n", "\r\n", "\n\n", "\r\n\r\n", "\t", "\"", ")",
	"👩‍👩‍👧", "👍🏽", "🇫🇷", "🇩", "e\u0301\u0323", "\u0301", "\u1100\u1161\u11A8", "\u1100", "\u1161", "\u0600", "\u200d", "\u00a0", "\u3000", "\u3099",
	strings.Repeat("y", 300), "Dr.", "3.14"}

func randomDoc(rng *rand.Rand) string {
	var b strings.Builder
	n := rng.IntN(3000)
	for b.Len() < n {
		b.WriteString(graphemePieces[rng.IntN(len(graphemePieces))])
	}
	return b.String()
}

// TestGraphemeRandomDocuments: the boxd-chunker-3 invariants hold on
// random text rich in clusters, with and without token bounds, and the
// cut is the same twice.
func TestGraphemeRandomDocuments(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 300 {
		text := randomDoc(rng)
		max := []int{1, 3, 7, 50, 1200}[i%5]
		s := Settings{Version: V3, MaxChars: max}
		var c Counters
		if i%2 == 1 {
			s.MaxTokens, c.Embed = 40, &runeCounter{max: 40}
		}
		cs, err := CutCounted("d", text, s, c)
		if err != nil {
			var te *TokenError
			if errors.As(err, &te) && utf8.RuneCountInString(text[te.ByteStart:te.ByteEnd])+2 > 40 && len(clusters(text[te.ByteStart:te.ByteEnd])) == 1 {
				continue // a cluster of over 38 code points
			}
			t.Fatal(err)
		}
		checkClusters(t, text, cs, max)
		again, _ := CutCounted("d", text, s, c)
		if fmt.Sprint(texts(again)) != fmt.Sprint(texts(cs)) {
			t.Fatal("the cut is not deterministic")
		}
	}
}

// TestOldVersionsCutAsBefore: boxd-chunker-1 and -2 (and versions the
// chunker does not name) cut exactly as they did before boxd-chunker-3
// (legacy_test.go keeps that code): the same offsets on random documents
// rich in grapheme clusters, with and without token bounds, so that
// indexes kept with them are cut again to the same hash.
func TestOldVersionsCutAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 400 {
		text := randomDoc(rng)
		s := Settings{Version: []string{V1, V2, "t"}[i%3], MaxChars: []int{1, 7, 50, 1200}[i%4]}
		var c Counters
		if s.Version == V2 && i%2 == 0 {
			s.MaxTokens, c.Embed = 30, &runeCounter{max: 30}
			s.RerankMaxTokens, c.Rerank = 20, &runeCounter{max: 148}
		}
		got, err := CutCounted("d", text, s, c)
		want, werr := legacyCut("d", text, s, c)
		if fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("%+v: error %v, before %v", s, err, werr)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%+v: %q cut to %q, before %q", s, text, texts(got), texts(want))
		}
	}
}

// TestChunkerV2FixedOffsets: boxd-chunker-2 cuts a fixed text with
// clusters at its cut points at the byte offsets it always did (the flag
// and the combining mark split as before); boxd-chunker-3 keeps them
// whole.
func TestChunkerV2FixedOffsets(t *testing.T) {
	text := "Family: abcd👩‍👩‍👧 and flags 🇫🇷🇩🇪🇯🇵 here. Cafe\u0301\u0323 au lait!\r\n\r\n \u0301Hangul \u1100\u1161\u11A8\u1102\u1161 text。\u3099Next\n\nxxxxxxxxx🇫🇷yyyyyyyyy"
	want := [][2]int{{0, 7}, {8, 30}, {31, 40}, {41, 65}, {66, 71}, {72, 83}, {84, 89}, {94, 102}, {103, 118}, {119, 133}, {135, 148}, {148, 161}}
	for _, v := range []string{V1, V2} {
		cs, err := Cut("d", text, Settings{Version: v, MaxChars: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got [][2]int
		for _, c := range cs {
			got = append(got, [2]int{c.ByteStart, c.ByteEnd})
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: offsets %v, want %v", v, got, want)
		}
	}
	cs, err := Cut("d", text, Settings{Version: V3, MaxChars: 10})
	if err != nil {
		t.Fatal(err)
	}
	checkClusters(t, text, cs, 10)
	want3 := []string{"Family:", "abcd👩\u200d👩\u200d👧", "and flags", "🇫🇷🇩🇪🇯🇵", "here.", "Cafe\u0301\u0323 au", "lait!", " \u0301Hangul", "\u1100\u1161\u11A8\u1102\u1161", "text。\u3099Next", "xxxxxxxxx", "🇫🇷yyyyyyyy", "y"}
	if got := texts(cs); !slices.Equal(got, want3) {
		t.Errorf("boxd-chunker-3: %q, want %q", got, want3)
	}
}

// TestDefaultIsV3: the contract's chunker is boxd-chunker-3, which cuts
// between clusters; 1 and 2 do not.
func TestDefaultIsV3(t *testing.T) {
	if Default.Version != V3 || Default.MaxChars != 1200 || !Graphemes(Default.Version) || !Graphemes(ElementsV3) || Graphemes(V1) || Graphemes(V2) || Graphemes("boxd-elements-2") {
		t.Errorf("default %+v", Default)
	}
}

// FuzzCutGraphemes: boxd-chunker-3's invariants on any text (checkClusters),
// and boxd-chunker-2 as it always cut.
func FuzzCutGraphemes(f *testing.F) {
	for _, s := range []string{"abcdefgh👩‍👩‍👧xyz", "abcdefghi🇫🇷🇩🇪", "e\u0301\u0323 \u0301x", "\u1100\u1161\u11A8。\u3099a", "\u0600 \r\n\r\n x", ""} {
		f.Add(s, uint8(10))
	}
	f.Fuzz(func(t *testing.T, text string, max uint8) {
		if !utf8.ValidString(text) || max == 0 {
			return
		}
		cs, err := Cut("d", text, Settings{Version: V3, MaxChars: int(max)})
		if err != nil {
			t.Fatal(err)
		}
		checkClusters(t, text, cs, int(max))
		s := Settings{Version: V2, MaxChars: int(max)}
		got, _ := Cut("d", text, s)
		want, _ := legacyCut("d", text, s, Counters{})
		if !slices.Equal(got, want) {
			t.Fatalf("boxd-chunker-2 cut %q to %q, before %q", text, texts(got), texts(want))
		}
	})
}

// BenchmarkCutLongWord cuts a 300,000-character word under 512- and
// 384-token bounds (one token per code point), by boxd-chunker-2 and -3:
// the bytes the counters read per byte of text.
func BenchmarkCutLongWord(b *testing.B) {
	text := strings.Repeat("a", 300000)
	for _, v := range []string{V2, V3} {
		b.Run(v, func(b *testing.B) {
			e, r := &runeCounter{max: 512}, &runeCounter{max: 512}
			s, err := Bounded(Settings{Version: v, MaxChars: 1200}, Counters{Embed: e, Rerank: r})
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				if _, err := CutCounted("d", text, s, Counters{Embed: e, Rerank: r}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(e.bytes+r.bytes)/float64(b.N*len(text)), "counted/byte")
		})
	}
}
