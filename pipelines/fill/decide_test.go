package fill

import (
	"strings"
	"testing"

	"boxd/pipelines/fill/form"
	"boxd/pipelines/fill/rules"
)

func TestLines(t *testing.T) {
	ls, err := Lines([]Source{{Name: "letter.txt", Text: "Dear Ana,\n\n  Your   appointment\fPage two line\n" + strings.Repeat("x", 1200)}, {Name: "id.txt", Text: "Ana Silva"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Line{{"letter.txt", 1, 1, "Dear Ana,"}, {"letter.txt", 1, 2, "Your appointment"}, {"letter.txt", 2, 3, "Page two line"},
		{"letter.txt", 2, 4, strings.Repeat("x", 500)}, {"letter.txt", 2, 5, strings.Repeat("x", 500)}, {"letter.txt", 2, 6, strings.Repeat("x", 200)}, {"id.txt", 1, 1, "Ana Silva"}}
	if len(ls) != len(want) {
		t.Fatalf("%d lines: %+v", len(ls), ls)
	}
	for i := range want {
		if ls[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, ls[i], want[i])
		}
	}
	if _, err := Lines(make([]Source, 9)); err == nil {
		t.Error("nine sources")
	}
	if got := (Line{Doc: "card.txt", N: 2, Text: "Card 4111 1111 1111 1111 for Ana"}).ForModel(); strings.Contains(got, "4111") || !strings.Contains(got, "[withheld: card number]") || !strings.HasPrefix(got, "[card.txt:2]") {
		t.Errorf("for the model: %s", got)
	}
}

// TestDecide: a checkout, a registration and a clinic intake filled from
// one patient's documents: every typed value cites a line holding it (as
// written, or the same date or phone number written another way); the
// select takes the option its line names; secrets are never typed, even
// when the model proposes them; a value its line does not hold, or a line
// that does not exist, is blocked; a field no line answers is left.
func TestDecide(t *testing.T) {
	lines, err := Lines([]Source{
		{Name: "referral.txt", Text: "Patient: Ana Silva\nDOB: 4 March 1987\nTel. +351 21 123 4567\nAddress: Rua das Flores 12, 1200-195 Lisboa, Portugal\nAllergies: penicillin\nInsurance member ID: PT-99812-X"},
		{Name: "wallet.txt", Text: "Card 4111 1111 1111 1111\nAmount due: €1.234,50"},
	})
	if err != nil {
		t.Fatal(err)
	}
	fields := []Field{
		{FID: "f1", Label: "First name", Kind: form.KindGivenName},
		{FID: "f2", Label: "Last name", Kind: form.KindFamilyName},
		{FID: "f3", Label: "Date of birth", Kind: form.KindBirthDate},
		{FID: "f4", Label: "Phone", Kind: form.KindPhone},
		{FID: "f5", Label: "Country", Kind: form.KindCountry, Options: []Option{{Value: "", Text: "Choose"}, {Value: "PT", Text: "Portugal"}, {Value: "ES", Text: "Spain"}}},
		{FID: "f6", Label: "Allergies", Kind: form.KindAllergy},
		{FID: "f7", Label: "Member ID", Secret: rules.SecretInsurance, Kind: form.KindSecret},
		{FID: "f8", Label: "Notes", Kind: form.KindText},
		{FID: "f9", Label: "Amount", Kind: form.KindAmount},
		{FID: "f10", Label: "City", Kind: form.KindCity},
		{FID: "f11", Label: "Email", Kind: form.KindEmail},
		{FID: "f12", Label: "Postal code", Kind: form.KindPostalCode},
		{FID: "f13", Label: "Comments", Kind: form.KindText},
	}
	props := []Proposal{
		{"f1", "referral.txt", 1, "Ana"},
		{"f2", "referral.txt", 1, "Silva"},
		{"f3", "referral.txt", 2, "04/03/1987"},
		{"f4", "referral.txt", 3, "021 123 4567"},
		{"f5", "referral.txt", 4, "Portugal"},
		{"f6", "referral.txt", 5, "penicillin and latex"}, // more than the line says
		{"f7", "referral.txt", 6, "PT-99812-X"},           // a secret field
		{"f8", "wallet.txt", 1, "4111 1111 1111 1111"},    // a secret value in an ordinary field
		{"f9", "wallet.txt", 2, "1234.50"},
		{"f10", "referral.txt", 9, "Lisboa"}, // no such line
		{"f11", "", 0, ""},                   // nothing answers it
		{"f12", "referral.txt", 4, "1200-195"},
	}
	got := map[string]Decided{}
	for _, d := range Decide(fields, lines, props, rules.Hints{DateOrder: "dmy"}) {
		got[d.FID] = d
		if d.Filled && (d.Source == nil || d.Value == "") {
			t.Errorf("%s filled without a source: %+v", d.FID, d)
		}
		if d.Filled && d.Status == StatusSourced {
			if ok, _ := rules.Supports(d.Source.Text, d.Value, rules.Hints{DateOrder: "dmy"}); !ok {
				t.Errorf("%s typed %q, which its line %q does not hold", d.FID, d.Value, d.Source.Text)
			}
		}
		if d.Filled && len(rules.Values(d.Value)) > 0 {
			t.Errorf("%s: a secret typed: %q", d.FID, d.Value)
		}
	}
	for fid, want := range map[string]string{
		"f1": StatusSourced + " literal Ana", "f2": StatusSourced + " literal Silva", "f3": StatusSourced + " date 04/03/1987",
		"f4": StatusSourced + " phone 021 123 4567", "f5": StatusChosen + " literal PT", "f6": StatusBlocked + "  ",
		"f7": StatusSensitive + "  ", "f8": StatusSensitive + "  ", "f9": StatusSourced + " amount 1234.50", "f10": StatusBlocked + "  ",
		"f11": StatusLeft + "  ", "f12": StatusSourced + " literal 1200-195", "f13": StatusLeft + "  ",
	} {
		d := got[fid]
		if s := d.Status + " " + d.How + " " + d.Value; s != want {
			t.Errorf("%s: %q (%s), want %q", fid, s, d.Why, want)
		}
	}
}
