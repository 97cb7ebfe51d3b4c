package rules

import (
	"html"
	"regexp"
	"strings"
	"unicode"
)

// RefusedWords are the forms the contract keeps out of the filler
// (contract 2, section 4): immigration forms, court filings, customs
// entries, each by the words that name one (a regular expression of
// lower-case alternatives).
var RefusedWords = []struct{ What, Words string }{
	{"an immigration form", "visa application|immigration|residence permit|asylum|naturali[sz]ation|green card|form i-\\d+|ds-160|uscis"},
	{"a court filing", "court|plaintiff|defendant|petitioner|docket|case number|affidavit|subpoena|summons"},
	{"a customs entry", "customs declaration|customs entry|cbp form|import duty|tariff code|harmoni[sz]ed system code|cn22|cn23"},
}

// refusedREs are RefusedWords as whole words, in any letter case.
var refusedREs = func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(RefusedWords))
	for i, w := range RefusedWords {
		out[i] = regexp.MustCompile(`(?i)\b(` + w.Words + `)\b`)
	}
	return out
}()

// RefusedForm reports whether a form's markup is one the filler refuses:
// what it looks like and the word that says so (as read, folded). The
// words are looked for in the markup as a person sees it, whatever it is
// written with: comments are removed ("imm<!-- -->igration"), entities
// decoded ("imm&#105;gration"), invisible characters dropped (zero-width
// spaces and joiners, soft hyphens, bidirectional controls, combining
// marks, Hangul fillers), letters that look like Latin ones folded to
// them (Cyrillic "і" and "о", Greek "ο"), accents and compatibility forms
// folded (fullwidth and mathematical letters), letter case and runs of
// spacing ignored. The markup as sent, the markup so read, and its text
// alone (tags removed, so "imm<b></b>igration" reads "immigration") are
// searched.
func RefusedForm(markup string) (what, word string, refused bool) {
	marked := refusalText(markup)
	for _, view := range []string{markup, marked, tagsRemoved.ReplaceAllString(marked, "")} {
		for i, re := range refusedREs {
			if w := re.FindString(view); w != "" {
				return RefusedWords[i].What, w, true
			}
		}
	}
	return "", "", false
}

var (
	comments    = regexp.MustCompile(`(?s)<!--.*?(?:-->|$)`)
	tagsRemoved = regexp.MustCompile(`<[^<>]*>`)
	spacing     = regexp.MustCompile(`\s+`)
)

// refusalText is markup with its comments removed, its entities decoded
// and every character folded as RefusedForm describes, spacing runs one
// space. Tags are kept.
func refusalText(markup string) string {
	s := html.UnescapeString(comments.ReplaceAllString(markup, ""))
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if invisible(r) {
			continue
		}
		if c, ok := confusableCapitals[r]; ok {
			b.WriteRune(c)
			continue
		}
		if c, ok := confusables[unicode.ToLower(r)]; ok {
			b.WriteRune(c)
			continue
		}
		b.WriteString(foldRune(r))
	}
	return spacing.ReplaceAllString(b.String(), " ")
}

// invisible reports characters a page shows as nothing inside a word.
// foldRune drops format characters (Cf) and combining marks already;
// these are the letters and symbols that render blank.
func invisible(r rune) bool {
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, // Hangul fillers
		0x2800,                         // braille pattern blank
		0x034F,                         // combining grapheme joiner
		0x180B, 0x180C, 0x180D, 0x180F: // Mongolian variation selectors
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) ||
		unicode.Is(unicode.Variation_Selector, r)
}

// confusableCapitals are the Cyrillic and Greek capitals that look like
// Latin capitals other than their small letters' look-alikes (Greek Η is
// H, η is n), folded to Latin small letters; confusables are the small
// letters (and, lowered, the other capitals) that look like Latin ones,
// as Unicode's confusables list pairs them for these scripts (and a few
// Armenian ones).
var confusableCapitals = map[rune]rune{
	'Η': 'h', 'Μ': 'm', 'Ν': 'n', 'Υ': 'y', 'Β': 'b', 'Ρ': 'p', 'Χ': 'x', 'Ζ': 'z', 'Τ': 't', 'Κ': 'k',
	'Ι': 'i', 'Ο': 'o', 'Α': 'a', 'Ε': 'e',
	'В': 'b', 'Н': 'h', 'М': 'm', 'Т': 't', 'К': 'k',
}

var confusables = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c',
	'т': 't', 'у': 'y', 'х': 'x', 'і': 'i', 'ї': 'i', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w',
	'һ': 'h', 'ӏ': 'l', 'ɡ': 'g', 'ո': 'n', 'ս': 'u', 'ց': 'g', 'ѵ': 'v', 'ү': 'y', 'ғ': 'f', 'ь': 'b',
	// Greek
	'α': 'a', 'β': 'b', 'γ': 'y', 'ε': 'e', 'ζ': 'z', 'η': 'n', 'ι': 'i', 'κ': 'k', 'μ': 'u', 'ν': 'v',
	'ο': 'o', 'ρ': 'p', 'σ': 'o', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ω': 'w', 'ϲ': 'c', 'ϳ': 'j',
}
