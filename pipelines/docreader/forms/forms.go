// Package forms reads a document's form fields (`forms: true`; contract
// 3, section 2: "each value is tied to an element; a value not in its
// element's text is marked as read from the image"). Two sources:
//   - acroform: a PDF's interactive form, widget by widget: its fully
//     qualified name, the label it shows a reader (/TU), its type, flags
//     and value, and its box; the value is tied to the element under the
//     widget (the widget's appearance is drawn into the page, so a filled
//     field's text is in the text layer).
//   - layout: printed "Label: value" lines, on any page (a scan's OCR
//     or a text layer), tied to the element holding the line; and, on a
//     scan, check boxes found in its pixels (type checkbox, value "Yes"
//     when marked, "Off" when not, as a PDF form's check box; name the
//     question printed left of the line's boxes, label the option printed
//     right of the box), tied to the element holding the option.
//
// value_from says where the value was read: "element" (it is in the
// tied element's text), "form_data" (the PDF's form holds it but the
// page does not show it as text: a check box, or a field without an
// appearance) or "image" (read from the pixels, not from any text).
// A password field's value is never returned.
package forms

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"boxd/engine/mupdf"
	"boxd/engine/raster"
	"boxd/pipelines/docreader/checkbox"
	"boxd/pipelines/docreader/doc"
	"boxd/pipelines/docreader/ocr"
)

// AcroForm turns a page's widgets into fields tied to its elements.
func AcroForm(p *doc.Page, ws []mupdf.Field) []doc.Field {
	var out []doc.Field
	for _, w := range ws {
		label := w.Label
		if label == w.Name {
			label = "" // MuPDF falls back to the name when the form gives no label
		}
		f := doc.Field{Name: w.Name, Label: label, Type: w.Type, Value: w.Value, Page: p.Page, BBox: w.Box.BBox(),
			Source: doc.FieldAcroForm, Required: w.Flags&mupdf.FieldRequired != 0, ReadOnly: w.Flags&mupdf.FieldReadOnly != 0}
		if w.Type == "text" && w.Flags&mupdf.FieldPassword != 0 {
			f.Value, f.Redacted = "", true
		}
		e := UnderBox(p, w.Box)
		if e != nil {
			f.Element = e.ID
		}
		switch {
		case e != nil && f.Value != "" && containsValue(e.Text, f.Value):
			f.ValueIn = doc.ValueInElement
		default:
			f.ValueIn = doc.ValueInFormData
		}
		out = append(out, f)
	}
	return out
}

// UnderBox is the page's element (not a table) that overlaps the box
// most, where the overlap is at least half of the smaller of the two
// (a field's text fills part of its widget), or nil.
func UnderBox(p *doc.Page, b raster.Box) *doc.Element {
	area := (b.X1 - b.X0) * (b.Y1 - b.Y0)
	if area <= 0 {
		return nil
	}
	var best *doc.Element
	bestA := 0.0
	for i := range p.Elements {
		e := &p.Elements[i]
		if e.Kind == doc.KindTable {
			continue
		}
		eb := raster.Box{X0: float64(e.BBox[0]), Y0: float64(e.BBox[1]), X1: float64(e.BBox[0] + e.BBox[2]), Y1: float64(e.BBox[1] + e.BBox[3])}
		ix := max(0, min(b.X1, eb.X1)-max(b.X0, eb.X0))
		iy := max(0, min(b.Y1, eb.Y1)-max(b.Y0, eb.Y0))
		a := ix * iy
		if 2*a < min(area, (eb.X1-eb.X0)*(eb.Y1-eb.Y0)) {
			continue
		}
		if a > bestA {
			best, bestA = e, a
		}
	}
	return best
}

// containsValue says whether text holds the value, compared without
// case and with runs of space as one.
func containsValue(text, value string) bool {
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	return strings.Contains(norm(text), norm(value))
}

// labelValueRE is a printed "Label: value" line: a label of up to six
// words starting with a letter, a colon, a value.
var labelValueRE = regexp.MustCompile(`^\s*([\p{L}][\p{L}\p{N} /()#&'.,-]{0,48}?)\s*:\s+(\S.*?)\s*$`)

// Layout finds "Label: value" lines in a page's elements, except
// where an AcroForm widget already sits: a line that holds both, or a
// line that is only a label (labelAcross) and the line printed after
// it on its baseline across a gap, tied to the element holding the
// value.
func Layout(p *doc.Page, widgets []mupdf.Field) []doc.Field {
	out := labelAcross(p, widgets)
	for _, e := range p.Elements {
		switch e.Kind {
		case doc.KindText, doc.KindListItem, doc.KindTitle, doc.KindCell:
		default:
			continue
		}
		for _, l := range e.Lines {
			m := labelValueRE.FindStringSubmatch(l.Text)
			if m == nil || len(strings.Fields(m[1])) > 6 || !hasLetter(m[2]) && !hasDigit(m[2]) {
				continue
			}
			lb := raster.Box{X0: float64(l.BBox[0]), Y0: float64(l.BBox[1]), X1: float64(l.BBox[0] + l.BBox[2]), Y1: float64(l.BBox[1] + l.BBox[3])}
			if underWidget(lb, widgets) {
				continue
			}
			out = append(out, doc.Field{Name: m[1], Type: "label_value", Value: m[2], Page: p.Page, BBox: l.BBox,
				Element: e.ID, Source: doc.FieldLayout, ValueIn: doc.ValueInElement})
		}
	}
	return out
}

func underWidget(b raster.Box, ws []mupdf.Field) bool {
	for _, w := range ws {
		if min(b.X1, w.Box.X1) > max(b.X0, w.Box.X0) && min(b.Y1, w.Box.Y1) > max(b.Y0, w.Box.Y0) {
			return true
		}
	}
	return false
}

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }
func hasDigit(s string) bool  { return strings.IndexFunc(s, unicode.IsDigit) >= 0 }

// Number gives a page's fields their ids, p<page>-f<n>, in order.
func Number(fs []doc.Field) {
	n := map[int]int{}
	for i := range fs {
		n[fs[i].Page]++
		fs[i].ID = fmt.Sprintf("p%d-f%d", fs[i].Page, n[fs[i].Page])
	}
}

// Checkboxes ties each check box to the words beside it: its option,
// the words right of it up to the next box (starting within three box
// widths, gaps under twice the words' height); its question, the words
// left of the row's first box. Words OCR read on a box are dropped. An
// option OCR missed (a short word beside a box often is) is read again
// alone from the space right of the box, with reread when it is set.
func Checkboxes(p *doc.Page, boxes []checkbox.Box, words []ocr.Word, reread func(raster.Box) []ocr.Word) []doc.Field {
	var ws []ocr.Word
	for _, w := range words {
		cx, cy := w.Box.Center()
		onBox := false
		for _, b := range boxes {
			if cx >= b.Box.X0-3 && cx <= b.Box.X1+3 && cy >= b.Box.Y0-3 && cy <= b.Box.Y1+3 {
				onBox = true
			}
		}
		if !onBox {
			ws = append(ws, w)
		}
	}
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Box.X0 < ws[j].Box.X0 })
	sameRow := func(a, b raster.Box) bool {
		_, ca := a.Center()
		_, cb := b.Center()
		return math.Abs(ca-cb) <= (b.Y1-b.Y0)*0.75
	}
	var out []doc.Field
	for _, b := range boxes {
		side := b.Box.X1 - b.Box.X0
		next, first := math.Inf(1), b.Box.X0
		for _, o := range boxes {
			if sameRow(o.Box, b.Box) {
				if o.Box.X0 > b.Box.X0 {
					next = min(next, o.Box.X0)
				}
				first = min(first, o.Box.X0)
			}
		}
		var option, question []string
		optBox, qBox := raster.Box{}, raster.Box{}
		last := b.Box.X1
		for _, w := range ws {
			if !sameRow(w.Box, b.Box) {
				continue
			}
			switch {
			case w.Box.X1 <= first:
				if len(question) == 0 {
					qBox = w.Box
				}
				question = append(question, w.Text)
				qBox = qBox.Union(w.Box)
			case w.Box.X0 >= b.Box.X1 && w.Box.X1 <= next:
				gapMax := 3 * side
				if len(option) > 0 {
					gapMax = 2 * (w.Box.Y1 - w.Box.Y0)
				}
				if w.Box.X0-last > gapMax {
					continue
				}
				if len(option) == 0 {
					optBox = w.Box
				}
				option = append(option, w.Text)
				optBox = optBox.Union(w.Box)
				last = w.Box.X1
			}
		}
		if len(option) == 0 && reread != nil {
			region := raster.Box{X0: b.Box.X1 + 2, Y0: b.Box.Y0 - side/2, X1: min(next-2, b.Box.X1+8*side), Y1: b.Box.Y1 + side/2}
			for _, w := range reread(region) {
				if !hasLetter(w.Text) && !hasDigit(w.Text) {
					continue // a box's edge read as "|"
				}
				if len(option) == 0 {
					optBox = w.Box
				}
				option = append(option, w.Text)
				optBox = optBox.Union(w.Box)
			}
		}
		q := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.Join(question, " ")), ":"))
		opt := strings.Join(option, " ")
		f := doc.Field{Name: q, Label: opt, Type: "checkbox", Value: "Off", Page: p.Page, BBox: b.Box.BBox(), Source: doc.FieldLayout, ValueIn: doc.ValueInImage}
		if f.Name == "" {
			f.Name, f.Label = opt, ""
		}
		if b.Marked {
			f.Value = "Yes"
		}
		// The element holding the option, else the one holding the
		// question (an option OCR read only on a second look is in none).
		for _, at := range []raster.Box{optBox, qBox} {
			if e := UnderBox(p, at); f.Element == "" && !at.Empty() && e != nil {
				f.Element = e.ID
			}
		}
		out = append(out, f)
	}
	return out
}
