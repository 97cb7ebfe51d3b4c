package text

import (
	"strings"
	"unicode/utf8"
)

// namedEntities is the complete set of named character references decoded.
// Names are case-sensitive and need their ";".
var namedEntities = []struct {
	name string
	r    rune
}{
	{"amp", '&'},
	{"lt", '<'},
	{"gt", '>'},
	{"quot", '"'},
	{"apos", '\''},
	{"nbsp", '\u00a0'},
}

// DecodeEntities decodes HTML character references in one left-to-right pass
// (the output is not decoded again, so "&amp;lt;" gives "&lt;"):
//
//   - the named references &amp; &lt; &gt; &quot; &apos; &nbsp; (exactly
//     these names, case-sensitive, ";" required);
//   - decimal "&#" DIGITS ";" and hexadecimal "&#x" HEX ";" or "&#X" HEX ";"
//     with at least one digit. A value of 0, above 0x10FFFF or a surrogate
//     (0xD800-0xDFFF) gives U+FFFD. Other values, C1 controls included, give
//     that code point unchanged.
//
// Anything else, including a reference without its ";", is kept as written.
func DecodeEntities(s string) string {
	if strings.IndexByte(s, '&') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	i := 0
	for i < len(s) {
		c := s[i]
		if c != '&' {
			b.WriteByte(c)
			i++
			continue
		}
		if r, size := decodeEntityAt(s, i); size > 0 {
			b.WriteRune(r)
			i += size
			continue
		}
		b.WriteByte('&')
		i++
	}
	return b.String()
}

// decodeEntityAt decodes the reference starting at s[i] == '&'; size is 0
// when there is none.
func decodeEntityAt(s string, i int) (rune, int) {
	rest := s[i+1:]
	if strings.HasPrefix(rest, "#") {
		j := 1
		hex := false
		if j < len(rest) && (rest[j] == 'x' || rest[j] == 'X') {
			hex = true
			j++
		}
		start := j
		v := 0
		over := false
		for j < len(rest) {
			d := HexDigit(rest[j])
			if d < 0 || (!hex && d > 9) {
				break
			}
			if hex {
				v = v*16 + d
			} else {
				v = v*10 + d
			}
			if v > utf8.MaxRune {
				over = true
				v = utf8.MaxRune + 1
			}
			j++
		}
		if j == start || j >= len(rest) || rest[j] != ';' {
			return 0, 0
		}
		if over || v == 0 || (v >= 0xD800 && v <= 0xDFFF) {
			return utf8.RuneError, j + 2
		}
		return rune(v), j + 2
	}
	for _, e := range namedEntities {
		if len(rest) > len(e.name) && rest[len(e.name)] == ';' && rest[:len(e.name)] == e.name {
			return e.r, len(e.name) + 2
		}
	}
	return 0, 0
}

// HexDigit is the value of an ASCII hexadecimal digit (either case), or -1.
func HexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
