package rules

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// labelled finds the values written after a secret's label in text.
func labelled(text string) []Found {
	f := foldText(text)
	var out []Found
	try := func(kind string, at int) {
		if s, e, ok := valueAfter(text, at, kind); ok {
			out = append(out, Found{Kind: kind, Start: s, End: e})
		}
	}
	for _, sc := range lineScanners() {
		for _, m := range sc.findAll(f.s) {
			_, e := f.span(m[0], m[1])
			try(sc.kind, e)
		}
	}
	for _, m := range abbrevScanner().findAll(text) {
		try(abbreviations[text[m[0]:m[1]]], m[1])
	}
	return out
}

var (
	lineScanners = sync.OnceValue(func() []kindScanner {
		var out []kindScanner
		for _, rs := range [][]secretRule{secretRules, lineLabels} {
			for _, r := range rs {
				if r.line {
					out = append(out, kindScanner{newScanner(r.re), r.kind})
				}
			}
		}
		return out
	})
	abbrevScanner = sync.OnceValue(func() *scanner { return newScanner(abbrevRE) })
)

type kindScanner struct {
	*scanner
	kind string
}

// fillerRE is what may stand between a label and its value: a note in
// brackets, a number's word ("no.", "Nr.", "numéro", "n°") and a colon
// or the like.
var fillerRE = regexp.MustCompile(`^[\s.-]*(?:\([^()\n]{0,40}\)\s*)?(?:(?i:no|nr|num|number|nummer|numéro|numero|número|numer)(?:\.\s*|\s+|\s*[:#=]\s*)|(?i:n)\s?[°º]\.?\s*|#\s*)?(?:[:#=|.–—-]\s*)?`)

// valueAfter is the secret value written at text[at:] after a label of
// kind: a password's next word, or a number's run of letter and digit
// groups ("571 903 346", "X1234567", "AB-123-456-C") with two digits
// or more, that is not a date or a year.
func valueAfter(text string, at int, kind string) (int, int, bool) {
	if kind == SecretSignature || kind == SecretDeclaration {
		return 0, 0, false
	}
	fill := fillerRE.FindString(text[at:])
	p := at + len(fill)
	if kind == SecretPassword {
		e := p
		for e < len(text) {
			r, n := utf8.DecodeRuneInString(text[e:])
			if unicode.IsSpace(r) {
				break
			}
			e += n
		}
		w := strings.TrimRight(text[p:e], ".,;:!?)]}\"'")
		e = p + len(w)
		colon := strings.ContainsAny(fill, ":=#")
		if w == "" || !colon && !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsDigit(r) || !unicode.IsLetter(r) }) {
			return 0, 0, false
		}
		return p, e, true
	}
	start, end := p, p
	for i := p; ; {
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			j += n
		}
		if j == i || !valueGroup(text[i:j]) {
			break
		}
		end = j
		if j+1 < len(text) && strings.IndexByte(" -./", text[j]) >= 0 {
			if r, _ := utf8.DecodeRuneInString(text[j+1:]); unicode.IsLetter(r) || unicode.IsDigit(r) {
				i = j + 1
				continue
			}
		}
		break
	}
	v := text[start:end]
	a := alnum(v)
	digits := 0
	for _, c := range a {
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	switch {
	case kind == SecretCardCode:
		return start, end, digits == len(a) && digits >= 3 && digits <= 4
	case len(a) < 4 || digits < 2:
		return 0, 0, false
	case digits == 4 && len(a) == 4 && (strings.HasPrefix(a, "19") || strings.HasPrefix(a, "20")), wholeMatch(dateRE, v):
		return 0, 0, false // a year or a date
	}
	return start, end, true
}

// valueGroup says whether a run of letters and digits belongs to a
// value: it holds a digit, or it is a short group of capitals ("AB",
// "WEST").
func valueGroup(g string) bool {
	if strings.ContainsFunc(g, unicode.IsDigit) {
		return true
	}
	return utf8.RuneCountInString(g) <= 4 && !strings.ContainsFunc(g, unicode.IsLower)
}

// Secrets are the secret values of a set of texts (a person's
// documents): once a value is a secret anywhere (by its pattern, by the
// label before it, or after the label of a field that asks for a secret),
// every writing of it in every text is one: "Passport: 571903346" makes
// "Travel document 571 903 346" and "ref 571-903-346" secrets too.
// Values compare by their letters and digits only (separators aside,
// letter case aside).
type Secrets struct {
	keys []secretKey
}

// secretKey is a secret as it is looked for: key is its letters and
// digits (alnum), or, literal, its whole writing folded (a password's
// symbols are part of it: "Tr0ub4dor&3").
type secretKey struct {
	key, kind string
	literal   bool
}

// Labelled is a field's label naming a secret (the value written after
// it in a document is one).
type Labelled struct{ Label, Kind string }

// keyMin is the shortest value withheld wherever it stands; shorter ones
// (a two-digit code) are withheld only where they are found, as any
// two digits elsewhere say nothing. A value is never looked for inside a
// longer number ("1234567" is not in "81234567"); one shorter than
// shortKey only as a whole word ("4821" is not in "ab4821").
const (
	keyMin   = 3
	shortKey = 6
)

// Collect finds the secrets of texts; labels are the labels of the
// form's fields that ask for a secret.
func Collect(texts []string, labels []Labelled) *Secrets {
	s := &Secrets{}
	seen := map[string]bool{}
	add := func(v, kind string) {
		for _, k := range keysOf(v) {
			if !seen[k] {
				seen[k] = true
				s.keys = append(s.keys, secretKey{key: k, kind: kind})
			}
		}
		if lit := strings.TrimSpace(foldText(v).s); len(lit) >= keyMin && lit != alnum(v) && !seen["\x00"+lit] {
			seen["\x00"+lit] = true
			s.keys = append(s.keys, secretKey{key: lit, kind: kind, literal: true})
		}
	}
	var words, kinds []string
	for _, l := range labels {
		if f := labelWords(l.Label); f != "" {
			words, kinds = append(words, f), append(kinds, l.Kind)
		}
	}
	for _, t := range texts {
		for _, f := range Values(t) {
			add(t[f.Start:f.End], f.Kind)
		}
		if len(words) == 0 {
			continue
		}
		ft := foldText(t)
		for i, l := range words {
			for at := 0; ; {
				j := strings.Index(ft.s[at:], l)
				if j < 0 {
					break
				}
				a := at + j
				at = a + len(l)
				if r, _ := utf8.DecodeLastRuneInString(ft.s[:a]); a > 0 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
					continue
				}
				_, e := ft.span(a, a+len(l))
				if v0, v1, ok := valueAfter(t, e, kinds[i]); ok {
					add(t[v0:v1], kinds[i])
				}
			}
		}
	}
	// Longest first, so that a longer writing is withheld whole.
	sort.SliceStable(s.keys, func(i, j int) bool { return len(s.keys[i].key) > len(s.keys[j].key) })
	return s
}

var bracketsRE = regexp.MustCompile(`\([^)]*\)|\[[^\]]*\]`)

// labelWords is a field's label as it is looked for in folded text: its
// words, without a note in brackets or a closing colon, with at least
// four letters or digits ("ID" alone is left to the rules' own words).
func labelWords(label string) string {
	l := bracketsRE.ReplaceAllString(label, " ")
	l = strings.Trim(foldLabel(l), " :*.#-")
	if len(alnum(l)) < 4 {
		return ""
	}
	return l
}

// keysOf are the forms under which a secret value is looked for: all
// its letters and digits; without groups of letters at either end
// ("AB 123456 C" also as "123456"); each group of six or more with a
// digit; its digits alone when there are five or more ("X1234567" also
// as "1234567").
func keysOf(v string) []string {
	var out []string
	add := func(k string) {
		if len(k) >= keyMin && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	add(alnum(v))
	groups := strings.FieldsFunc(v, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for len(groups) > 0 && !strings.ContainsFunc(groups[0], unicode.IsDigit) {
		groups = groups[1:]
	}
	for len(groups) > 0 && !strings.ContainsFunc(groups[len(groups)-1], unicode.IsDigit) {
		groups = groups[:len(groups)-1]
	}
	if core := alnum(strings.Join(groups, "")); len(core) >= 4 {
		add(core)
	}
	// A long group on its own ("571903346" of "571903346 2031").
	for _, g := range groups {
		if a := alnum(g); len(a) >= shortKey && strings.ContainsFunc(a, unicode.IsDigit) {
			add(a)
		}
	}
	var d strings.Builder
	for _, c := range alnum(v) {
		if c >= '0' && c <= '9' {
			d.WriteRune(c)
		}
	}
	if d.Len() >= 5 {
		add(d.String())
	}
	return out
}

// Redact replaces every secret in text with [withheld: kind]: the values
// its own patterns and labels find, and every writing of every secret
// the set holds. It says what it withheld.
func (s *Secrets) Redact(text string) (string, []Found) {
	fs := Values(text)
	fs = append(fs, s.find(text)...)
	if len(fs) == 0 {
		return text, nil
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Start < fs[j].Start })
	// Merge overlapping spans, the first's kind naming the whole.
	var merged []Found
	for _, f := range fs {
		if n := len(merged); n > 0 && f.Start < merged[n-1].End {
			merged[n-1].End = max(merged[n-1].End, f.End)
			continue
		}
		merged = append(merged, f)
	}
	var b strings.Builder
	last := 0
	for _, f := range merged {
		b.WriteString(text[last:f.Start])
		b.WriteString("[withheld: " + f.Kind + "]")
		last = f.End
	}
	b.WriteString(text[last:])
	return b.String(), merged
}

// Holds names the secret value holds ("" for none): a writing of one of
// the set's secrets, a secret by its own pattern or label, or a piece of
// a secret five characters long or more.
func (s *Secrets) Holds(value string) string {
	if fs := Values(value); len(fs) > 0 {
		return fs[0].Kind
	}
	if fs := s.find(value); len(fs) > 0 {
		return fs[0].Kind
	}
	if a := alnum(value); len(a) >= 5 {
		for _, k := range s.keys {
			if strings.Contains(k.key, a) {
				return k.kind
			}
		}
	}
	return ""
}

// Len is how many forms of secret values the set holds.
func (s *Secrets) Len() int { return len(s.keys) }

// find is where text writes one of the set's secrets.
func (s *Secrets) find(text string) []Found {
	if len(s.keys) == 0 {
		return nil
	}
	// sig is text's letters and digits (folded), each byte with the
	// span of the original rune it comes from.
	var sig strings.Builder
	var from, to []int
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		for _, c := range []byte(sigRune(r)) {
			sig.WriteByte(c)
			from, to = append(from, i), append(to, i+n)
		}
		i += n
	}
	ss := sig.String()
	var ft folded
	var out []Found
	for _, k := range s.keys {
		if k.literal {
			if ft.off == nil {
				ft = foldText(text)
			}
			for at := 0; at < len(ft.s); {
				i := strings.Index(ft.s[at:], k.key)
				if i < 0 {
					break
				}
				start, end := ft.span(at+i, at+i+len(k.key))
				at += i + 1
				short := len(alnum(k.key)) < shortKey
				if !joined(text, start, true, short) && !joined(text, end, false, short) {
					out = append(out, Found{Kind: k.kind, Start: start, End: end})
				}
			}
			continue
		}
		for at := 0; at < len(ss); {
			i := strings.Index(ss[at:], k.key)
			if i < 0 {
				break
			}
			a, b := at+i, at+i+len(k.key)
			at = a + 1
			start, end := from[a], to[b-1]
			if !tightGaps(text, from[a:b], to[a:b]) {
				continue
			}
			short := len(k.key) < shortKey
			if joined(text, start, true, short) || joined(text, end, false, short) {
				continue
			}
			out = append(out, Found{Kind: k.kind, Start: start, End: end})
		}
	}
	return out
}

// tightGaps says whether a match's characters stand apart by separators
// only, two at most between any two (spaces, dashes, dots, slashes,
// brackets, apostrophes): "571 903 346" and "571-903-346" are one value;
// "571, 903" is not.
func tightGaps(text string, from, to []int) bool {
	for i := 1; i < len(from); i++ {
		gap := text[to[i-1]:from[i]]
		if from[i] <= to[i-1] || gap == "" {
			continue
		}
		if utf8.RuneCountInString(gap) > 2 {
			return false
		}
		for _, r := range gap {
			if !(unicode.IsSpace(r) || unicode.Is(unicode.Pd, r) || unicode.Is(unicode.Cf, r) || strings.ContainsRune("./_·()'’", r)) {
				return false
			}
		}
	}
	return true
}

// joined says whether a digit (or, for a short value, a letter) touches
// text at i, before it or after it: "1234567" is not in "81234567", and
// "4821" is not in "ab4821".
func joined(text string, i int, before, short bool) bool {
	var r rune
	if before {
		if i == 0 {
			return false
		}
		r, _ = utf8.DecodeLastRuneInString(text[:i])
	} else {
		if i >= len(text) {
			return false
		}
		r, _ = utf8.DecodeRuneInString(text[i:])
	}
	return unicode.IsDigit(r) || short && unicode.IsLetter(r)
}
