// Package rules holds the form filler's rules, in code (contract 2,
// section 4, "fill rules"): the secrets that are never typed nor shown
// to a model (by a field's meaning and by a value's pattern and
// checksum), when a line supports a value (as written, or the same date,
// time, phone number or amount written another way), and the page text
// aimed at AI agents that is flagged and withheld.
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

// fieldSecrets name a field's secret kind from its label, name, id,
// autocomplete or type: the first that matches.
var fieldSecrets = []struct {
	kind string
	re   *regexp.Regexp
}{
	{SecretPassword, regexp.MustCompile(`(?i)\b(pass(word|wd|phrase)?|pwd|pin( code)?|one[- ]time code|otp)\b|current-password|new-password`)},
	{SecretCardCode, regexp.MustCompile(`(?i)\b(cvv2?|cvc2?|csc|cid|security code|card code|card verification)\b|cc-csc`)},
	{SecretCard, regexp.MustCompile(`(?i)\b(card ?(number|no\.?|#)|credit ?card|debit ?card|cc[ -]?num(ber)?|pan)\b|cardnumber`)},
	{SecretIBAN, regexp.MustCompile(`(?i)\biban\b`)},
	{SecretRouting, regexp.MustCompile(`(?i)\b(routing|aba|sort ?code|bsb|transit number|swift|bic)\b`)},
	{SecretBank, regexp.MustCompile(`(?i)\b(account ?(number|no\.?|#)|bank ?account|acct)\b`)},
	{SecretSSN, regexp.MustCompile(`(?i)\b(ssn|social ?security|sozialversicherung|national insurance|nino)\b`)},
	{SecretTax, regexp.MustCompile(`(?i)\b(tax ?(id|number|no\.?|identification)|tin|ein|itin|vat ?(id|number)|steuer[ -]?id|steuernummer|nif|codice fiscale|utr)\b`)},
	{SecretPassport, regexp.MustCompile(`(?i)\bpass(port)? ?(number|no\.?|#)|\bpassport\b`)},
	{SecretLicence, regexp.MustCompile(`(?i)\b(driver'?s?|driving) ?licen[cs]e|\blicen[cs]e ?(number|no\.?|#)`)},
	{SecretNationalID, regexp.MustCompile(`(?i)\b(national ?id|id ?card ?(number|no\.?)|identity ?(card|number)|personalausweis|dni|nie|bsn|pesel|personnummer|cpr)\b`)},
	{SecretInsurance, regexp.MustCompile(`(?i)\b(insurance|member|policy|medicare|medicaid|nhs|versicherten)[ -]?(id|number|no\.?|#|nummer)\b|\bhealth ?insurance\b`)},
	{SecretSignature, regexp.MustCompile(`(?i)\b(signature|sign here|signed by|e-?sign)\b`)},
	{SecretDeclaration, regexp.MustCompile(`(?i)\b(i (hereby )?(declare|certify|confirm|attest|agree|consent)|declaration|under penalty of perjury|i accept the terms)\b`)},
}

// FieldSecret names the secret a field asks for, from what describes it
// (label, name, id, placeholder, autocomplete; its type: a password
// input is one whatever its label). "" when it asks for none.
func FieldSecret(typ string, describe ...string) string {
	if strings.EqualFold(typ, "password") {
		return SecretPassword
	}
	text := strings.Join(describe, " ")
	// Split camelCase and snake_case names so that "cardNumber" and
	// "card_number" read as words.
	text = SplitName(text)
	for _, f := range fieldSecrets {
		if f.re.MatchString(text) {
			return f.kind
		}
	}
	return ""
}

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
	digitRun   = regexp.MustCompile(`\b\d(?:[ -]?\d){11,18}\b`)
	ibanRE     = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b`)
	ssnRE      = regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`)
	routingRE  = regexp.MustCompile(`\b\d{9}\b`)
	labelledRE = regexp.MustCompile(`(?i)\b(passport|licen[cs]e|national id|id card|tax id|tin|ein|member id|policy|insurance (?:id|number)|account|routing|password|pin|cvv|cvc|security code)(?:\s*(?:no\.?|number|nr\.?|#))?\b[^A-Za-z0-9\n]{0,6}([A-Z0-9][A-Z0-9 -]{3,24}[A-Z0-9])`)
)

// Values finds secret values in text by their patterns: card numbers
// that pass Luhn's check, IBANs that pass ISO 13616's mod-97 check,
// US routing numbers that pass the ABA check, social security numbers,
// and any value written after a secret's label (passport, licence, ID,
// tax, insurance, account, password, PIN, card code).
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
	for _, m := range labelledRE.FindAllStringSubmatchIndex(text, -1) {
		label := strings.ToLower(text[m[2]:m[3]])
		add(labelKind(label), m[4], m[5])
	}
	return out
}

func labelKind(label string) string {
	switch {
	case strings.HasPrefix(label, "passport"):
		return SecretPassport
	case strings.HasPrefix(label, "licen"):
		return SecretLicence
	case label == "national id" || label == "id card":
		return SecretNationalID
	case label == "tax id" || label == "tin" || label == "ein":
		return SecretTax
	case strings.Contains(label, "member") || strings.Contains(label, "policy") || strings.Contains(label, "insurance"):
		return SecretInsurance
	case strings.HasPrefix(label, "account"):
		return SecretBank
	case strings.HasPrefix(label, "routing"):
		return SecretRouting
	case label == "cvv" || label == "cvc" || label == "security code":
		return SecretCardCode
	}
	return SecretPassword
}

// Redact replaces every secret value in text with [withheld: kind], and
// says what it withheld.
func Redact(text string) (string, []Found) {
	fs := Values(text)
	if len(fs) == 0 {
		return text, nil
	}
	// Replace from the end so offsets hold.
	sorted := append([]Found(nil), fs...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && sorted[j].Start > sorted[j-1].Start; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	for _, f := range sorted {
		text = text[:f.Start] + "[withheld: " + f.Kind + "]" + text[f.End:]
	}
	return text, fs
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
	s = strings.ToUpper(strings.ReplaceAll(s, " ", ""))
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
