// Package chunker cuts retrieval documents into chunks with exact byte
// offsets: by paragraphs, sentences and words within a number of
// characters and, when the models count tokens, within what the embedder
// and the reranker read whole.
package chunker

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Settings say how documents are cut. They go into the index hash:
// the same documents under other settings make another index.
type Settings struct {
	// Version names the cutting rules below; it changes whenever they do.
	Version string `json:"version"`
	// MaxChars is the most characters (Unicode code points) in a chunk
	// (boxd-chunker-3: but for a single grapheme cluster longer than
	// that, a chunk of its own).
	MaxChars int `json:"max_chars"`
	// MaxTokens is the most tokens in a chunk as the embedder counts them
	// (its special tokens included): the embedder's context, so that it
	// reads every chunk whole. 0: no bound (chunkers before
	// boxd-chunker-2, and embedders that count no tokens).
	MaxTokens int `json:"max_tokens,omitempty"`
	// RerankMaxTokens is the most tokens in a chunk as the reranker
	// counts them (its special tokens included): the reranker's context
	// less QueryTokens, the room left for the query beside the chunk. 0:
	// no bound (no reranker, or one that counts no tokens).
	RerankMaxTokens int `json:"rerank_max_tokens,omitempty"`
}

// Versions of the cutting rules (Cut). Indexes cut by an older version
// are cut again by its rules (an index kept on disk is re-cut at start),
// so a version's rules never change.
const (
	V1 = "boxd-chunker-1" // MaxChars, in code points
	V2 = "boxd-chunker-2" // and the models' token bounds
	V3 = "boxd-chunker-3" // and no cut inside a grapheme cluster
)

// Default is the contract's chunker: at most 1,200 characters, cut only
// between grapheme clusters (the service adds the models' token bounds,
// Bounded).
var Default = Settings{Version: V3, MaxChars: 1200}

// ElementsV3 is the version of retrieval's chunker of scanned documents'
// elements (one chunk per element) that cuts an element as V3 does.
const ElementsV3 = "boxd-elements-3"

// graphemeVersions cut only between extended grapheme clusters.
var graphemeVersions = map[string]bool{V3: true, ElementsV3: true}

// Graphemes reports whether a chunker version cuts only between extended
// grapheme clusters (boxd-chunker-3 and later); the versions before cut
// between code points.
func Graphemes(version string) bool { return graphemeVersions[version] }

// QueryTokens is the room a reranker's bound leaves for the query: a
// chunk takes at most the reranker's context less this many tokens.
const QueryTokens = 128

// Counter counts a text's tokens as a model reads it, special tokens
// included (engine/llm.Embedder is one).
type Counter interface {
	CountTokens(text string) (int, error)
	MaxTokens() int
}

// Counters are the models whose token counts bound the chunks (nil: that
// model is absent or counts no tokens).
type Counters struct {
	Embed, Rerank Counter
}

// Bounded is s with the token bounds of the models in c: MaxTokens the
// embedder's context, RerankMaxTokens the reranker's less QueryTokens.
func Bounded(s Settings, c Counters) (Settings, error) {
	s.MaxTokens, s.RerankMaxTokens = 0, 0
	if c.Embed != nil && c.Embed.MaxTokens() > 0 {
		s.MaxTokens = c.Embed.MaxTokens()
	}
	if c.Rerank != nil && c.Rerank.MaxTokens() > 0 {
		s.RerankMaxTokens = c.Rerank.MaxTokens() - QueryTokens
		if s.RerankMaxTokens < 1 {
			return s, fmt.Errorf("chunker: the reranker reads %d tokens, not more than the %d kept for the query", c.Rerank.MaxTokens(), QueryTokens)
		}
	}
	return s, nil
}

// Chunk is one piece of a document: its bytes are
// document[ByteStart:ByteEnd], exactly as the document was sent.
type Chunk struct {
	Doc       string `json:"doc"`
	ByteStart int    `json:"byte_start"`
	ByteEnd   int    `json:"byte_end"`
	SHA256    string `json:"sha256"` // of the chunk's bytes, hex
	Text      string `json:"text"`
}

// TokenError says that a piece of a document cannot be cut small enough
// for a model to read it whole (one character over its bound).
type TokenError struct {
	Doc                string
	ByteStart, ByteEnd int
	Model              string // "embedder" or "reranker"
	Tokens, Limit      int
}

func (e *TokenError) Error() string {
	return fmt.Sprintf("document %q: the character at bytes %d..%d alone takes %d of the %s's tokens, over the chunk bound of %d: no chunk holding it fits the model",
		e.Doc, e.ByteStart, e.ByteEnd, e.Tokens, e.Model, e.Limit)
}

// Cut splits text into chunks by the rules of boxd-chunker-1, -2 and -3:
//
//   - Paragraphs are separated by a blank line (a line break, then only
//     spaces or tabs, then another line break; "\r\n" counts as one).
//   - Consecutive paragraphs are packed into one chunk while the chunk,
//     from the first paragraph's start to the last one's end, stays within
//     MaxChars.
//   - A paragraph longer than MaxChars is cut at sentence ends: '.', '!',
//     '?', '…' and the CJK '。', '！', '？', with any closing quotes or
//     brackets after them, followed by white space. Sentences are packed
//     the same way. (An abbreviation such as "Dr. Smith" ends a sentence
//     too: the rule is simple so that anyone can recompute it.)
//   - A sentence longer than MaxChars is cut at the last white space that
//     keeps the piece within MaxChars, and a run of MaxChars characters
//     without white space is cut there.
//   - Every chunk is trimmed of white space at both ends; the white space
//     between chunks belongs to none (no overlap). A document of only
//     white space has no chunks.
//   - boxd-chunker-2 and -3: a chunk over MaxTokens (as the embedder
//     counts it) or RerankMaxTokens (as the reranker counts it) is cut
//     again by the rules above with half the characters (MaxChars / 2,
//     rounded down), and its pieces the same way, until every piece fits;
//     a single character that does not fit is an error (TokenError),
//     never a chunk the model would read cut.
//   - boxd-chunker-3 (Graphemes): a character above is an extended
//     grapheme cluster (Unicode UAX #29, as github.com/rivo/uniseg v0.4.7
//     finds them in the whole document), so that no chunk starts or ends
//     inside one (a ZWJ emoji sequence, a flag, a letter and its combining
//     marks, a Hangul syllable of jamo, "\r\n"). MaxChars still counts code
//     points: a run is cut after the last whole cluster within MaxChars
//     (a single cluster longer than MaxChars is a chunk of its own, never
//     cut); a sentence end inside a cluster ends the sentence after that
//     cluster; white space is a cluster of white-space code points only (a
//     space carrying a combining mark is not white space and is kept).
//
// Cut takes settings without token bounds (CutCounted counts them). text
// must be valid UTF-8. The result is deterministic.
func Cut(doc, text string, s Settings) ([]Chunk, error) {
	return CutCounted(doc, text, s, Counters{})
}

// CutCounted is Cut with the token bounds of s counted by c's models.
func CutCounted(doc, text string, s Settings, c Counters) ([]Chunk, error) {
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("chunker: document %q is not valid UTF-8", doc)
	}
	if s.MaxChars < 1 {
		return nil, fmt.Errorf("chunker: max_chars %d: want at least 1", s.MaxChars)
	}
	if s.MaxTokens > 0 && c.Embed == nil || s.RerankMaxTokens > 0 && c.Rerank == nil {
		return nil, errors.New("chunker: the settings bound tokens and no model is given to count them")
	}
	u := newUnits(text, Graphemes(s.Version))
	spans := cutSpans(u, 0, len(text), s.MaxChars)
	if s.MaxTokens > 0 || s.RerankMaxTokens > 0 {
		var err error
		if spans, err = refit(doc, u, spans, s.MaxChars, s, c); err != nil {
			return nil, err
		}
	}
	out := make([]Chunk, 0, len(spans))
	for _, sp := range spans {
		b := text[sp[0]:sp[1]]
		sum := sha256.Sum256([]byte(b))
		out = append(out, Chunk{Doc: doc, ByteStart: sp[0], ByteEnd: sp[1], SHA256: hex.EncodeToString(sum[:]), Text: b})
	}
	return out, nil
}

// cutSpans is the character rules applied to text[start:end] as a
// document of its own, in text's offsets.
func cutSpans(u *units, start, end, max int) [][2]int {
	var spans [][2]int
	for _, p := range paragraphs(u, start, end) {
		if chars(u.text, p) <= max {
			spans = append(spans, p)
			continue
		}
		for _, sen := range sentences(u, p) {
			if chars(u.text, sen) <= max {
				spans = append(spans, sen)
				continue
			}
			spans = append(spans, words(u, sen, max)...)
		}
	}
	return pack(u.text, spans, max)
}

// refit cuts each span over a token bound again with half the characters.
func refit(doc string, u *units, spans [][2]int, max int, s Settings, c Counters) ([][2]int, error) {
	var out [][2]int
	for _, sp := range spans {
		model, n, limit, err := over(u.text[sp[0]:sp[1]], s, c)
		if err != nil {
			return nil, fmt.Errorf("chunker: count the tokens of document %q at bytes %d..%d: %w", doc, sp[0], sp[1], err)
		}
		if model == "" {
			out = append(out, sp)
			continue
		}
		if max/2 < 1 || u.next(sp[0], sp[1]) == sp[1] {
			return nil, &TokenError{Doc: doc, ByteStart: sp[0], ByteEnd: sp[1], Model: model, Tokens: n, Limit: limit}
		}
		sub, err := refit(doc, u, cutSpans(u, sp[0], sp[1], max/2), max/2, s, c)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

// over names the first model whose bound t goes over ("" when it fits),
// with its count and the bound.
func over(t string, s Settings, c Counters) (model string, n, limit int, err error) {
	if s.MaxTokens > 0 {
		if n, err = c.Embed.CountTokens(t); err != nil || n > s.MaxTokens {
			return "embedder", n, s.MaxTokens, err
		}
	}
	if s.RerankMaxTokens > 0 {
		if n, err = c.Rerank.CountTokens(t); err != nil || n > s.RerankMaxTokens {
			return "reranker", n, s.RerankMaxTokens, err
		}
	}
	return "", 0, 0, nil
}

// chars is the number of code points in text[sp[0]:sp[1]].
func chars(text string, sp [2]int) int { return utf8.RuneCountInString(text[sp[0]:sp[1]]) }

// trim narrows a span to exclude white space units at both ends; ok is
// false when nothing is left.
func trim(u *units, start, end int) ([2]int, bool) {
	for start < end {
		n := u.next(start, end)
		if !u.space(start, n) {
			break
		}
		start = n
	}
	for end > start {
		p := u.prev(start, end)
		if !u.space(p, end) {
			break
		}
		end = p
	}
	return [2]int{start, end}, start < end
}

// paragraphs are the trimmed spans of text[start:end] between blank
// lines. A paragraph's ends move out to unit boundaries: a "\r\n" is one
// grapheme cluster, and a space can carry a combining mark.
func paragraphs(u *units, start, end int) [][2]int {
	text := u.text
	var out [][2]int
	add := func(e int) {
		if sp, ok := trim(u, u.floor(start), u.ceil(e)); ok {
			out = append(out, sp)
		}
	}
	for i := start; i < end; {
		if text[i] != '\n' {
			i++
			continue
		}
		// A line break: is the next line blank (spaces, tabs, a '\r')?
		j := i + 1
		for j < end && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
			j++
		}
		if j < end && text[j] == '\n' {
			add(i)
			for j < end && (text[j] == '\n' || text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
				j++
			}
			start = j
			i = j
			continue
		}
		i = j
	}
	add(end)
	return out
}

var sentenceEnd = map[rune]bool{'.': true, '!': true, '?': true, '…': true, '。': true, '！': true, '？': true}

var closer = map[rune]bool{'"': true, '\'': true, ')': true, ']': true, '}': true, '”': true, '’': true, '»': true, '」': true, '』': true}

// Sentences are the trimmed sentences of text by the chunker's sentence
// rule, as byte spans.
func Sentences(text string) [][2]int { return sentences(newUnits(text, false), [2]int{0, len(text)}) }

// sentences cuts a span after each sentence end followed by white space
// (or, for the CJK marks, by anything). The cut moves on to the end of
// the unit that holds it.
func sentences(u *units, sp [2]int) [][2]int {
	text := u.text
	var out [][2]int
	start := sp[0]
	for i := sp[0]; i < sp[1]; {
		r, n := utf8.DecodeRuneInString(text[i:sp[1]])
		i += n
		if !sentenceEnd[r] {
			continue
		}
		cjk := r == '。' || r == '！' || r == '？'
		end := i
		for end < sp[1] {
			c, m := utf8.DecodeRuneInString(text[end:sp[1]])
			if !closer[c] && !sentenceEnd[c] {
				break
			}
			end += m
		}
		end = min(u.ceil(end), sp[1])
		if end < sp[1] && !cjk && !u.space(end, u.next(end, sp[1])) {
			i = end
			continue
		}
		if s, ok := trim(u, start, end); ok {
			out = append(out, s)
		}
		start, i = end, end
	}
	if s, ok := trim(u, start, sp[1]); ok {
		out = append(out, s)
	}
	return out
}

// words cuts a span into pieces of at most max characters, at the last
// white space that fits, else after max characters; a unit is never cut
// (one longer than max is a piece of its own).
func words(u *units, sp [2]int, max int) [][2]int {
	text := u.text
	var out [][2]int
	start := sp[0]
	for start < sp[1] {
		// Walk max characters from start, a unit at a time.
		end, n, lastSpace := start, 0, -1
		for end < sp[1] && n < max {
			next := u.next(end, sp[1])
			k := utf8.RuneCountInString(text[end:next])
			if n > 0 && n+k > max {
				break
			}
			if u.space(end, next) {
				lastSpace = end
			}
			end, n = next, n+k
		}
		// The unit after the piece: white space there cuts cleanly.
		if end < sp[1] && !u.space(end, u.next(end, sp[1])) && lastSpace > start {
			end = lastSpace
		}
		if s, ok := trim(u, start, end); ok {
			out = append(out, s)
		}
		start = end
		for start < sp[1] {
			next := u.next(start, sp[1])
			if !u.space(start, next) {
				break
			}
			start = next
		}
	}
	return out
}

// pack joins consecutive spans while the joined span, separators included,
// stays within max characters (counted once per byte: linear in the text).
func pack(text string, spans [][2]int, max int) [][2]int {
	var out [][2]int
	n := 0 // characters in out's last span
	for _, sp := range spans {
		if k := len(out); k > 0 {
			if m := n + chars(text, [2]int{out[k-1][1], sp[1]}); m <= max {
				out[k-1][1], n = sp[1], m
				continue
			}
		}
		out = append(out, sp)
		n = chars(text, sp)
	}
	return out
}
