package replyguard

import "regexp"

// This file holds the text model every check works on. It is written to be
// ported line for line: the TypeScript kit and the Python mirror must build
// the same normalised runes, tokens and scan strings (TestKitsAgree in
// pipelines/sitecheck runs all three on the shared fixtures).

// normRune maps one code point to one code point. The mapping never changes
// the length of a text, so an offset into the normalised text is an offset
// into the original text.
func normRune(r rune) rune {
	switch {
	case r == '\r':
		return '\n'
	case r == '\n':
		return '\n'
	case r < 0x20 || r == 0x7F:
		return ' '
	case r < 0x80:
		return r
	case r == 0x85 || r == 0x2028 || r == 0x2029:
		return '\n'
	case r == 0xA0 || r == 0x1680 || (r >= 0x2000 && r <= 0x200A) || r == 0x202F || r == 0x205F || r == 0x3000:
		return ' '
	case r == 0x200B || r == 0x200C || r == 0x200D || r == 0x2060 || r == 0xFEFF:
		return ' '
	case r == 0x2018 || r == 0x2019 || r == 0x201A || r == 0x201B || r == 0x2032 || r == 0x02BC:
		return '\''
	case r == 0x201C || r == 0x201D || r == 0x201E || r == 0x201F || r == 0x2033 || r == 0xAB || r == 0xBB:
		return '"'
	case (r >= 0x2010 && r <= 0x2015) || r == 0x2212:
		return '-'
	case r == 0x2026:
		return '.'
	case r == 0xA3 || r == 0xA5 || r == 0x20AC:
		return '$'
	case r >= 0xFF01 && r <= 0xFF5E:
		return r - 0xFEE0
	}
	return r
}

// foreignLetterRanges are the non-ASCII code points counted as letters:
// Latin-1 and Latin Extended letters, Greek, Cyrillic, Armenian, Hebrew,
// Arabic, the Indic scripts, Thai, Latin Extended Additional, Hiragana and
// Katakana, CJK ideographs and Hangul syllables. Every other non-ASCII code
// point (emoji, symbols, other scripts) is neither a letter nor a digit.
var foreignLetterRanges = [][2]rune{
	{0x00C0, 0x00D6}, {0x00D8, 0x00F6}, {0x00F8, 0x024F},
	{0x0370, 0x03FF}, {0x0400, 0x052F}, {0x0530, 0x058F},
	{0x0590, 0x05FF}, {0x0600, 0x06FF}, {0x0900, 0x0DFF},
	{0x0E00, 0x0E7F}, {0x1E00, 0x1EFF}, {0x3040, 0x30FF},
	{0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xAC00, 0xD7AF},
}

func isForeignLetter(r rune) bool {
	for _, g := range foreignLetterRanges {
		if r >= g[0] && r <= g[1] {
			return true
		}
	}
	return false
}

func isASCIILetter(r rune) bool { return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') }
func isDigit(r rune) bool       { return r >= '0' && r <= '9' }
func isLetter(r rune) bool      { return isASCIILetter(r) || isForeignLetter(r) }
func isUpper(r rune) bool       { return r >= 'A' && r <= 'Z' }
func isLower(r rune) bool       { return r >= 'a' && r <= 'z' }

// lowerASCII lowers A-Z only; every other code point is kept.
func lowerASCII(r rune) rune {
	if isUpper(r) {
		return r + ('a' - 'A')
	}
	return r
}

func lowerString(s string) string {
	rs := []rune(s)
	for i, r := range rs {
		rs[i] = lowerASCII(r)
	}
	return string(rs)
}

// token is a maximal run of letters (a word) or of ASCII digits (a number).
// start and end are code point offsets into the text, end exclusive.
type token struct {
	start, end int
	text       string // normalised code points
	lower      string // text with A-Z lowered
	word       bool   // letters, not digits
}

// tokenize splits normalised runes into word and number tokens. Everything
// that is neither a letter nor an ASCII digit separates tokens; a letter
// next to a digit also ends the token ("3pm" is "3" and "pm").
func tokenize(norm []rune) []token {
	var toks []token
	i := 0
	for i < len(norm) {
		r := norm[i]
		if !isLetter(r) && !isDigit(r) {
			i++
			continue
		}
		word := isLetter(r)
		j := i + 1
		for j < len(norm) {
			if word && !isLetter(norm[j]) {
				break
			}
			if !word && !isDigit(norm[j]) {
				break
			}
			j++
		}
		s := string(norm[i:j])
		toks = append(toks, token{start: i, end: j, text: s, lower: lowerString(s), word: word})
		i = j
	}
	return toks
}

// text is one analysed input string.
type text struct {
	orig      []rune
	norm      []rune
	scanCase  string // one ASCII byte per code point, case kept
	scanLower string // scanCase with A-Z lowered
	toks      []token
}

func analyse(s string) *text {
	orig := []rune(s)
	norm := make([]rune, len(orig))
	sc := make([]byte, len(orig))
	sl := make([]byte, len(orig))
	for i, r := range orig {
		n := normRune(r)
		norm[i] = n
		var b byte
		switch {
		case n < 0x80:
			b = byte(n)
		case isForeignLetter(n):
			b = 'a'
		default:
			b = ' '
		}
		sc[i] = b
		sl[i] = byte(lowerASCII(rune(b)))
	}
	return &text{orig: orig, norm: norm, scanCase: string(sc), scanLower: string(sl), toks: tokenize(norm)}
}

// phrase returns the original code points in [start, end).
func (t *text) phrase(start, end int) string { return string(t.orig[start:end]) }

// lowerSlice is the normalised, A-Z lowered text of [start, end).
func (t *text) lowerSlice(start, end int) string {
	rs := make([]rune, end-start)
	for i := start; i < end; i++ {
		rs[i-start] = lowerASCII(t.norm[i])
	}
	return string(rs)
}

// blank reports whether the normalised text holds only spaces and newlines.
func (t *text) blank() bool {
	for _, r := range t.norm {
		if r != ' ' && r != '\n' {
			return false
		}
	}
	return true
}

// span is a half-open code point range.
type span struct{ start, end int }

func overlaps(a, b span) bool { return a.start < b.end && b.start < a.end }

func overlapsAny(s span, list []span) bool {
	for _, o := range list {
		if overlaps(s, o) {
			return true
		}
	}
	return false
}

// findAll returns the non-overlapping leftmost-first matches of re in an
// ASCII scan string, as code point spans (byte offsets equal code point
// offsets there).
func findAll(re *regexp.Regexp, scan string) []span {
	var out []span
	for _, m := range re.FindAllStringIndex(scan, -1) {
		out = append(out, span{m[0], m[1]})
	}
	return out
}

// isAlnumByte reports an ASCII letter or digit in a scan string.
func isAlnumByte(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}

// alnumBefore and alnumAfter test the scan byte just outside a span.
func alnumBefore(scan string, s span) bool { return s.start > 0 && isAlnumByte(scan[s.start-1]) }
func alnumAfter(scan string, s span) bool  { return s.end < len(scan) && isAlnumByte(scan[s.end]) }
