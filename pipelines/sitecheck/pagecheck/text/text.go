package text

import (
	"strings"
	"unicode/utf8"
)

// MaxTextChars caps ExtractText's result, in Unicode code points.
const MaxTextChars = 20000

// blockElements are the tags (start or end) that stand for a word break in
// the extracted text.
var blockElements = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true, "body": true,
	"br": true, "button": true, "caption": true, "dd": true, "details": true,
	"dialog": true, "div": true, "dl": true, "dt": true, "fieldset": true,
	"figcaption": true, "figure": true, "footer": true, "form": true, "h1": true,
	"h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "head": true,
	"header": true, "hr": true, "html": true, "li": true, "main": true, "nav": true,
	"ol": true, "option": true, "p": true, "pre": true, "section": true,
	"select": true, "summary": true, "table": true, "tbody": true, "td": true,
	"textarea": true, "tfoot": true, "th": true, "thead": true, "title": true,
	"tr": true, "ul": true,
}

// hiddenElements have their whole content dropped from the text.
var hiddenElements = map[string]bool{"script": true, "style": true, "noscript": true, "template": true}

// ExtractText returns the page's text as an AI crawler without JavaScript
// sees it: comments and the contents of script, style, noscript and template
// elements are removed, tags are removed (block-level tags and removed
// elements leave a space), entities are decoded, whitespace runs collapse to
// one space, the result is trimmed and cut to MaxTextChars code points
// (a space left at the cut is trimmed too).
func ExtractText(html string) string { return ExtractTextTokens(html, Scan(html)) }

// ExtractTextTokens is ExtractText over toks, which must be Scan(html).
func ExtractTextTokens(html string, toks []Token) string {
	var b strings.Builder
	hidden := 0 // open noscript/template elements
	for _, t := range toks {
		switch t.Kind {
		case TokText:
			if hidden == 0 {
				b.WriteString(html[t.Start:t.End])
			}
		case TokRawText:
			if hidden == 0 && !hiddenElements[t.Name] {
				b.WriteString(html[t.ContentStart:t.ContentEnd])
			}
		case TokStartTag:
			if t.Name == "noscript" || t.Name == "template" {
				hidden++
			}
			if blockElements[t.Name] || hiddenElements[t.Name] {
				b.WriteByte(' ')
			}
		case TokEndTag:
			if (t.Name == "noscript" || t.Name == "template") && hidden > 0 {
				hidden--
			}
			if blockElements[t.Name] || hiddenElements[t.Name] {
				b.WriteByte(' ')
			}
		}
	}
	text := CollapseSpace(DecodeEntities(b.String()))
	return TruncateRunes(text, MaxTextChars)
}

// TruncateRunes keeps the first max code points and trims a trailing space.
func TruncateRunes(s string, max int) string {
	count := 0
	for i := range s {
		if count == max {
			return strings.TrimRight(s[:i], " ")
		}
		count++
	}
	return s
}

// isCollapsible is the whitespace set collapsed in extracted text and meta
// values: U+0009-U+000D, U+0020 and U+00A0.
func isCollapsible(r rune) bool {
	return r == ' ' || (r >= '\t' && r <= '\r') || r == '\u00a0'
}

// CollapseSpace replaces every run of collapsible whitespace with one space
// and trims spaces at both ends.
func CollapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if isCollapsible(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// RuneCount counts code points (an invalid UTF-8 byte counts as one).
func RuneCount(s string) int { return utf8.RuneCountInString(s) }

// ASCIILower lowers A-Z only; every other byte is kept.
func ASCIILower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// TrimASCII trims space, tab, LF, VT, FF and CR at both ends.
func TrimASCII(s string) string { return strings.Trim(s, " \t\n\v\f\r") }
