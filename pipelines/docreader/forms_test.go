package docreader

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"slices"
	"strings"
	"testing"

	"boxd/pipelines/docreader/samples"
)

// pdfObjects writes a PDF from its objects (numbered from 1, the first
// the catalog) with a correct cross-reference table: the forms tests
// need an AcroForm, which the PDF generator used elsewhere cannot write.
func pdfObjects(objs []string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

func pdfStream(dict, data string) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// intakeForm is a one-page PDF form: printed labels, a filled text field
// (its appearance shows the value), a ticked required check box, a text
// field holding a value but no appearance, a password field, and a
// printed "Clinic: ..." line outside any field.
func intakeForm() []byte {
	const font = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
	content := "BT /F1 10 Tf 54 696 Td (Patient name:) Tj ET\n" +
		"BT /F1 10 Tf 54 654 Td (Consent given:) Tj ET\n" +
		"BT /F1 10 Tf 54 616 Td (Date of birth:) Tj ET\n" +
		"BT /F1 10 Tf 54 576 Td (Portal password:) Tj ET\n" +
		"BT /F1 10 Tf 54 520 Td (Clinic: Lakeside Family Clinic) Tj ET"
	return pdfObjects([]string{
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [5 0 R 6 0 R 7 0 R 12 0 R] /DA (/Helv 10 Tf 0 g) /DR << /Font << /Helv 4 0 R >> >> >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 8 0 R /Resources << /Font << /F1 4 0 R >> >> /Annots [5 0 R 6 0 R 7 0 R 12 0 R] >>",
		font,
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (patient_name) /TU (Patient name) /V (Jordan Sample) /Rect [150 690 350 710] /P 3 0 R /F 4 /DA (/Helv 10 Tf 0 g) /AP << /N 9 0 R >> >>",
		"<< /Type /Annot /Subtype /Widget /FT /Btn /T (consent) /V /Yes /AS /Yes /Ff 2 /Rect [150 650 164 664] /P 3 0 R /F 4 /AP << /N << /Yes 10 0 R /Off 11 0 R >> >> >>",
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (dob) /TU (Date of birth) /V (1961-04-12) /Rect [150 610 250 630] /P 3 0 R /F 4 /DA (/Helv 10 Tf 0 g) /AP << /N 13 0 R >> >>",
		pdfStream("", content),
		pdfStream("/Type /XObject /Subtype /Form /BBox [0 0 200 20] /Resources << /Font << /Helv 4 0 R >> >>", "/Tx BMC BT /Helv 10 Tf 0 g 2 6 Td (Jordan Sample) Tj ET EMC"),
		pdfStream("/Type /XObject /Subtype /Form /BBox [0 0 14 14]", "0 g 2 2 10 10 re f"),
		pdfStream("/Type /XObject /Subtype /Form /BBox [0 0 14 14]", "0 G 0.5 0.5 13 13 re S"),
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (portal_password) /V (hunter2secret) /Ff 8192 /Rect [150 570 300 590] /P 3 0 R /F 4 /DA (/Helv 10 Tf 0 g) /AP << /N 14 0 R >> >>",
		// The date field's appearance is empty: the value is in the form's
		// data, not on the page.
		pdfStream("/Type /XObject /Subtype /Form /BBox [0 0 100 20]", "/Tx BMC EMC"),
		pdfStream("/Type /XObject /Subtype /Form /BBox [0 0 150 20] /Resources << /Font << /Helv 4 0 R >> >>", "/Tx BMC BT /Helv 10 Tf 0 g 2 6 Td (*************) Tj ET EMC"),
	})
}

// TestAcroFormFields: a PDF form's fields with their names, labels,
// types, flags, values and boxes, each tied to the element under it;
// value_from says whether the page shows the value as text; a password
// field's value is withheld; printed "Label: value" lines outside the
// fields become layout fields.
func TestAcroFormFields(t *testing.T) {
	rd := &reader{forms: true}
	_, pages, err := rd.readFile(context.Background(), intakeForm(), MaxPages)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Field{}
	for _, f := range rd.fields {
		byName[f.Name] = f
		if f.Page != 1 || !strings.HasPrefix(f.ID, "p1-f") {
			t.Errorf("%s: page %d id %s", f.Name, f.Page, f.ID)
		}
	}
	elemText := func(id string) string {
		for _, e := range pages[0].Elements {
			if e.ID == id {
				return e.Text
			}
		}
		return ""
	}
	name := byName["patient_name"]
	if name.Type != "text" || name.Label != "Patient name" || name.Value != "Jordan Sample" || name.Source != FieldAcroForm ||
		name.ValueIn != ValueInElement || !strings.Contains(elemText(name.Element), "Jordan Sample") {
		t.Errorf("patient_name: %+v (element %q)", name, elemText(name.Element))
	}
	// The widget is 200 × 20 points at (150, 82) from the top: pixels × 2.
	if b := name.BBox; abs2(b[0]-300) > 1 || abs2(b[1]-164) > 1 || abs2(b[2]-400) > 1 || abs2(b[3]-40) > 1 {
		t.Errorf("patient_name box %v, want [300 164 400 40]", b)
	}
	if c := byName["consent"]; c.Type != "checkbox" || c.Value != "Yes" || !c.Required || c.ValueIn != ValueInFormData {
		t.Errorf("consent: %+v", c)
	}
	if d := byName["dob"]; d.Value != "1961-04-12" || d.ValueIn != ValueInFormData {
		t.Errorf("dob (no appearance): %+v", d)
	}
	if p := byName["portal_password"]; !p.Redacted || p.Value != "" {
		t.Errorf("password: %+v", p)
	}
	for _, f := range rd.fields {
		if strings.Contains(f.Value, "hunter2") {
			t.Errorf("the password leaked in %s", f.ID)
		}
	}
	if c := byName["Clinic"]; c.Source != FieldLayout || c.Value != "Lakeside Family Clinic" || c.ValueIn != ValueInElement || elemText(c.Element) != "Clinic: Lakeside Family Clinic" {
		t.Errorf("Clinic: %+v", c)
	}
	// The printed labels beside widgets are not fields of their own.
	if len(rd.fields) != 5 {
		for _, f := range rd.fields {
			t.Logf("%+v", f)
		}
		t.Errorf("%d fields, want 5", len(rd.fields))
	}
	// Without forms, no fields.
	rd = &reader{}
	if _, _, err := rd.readFile(context.Background(), intakeForm(), MaxPages); err != nil || len(rd.fields) != 0 {
		t.Errorf("forms off: %d fields, %v", len(rd.fields), err)
	}
}

// TestLayoutFieldsOnScan: the scanned sample's "Label: value" lines,
// read by OCR, become fields tied to the OCR elements holding them.
func TestLayoutFieldsOnScan(t *testing.T) {
	data, err := Sample(SampleScanned)
	if err != nil {
		t.Fatal(err)
	}
	rd := &reader{ocr: ocrForTest(t), forms: true}
	if _, _, err := rd.readFile(context.Background(), data, MaxPages); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range rd.fields {
		got[f.Name] = f.Value
		if f.Source != FieldLayout || f.Element == "" || f.ValueIn != ValueInElement {
			t.Errorf("%+v", f)
		}
	}
	want := map[string]string{"Patient": "Alex Example (synthetic)", "Visit date": "2026-03-02"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("field %q = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

// TestCheckboxesOnAScan: a scanned intake form's check boxes become
// fields: each named by its question, labelled by its option, "Yes" when
// marked (a cross, a tick or a fill) and "Off" when not, read from the
// image and tied to the element holding the option; the lines of boxes
// give no "Label: value" fields of OCR's letters for the boxes.
func TestCheckboxesOnAScan(t *testing.T) {
	form := samples.CheckboxForm()
	g, err := samples.DrawCheckboxForm(form)
	if err != nil {
		t.Fatal(err)
	}
	var scan bytes.Buffer
	if err := png.Encode(&scan, g); err != nil {
		t.Fatal(err)
	}
	rd := &reader{ocr: ocrForTest(t), forms: true}
	_, pages := read(t, rd, scan.Bytes())
	var boxes []Field
	for _, f := range rd.fields {
		switch f.Type {
		case "checkbox":
			boxes = append(boxes, f)
		case "label_value":
			t.Errorf("a label_value field across the boxes: %+v", f)
		}
	}
	var want []Field
	for _, l := range form {
		for _, it := range l {
			v := "Off"
			if it.Marked {
				v = "Yes"
			}
			want = append(want, Field{Name: l[0].Question, Label: it.Option, Value: v})
		}
	}
	if len(boxes) != len(want) {
		t.Fatalf("%d check boxes: %+v", len(boxes), boxes)
	}
	for i, f := range boxes {
		w := want[i]
		if f.Name != w.Name || f.Label != w.Label || f.Value != w.Value || f.ValueIn != ValueInImage || f.Source != FieldLayout || f.Page != 1 {
			t.Errorf("box %d: %+v; want %s / %s = %s", i, f, w.Name, w.Label, w.Value)
		}
		// Tied to the element holding the option, or, for an option OCR
		// read only on a second look, the one holding the question.
		if et := elementText(pages[0], f.Element); f.Element == "" || !strings.Contains(et, w.Label) && !strings.Contains(et, w.Name) {
			t.Errorf("box %d (%s) tied to %q (%q)", i, w.Label, f.Element, et)
		}
		if !strings.HasPrefix(f.ID, "p1-f") {
			t.Errorf("box %d id %q", i, f.ID)
		}
	}
}

func elementText(p Page, id string) string {
	for _, e := range p.Elements {
		if e.ID == id {
			return e.Text
		}
	}
	return ""
}

// printed is text drawn on the page at (x, y) in points from the page's
// bottom left, in 10-point Helvetica.
type printed struct {
	x, y float64
	text string
}

// widget is a text field: its rectangle in points and its value (shown
// in its appearance; "" for an unfilled field).
type widget struct {
	name           string
	x0, y0, x1, y1 float64
	value          string
}

// formPDF writes a one-page letter-size PDF with the printed text and
// the text fields, each with an appearance stream that shows its value.
func formPDF(text []printed, ws []widget) []byte {
	var content strings.Builder
	for _, p := range text {
		fmt.Fprintf(&content, "BT /F1 10 Tf %g %g Td (%s) Tj ET\n", p.x, p.y, p.text)
	}
	// Objects: 1 catalog, 2 pages, 3 page, 4 font, 5 content, then two
	// a widget: its dictionary and its appearance.
	var refs []string
	for i := range ws {
		refs = append(refs, fmt.Sprintf("%d 0 R", 6+2*i))
	}
	fields := strings.Join(refs, " ")
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [" + fields + "] /DA (/Helv 10 Tf 0 g) /DR << /Font << /Helv 4 0 R >> >> >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << /Font << /F1 4 0 R >> >> /Annots [" + fields + "] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		pdfStream("", content.String()),
	}
	for i, w := range ws {
		v, ap := "", "/Tx BMC EMC"
		if w.value != "" {
			v = fmt.Sprintf("/V (%s) ", w.value)
			ap = fmt.Sprintf("/Tx BMC BT /Helv 10 Tf 0 g 2 %g Td (%s) Tj ET EMC", (w.y1-w.y0)/2-3.5, w.value)
		}
		objs = append(objs,
			fmt.Sprintf("<< /Type /Annot /Subtype /Widget /FT /Tx /T (%s) %s/Rect [%g %g %g %g] /P 3 0 R /F 4 /DA (/Helv 10 Tf 0 g) /AP << /N %d 0 R >> >>",
				w.name, v, w.x0, w.y0, w.x1, w.y1, 7+2*i),
			pdfStream(fmt.Sprintf("/Type /XObject /Subtype /Form /BBox [0 0 %g %g] /Resources << /Font << /Helv 4 0 R >> >>", w.x1-w.x0, w.y1-w.y0), ap))
	}
	return pdfObjects(objs)
}

// formRows lays out rows of printed labels at x and text fields from
// fx0 to fx1, from y = 700 down by step points; an empty value is an
// unfilled field.
func formRows(x, fx0, fx1, step float64, labels, values []string) ([]printed, []widget) {
	var text []printed
	var ws []widget
	for i := range labels {
		y := 700 - step*float64(i)
		text = append(text, printed{x, y, labels[i]})
		ws = append(ws, widget{fmt.Sprintf("f%.0f_%d", x, i), fx0, y - 3, fx1, y + 10, values[i]})
	}
	return text, ws
}

// proseColumns prints two columns of three four-line paragraphs from
// y = top down.
func proseColumns(top float64) []printed {
	var text []printed
	y := top
	for para := range 3 {
		for l := range 4 {
			text = append(text, printed{54, y, fmt.Sprintf("Left paragraph %d line %d text", para+1, l+1)},
				printed{320, y, fmt.Sprintf("Right paragraph %d line %d text", para+1, l+1)})
			y -= 12
		}
		y -= 14
	}
	return text
}

var (
	formLabels = []string{"Full name:", "Street address:", "City:", "Postal code:", "Telephone:", "Email address:", "Date of birth:"}
	formValues = []string{"Jordan Sample", "12 Harbour Road", "Lakeside", "LS1 4AB", "0113 496 0000", "jordan@example.org", "1961-04-12"}
)

// TestFormReadingOrder: a PDF form's printed labels and the values of
// the widgets beside them are read together, label then value, row by
// row, however wide the gap between them (the XY-cut alone read a column
// of labels, then a column of values); two column pairs side by side
// are two columns of rows; unfilled fields leave the labels in order;
// two columns of prose stay two columns, and a paragraph a field sits
// beside stays whole. With or without forms the page reads the same.
func TestFormReadingOrder(t *testing.T) {
	type formCase struct {
		name  string
		text  []printed
		ws    []widget
		order []string    // in this order in the page's text
		pairs [][2]string // a label's element, then its value's, next
		whole []string    // held by one element
	}
	var cases []formCase
	{ // Seven rows 14 points apart: MuPDF reads the labels as one block
		// and the values as another.
		text, ws := formRows(54, 330, 540, 14, formLabels, formValues)
		c := formCase{name: "seven rows, a wide gap", text: text, ws: ws}
		for i := range formLabels {
			c.order = append(c.order, formLabels[i], formValues[i])
			c.pairs = append(c.pairs, [2]string{formLabels[i], formValues[i]})
		}
		cases = append(cases, c)
	}
	{ // The same rows 30 points apart: a block each.
		text, ws := formRows(54, 300, 520, 30, formLabels, formValues)
		c := formCase{name: "seven rows spaced", text: text, ws: ws}
		for i := range formLabels {
			c.order = append(c.order, formLabels[i], formValues[i])
			c.pairs = append(c.pairs, [2]string{formLabels[i], formValues[i]})
		}
		cases = append(cases, c)
	}
	{ // Two column pairs: applicant left, co-applicant right.
		left := []string{"Name:", "Phone:", "Email:", "Employer:", "Income:", "Since:"}
		lv := []string{"Avery Stone", "0113 496 0101", "avery@example.org", "Harbour Mills", "41000", "2019"}
		rv := []string{"Blake Stone", "0113 496 0202", "blake@example.org", "Lakeside Clinic", "38500", "2021"}
		right := []string{"Partner:", "Partner phone:", "Partner email:", "Partner employer:", "Partner income:", "Partner since:"}
		text, ws := formRows(54, 130, 280, 20, left, lv)
		t2, w2 := formRows(320, 420, 560, 20, right, rv)
		c := formCase{name: "two column pairs", text: append(text, t2...), ws: append(ws, w2...)}
		for i := range left {
			c.order = append(c.order, left[i], lv[i])
			c.pairs = append(c.pairs, [2]string{left[i], lv[i]}, [2]string{right[i], rv[i]})
		}
		for i := range right {
			c.order = append(c.order, right[i], rv[i])
		}
		cases = append(cases, c)
	}
	{ // Unfilled fields, some and all.
		some := slices.Clone(formValues)
		some[1], some[4] = "", ""
		text, ws := formRows(54, 330, 540, 14, formLabels, some)
		c := formCase{name: "some fields unfilled", text: text, ws: ws}
		for i := range formLabels {
			c.order = append(c.order, formLabels[i])
			if some[i] != "" {
				c.order = append(c.order, some[i])
				c.pairs = append(c.pairs, [2]string{formLabels[i], some[i]})
			}
		}
		cases = append(cases, c)
		text, ws = formRows(54, 330, 540, 14, formLabels, make([]string, len(formLabels)))
		cases = append(cases, formCase{name: "all fields unfilled", text: text, ws: ws, order: formLabels})
	}
	{ // Two columns of prose, a form row under them.
		text := proseColumns(720)
		text = append(text, printed{54, 300, "Signed on:"})
		ws := []widget{{"signed", 300, 297, 450, 310, "2026-03-02"}}
		c := formCase{name: "prose columns, then a form row", text: text, ws: ws,
			order: []string{"Left paragraph 1 line 1", "Left paragraph 2 line 4", "Left paragraph 3 line 4", "Right paragraph 1 line 1", "Right paragraph 3 line 4", "Signed on:", "2026-03-02"},
			pairs: [][2]string{{"Signed on:", "2026-03-02"}}}
		cases = append(cases, c)
	}
	{ // A paragraph with a field beside its third line.
		var text []printed
		for l := range 5 {
			text = append(text, printed{54, 700 - 12*float64(l), fmt.Sprintf("Terms line %d of the agreement, read whole", l+1)})
		}
		ws := []widget{{"initials", 420, 673, 560, 686, "J.S."}}
		cases = append(cases, formCase{name: "a paragraph beside a field", text: text, ws: ws,
			order: []string{"Terms line 1", "Terms line 5", "J.S."},
			whole: []string{"Terms line 1 of the agreement, read whole Terms line 2 of the agreement, read whole Terms line 3 of the agreement, read whole Terms line 4 of the agreement, read whole Terms line 5 of the agreement, read whole"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := formPDF(c.text, c.ws)
			rd := &reader{forms: true}
			_, pages := read(t, rd, data)
			var texts []string
			for _, e := range pages[0].Elements {
				texts = append(texts, e.Text)
			}
			dump := strings.Join(texts, "\n")
			at := func(s string) int {
				return slices.IndexFunc(texts, func(e string) bool { return strings.Contains(e, s) })
			}
			joined := strings.Join(texts, " | ")
			last := -1
			for _, s := range c.order {
				i := strings.Index(joined, s)
				if i < 0 || i < last {
					t.Fatalf("reading order:\n%s\nwant %q after position %d", dump, s, last)
				}
				last = i
			}
			for _, p := range c.pairs {
				l, v := at(p[0]), at(p[1])
				if l < 0 || v != l+1 {
					t.Errorf("label %q at %d, value %q at %d; want the value next:\n%s", p[0], l, p[1], v, dump)
				}
			}
			for _, w := range c.whole {
				if at(w) < 0 {
					t.Errorf("no element holds %q:\n%s", w, dump)
				}
			}
			// Each filled field is tied to the element holding just its value.
			for _, f := range rd.fields {
				if f.Source != FieldAcroForm || f.Value == "" {
					continue
				}
				if got := elementText(pages[0], f.Element); got != f.Value || f.ValueIn != ValueInElement {
					t.Errorf("field %s = %q tied to %q (%s)", f.Name, f.Value, got, f.ValueIn)
				}
			}
			// Without forms, the same elements in the same order.
			_, plain := read(t, &reader{}, data)
			var plainTexts []string
			for _, e := range plain[0].Elements {
				plainTexts = append(plainTexts, e.Text)
			}
			if !slices.Equal(plainTexts, texts) {
				t.Errorf("without forms:\n%s\nwith:\n%s", strings.Join(plainTexts, "\n"), dump)
			}
		})
	}
}
