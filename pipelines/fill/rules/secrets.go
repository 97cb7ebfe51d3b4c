// Package rules holds the form filler's rules, in code (contract 2,
// section 4, "fill rules"): the secrets that are never typed nor shown
// to a model (by a field's meaning and by a value's pattern and
// checksum), when a line supports a value (as written, or the same date,
// time, phone number or amount written another way), and the forms the
// filler refuses. The page text aimed at AI agents, flagged and withheld,
// is read by the sub-package inject.
package rules

import (
	"math/big"
	"regexp"
	"strings"
	"unicode"
)

// Secret kinds: what is never typed and never reaches a model.
const (
	SecretPassword    = "password"
	SecretCard        = "card number"
	SecretCardCode    = "card security code"
	SecretBank        = "bank account number"
	SecretRouting     = "routing number"
	SecretIBAN        = "IBAN"
	SecretTax         = "tax number"
	SecretSSN         = "social security number"
	SecretPassport    = "passport number"
	SecretLicence     = "licence number"
	SecretNationalID  = "national ID number"
	SecretInsurance   = "health insurance number"
	SecretSignature   = "signature"
	SecretDeclaration = "declaration"
)

// SplitName splits camelCase and snake_case names into words.
func SplitName(s string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range s {
		switch {
		case r == '_' || r == '-' && unicode.IsLetter(prev):
			b.WriteRune(' ')
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteRune(' ')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// Found is a secret value found in text.
type Found struct {
	Kind       string
	Start, End int // byte offsets
}

var (
	digitRun  = regexp.MustCompile(`\b\d(?:[ .-]?\d){11,18}\b`)
	ibanRE    = regexp.MustCompile(`(?i)\b[A-Z]{2}\d{2}(?:[ -]?[A-Z0-9]){11,30}\b`)
	ssnRE     = regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`)
	routingRE = regexp.MustCompile(`\b\d{9}\b`)
)

// Values finds secret values in text by their patterns: card numbers
// that pass Luhn's check, IBANs that pass ISO 13616's mod-97 check,
// US routing numbers that pass the ABA check, social security numbers,
// and any value written after a secret's label (the words that name a
// secret field, in the languages the rules read: "Passport No:",
// "Travel document", "Reisepass", "numéro de police", "SSN").
func Values(text string) []Found {
	var out []Found
	add := func(kind string, s, e int) {
		for _, f := range out {
			if s < f.End && e > f.Start {
				return
			}
		}
		out = append(out, Found{Kind: kind, Start: s, End: e})
	}
	for _, m := range ibanRE.FindAllStringIndex(text, -1) {
		if IBANValid(text[m[0]:m[1]]) {
			add(SecretIBAN, m[0], m[1])
		}
	}
	for _, m := range digitRun.FindAllStringIndex(text, -1) {
		d := Digits(text[m[0]:m[1]])
		if CardNumber(d) {
			add(SecretCard, m[0], m[1])
		}
	}
	for _, m := range ssnRE.FindAllStringIndex(text, -1) {
		add(SecretSSN, m[0], m[1])
	}
	for _, m := range routingRE.FindAllStringIndex(text, -1) {
		if ABAValid(text[m[0]:m[1]]) {
			add(SecretRouting, m[0], m[1])
		}
	}
	for _, f := range labelled(text) {
		add(f.Kind, f.Start, f.End)
	}
	return out
}

// Redact replaces every secret value in text with [withheld: kind]
// (every writing of each, wherever it stands in text), and says what it
// found.
func Redact(text string) (string, []Found) {
	return Collect([]string{text}, nil).Redact(text)
}

// Digits keeps s's digits.
func Digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// issuers are the card networks' number prefixes and lengths (IIN
// ranges), so that a phone or order number that happens to pass Luhn's
// check is not taken for a card.
var issuers = regexp.MustCompile(`^(4\d{12}(\d{3}){0,2}|5[1-5]\d{14}|2(2[2-9]\d|[3-6]\d\d|7[01]\d|720)\d{12}|3[47]\d{13}|3(0[0-5]|[68]\d)\d{11}|6(011|5\d\d)\d{12}|35(2[89]|[3-8]\d)\d{12}|62\d{14,17})$`)

// CardNumber says whether d (digits only) is a payment card number: a
// network's prefix and length, and Luhn's check.
func CardNumber(d string) bool { return issuers.MatchString(d) && Luhn(d) }

// Luhn checks a string of digits with Luhn's algorithm (card numbers).
func Luhn(d string) bool {
	if len(d) < 2 {
		return false
	}
	sum := 0
	for i := 0; i < len(d); i++ {
		n := int(d[len(d)-1-i] - '0')
		if n < 0 || n > 9 {
			return false
		}
		if i%2 == 1 {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	return sum%10 == 0
}

// IBANValid checks an IBAN (spaces allowed) with ISO 13616's mod-97.
func IBANValid(s string) bool {
	s = strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(s))
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	r := s[4:] + s[:4]
	var b strings.Builder
	for _, c := range r {
		switch {
		case c >= '0' && c <= '9':
			b.WriteRune(c)
		case c >= 'A' && c <= 'Z':
			b.WriteString(big.NewInt(int64(c - 'A' + 10)).String())
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(b.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// ABAValid checks a US routing number's checksum (weights 3, 7, 1).
func ABAValid(s string) bool {
	if len(s) != 9 {
		return false
	}
	w := []int{3, 7, 1, 3, 7, 1, 3, 7, 1}
	sum := 0
	for i, c := range s {
		if c < '0' || c > '9' {
			return false
		}
		sum += int(c-'0') * w[i]
	}
	return sum%10 == 0 && s != "000000000"
}
