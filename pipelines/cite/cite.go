// Package cite reads the citations a model's answer makes of numbered
// transcript lines and checks them against the lines.
//
// A citation is "[n] words" or "[n,m] words" (Parse; schema.Cite is the
// grammar that makes a model write one), or "[n] label: words"
// (ParseLabeled). Its words are a quote: the quote is verified (Verify,
// Problem) when it appears verbatim in the text of its cited lines, after
// both sides are normalised the same way (Norm):
//
//   - typographic quotes and dashes become ASCII: ‘ ’ ‚ ‛ ′ → ', – — ‐ ‑ ‒ −
//     → -, … → ...; double quotes (straight or typographic) are dropped,
//     since answer strings cannot hold them;
//   - letters are lower-cased;
//   - every run of whitespace (Unicode spaces included) becomes one space,
//     and the ends are trimmed.
//
// The quote's own leading and trailing punctuation is trimmed too (Trim: a
// quote may end where the speaker's sentence went on), nothing inside it.
// The cited lines are joined with one space in line order, so a quote may
// run from one cited line into the next. The match must start and end on
// word boundaries (ContainsWords: no letter or digit right outside it), so
// "at" is not found in "that". Every cited line must exist; a quote citing
// a line that does not exist, or no line, is not verified.
//
// A written note cites its lines as [[n]] or [[n,m]] after each sentence
// (Ref, StripRefs, MissingText).
//
// The lines are a Lines slice (the transcript's numbered lines); the
// package knows nothing of sessions.
package cite

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line is one numbered line of a transcript.
type Line struct {
	N    int     // its number, from 1
	T    float64 // when it starts, in seconds
	Text string
}

// Lines is a transcript's numbered lines, in order.
type Lines []Line

// Line returns line n and whether it exists.
func (ls Lines) Line(n int) (Line, bool) {
	for _, l := range ls {
		if l.N == n {
			return l, true
		}
	}
	return Line{}, false
}

// Cited returns the text of each cited line that exists, in the order
// cited, and the cited line numbers that do not.
func (ls Lines) Cited(cites []int) (texts []string, missing []int) {
	for _, n := range cites {
		if l, ok := ls.Line(n); ok {
			texts = append(texts, l.Text)
		} else {
			missing = append(missing, n)
		}
	}
	return texts, missing
}

// citeRE reads "[n] words" or "[n,m] words".
var citeRE = regexp.MustCompile(`^\[([0-9]{1,4})(?:,([0-9]{1,4}))?\] (.*)$`)

// clean joins the words of s with single spaces.
func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

// Parse reads a model's citation: the cited lines (sorted, without
// repeats) and the quote (its words joined with single spaces). ok is
// false when the string is not a citation (lines is then empty, not nil).
func Parse(s string) (lines []int, quote string, ok bool) {
	m := citeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return []int{}, "", false
	}
	for _, g := range m[1:3] {
		if g == "" {
			continue
		}
		if n, err := strconv.Atoi(g); err == nil && !slices.Contains(lines, n) {
			lines = append(lines, n)
		}
	}
	slices.Sort(lines)
	return lines, clean(m[3]), true
}

// ParseLabeled reads "[n] label: words": the label (which holds no colon)
// and the citation. Without ": " ok is false and the words after the line
// numbers are the quote.
func ParseLabeled(s string) (lines []int, label, quote string, ok bool) {
	lines, rest, ok := Parse(s)
	if !ok {
		return lines, "", "", false
	}
	label, quote, ok = strings.Cut(rest, ": ")
	if !ok {
		return lines, "", clean(rest), false
	}
	return lines, clean(label), clean(quote), true
}

// Cut drops the last word of a quote that fills all max characters: the
// grammar stopped it there, maybe inside a word.
func Cut(quote string, max int) string {
	if len(quote) < max {
		return quote
	}
	if k := strings.LastIndexByte(quote, ' '); k > 0 {
		return strings.TrimSpace(quote[:k])
	}
	return quote
}

// quoteReplacer makes typographic apostrophes and dashes ASCII and drops
// double quotes.
var quoteReplacer = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201a", "'", "\u201b", "'", "\u2032", "'",
	"\u201c", "", "\u201d", "", "\u201e", "", "\u201f", "", "\u2033", "", `"`, "",
	"\u2013", "-", "\u2014", "-", "\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2212", "-",
	"\u2026", "...",
)

// Norm is the normalisation both a quote and the cited text get before
// they are compared (see the package comment).
func Norm(s string) string {
	s = strings.ToLower(quoteReplacer.Replace(s))
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

// Trim trims a quote's leading and trailing punctuation and spaces.
func Trim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
}

// Problem says why quote is not verified in its cited lines of ls, or ""
// when it is: no quote, no line cited, a line that does not exist, or the
// quote not in the cited lines (naming the first line that holds it, if
// one does).
func Problem(ls Lines, quote string, cited []int) string {
	q := Norm(Trim(quote))
	if q == "" {
		return "no quote"
	}
	if len(cited) == 0 {
		return "no line cited"
	}
	texts, missing := ls.Cited(slices.Sorted(slices.Values(cited)))
	if len(missing) > 0 {
		return "line " + strconv.Itoa(missing[0]) + " does not exist"
	}
	if ContainsWords(Norm(strings.Join(texts, " ")), q) {
		return ""
	}
	for _, l := range ls {
		if ContainsWords(Norm(l.Text), q) {
			return "the quote is not in the cited lines; it is in line " + strconv.Itoa(l.N)
		}
	}
	return "the quote is not in the cited lines"
}

// Verify is true when quote is verbatim in its cited lines of ls.
func Verify(ls Lines, quote string, cited []int) bool {
	return Problem(ls, quote, cited) == ""
}

// FirstT is the start of the first cited line (the lowest number), nil
// when none is cited or it does not exist.
func FirstT(ls Lines, cited []int) *float64 {
	if len(cited) == 0 {
		return nil
	}
	l, ok := ls.Line(slices.Min(cited))
	if !ok {
		return nil
	}
	t := l.T
	return &t
}

// ContainsWords reports whether q occurs in text starting and ending on
// word boundaries (both already normalised).
func ContainsWords(text, q string) bool {
	if q == "" {
		return false
	}
	for from := 0; ; {
		k := strings.Index(text[from:], q)
		if k < 0 {
			return false
		}
		start, end := from+k, from+k+len(q)
		if boundary(text, start, q, true) && boundary(text, end, q, false) {
			return true
		}
		from = start + 1
	}
}

// boundary is true when the match edge at byte i is a word boundary: the
// quote's edge character or the text's neighbouring one is not a letter or
// digit.
func boundary(text string, i int, q string, start bool) bool {
	var inner, outer rune
	if start {
		if i == 0 {
			return true
		}
		inner, _ = utf8.DecodeRuneInString(q)
		outer, _ = utf8.DecodeLastRuneInString(text[:i])
	} else {
		if i == len(text) {
			return true
		}
		inner, _ = utf8.DecodeLastRuneInString(q)
		outer, _ = utf8.DecodeRuneInString(text[i:])
	}
	return !IsWordRune(inner) || !IsWordRune(outer)
}

// IsWordRune is true for a letter or a digit.
func IsWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Ref is a note's citation of lines: [[n]] or [[n,m]].
func Ref(cites []int) string {
	parts := make([]string, len(cites))
	for i, n := range cites {
		parts[i] = strconv.Itoa(n)
	}
	return "[[" + strings.Join(parts, ",") + "]]"
}

// refMarkers are citations and refBrackets citation brackets.
var (
	refMarkers  = regexp.MustCompile(`\[\[[^\]]*\]\]`)
	refBrackets = strings.NewReplacer("[[", "", "]]", "")
)

// StripRefs replaces each [[...]] citation in s with a space and drops
// stray [[ and ]]: a sentence that must not carry its own citation.
func StripRefs(s string) string {
	return refBrackets.Replace(refMarkers.ReplaceAllString(s, " "))
}

// MissingText says which cited lines do not exist: "line 9 does not
// exist", "lines 9 and 12 do not exist".
func MissingText(missing []int) string {
	if len(missing) == 1 {
		return "line " + strconv.Itoa(missing[0]) + " does not exist"
	}
	parts := make([]string, len(missing))
	for i, n := range missing {
		parts[i] = strconv.Itoa(n)
	}
	return "lines " + strings.Join(parts, " and ") + " do not exist"
}
