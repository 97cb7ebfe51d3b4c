// Package retrieval is evidence retrieval (contract 3, evidence retrieval):
// documents cut into chunks with exact byte offsets, an index whose hash
// commits to an RFC 6962 Merkle tree over the chunks, keyword search
// scored as Lucene's BM25, and proofs that a returned chunk is in the
// index. This file is the chunker.
package retrieval

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// ChunkerSettings say how documents are cut. They go into the index hash:
// the same documents under other settings make another index.
type ChunkerSettings struct {
	// Version names the cutting rules below; it changes whenever they do.
	Version string `json:"version"`
	// MaxChars is the most characters (Unicode code points) in a chunk.
	MaxChars int `json:"max_chars"`
}

// DefaultChunker is the contract's chunker: at most 1,200 characters.
var DefaultChunker = ChunkerSettings{Version: "boxd-chunker-1", MaxChars: 1200}

// Chunk is one piece of a document: its bytes are
// document[ByteStart:ByteEnd], exactly as the document was sent.
type Chunk struct {
	Doc       string `json:"doc"`
	ByteStart int    `json:"byte_start"`
	ByteEnd   int    `json:"byte_end"`
	SHA256    string `json:"sha256"` // of the chunk's bytes, hex
	Text      string `json:"text"`
}

// Cut splits text into chunks by the rules of boxd-chunker-1:
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
//
// text must be valid UTF-8. The result is deterministic.
func Cut(doc, text string, s ChunkerSettings) ([]Chunk, error) {
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("retrieval: document %q is not valid UTF-8", doc)
	}
	if s.MaxChars < 1 {
		return nil, fmt.Errorf("retrieval: chunker max_chars %d: want at least 1", s.MaxChars)
	}
	var spans [][2]int
	for _, p := range paragraphs(text) {
		if chars(text, p) <= s.MaxChars {
			spans = append(spans, p)
			continue
		}
		for _, sen := range sentences(text, p) {
			if chars(text, sen) <= s.MaxChars {
				spans = append(spans, sen)
				continue
			}
			spans = append(spans, words(text, sen, s.MaxChars)...)
		}
	}
	spans = pack(text, spans, s.MaxChars)
	out := make([]Chunk, 0, len(spans))
	for _, sp := range spans {
		b := text[sp[0]:sp[1]]
		sum := sha256.Sum256([]byte(b))
		out = append(out, Chunk{Doc: doc, ByteStart: sp[0], ByteEnd: sp[1], SHA256: hex.EncodeToString(sum[:]), Text: b})
	}
	return out, nil
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
