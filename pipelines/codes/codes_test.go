package codes_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"boxd/pipelines/codes"
)

var (
	loadOnce sync.Once
	loaded   *codes.Tables
	loadErr  error
)

// tables loads the real tables from $BOXD_TEST_DATA (the Makefile sets it to
// ../shared/data): skipped when absent, a failure under CI=true.
func tables(t *testing.T) *codes.Tables {
	t.Helper()
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(dir, codes.ICD10CMFile)); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("reference data missing (CI=true; set BOXD_TEST_DATA to the shared data directory): %v", err)
		}
		t.Skipf("reference data not available (set BOXD_TEST_DATA to the shared data directory): %v", err)
	}
	loadOnce.Do(func() { loaded, loadErr = codes.Load(dir) })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded
}

func TestLoadCountsMatchTheManifest(t *testing.T) {
	tb := tables(t)
	icd, rx := tb.Counts()
	if icd != 74719 || rx != 39570 {
		t.Errorf("loaded %d ICD-10-CM codes and %d RxNorm concepts; the manifest says 74,719 and 39,570", icd, rx)
	}
}

func TestICD10CMLookupWithOrWithoutDot(t *testing.T) {
	tb := tables(t)
	for _, in := range []string{"E11.9", "E119", "e11.9", " E119 "} {
		d, ok := tb.ICD10CM(in)
		if !ok || d.Code != "E11.9" || d.Description != "Type 2 diabetes mellitus without complications" {
			t.Errorf("ICD10CM(%q) = %+v, %v", in, d, ok)
		}
	}
	if d, ok := tb.ICD10CM("I10"); !ok || d.Code != "I10" || d.Description != "Essential (primary) hypertension" {
		t.Errorf("I10: %+v %v", d, ok)
	}
	if d, ok := tb.ICD10CM("M17.11"); !ok || d.Description != "Unilateral primary osteoarthritis, right knee" {
		t.Errorf("M17.11: %+v %v", d, ok)
	}
	// The first and last lines of the file (no CR left on the description).
	if d, ok := tb.ICD10CM("A00.0"); !ok || d.Description != "Cholera due to Vibrio cholerae 01, biovar cholerae" {
		t.Errorf("A00.0: %+v %v", d, ok)
	}
	for _, bad := range []string{"E11", "E11.99", "Z99.999", "XYZ", "", "E1.19"} {
		if d, ok := tb.ICD10CM(bad); ok {
			t.Errorf("ICD10CM(%q) = %+v; want not found", bad, d)
		}
	}
	if !tb.ICD10CMCategory("E11") || !tb.ICD10CMCategory("E11.6") || tb.ICD10CMCategory("E11.9") || tb.ICD10CMCategory("E99") {
		t.Error("category checks: E11 and E11.6 head billable codes; E11.9 is itself billable; E99 does not exist")
	}
}

func TestFormatAndNormalizeICD(t *testing.T) {
	for in, want := range map[string]string{"E119": "E11.9", "e11.9": "E11.9", "A09": "A09", "S72001A": "S72.001A", "QA00101": "QA0.0101"} {
		if got := codes.FormatICD(in); got != want {
			t.Errorf("FormatICD(%q) = %q, want %q", in, got, want)
		}
	}
	if got := codes.NormalizeICD(" s72.001a "); got != "S72001A" {
		t.Errorf("NormalizeICD = %q", got)
	}
}

func TestRxNormLookupAndResolve(t *testing.T) {
	tb := tables(t)
	if d, ok := tb.RxCUI("6809"); !ok || d.Name != "metformin" || d.TTY != "IN" {
		t.Errorf("RxCUI 6809: %+v %v", d, ok)
	}
	if d, ok := tb.DrugByName("Metformin"); !ok || d.RxCUI != "6809" {
		t.Errorf("DrugByName(Metformin): %+v %v", d, ok)
	}
	cases := []struct {
		name, rxcui  string
		wantCUI, how string
	}{
		{"metformin", "", "6809", codes.ByName},
		{"Lisinopril", "999999999", "29046", codes.ByName},              // the name wins over a bad number
		{"", "5640", "5640", codes.ByRxCUI},                             // ibuprofen by number alone
		{"ibuprofen tablets", "5640", "5640", codes.ByRxCUI},            // the number agrees with the name
		{"lisinopril 10 mg daily", "", "29046", codes.ByIngredient},     // the ingredient inside a sig
		{"metformin 500 mg oral tablet", "", "861007", codes.ByProduct}, // metformin hydrochloride 500 MG Oral Tablet
		{"Metformin 500mg Oral Tablets", "", "861007", codes.ByProduct},
		{"metformin 500 milligrams", "", "6809", codes.ByIngredient}, // no form: ER or IR unknown
		{"nitrofurantoin 100 mg oral tablet", "", "311988", codes.ByName},
		{"nitrofurantoin 100 milligrams oral tablets", "", "311988", codes.ByProduct},
		{"semaglutide weekly injection", "6809", "1991302", codes.ByIngredient},
	}
	for _, c := range cases {
		d, how, reason := tb.Resolve(c.name, c.rxcui)
		if d.RxCUI != c.wantCUI || how != c.how {
			t.Errorf("Resolve(%q, %q) = %+v %q (%s); want %s by %s", c.name, c.rxcui, d, how, reason, c.wantCUI, c.how)
		}
	}
	for _, c := range []struct{ name, rxcui string }{
		{"zorbitrex", ""},     // made up
		{"zorbitrex", "6809"}, // a real number for another drug
		{"", "123456789"},     // a made-up number
		{"", ""},
	} {
		if d, how, reason := tb.Resolve(c.name, c.rxcui); how != "" || reason == "" {
			t.Errorf("Resolve(%q, %q) = %+v %q; want a rejection with a reason", c.name, c.rxcui, d, how)
		}
	}
}

func TestMentionsFindsSpokenIngredients(t *testing.T) {
	tb := tables(t)
	got := tb.Mentions("I take metformin twice a day, drink lots of water, and started insulin glargine. Metformin again.", 10)
	var names []string
	for _, d := range got {
		names = append(names, d.Name)
	}
	if len(names) != 2 || names[0] != "metformin" || names[1] != "insulin glargine" {
		t.Errorf("mentions %v; want [metformin insulin glargine] (water left out, metformin once)", names)
	}
}
