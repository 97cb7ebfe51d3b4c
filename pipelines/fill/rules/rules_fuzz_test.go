package rules

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkSpans checks found spans against their text: kinds named, in
// bounds, on UTF-8 boundaries, and (sorted) not overlapping.
func checkSpans(t *testing.T, text string, fs []Found, sorted bool) {
	t.Helper()
	for i, f := range fs {
		if f.Kind == "" || f.Start < 0 || f.Start >= f.End || f.End > len(text) {
			t.Fatalf("span %+v in %d bytes", f, len(text))
		}
		if (f.Start < len(text) && !utf8.RuneStart(text[f.Start])) || (f.End < len(text) && !utf8.RuneStart(text[f.End])) {
			t.Fatalf("span %+v cuts a character of %q", f, text)
		}
		if sorted && i > 0 && f.Start < fs[i-1].End {
			t.Fatalf("spans %+v and %+v overlap", fs[i-1], f)
		}
	}
}

// FuzzSecrets: the secret rules over a source's text and a field's label
// (both the caller's) never panic and are deterministic; the values
// found lie on character boundaries of the text; redaction replaces
// exactly the merged spans it reports with [withheld: kind], and the set
// holds every value it found.
func FuzzSecrets(f *testing.F) {
	for _, s := range [][2]string{
		{"Card: 4111 1111 1111 1111, exp 12/29\nIBAN DE89 3704 0044 0532 0130 00", "Card number"},
		{"Passport No: 571903346\nTravel document 571 903 346", "Passport number"},
		{"SSN 078-05-1120 routing 021000021", "Social security number"},
		{"Reisepass: C01X00T47\nnuméro de police: AB-12-34", "Reisepassnummer"},
		{"Password:\nhunter2hunter2", "Password"},
		{"ID: 1234567 81234567", "ID (for age check)"},
		{"Kontonummer: DE89370400440532013000 ", "IBAN"},
		{"Ｃａｒｄ： ４１１１１１１１１１１１１１１１", "ﬁeld"},
		{"\xff\xfeSSN: 078-05-1120\u200b", "s\u0307sn"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, text, label string) {
		vs := Values(text)
		if !reflect.DeepEqual(vs, Values(text)) {
			t.Fatal("Values is not deterministic")
		}
		checkSpans(t, text, vs, false)
		s := Collect([]string{text}, []Labelled{{Label: label, Kind: SecretPassport}})
		red, merged := s.Redact(text)
		red2, merged2 := s.Redact(text)
		if red != red2 || !reflect.DeepEqual(merged, merged2) {
			t.Fatal("Redact is not deterministic")
		}
		checkSpans(t, text, merged, true)
		var b strings.Builder
		last := 0
		for _, m := range merged {
			b.WriteString(text[last:m.Start] + "[withheld: " + m.Kind + "]")
			last = m.End
		}
		b.WriteString(text[last:])
		if b.String() != red {
			t.Fatalf("redacted %q to %q; its spans say %q", text, red, b.String())
		}
		for _, v := range vs {
			if s.Holds(text[v.Start:v.End]) == "" {
				t.Fatalf("found %q (%s) but the set does not hold it", text[v.Start:v.End], v.Kind)
			}
		}
		if plain, _ := Redact(text); plain == "" && text != "" {
			t.Fatalf("Redact(%q) is empty", text)
		}
		_ = FieldSecret("text", label, SplitName(label))
		_ = Fold(label)
	})
}
