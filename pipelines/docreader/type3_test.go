package docreader

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// type3PDF writes a one-page PDF by hand: lines of Helvetica (mapped) and
// of a Type3 font whose glyphs are the Go font's outlines drawn as paths,
// under glyph names name(code, rune), with a ToUnicode map into the
// Private Use Area when pua. It is the shape of old TeX (dvips) PDFs and
// of producers that draw text as Type3 procedures.
func type3PDF(t *testing.T, helvetica, type3 []string, name func(code int, r rune) string, pua bool) []byte {
	t.Helper()
	f, err := sfnt.Parse(goregular.TTF)
	if err != nil {
		t.Fatal(err)
	}
	var buf sfnt.Buffer
	const upem = 1000
	codes := map[rune]int{}
	var runes []rune
	for _, l := range type3 {
		for _, r := range l {
			if _, ok := codes[r]; !ok {
				codes[r] = 33 + len(runes)
				runes = append(runes, r)
			}
		}
	}
	var objs []string
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	stream := func(dict, data string) int {
		return add(fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data))
	}
	var procs, diffs, widths []string
	for _, r := range runes {
		gi, err := f.GlyphIndex(&buf, r)
		if err != nil || gi == 0 {
			t.Fatalf("no glyph for %q", r)
		}
		adv, err := f.GlyphAdvance(&buf, gi, fixed.I(upem), font.HintingNone)
		if err != nil {
			t.Fatal(err)
		}
		segs, err := f.LoadGlyph(&buf, gi, fixed.I(upem), nil)
		if err != nil {
			t.Fatal(err)
		}
		p := func(v fixed.Point26_6) string { return fmt.Sprintf("%.1f %.1f", float64(v.X)/64, -float64(v.Y)/64) }
		var b strings.Builder
		fmt.Fprintf(&b, "%d 0 -250 -250 1250 1000 d1\n", adv.Round())
		var last fixed.Point26_6
		for _, s := range segs {
			switch s.Op {
			case sfnt.SegmentOpMoveTo:
				fmt.Fprintf(&b, "%s m\n", p(s.Args[0]))
				last = s.Args[0]
			case sfnt.SegmentOpLineTo:
				fmt.Fprintf(&b, "%s l\n", p(s.Args[0]))
				last = s.Args[0]
			case sfnt.SegmentOpQuadTo: // as a cubic
				c1 := last.Add(s.Args[0].Sub(last).Mul(fixed.I(2)).Div(fixed.I(3)))
				c2 := s.Args[1].Add(s.Args[0].Sub(s.Args[1]).Mul(fixed.I(2)).Div(fixed.I(3)))
				fmt.Fprintf(&b, "%s %s %s c\n", p(c1), p(c2), p(s.Args[1]))
				last = s.Args[1]
			case sfnt.SegmentOpCubeTo:
				fmt.Fprintf(&b, "%s %s %s c\n", p(s.Args[0]), p(s.Args[1]), p(s.Args[2]))
				last = s.Args[2]
			}
		}
		b.WriteString("f\n")
		id := stream("", b.String())
		n := name(codes[r], r)
		procs = append(procs, fmt.Sprintf("/%s %d 0 R", n, id))
		diffs = append(diffs, "/"+n)
		widths = append(widths, fmt.Sprint(adv.Round()))
	}
	toUni := ""
	if pua {
		var m strings.Builder
		fmt.Fprintf(&m, "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /PUA def 1 begincodespacerange <00> <FF> endcodespacerange %d beginbfchar\n", len(runes))
		for i, r := range runes {
			fmt.Fprintf(&m, "<%02X> <%04X>\n", codes[r], 0xE000+i)
		}
		m.WriteString("endbfchar endcmap CMapName currentdict /CMap defineresource pop end end")
		toUni = fmt.Sprintf(" /ToUnicode %d 0 R", stream("", m.String()))
	}
	t3 := add(fmt.Sprintf("<< /Type /Font /Subtype /Type3 /FontBBox [-250 -250 1250 1000] /FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << %s >> /Encoding << /Type /Encoding /Differences [33 %s] >> /FirstChar 33 /LastChar %d /Widths [%s] /Resources << >>%s >>",
		strings.Join(procs, " "), strings.Join(diffs, " "), 32+len(runes), strings.Join(widths, " "), toUni))
	helv := add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var c strings.Builder
	y := 720
	for _, l := range helvetica {
		fmt.Fprintf(&c, "BT /H 14 Tf 72 %d Td (%s) Tj ET\n", y, l)
		y -= 40
	}
	for _, l := range type3 {
		var hex strings.Builder
		for _, r := range l {
			fmt.Fprintf(&hex, "%02X", codes[r])
		}
		fmt.Fprintf(&c, "BT /T 14 Tf 72 %d Td <%s> Tj ET\n", y, hex.String())
		y -= 40
	}
	content := stream("", c.String())
	page := add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /T %d 0 R /H %d 0 R >> >> >>", len(objs)+2, content, t3, helv))
	pages := add(fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	cat := add(fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&out, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, cat, xref)
	return out.Bytes()
}

// standardName is a glyph's Adobe standard name (letters and the few
// marks the fixtures use).
func standardName(_ int, r rune) string {
	if n, ok := map[rune]string{' ': "space", ',': "comma", '.': "period", '-': "hyphen", ':': "colon"}[r]; ok {
		return n
	}
	if r >= '0' && r <= '9' {
		return []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}[r-'0']
	}
	return string(r)
}

// TestType3AndPrivateUseReadFromPixels: text drawn by a Type3 font whose
// glyph names are not standard (MuPDF passes its codes on as letters:
// garbage, signed as the layer's), or mapped into the Private Use Area,
// is read from the page's pixels (source parser+ocr); a Type3 font with
// standard names, whose layer text the pixels confirm, stays the
// parser's, and so does Helvetica beside it.
func TestType3AndPrivateUseReadFromPixels(t *testing.T) {
	o := ocrForTest(t)
	const mapped = "Reference A-17 stays mapped"
	lines := []string{"Chest radiograph shows clear lung fields.", "Follow up in two weeks."}
	for _, c := range []struct {
		name   string
		glyph  func(int, rune) string
		pua    bool
		source string
	}{
		{"dvips names", func(code int, _ rune) string { return fmt.Sprintf("a%d", code) }, false, SourceParserOCR},
		{"private use", standardName, true, SourceParserOCR},
		{"standard names", standardName, false, SourceParser},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := type3PDF(t, []string{mapped}, lines, c.glyph, c.pua)
			_, pages := read(t, &reader{ocr: o}, data)
			want := map[string]string{mapped: SourceParser}
			for _, l := range lines {
				want[l] = c.source
			}
			for _, e := range pages[0].Elements {
				src, ok := want[e.Text]
				if !ok {
					continue
				}
				delete(want, e.Text)
				if e.Source != src {
					t.Errorf("%q: source %q, want %q", e.Text, e.Source, src)
				}
			}
			for s := range want {
				t.Errorf("no element reads %q; page:\n%s", s, elementsText(pages[0]))
			}
			if c.source == SourceParserOCR {
				// Without OCR the layer's own text is kept (garbage or
				// private use), never guessed at.
				_, bare := read(t, &reader{}, data)
				if txt := elementsText(bare[0]); strings.Contains(txt, lines[0]) || !utf8.ValidString(txt) {
					t.Errorf("without OCR: %q", txt)
				}
			}
		})
	}
}
