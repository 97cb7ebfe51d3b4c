package chart

import (
	"encoding/json"
	"strings"
	"testing"

	"boxd/pipelines/docreader/exact/exacttest"
)

// TestChartNumbersAsWritten: a chart's decimals verify only as the box
// wrote them: 169.5, not 169.50 or 1.695e2 (refused, naming the field);
// 1e-7 (encoding/json's spelling, which attest.Canonical signs), not
// 0.0000001; and -0 for 0 fails the table check (the signed hash covers
// the text). Before, every spelling of the same value verified.
func TestChartNumbersAsWritten(t *testing.T) {
	k := key(4)
	median, printed, hr := 169.5, 0.0, 1e-7
	var r Result
	exacttest.Fill(&r, "Receipt")
	r.Chart.Series[0].Median = &median
	r.Chart.Series[0].PrintedMedian = &printed
	r.Chart.HazardRatio.Value = hr
	if err := Sign(k, &r, Revisions{Chart: Revision, OCR: "tesseract"}, true); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := chartVerified(raw, k.PublicKey()); !ok {
		t.Fatalf("the signed result does not verify: %s", why)
	}
	for _, c := range []struct {
		key, written string
		others       []string
		why          string // the reason's start; "" for the spelling refused at the path
	}{
		{"median", "169.5", []string{"169.50", "1.695e2", "1.695E+2", "1695e-1", "169.5e0"}, ""},
		{"printed_median", "0", []string{"0.0", "0e0", "0E-3"}, ""},
		{"printed_median", "0", []string{"-0"}, "table:"},
		{"value", "1e-7", []string{"0.0000001", "1e-07", "1E-7", "1.0e-7"}, ""},
	} {
		field := `"` + c.key + `":` + c.written + `,`
		if strings.Count(string(raw), field) != 1 {
			t.Fatalf("%s is not in the result once", field)
		}
		for _, o := range c.others {
			sent := strings.Replace(string(raw), field, `"`+c.key+`":`+o+`,`, 1)
			want := c.why
			if want == "" {
				want = "chart.chart." + map[string]string{"median": "series[0].median", "printed_median": "series[0].printed_median", "value": "hazard_ratio.value"}[c.key] +
					" is written " + o + " where the box writes " + c.written
			}
			if ok, why := chartVerified([]byte(sent), k.PublicKey()); ok || !strings.HasPrefix(why, want) {
				t.Errorf("%s for %s: %v %s, want %s", o, c.written, ok, why, want)
			}
		}
	}
}
