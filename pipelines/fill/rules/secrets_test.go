package rules

import (
	"strings"
	"testing"
)

func TestChecksums(t *testing.T) {
	for _, c := range []struct {
		d    string
		card bool
	}{
		{"4111111111111111", true}, {"5500000000000004", true}, {"378282246310005", true}, {"6011111111111117", true},
		{"2223003122003222", true}, {"4111111111111112", false}, {"1234567812345670", false}, // Luhn-valid, no network
		{"442079460958", false},
	} {
		if got := CardNumber(c.d); got != c.card {
			t.Errorf("card %s: %v", c.d, got)
		}
	}
	for iban, ok := range map[string]bool{"GB82 WEST 1234 5698 7654 32": true, "DE89370400440532013000": true, "FR1420041010050500013M02606": true,
		"GB82 WEST 1234 5698 7654 33": false, "DE89370400440532013001": false, "XX00": false} {
		if IBANValid(iban) != ok {
			t.Errorf("IBAN %s: %v", iban, !ok)
		}
	}
	for aba, ok := range map[string]bool{"011000015": true, "021000021": true, "123456789": false, "000000000": false, "02100002": false} {
		if ABAValid(aba) != ok {
			t.Errorf("ABA %s: %v", aba, !ok)
		}
	}
}

// TestFieldSecret: fields that ask for a secret, by label, name,
// autocomplete or type, in several wordings; ordinary fields do not.
func TestFieldSecret(t *testing.T) {
	for _, c := range []struct {
		typ  string
		desc []string
		want string
	}{
		{"password", []string{"Choose something"}, SecretPassword},
		{"text", []string{"PIN"}, SecretPassword},
		{"text", []string{"", "cardNumber"}, SecretCard},
		{"text", []string{"Card number"}, SecretCard},
		{"text", []string{"", "", "cc-number"}, SecretCard},
		{"text", []string{"CVV"}, SecretCardCode},
		{"text", []string{"Security code (3 digits on the back)"}, SecretCardCode},
		{"text", []string{"IBAN"}, SecretIBAN},
		{"text", []string{"Routing number"}, SecretRouting},
		{"text", []string{"Sort code"}, SecretRouting},
		{"text", []string{"Bank account number"}, SecretBank},
		{"text", []string{"Social Security Number"}, SecretSSN},
		{"text", []string{"", "ssn"}, SecretSSN},
		{"text", []string{"Tax ID (TIN)"}, SecretTax},
		{"text", []string{"Steuer-ID"}, SecretTax},
		{"text", []string{"Passport number"}, SecretPassport},
		{"text", []string{"Driver's licence"}, SecretLicence},
		{"text", []string{"Driving license number"}, SecretLicence},
		{"text", []string{"National ID"}, SecretNationalID},
		{"text", []string{"Insurance member ID"}, SecretInsurance},
		{"text", []string{"Health insurance"}, SecretInsurance},
		{"text", []string{"Medicare number"}, SecretInsurance},
		{"text", []string{"Signature"}, SecretSignature},
		{"checkbox", []string{"I hereby declare that the above is true"}, SecretDeclaration},
		{"text", []string{"First name"}, ""},
		{"email", []string{"Email address"}, ""},
		{"tel", []string{"Phone"}, ""},
		{"text", []string{"Date of birth"}, ""},
		{"text", []string{"Street address"}, ""},
		{"text", []string{"Company"}, ""},
		{"text", []string{"Order notes"}, ""},
	} {
		if got := FieldSecret(c.typ, c.desc...); got != c.want {
			t.Errorf("%s %v: %q, want %q", c.typ, c.desc, got, c.want)
		}
	}
}

// TestValuesAndRedact: secret values in a document are found by pattern
// and checksum or by the label before them, and redacted; numbers that
// only look like them (a phone, an order number, a date) are not.
func TestValuesAndRedact(t *testing.T) {
	doc := `Name: Ana Silva
Card: 4111 1111 1111 1111, exp 09/28
IBAN GB82 WEST 1234 5698 7654 32
Routing number: 021000021
SSN 123-45-6789
Passport No: X1234567
Member ID: ABC-99812
Phone: +44 20 7946 0958
Order 1234567812345670 shipped 2026-01-15
Password: hunter22`
	red, fs := Redact(doc)
	kinds := map[string]bool{}
	for _, f := range fs {
		kinds[f.Kind] = true
	}
	for _, k := range []string{SecretCard, SecretIBAN, SecretRouting, SecretSSN, SecretPassport, SecretInsurance, SecretPassword} {
		if !kinds[k] {
			t.Errorf("%s not found: %+v", k, fs)
		}
	}
	for _, secret := range []string{"4111 1111 1111 1111", "GB82 WEST", "021000021", "123-45-6789", "X1234567", "ABC-99812", "hunter22"} {
		if strings.Contains(red, secret) {
			t.Errorf("%q left in:\n%s", secret, red)
		}
	}
	for _, kept := range []string{"Ana Silva", "+44 20 7946 0958", "1234567812345670", "2026-01-15", "exp 09/28"} {
		if !strings.Contains(red, kept) {
			t.Errorf("%q was redacted:\n%s", kept, red)
		}
	}
}
