package chunker

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// The rules of boxd-chunker-1 and -2 as they were before boxd-chunker-3
// (commit 033e14c), kept verbatim to check that those versions still cut
// exactly as they did: indexes kept with them are cut again at start and
// must give the same hash.

// legacyCut is CutCounted as it was.
func legacyCut(doc, text string, s Settings, c Counters) ([]Chunk, error) {
	spans := legacyCutSpans(text, 0, len(text), s.MaxChars)
	if s.MaxTokens > 0 || s.RerankMaxTokens > 0 {
		var err error
		if spans, err = legacyRefit(doc, text, spans, s.MaxChars, s, c); err != nil {
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
func legacyCutSpans(text string, start, end, max int) [][2]int {
	sub := text[start:end]
	var spans [][2]int
	for _, p := range legacyParagraphs(sub) {
		if chars(sub, p) <= max {
			spans = append(spans, p)
			continue
		}
		for _, sen := range legacySentences(sub, p) {
			if chars(sub, sen) <= max {
				spans = append(spans, sen)
				continue
			}
			spans = append(spans, legacyWords(sub, sen, max)...)
		}
	}
	spans = legacyPack(sub, spans, max)
	for i := range spans {
		spans[i][0] += start
		spans[i][1] += start
	}
	return spans
}

// refit cuts each span over a token bound again with half the characters.
func legacyRefit(doc, text string, spans [][2]int, max int, s Settings, c Counters) ([][2]int, error) {
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
		sub, err := legacyRefit(doc, text, legacyCutSpans(text, sp[0], sp[1], max/2), max/2, s, c)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

// trim narrows a span to exclude white space at both ends; ok is false
// when nothing is left.
func legacyTrim(text string, start, end int) ([2]int, bool) {
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
func legacyParagraphs(text string) [][2]int {
	var out [][2]int
	start := 0
	add := func(end int) {
		if sp, ok := legacyTrim(text, start, end); ok {
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

// sentences cuts a span after each sentence end followed by white space
// (or, for the CJK marks, by anything).
func legacySentences(text string, sp [2]int) [][2]int {
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
		if s, ok := legacyTrim(text, start, end); ok {
			out = append(out, s)
		}
		start, i = end, end
	}
	if s, ok := legacyTrim(text, start, sp[1]); ok {
		out = append(out, s)
	}
	return out
}

// words cuts a span into pieces of at most max characters, at the last
// white space that fits, else after max characters.
func legacyWords(text string, sp [2]int, max int) [][2]int {
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
		if s, ok := legacyTrim(text, start, end); ok {
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
func legacyPack(text string, spans [][2]int, max int) [][2]int {
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
