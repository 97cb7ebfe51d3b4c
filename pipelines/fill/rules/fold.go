package rules

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// folded is text as the label rules read it: lower case, accents and
// compatibility forms removed ("Numéro" reads "numero", "Ｎº" reads
// "no"), curly apostrophes straight, format characters (zero-width
// spaces, soft hyphens) dropped, spaces as " " but a line's end; off maps each of its bytes back to the
// original, so that a match in it names a span of the original.
type folded struct {
	s   string
	off []int // off[i] is the original offset of folded byte i; off[len(s)] is len(original)
}

func foldText(orig string) folded {
	var b strings.Builder
	off := make([]int, 0, len(orig)+1)
	for i := 0; i < len(orig); {
		r, size := utf8.DecodeRuneInString(orig[i:])
		for _, c := range foldRune(r) {
			n := utf8.RuneLen(c)
			if n < 0 {
				n = 1
			}
			b.WriteRune(c)
			for range n {
				off = append(off, i)
			}
		}
		i += size
	}
	off = append(off, len(orig))
	return folded{s: b.String(), off: off}
}

// FoldText is text as the rules read it (folded: lower case, accents and
// compatibility forms removed, curly apostrophes straight, format
// characters dropped, spaces as " " but a line's end); package inject
// reads page text so.
func FoldText(s string) string { return foldText(s).s }

// span is the original's span of the folded bytes [a, b).
func (f folded) span(a, b int) (int, int) { return f.off[a], f.off[b] }

// foldRune is one rune as the label rules read it (none, one or more).
func foldRune(r rune) string {
	switch {
	case r == '’' || r == '‘' || r == 'ʼ' || r == '`' || r == '´':
		return "'"
	case unicode.Is(unicode.Cf, r):
		return ""
	case r == '\n':
		return "\n"
	case unicode.IsSpace(r):
		return " "
	case r < utf8.RuneSelf:
		return string(unicode.ToLower(r))
	}
	var b strings.Builder
	for _, c := range norm.NFKD.String(string(r)) {
		if !unicode.Is(unicode.Mn, c) {
			b.WriteRune(unicode.ToLower(c))
		}
	}
	return b.String()
}

// foldLabel is a label or name as one string of folded words: camelCase
// and snake_case split, spacing collapsed.
func foldLabel(s string) string {
	return strings.Join(strings.Fields(foldText(SplitName(s)).s), " ")
}

// alnum is s's letters and digits only, folded (letter case, accents
// and compatibility forms aside; every script's digits as 0 to 9): the
// form in which two writings of one value compare ("571 903 346" and
// "571-903-346" are both "571903346").
func alnum(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(sigRune(r))
	}
	return b.String()
}

// sigRune is r as a value's significant characters: a digit as 0 to 9,
// a letter folded, anything else nothing.
func sigRune(r rune) string {
	switch {
	case r >= '0' && r <= '9', r >= 'a' && r <= 'z':
		return string(r)
	case r >= 'A' && r <= 'Z':
		return string(r + 'a' - 'A')
	case unicode.IsDigit(r):
		return string(rune('0' + digitValue(r)))
	case unicode.IsLetter(r):
		var b strings.Builder
		for _, c := range norm.NFKD.String(string(r)) {
			switch {
			case unicode.IsDigit(c):
				b.WriteRune(rune('0' + digitValue(c)))
			case unicode.IsLetter(c):
				b.WriteRune(unicode.ToLower(c))
			}
		}
		return b.String()
	}
	return ""
}

// digitValue is a decimal digit's value in any script (Unicode lays each
// script's digits out as runs of ten, zero first).
func digitValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	start := r
	for start > 0 && unicode.IsDigit(start-1) && r-start < 60 {
		start--
	}
	return int(r-start) % 10
}
