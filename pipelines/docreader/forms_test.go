package docreader

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
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
