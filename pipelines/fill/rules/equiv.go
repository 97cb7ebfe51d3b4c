package rules

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// How a value is supported by its line.
const (
	ByLiteral = "literal" // the line holds the value as written
	ByDate    = "date"    // the same date written another way
	ByTime    = "time"
	ByPhone   = "phone"
	ByAmount  = "amount"
)

// Hints say how the form reads what it asks for.
type Hints struct {
	// DateOrder is "dmy" or "mdy" for dates like 03/04/2026 ("": such a
	// date is ambiguous unless its day is over 12, and is not matched
	// another way).
	DateOrder string
}

// Supports says whether line supports typing value: the line holds it
// (letter case and spacing aside), or holds the same date, time, phone
// number or amount written another way. This is the fill rule's check,
// made in code on every value a model proposes; how says which.
func Supports(line, value string, h Hints) (ok bool, how string) {
	v := Fold(value)
	if v == "" {
		return false, ""
	}
	if containsWords(Fold(line), v) {
		return true, ByLiteral
	}
	if ds := datesIn(value, h); len(ds) == 1 && wholeMatch(dateRE, value) {
		for _, d := range datesIn(line, h) {
			if d == ds[0] {
				return true, ByDate
			}
		}
	}
	if t, ok := parseTime(value); ok && wholeMatch(timeRE, value) {
		for _, m := range timeRE.FindAllString(line, -1) {
			if u, ok := parseTime(m); ok && u == t {
				return true, ByTime
			}
		}
	}
	if p := Digits(value); len(p) >= 7 && wholeMatch(phoneRE, value) {
		for _, m := range phoneRE.FindAllString(line, -1) {
			if samePhone(p, Digits(m), strings.HasPrefix(strings.TrimSpace(value), "+"), strings.HasPrefix(strings.TrimSpace(m), "+")) {
				return true, ByPhone
			}
		}
	}
	if a, cur, ok := parseAmount(value); ok && wholeMatch(amountRE, value) {
		for _, m := range amountRE.FindAllString(line, -1) {
			if b, cur2, ok := parseAmount(m); ok && math.Abs(a-b) < 0.005 && (cur == "" || cur2 == "" || cur == cur2) {
				return true, ByAmount
			}
		}
	}
	return false, ""
}

// containsWords says whether v stands in s with no letter or digit
// joined to either end ("Ana" is not in "Banana", "ES" not in "yes").
func containsWords(s, v string) bool {
	for from := 0; from <= len(s); {
		i := strings.Index(s[from:], v)
		if i < 0 {
			return false
		}
		i += from
		before, after := rune(' '), rune(' ')
		if i > 0 {
			before, _ = utf8.DecodeLastRuneInString(s[:i])
		}
		if j := i + len(v); j < len(s) {
			after, _ = utf8.DecodeRuneInString(s[j:])
		}
		word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
		if !(word(before) && word([]rune(v)[0])) && !(word(after) && word([]rune(v)[len([]rune(v))-1])) {
			return true
		}
		from = i + 1
	}
	return false
}

// Fold is text compared without letter case, accents' forms or spacing.
func Fold(s string) string {
	s = norm.NFKC.String(strings.ToLower(s))
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

func wholeMatch(re *regexp.Regexp, s string) bool {
	s = strings.TrimSpace(s)
	loc := re.FindStringIndex(s)
	return loc != nil && loc[0] == 0 && loc[1] == len(s)
}

var months = map[string]time.Month{}

func init() {
	for m := time.January; m <= time.December; m++ {
		name := strings.ToLower(m.String())
		months[name] = m
		months[name[:3]] = m
	}
	months["sept"] = time.September
}

const monthRE = `(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)`

var dateRE = regexp.MustCompile(`(?i)\b(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthRE + `\.?,?\s+\d{4}|` + monthRE + `\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})\b`)

var (
	isoRE   = regexp.MustCompile(`^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$`)
	numRE   = regexp.MustCompile(`^(\d{1,2})[-/.](\d{1,2})[-/.](\d{2,4})$`)
	dmyName = regexp.MustCompile(`(?i)^(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([a-z]+)\.?,?\s+(\d{4})$`)
	mdyName = regexp.MustCompile(`(?i)^([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})$`)
)

// datesIn lists the dates s writes, each as yyyy-mm-dd; a numeric date
// whose day and month could swap counts as both unless h says the order.
func datesIn(s string, h Hints) []string {
	var out []string
	add := func(y, m, d int) {
		if m < 1 || m > 12 || d < 1 || d > 31 {
			return
		}
		t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
		if t.Day() != d {
			return
		}
		out = append(out, t.Format("2006-01-02"))
	}
	for _, raw := range dateRE.FindAllString(s, -1) {
		raw = strings.TrimSpace(raw)
		atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
		if m := isoRE.FindStringSubmatch(raw); m != nil {
			add(atoi(m[1]), atoi(m[2]), atoi(m[3]))
			continue
		}
		if m := numRE.FindStringSubmatch(raw); m != nil {
			a, b, y := atoi(m[1]), atoi(m[2]), atoi(m[3])
			if len(m[3]) == 2 {
				y += 2000
				if y > time.Now().Year()+10 {
					y -= 100
				}
			}
			switch {
			case h.DateOrder == "dmy":
				add(y, b, a)
			case h.DateOrder == "mdy":
				add(y, a, b)
			case a > 12:
				add(y, b, a)
			case b > 12:
				add(y, a, b)
			default:
				add(y, b, a)
				if a != b {
					add(y, a, b)
				}
			}
			continue
		}
		if m := dmyName.FindStringSubmatch(raw); m != nil {
			if mo, ok := months[strings.ToLower(m[2])]; ok {
				add(atoi(m[3]), int(mo), atoi(m[1]))
			}
			continue
		}
		if m := mdyName.FindStringSubmatch(raw); m != nil {
			if mo, ok := months[strings.ToLower(m[1])]; ok {
				add(atoi(m[3]), int(mo), atoi(m[2]))
			}
		}
	}
	return out
}

var timeRE = regexp.MustCompile(`(?i)\b\d{1,2}(?:[:.]\d{2})?\s*(?:[ap]\.?m\.?)|\b\d{1,2}[:.]\d{2}\b`)

// parseTime reads a clock time as minutes after midnight.
func parseTime(s string) (int, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	pm, am := strings.Contains(s, "p"), strings.Contains(s, "a")
	s = strings.TrimRightFunc(strings.NewReplacer("a.m.", "", "p.m.", "", "am", "", "pm", "", ".", ":").Replace(s), unicode.IsSpace)
	parts := strings.SplitN(s, ":", 2)
	h, err := strconv.Atoi(strings.TrimSpace(parts[0]))
	if err != nil {
		return 0, false
	}
	m := 0
	if len(parts) == 2 {
		if m, err = strconv.Atoi(strings.TrimSpace(parts[1])); err != nil || m > 59 {
			return 0, false
		}
	}
	switch {
	case (am || pm) && (h < 1 || h > 12):
		return 0, false
	case pm && h != 12:
		h += 12
	case am && h == 12:
		h = 0
	case h > 23:
		return 0, false
	}
	return h*60 + m, true
}

var phoneRE = regexp.MustCompile(`\+?\(?\d[\d\s().-]{5,}\d`)

// samePhone compares two numbers' digits: equal, or equal once a country
// code (after +, or 00) and a trunk 0 are set aside.
func samePhone(a, b string, aPlus, bPlus bool) bool {
	if a == b {
		return true
	}
	national := func(d string, plus bool) []string {
		out := []string{strings.TrimPrefix(d, "0")}
		if strings.HasPrefix(d, "00") {
			d, plus = d[2:], true
		}
		if plus {
			for cc := 1; cc <= 3 && cc < len(d); cc++ {
				out = append(out, strings.TrimPrefix(d[cc:], "0"))
			}
		}
		return out
	}
	for _, x := range national(a, aPlus) {
		for _, y := range national(b, bPlus) {
			if len(x) >= 7 && x == y {
				return true
			}
		}
	}
	return false
}

var amountRE = regexp.MustCompile(`(?i)(?:[$€£¥]|\b(?:usd|eur|gbp|chf|jpy)\b)?\s?-?(?:\d{1,3}(?:[,.\s']\d{3})+|\d+)(?:[.,]\d{1,2})?\s?(?:[$€£¥]|\b(?:usd|eur|gbp|chf|jpy)\b)?`)

// parseAmount reads an amount: its value and currency ("" when none is
// written). A separator followed by exactly one or two digits at the end
// is the decimal mark; other separators group thousands.
func parseAmount(s string) (float64, string, bool) {
	s = strings.TrimSpace(s)
	cur := ""
	for sym, code := range map[string]string{"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy"} {
		if strings.Contains(s, sym) {
			cur = code
		}
	}
	lower := strings.ToLower(s)
	for _, code := range []string{"usd", "eur", "gbp", "chf", "jpy"} {
		if strings.Contains(lower, code) {
			cur = code
		}
	}
	var num strings.Builder
	for _, r := range s {
		if unicode.IsDigit(r) || r == '.' || r == ',' || r == '-' {
			num.WriteRune(r)
		}
	}
	n := num.String()
	if n == "" || !strings.ContainsAny(n, "0123456789") {
		return 0, "", false
	}
	dec := ""
	if i := strings.LastIndexAny(n, ".,"); i >= 0 && (len(n)-i-1 == 1 || len(n)-i-1 == 2) {
		dec = n[i+1:]
		n = n[:i]
	}
	n = strings.NewReplacer(".", "", ",", "").Replace(n)
	if dec != "" {
		n += "." + dec
	}
	v, err := strconv.ParseFloat(n, 64)
	return v, cur, err == nil
}
