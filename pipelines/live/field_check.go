package live

// Quote checks for the field vertical: how a model's citation ("[n] exact
// words") is read, and how a quote is verified against the lines it cites.
//
// A quote is verified when it appears verbatim in the text of its cited
// lines, after both sides are normalised the same way (normQuote):
//
//   - typographic quotes and dashes become ASCII: ‘ ’ ‚ ‛ ′ → ', – — ‐ ‑ ‒ −
//     → -, … → ...; double quotes (straight or typographic) are dropped,
//     since answer strings cannot hold them;
//   - letters are lower-cased;
//   - every run of whitespace (Unicode spaces included) becomes one space,
//     and the ends are trimmed.
//
// The quote's own leading and trailing punctuation is trimmed too (a quote
// may end where the speaker's sentence went on), nothing inside it. The
// cited lines are joined with one space in line order, so a quote may run
// from one cited line into the next. The match must start and end on word
// boundaries (no letter or digit right outside it), so "at" is not found
// in "that". Every cited line must exist; a quote citing a line that does
// not exist, or no line, is not verified.

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// citeRE reads "[n] words" or "[n,m] words".
var citeRE = regexp.MustCompile(`^\[([0-9]{1,4})(?:,([0-9]{1,4}))?\] (.*)$`)

// parseCite reads a model's citation: the cited lines (sorted, without
// repeats) and the quote. ok is false when the string is not a citation.
func parseCite(s string) (lines []int, quote string, ok bool) {
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
	return lines, cleanText(m[3]), true
}

// parseLabeledCite reads "[n] label: words": the label (which holds no
// colon) and the citation.
func parseLabeledCite(s string) (lines []int, label, quote string, ok bool) {
	lines, rest, ok := parseCite(s)
	if !ok {
		return lines, "", "", false
	}
	label, quote, ok = strings.Cut(rest, ": ")
	if !ok {
		return lines, "", cleanText(rest), false
	}
	return lines, cleanText(label), cleanText(quote), true
}

// quoteReplacer makes typographic apostrophes and dashes ASCII and drops
// double quotes.
var quoteReplacer = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201a", "'", "\u201b", "'", "\u2032", "'",
	"\u201c", "", "\u201d", "", "\u201e", "", "\u201f", "", "\u2033", "", `"`, "",
	"\u2013", "-", "\u2014", "-", "\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2212", "-",
	"\u2026", "...",
)

// normQuote is the normalisation both a quote and the cited text get
// before they are compared (see the comment at the top of this file).
func normQuote(s string) string {
	s = strings.ToLower(quoteReplacer.Replace(s))
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

// trimQuote trims a quote's leading and trailing punctuation and spaces.
func trimQuote(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
}

// quoteProblem says why quote is not verified in the cited lines of st, or
// "" when it is.
func quoteProblem(st *State, quote string, lines []int) string {
	q := normQuote(trimQuote(quote))
	if q == "" {
		return "no quote"
	}
	if len(lines) == 0 {
		return "no line cited"
	}
	texts, missing := st.citedLines(slices.Sorted(slices.Values(lines)))
	if len(missing) > 0 {
		return "line " + strconv.Itoa(missing[0]) + " does not exist"
	}
	if containsWords(normQuote(strings.Join(texts, " ")), q) {
		return ""
	}
	for _, s := range st.Sentences {
		if containsWords(normQuote(s.Text), q) {
			return "the quote is not in the cited lines; it is in line " + strconv.Itoa(s.I+1)
		}
	}
	return "the quote is not in the cited lines"
}

// verifyQuote is true when quote is verbatim in its cited lines.
func verifyQuote(st *State, quote string, lines []int) bool {
	return quoteProblem(st, quote, lines) == ""
}

// firstLineT is the t of the first cited line, nil when there is none or
// it does not exist.
func firstLineT(st *State, lines []int) *float64 {
	if len(lines) == 0 {
		return nil
	}
	s, ok := st.Line(slices.Min(lines))
	if !ok {
		return nil
	}
	t := s.T
	return &t
}

// containsWords reports whether q occurs in text starting and ending on
// word boundaries.
func containsWords(text, q string) bool {
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
	return !isWordRune(inner) || !isWordRune(outer)
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
