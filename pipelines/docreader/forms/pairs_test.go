package forms

import (
	"slices"
	"testing"

	"boxd/engine/raster"
)

// TestPairs: lines on one baseline across a gutter pair when the first
// is a label, a number, or the second a page number; two columns of
// prose, or of a short list, do not.
func TestPairs(t *testing.T) {
	row := func(y float64, left, right string, lr, rr int) []TextLine {
		return []TextLine{{Box: raster.Box{X0: 100, Y0: y, X1: 100 + 8*float64(len(left)), Y1: y + 20}, Text: left, Region: lr},
			{Box: raster.Box{X0: 600, Y0: y, X1: 600 + 8*float64(len(right)), Y1: y + 20}, Text: right, Region: rr}}
	}
	cases := []struct {
		name   string
		rows   [][2]string
		paired bool
	}{
		{"labels", [][2]string{{"Name:", "Maria Gonzalez"}, {"Date of birth:", "12/03/1968"}, {"Room:", "12B"}}, true},
		{"numbers", [][2]string{{"[1]", "Smith J. Waiting times."}, {"2.", "Okafor S. Referral rates."}}, true},
		{"contents", [][2]string{{"1 Introduction", "1"}, {"2 Background", "iv"}}, true},
		{"prose", [][2]string{{"the committee reviewed the quarterly figures of each office", "staffing levels remained broadly stable although two sites"}, {"and compared them with the previous period as follows:", "reported delays in recruitment that affected the work"}}, false},
		{"short list", [][2]string{{"Current medication:", "Allergies:"}, {"lisinopril 10 mg daily,", "penicillin (rash),"}, {"atorvastatin 20 mg nightly.", "no known food allergies."}}, false},
		{"two labels", [][2]string{{"Name:", "Ward:"}}, false},
	}
	for _, c := range cases {
		for _, oneRegion := range []bool{false, true} {
			var lines []TextLine
			for i, r := range c.rows {
				lr, rr := 2*i, 2*i+1
				if oneRegion {
					lr, rr = 0, 1
				}
				lines = append(lines, row(40*float64(i), r[0], r[1], lr, rr)...)
			}
			got := Pairs(lines, false)
			for i := 0; i < len(got); i += 2 {
				if paired := got[i] >= 0 && got[i] == got[i+1]; paired != c.paired {
					t.Errorf("%s (one region a column: %v): row %d paired %v, want %v (%v)", c.name, oneRegion, i/2, paired, c.paired, got)
				}
			}
			if c.paired && slices.Contains(got, -1) {
				t.Errorf("%s: %v", c.name, got)
			}
		}
	}
}
