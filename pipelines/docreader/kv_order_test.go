package docreader

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// kvLabels and kvValues are a flattened form's printed rows.
var (
	kvLabels = []string{"Patient name:", "Date of birth:", "MRN:", "Phone:", "Insurance ID:", "Primary physician:", "Visit date:", "Room:"}
	kvValues = []string{"Maria Gonzalez", "12/03/1968", "00482913", "555-0187", "XKG-204-88", "Dr. Helen Park", "04/11/2024", "12B"}
)

// longProse is a line of prose of ten words.
func longProse(side string, para, l int) string {
	return fmt.Sprintf("%s paragraph %d line %d holds ten words in all", side, para, l)
}

// TestPrintedRowsReadingOrder: printed rows whose two sides are apart
// across a gutter, with no widgets (a flattened form, a letter's
// reference block, a contents page without dot leaders, numbered
// references), are read row by row, left side then right; a letter's
// date at the right is read where it stands, before the address under
// it; two columns of prose whose baselines line up stay two columns.
func TestPrintedRowsReadingOrder(t *testing.T) {
	type kvCase struct {
		name  string
		text  []printed
		order []string    // in this order in the page's text
		pairs [][2]string // the first's element, then the second's, next
	}
	var cases []kvCase
	{ // Eight rows, labels at the left, values far right.
		c := kvCase{name: "printed form, a wide gap"}
		for i := range kvLabels {
			y := 680 - 18*float64(i)
			c.text = append(c.text, printed{72, y, kvLabels[i]}, printed{250, y, kvValues[i]})
			c.order = append(c.order, kvLabels[i], kvValues[i])
			c.pairs = append(c.pairs, [2]string{kvLabels[i], kvValues[i]})
		}
		c.text = append(c.text, printed{72, 500, "Please bring this summary to every visit."})
		c.order = append(c.order, "Please bring")
		cases = append(cases, c)
	}
	{ // A letter: the sender right, a reference block under it, the
		// recipient left.
		c := kvCase{name: "a letter's reference block"}
		y := 720.0
		for _, s := range []string{"Harbour Medical Group", "14 Quay Street", "Portsmouth PO1 3AX"} {
			c.text = append(c.text, printed{380, y, s})
			y -= 13
		}
		y -= 20
		for _, kv := range [][2]string{{"Date:", "21 March 2024"}, {"Our ref:", "HMG/2024/117"}, {"Your ref:", "AR/55"}} {
			c.text = append(c.text, printed{380, y, kv[0]}, printed{450, y, kv[1]})
			c.pairs = append(c.pairs, kv)
			c.order = append(c.order, kv[0], kv[1])
			y -= 13
		}
		y -= 20
		for _, s := range []string{"Ms. Ann Reynolds", "22 Elm Road", "Southsea PO4 0LT"} {
			c.text = append(c.text, printed{72, y, s})
			y -= 13
		}
		c.text = append(c.text, printed{72, y - 20, "Dear Ms. Reynolds,"})
		c.order = append([]string{"Harbour Medical Group"}, append(c.order, "Ms. Ann Reynolds", "Dear Ms. Reynolds,")...)
		cases = append(cases, c)
	}
	{ // A letter's date alone at the right, above the address at the left.
		c := kvCase{name: "a letter's date",
			text: []printed{{400, 720, "Harbour Medical Group"}, {400, 707, "14 Quay Street"}, {400, 694, "Portsmouth PO1 3AX"},
				{400, 660, "21 March 2024"},
				{72, 630, "Ms. Ann Reynolds"}, {72, 617, "22 Elm Road"}, {72, 604, "Southsea PO4 0LT"},
				{72, 580, "Dear Ms. Reynolds,"}},
			order: []string{"Harbour Medical Group", "21 March 2024", "Ms. Ann Reynolds", "Dear Ms. Reynolds,"}}
		cases = append(cases, c)
	}
	{ // Contents without dot leaders: the page numbers far right.
		c := kvCase{name: "contents without dots"}
		toc := [][2]string{{"1 Introduction", "1"}, {"2 Background", "3"}, {"2.1 Scope of the review", "4"}, {"2.2 Data sources", "7"},
			{"3 Methods", "9"}, {"4 Results", "14"}, {"5 Discussion", "22"}, {"6 Recommendations", "27"}, {"References", "31"}}
		for i, e := range toc {
			y := 680 - 20*float64(i)
			c.text = append(c.text, printed{72, y, e[0]}, printed{530, y, e[1]})
			c.order = append(c.order, e[0], e[1])
			c.pairs = append(c.pairs, e)
		}
		cases = append(cases, c)
	}
	{ // Numbered references: the number, then its entry.
		c := kvCase{name: "numbered references"}
		refs := []string{"Smith J, Jones K. Waiting times in community clinics. BMJ 2019.", "Okafor S. Measuring referral rates. Health Serv Res 2020.",
			"Lind K, Chen M. Staff retention after reorganisation. 2021.", "Patel A. Costs of outpatient care in 2022. OHE, 2023.",
			"Dubois R et al. Twelve-month outcomes of early discharge. 2022."}
		for i, r := range refs {
			y := 680 - 16*float64(i)
			n := fmt.Sprintf("[%d]", i+1)
			c.text = append(c.text, printed{72, y, n}, printed{96, y, r})
			c.order = append(c.order, n, r)
			c.pairs = append(c.pairs, [2]string{n, r})
		}
		cases = append(cases, c)
	}
	{ // Two columns of prose, baselines aligned, long lines; one left line
		// ends in a colon.
		c := kvCase{name: "two prose columns, aligned"}
		y := 700.0
		for para := range 3 {
			for l := range 4 {
				left := longProse("Left", para+1, l+1)
				if para == 1 && l == 3 {
					left = "Left paragraph 2 line 4 ends as follows:"
				}
				c.text = append(c.text, printed{54, y, left}, printed{320, y, longProse("Right", para+1, l+1)})
				y -= 12
			}
			y -= 14
		}
		c.order = []string{"Left paragraph 1 line 1", "Left paragraph 2 line 4", "Left paragraph 3 line 4", "Right paragraph 1 line 1", "Right paragraph 3 line 4"}
		cases = append(cases, c)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, pages := read(t, &reader{}, formPDF(c.text, nil))
			var texts []string
			for _, e := range pages[0].Elements {
				texts = append(texts, e.Text)
			}
			dump := strings.Join(texts, "\n")
			joined := strings.Join(texts, " | ")
			last := -1
			for _, s := range c.order {
				i := strings.Index(joined, s)
				if i < 0 || i < last {
					t.Fatalf("reading order:\n%s\nwant %q after position %d", dump, s, last)
				}
				last = i
			}
			at := func(s string) int {
				if i := slices.Index(texts, s); i >= 0 {
					return i
				}
				return slices.IndexFunc(texts, func(e string) bool { return strings.Contains(e, s) })
			}
			for _, p := range c.pairs {
				l, v := at(p[0]), at(p[1])
				if l < 0 || v != l+1 && !strings.Contains(texts[l], p[0]+" "+p[1]) {
					t.Errorf("%q at %d, %q at %d; want the second next:\n%s", p[0], l, p[1], v, dump)
				}
			}
		})
	}
}

// TestPrintedLabelFields: with forms, a flattened form's printed
// "Label:" and the value printed far right of it on its baseline are a
// layout field, tied to the element holding the value; two prose
// columns give none.
func TestPrintedLabelFields(t *testing.T) {
	var text []printed
	for i := range kvLabels {
		y := 680 - 18*float64(i)
		text = append(text, printed{72, y, kvLabels[i]}, printed{250, y, kvValues[i]})
	}
	rd := &reader{forms: true}
	_, pages := read(t, rd, formPDF(text, nil))
	got := map[string]Field{}
	for _, f := range rd.fields {
		if f.Source == FieldLayout {
			got[f.Name] = f
		}
	}
	for i, l := range kvLabels {
		name := strings.TrimSuffix(l, ":")
		f, ok := got[name]
		if !ok {
			t.Errorf("no field %q among %v", name, rd.fields)
			continue
		}
		if f.Value != kvValues[i] || elementText(pages[0], f.Element) != kvValues[i] || f.ValueIn != ValueInElement {
			t.Errorf("field %q = %q tied to %q (%s); want %q", name, f.Value, elementText(pages[0], f.Element), f.ValueIn, kvValues[i])
		}
	}
	if len(got) != len(kvLabels) {
		t.Errorf("%d layout fields, want %d: %v", len(got), len(kvLabels), rd.fields)
	}

	var prose []printed
	for l := range 6 {
		y := 700 - 12*float64(l)
		prose = append(prose, printed{54, y, longProse("Left", 1, l+1)}, printed{320, y, longProse("Right", 1, l+1)})
	}
	rd = &reader{forms: true}
	read(t, rd, formPDF(prose, nil))
	if len(rd.fields) != 0 {
		t.Errorf("prose columns gave fields: %v", rd.fields)
	}
}
