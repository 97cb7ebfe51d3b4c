package text

import (
	"regexp"
	"strings"
)

// Placeholder detection. A string is lowered with ASCII-only lowering (so
// byte positions do not move) and then tried against these groups in order;
// the first match wins and its label is the matched text of the original
// string:
//
//  1. templateRegexps, in order (leftmost match of each);
//  2. placeholderPhrases, in order: the first occurrence that stands alone;
//  3. a run of three or more "x" that stands alone ("xxx", "XXXX-XXX");
//  4. placeholderWholeValues: the whole value, trimmed of ASCII whitespace,
//     equals the entry (the label is the trimmed value);
//  5. placeholderPhones, in order;
//  6. placeholderHosts, in order.
//
// "Stands alone": when the pattern's first character is an ASCII letter or
// digit, the character before the match must not be one (or the match is at
// the start); the same for the last character and the character after. So
// "todo" does not match "today" or "todos", "sample" (whole values only)
// never matches "Sampler" or "free samples", "123-456-7890" does not match
// inside "9123-456-78901", and "example.com" does not match
// "myexample.com" or "example.community" but matches "www.example.com",
// "info@example.com" and "example.com.au".
var templateRegexps = []*regexp.Regexp{
	regexp.MustCompile(`\{\{[^{}]*\}\}`),
	regexp.MustCompile(`%[a-z][a-z_]{2,}%`),
	regexp.MustCompile(`\[(?:(?:your|insert|enter|add) [^\[\]]*|name|business name|company name|address|phone|phone number|email|city|state|zip|zip code|url|website|date|description|title)\]`),
}

var placeholderPhrases = []string{
	"lorem ipsum", "dolor sit amet",
	"your business name", "business name here", "your company name", "company name here", "your name here",
	"insert here", "insert name", "insert text",
	"sample text", "sample name", "sample description", "sample product", "sample business", "sample company", "sample title", "sample address",
	"john doe", "jane doe", "123 main st", "123 main street", "anytown",
	"todo", "tbd", "fixme", "placeholder",
}

var placeholderWholeValues = []string{
	"asdf", "changeme", "description", "example", "insert", "lorem", "n/a", "name", "null",
	"sample", "string", "test", "title", "undefined", "your company",
}

var placeholderPhones = []string{
	"123-456-7890", "(123) 456-7890", "123.456.7890", "1234567890",
	"555-555-5555", "555.555.5555", "5555555555", "(555) 555-",
	"000-000-0000", "0000000000",
}

var placeholderHosts = []string{
	"example.com", "example.org", "example.net", "domain.com", "test.com",
	"yourdomain.com", "yoursite.com", "yourwebsite.com", "yourcompany.com",
}

func isASCIIAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// findStandalone returns the byte offset of the first occurrence of pat in
// low that stands alone, or -1.
func findStandalone(low, pat string) int {
	from := 0
	for {
		k := strings.Index(low[from:], pat)
		if k < 0 {
			return -1
		}
		i := from + k
		j := i + len(pat)
		okBefore := !isASCIIAlnum(pat[0]) || i == 0 || !isASCIIAlnum(low[i-1])
		okAfter := !isASCIIAlnum(pat[len(pat)-1]) || j == len(low) || !isASCIIAlnum(low[j])
		if okBefore && okAfter {
			return i
		}
		from = i + 1
	}
}

// FindPlaceholder returns the placeholder text found in s and whether one
// was found.
func FindPlaceholder(s string) (string, bool) {
	low := ASCIILower(s)
	for _, re := range templateRegexps {
		if loc := re.FindStringIndex(low); loc != nil {
			return s[loc[0]:loc[1]], true
		}
	}
	for _, p := range placeholderPhrases {
		if i := findStandalone(low, p); i >= 0 {
			return s[i : i+len(p)], true
		}
	}
	for i := 0; i < len(low); {
		if low[i] != 'x' {
			i++
			continue
		}
		j := i
		for j < len(low) && low[j] == 'x' {
			j++
		}
		if j-i >= 3 && (i == 0 || !isASCIIAlnum(low[i-1])) && (j == len(low) || !isASCIIAlnum(low[j])) {
			return s[i:j], true
		}
		i = j
	}
	t := TrimASCII(s)
	lt := ASCIILower(t)
	for _, w := range placeholderWholeValues {
		if lt == w {
			return t, true
		}
	}
	for _, group := range [][]string{placeholderPhones, placeholderHosts} {
		for _, p := range group {
			if i := findStandalone(low, p); i >= 0 {
				return s[i : i+len(p)], true
			}
		}
	}
	return "", false
}
