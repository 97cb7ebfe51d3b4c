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
	"unicode"
	"unicode/utf8"
)

// Settings say how documents are cut. They go into the index hash:
// the same documents under other settings make another index.
type Settings struct {
	// Version names the cutting rules below; it changes whenever they do.
	Version string `json:"version"`
	// MaxChars is the most characters (Unicode code points) in a chunk.
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

// Default is the contract's chunker: at most 1,200 characters (the
// service adds the models' token bounds, Bounded).
var Default = Settings{Version: "boxd-chunker-2", MaxChars: 1200}

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

// Cut splits text into chunks by the rules of boxd-chunker-1 and -2:
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
//   - boxd-chunker-2 only: a chunk over MaxTokens (as the embedder counts
//     it) or RerankMaxTokens (as the reranker counts it) is cut again by
//     the rules above with half the characters (MaxChars / 2, rounded
//     down), and its pieces the same way, until every piece fits; a
//     single character that does not fit is an error (TokenError), never
//     a chunk the model would read cut.
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
	spans := cutSpans(text, 0, len(text), s.MaxChars)
	if s.MaxTokens > 0 || s.RerankMaxTokens > 0 {
		var err error
		if spans, err = refit(doc, text, spans, s.MaxChars, s, c); err != nil {
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
func cutSpans(text string, start, end, max int) [][2]int {
	sub := text[start:end]
	var spans [][2]int
	for _, p := range paragraphs(sub) {
		if chars(sub, p) <= max {
			spans = append(spans, p)
			continue
		}
		for _, sen := range sentences(sub, p) {
			if chars(sub, sen) <= max {
				spans = append(spans, sen)
				continue
			}
			spans = append(spans, words(sub, sen, max)...)
		}
	}
	spans = pack(sub, spans, max)
	for i := range spans {
		spans[i][0] += start
		spans[i][1] += start
	}
	return spans
}

// refit cuts each span over a token bound again with half the characters.
func refit(doc, text string, spans [][2]int, max int, s Settings, c Counters) ([][2]int, error) {
	var out [][2]int
	for _, sp := range spans {
		model, n, limit, err := over(text[sp[0]:sp[1]], s, c)
		if err != nil {
			return nil, fmt.Errorf("chunker: count the tokens of document %q at bytes %d..%d: %w", doc, sp[0], sp[1], err)
		}
		if model == "" {
			out = append(out, sp)
			continue
		}
		if max/2 < 1 || utf8.RuneCountInString(text[sp[0]:sp[1]]) == 1 {
			return nil, &TokenError{Doc: doc, ByteStart: sp[0], ByteEnd: sp[1], Model: model, Tokens: n, Limit: limit}
		}
		sub, err := refit(doc, text, cutSpans(text, sp[0], sp[1], max/2), max/2, s, c)
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

// trim narrows a span to exclude white space at both ends; ok is false
// when nothing is left.
func trim(text string, start, end int) ([2]int, bool) {
	for start < end {
		r, n := utf8.DecodeRuneInString(text[start:end])
		if !unicode.IsSpace(r) {
			break
		}
		start += n
	}
	for end > start {
		r, n := utf8.DecodeLastRuneInString(text[start:end])
		if !unicode.IsSpace(r) {
			break
		}
		end -= n
	}
	return [2]int{start, end}, start < end
}

// paragraphs are the trimmed spans between blank lines.
func paragraphs(text string) [][2]int {
	var out [][2]int
	start := 0
	add := func(end int) {
		if sp, ok := trim(text, start, end); ok {
			out = append(out, sp)
		}
	}
	for i := 0; i < len(text); {
		if text[i] != '\n' {
			i++
			continue
		}
		// A line break: is the next line blank (spaces, tabs, a '\r')?
		j := i + 1
		for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
			j++
		}
		if j < len(text) && text[j] == '\n' {
			add(i)
			for j < len(text) && (text[j] == '\n' || text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
				j++
			}
			start = j
			i = j
			continue
		}
		i = j
	}
	add(len(text))
	return out
}

var sentenceEnd = map[rune]bool{'.': true, '!': true, '?': true, '…': true, '。': true, '！': true, '？': true}

var closer = map[rune]bool{'"': true, '\'': true, ')': true, ']': true, '}': true, '”': true, '’': true, '»': true, '」': true, '』': true}

// Sentences are the trimmed sentences of text by the chunker's sentence
// rule, as byte spans.
func Sentences(text string) [][2]int { return sentences(text, [2]int{0, len(text)}) }

// sentences cuts a span after each sentence end followed by white space
// (or, for the CJK marks, by anything).
func sentences(text string, sp [2]int) [][2]int {
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
		if end < sp[1] {
			c, _ := utf8.DecodeRuneInString(text[end:sp[1]])
			if !cjk && !unicode.IsSpace(c) {
				i = end
				continue
			}
		}
		if s, ok := trim(text, start, end); ok {
			out = append(out, s)
		}
		start, i = end, end
	}
	if s, ok := trim(text, start, sp[1]); ok {
		out = append(out, s)
	}
	return out
}

// words cuts a span into pieces of at most max characters, at the last
// white space that fits, else after max characters.
func words(text string, sp [2]int, max int) [][2]int {
	var out [][2]int
	start := sp[0]
	for start < sp[1] {
		// Walk max characters from start.
		end, n, lastSpace := start, 0, -1
		for end < sp[1] && n < max {
			r, w := utf8.DecodeRuneInString(text[end:sp[1]])
			if unicode.IsSpace(r) {
				lastSpace = end
			}
			end += w
			n++
		}
		if end < sp[1] {
			// The character after the piece: a space there cuts cleanly.
			if r, _ := utf8.DecodeRuneInString(text[end:sp[1]]); !unicode.IsSpace(r) && lastSpace > start {
				end = lastSpace
			}
		}
		if s, ok := trim(text, start, end); ok {
			out = append(out, s)
		}
		start = end
		for start < sp[1] {
			r, w := utf8.DecodeRuneInString(text[start:sp[1]])
			if !unicode.IsSpace(r) {
				break
			}
			start += w
		}
	}
	return out
}

// pack joins consecutive spans while the joined span, separators included,
// stays within max characters.
func pack(text string, spans [][2]int, max int) [][2]int {
	var out [][2]int
	for _, sp := range spans {
		if n := len(out); n > 0 && chars(text, [2]int{out[n-1][0], sp[1]}) <= max {
			out[n-1][1] = sp[1]
			continue
		}
		out = append(out, sp)
	}
	return out
}
