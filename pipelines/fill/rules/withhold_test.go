package rules

import (
	"strings"
	"testing"
)

// TestSecretsEveryWriting: once a value is a secret anywhere (its label
// in one line), every writing of it in every line is withheld: spaced,
// dashed, dotted, in full-width digits, in another letter case, with no
// label at all; and a form's field that asks for a secret makes the value
// after its label one. Ordinary numbers (a phone, a date, a year, a
// longer number that holds the digits) are kept.
func TestSecretsEveryWriting(t *testing.T) {
	texts := []string{
		"Passport: 571903346",
		"Travel document 571903346, valid to 2031",
		"Booked with document 571 903 346 on 2026-01-15",
		"ref 571-903-346 / copy 571.903.346",
		"Scan: ５７１９０３３４６",
		"Passport No: X1234567 issued in Lisbon",
		"old booking x-1234567 and order 81234567",
		"Card 4111 1111 1111 1111; paid with 4111-1111-1111-1111",
		"Loyalty card no. 99887766",
		"Points statement for 99-887-766",
		"PIN 4821",
		"Room 4821, code ab4821, box 148210",
		"Phone: +44 20 7946 0958, born 4 March 1987",
		"Licence no. 88123456 2031",
		"renewal of 88123456",
	}
	s := Collect(texts, []Labelled{{Label: "Loyalty card no. (on the back)", Kind: SecretCard}})
	var out []string
	for _, tx := range texts {
		red, _ := s.Redact(tx)
		out = append(out, red)
	}
	all := strings.Join(out, "\n")
	squeezed := squeeze(all)
	for _, secret := range []string{"571903346", "1234567", "4111111111111111", "99887766", "4821", "88123456"} {
		// "81234567" and "148210" stay: the digits of a longer number.
		rest := strings.NewReplacer("81234567", "", "148210", "", "ab4821", "").Replace(squeezed)
		if strings.Contains(rest, secret) {
			t.Errorf("%s left in:\n%s", secret, all)
		}
	}
	for _, kept := range []string{"valid to 2031", "2026-01-15", "order 81234567", "code ab4821", "box 148210", "+44 20 7946 0958", "4 March 1987", "Lisbon"} {
		if !strings.Contains(all, kept) {
			t.Errorf("%q was withheld:\n%s", kept, all)
		}
	}
	if !strings.Contains(out[1], "[withheld: passport number]") || !strings.Contains(out[9], "[withheld: card number]") {
		t.Errorf("kinds:\n%s", all)
	}
	for v, want := range map[string]string{"571-903-346": SecretPassport, "X 1234567": SecretPassport, "Ana Silva": "", "2031": "", "9988776": SecretCard} {
		if got := s.Holds(v); got != want {
			t.Errorf("Holds(%q) = %q, want %q", v, got, want)
		}
	}
}

// squeeze keeps s's letters and digits, lower case, full-width digits as
// ASCII: the form in which a secret is looked for in any separator form.
func squeeze(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '０' && r <= '９':
			b.WriteRune('0' + r - '０')
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		}
	}
	return b.String()
}

// TestLabelledValues: the value after a secret's label, in the languages
// the rules read, ends where the value does (not at the next word), and
// a label followed by a year, a date or a word is not a value.
func TestLabelledValues(t *testing.T) {
	for _, c := range []struct {
		text, value, kind string
	}{
		{"Travel document 571903346, valid to 2031", "571903346", SecretPassport},
		{"Reisepass-Nr.: C01X00T47 gültig bis 2030", "C01X00T47", SecretPassport},
		{"Numéro de police : 88 812 334-A", "88 812 334-A", SecretInsurance},
		{"Nº de póliza 4471-2290", "4471-2290", SecretInsurance},
		{"Polisnummer: AB-123456", "AB-123456", SecretInsurance},
		{"Codice fiscale RSSMRA85T10A562S", "RSSMRA85T10A562S", SecretTax},
		{"BSN 123456782", "123456782", SecretNationalID},
		{"ID: 12 34 56 78", "12 34 56 78", SecretNationalID},
		{"Passwort: Tr0ub4dor&3.", "Tr0ub4dor&3", SecretPassword},
		{"CVV 737", "737", SecretCardCode},
		{"Policyholder no. PH-7781-22", "PH-7781-22", SecretInsurance},
		{"Führerschein B072RRE2I55", "B072RRE2I55", SecretLicence},
	} {
		fs := Values(c.text)
		found := false
		for _, f := range fs {
			if c.text[f.Start:f.End] == c.value && f.Kind == c.kind {
				found = true
			}
		}
		if !found {
			var got []string
			for _, f := range fs {
				got = append(got, f.Kind+"="+c.text[f.Start:f.End])
			}
			t.Errorf("%q: %v, want %s=%q", c.text, got, c.kind, c.value)
		}
	}
	for _, text := range []string{
		"Order ID: 5551234", "Passport holder since 2019", "Your password must be 8 characters long",
		"Health insurance: Example Mutual", "Member since 2014", "Insurance valid to 2027-12-31", "Policy renewed 12/05/2025",
	} {
		if fs := Values(text); len(fs) > 0 {
			t.Errorf("%q: %+v", text, fs)
		}
	}
}
