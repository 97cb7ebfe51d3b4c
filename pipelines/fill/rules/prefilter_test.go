package rules

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestScannerFindsWhatTheRuleFinds: the prefilter (a rule tried only
// where a word starts with a beginning its matches can have) finds every
// match the rule finds on the whole text, for every rule read in
// documents, over the labels, lines and sentences of the rules' tests.
func TestScannerFindsWhatTheRuleFinds(t *testing.T) {
	var corpus []string
	for _, c := range []string{
		"Passport No: X1234567; Member ID: ABC-99812; SSN 123-45-6789; Password: hunter22; PIN 4821; CVV 737",
		"Reisepass-Nr.: C01X00T47, Personalausweisnummer L01X00T47, Versichertennummer A123456780, Steuer-ID 12345678901",
		"Numéro de police : 88 812 334-A, Nº de póliza 4471-2290, numero di polizza 77-1, polisnummer AB-123456, número de utente 123456789",
		"Carte vitale 1 85 05 78 006 084 36, codice fiscale RSSMRA85T10A562S, burgerservicenummer 123456782, cartão de cidadão 12345678",
		"Kontonummer 1234567890, sort code 12-34-56, routing number 021000021, IBAN DE89370400440532013000, BLZ 37040044",
		"Travel document 571903346; driving licence SMITH801019AB9CD; Führerschein B072RRE2I55; permis de conduire 12AB34567",
		"the 16 digits on the front: 4111 1111 1111 1111; security code 123; cryptogramme visuel 456",
		"ID: 12 34 56 78\nid card no. 998877; national insurance QQ123456C; tax id 12-3456789",
	} {
		corpus = append(corpus, foldText(c).s)
	}
	// The sentences planted for package inject's tests (its planted set:
	// one a line, the sentence after the third tab).
	raw, err := os.ReadFile("inject/testdata/planted.txt")
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(raw), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) != 4 {
			t.Fatalf("inject/testdata/planted.txt:%d: %q", i+1, l)
		}
		corpus = append(corpus, foldText(f[3]).s)
	}
	checked := 0
	for _, sc := range lineScanners() {
		if sc.starts == nil {
			continue
		}
		checked++
		for _, text := range corpus {
			found := map[int]bool{}
			for _, m := range sc.findAll(text) {
				found[m[0]] = true
			}
			for _, m := range sc.re.FindAllStringIndex(text, -1) {
				if !found[m[0]] {
					t.Errorf("%s: the rule finds %q at %d in %q; the scanner does not", sc.kind, text[m[0]:m[1]], m[0], text)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d rules have a prefilter", checked)
	}
	// Beginnings worked out from expressions.
	for re, want := range map[string][]string{
		`\b(pass ?(word|port)|pin)\b`: {"pas", "pin"},
		`\bab(c|d)?e`:                 {"abc", "abd", "abe"},
		`\b(x[0-9]+|yz)`:              {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "yz"},
	} {
		sc := newScanner(regexp.MustCompile(re))
		got := map[string]bool{}
		for _, m := range sc.starts {
			for s := range m {
				got[s] = true
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", re, got, want)
		}
		for _, w := range want {
			if !got[w] {
				t.Errorf("%s: %v, want %v", re, got, want)
			}
		}
	}
	if sc := newScanner(regexp.MustCompile(`(^|x)id`)); sc.starts != nil {
		t.Error("a rule that may start anywhere has no prefilter")
	}
}
