package docreader

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/goregular"
)

// unmappedPDF is a page whose "go" font has no ToUnicode map: fpdf
// embeds it as a CID font (Identity-H), and the map is blanked out (same
// length, so the cross-reference table still holds), which leaves MuPDF
// no character for its glyphs, as in PDFs from producers that write no
// map. Helvetica (a simple font, WinAnsi) stays mapped.
func unmappedPDF(t *testing.T) []byte {
	t.Helper()
	p := fpdf.New("P", "pt", "Letter", "")
	p.AddUTF8FontFromBytes("go", "", goregular.TTF)
	p.AddPage()
	p.SetFont("Helvetica", "", 14)
	p.Text(72, 100, "Total due: ")
	x := 72 + p.GetStringWidth("Total due: ")
	p.SetFont("go", "", 14)
	p.Text(x, 100, "1,234.50 EUR")
	p.Text(72, 200, "Payment is due within thirty days.")
	p.SetFont("Helvetica", "", 14)
	p.Text(72, 400, "Reference A-17 stays mapped")
	data := pdfBytes(t, p)
	re := regexp.MustCompile(`/ToUnicode \d+ 0 R`)
	if n := len(re.FindAll(data, -1)); n != 1 {
		t.Fatalf("%d ToUnicode maps in fpdf's output, want 1", n)
	}
	return re.ReplaceAllFunc(data, func(m []byte) []byte { return []byte(strings.Repeat(" ", len(m))) })
}

// TestUnmappedGlyphsReadFromPixels: words whose glyphs the text layer
// maps to no character (U+FFFD) are read from the page's pixels; their
// elements say so (source parser+ocr, conf_bp Tesseract's mean over
// those words); elements wholly in a mapped font stay parser at 10000.
// Without OCR the layer's U+FFFD is kept, not guessed.
func TestUnmappedGlyphsReadFromPixels(t *testing.T) {
	data := unmappedPDF(t)
	_, bare := read(t, &reader{}, data)
	if !strings.ContainsRune(elementsText(bare[0]), utf8.RuneError) {
		t.Fatalf("the fixture maps its glyphs after all (MuPDF changed?): %q", elementsText(bare[0]))
	}
	_, pages := read(t, &reader{ocr: ocrForTest(t)}, data)
	text := elementsText(pages[0])
	if strings.ContainsRune(text, utf8.RuneError) {
		t.Errorf("U+FFFD left: %q", text)
	}
	want := map[string]string{
		"Total due: 1,234.50 EUR":            SourceParserOCR,
		"Payment is due within thirty days.": SourceParserOCR,
		"Reference A-17 stays mapped":        SourceParser,
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
		if src == SourceParser && e.ConfBP != 10000 {
			t.Errorf("%q: conf_bp %d for a mapped element", e.Text, e.ConfBP)
		}
		if src == SourceParserOCR && (e.ConfBP <= 0 || e.ConfBP >= 10000) {
			t.Errorf("%q: conf_bp %d, want Tesseract's mean", e.Text, e.ConfBP)
		}
	}
	for s := range want {
		t.Errorf("no element reads %q; page: %q", s, text)
	}
}

func elementsText(p Page) string {
	var parts []string
	for _, e := range p.Elements {
		parts = append(parts, e.Source+": "+e.Text)
	}
	return strings.Join(parts, "\n")
}

// TestRereadCoversWordsFromPixels: the re-read rule covers a text-layer
// element with words read from pixels, as it does an OCR one; a text
// layer element alone is never re-read.
func TestRereadCoversWordsFromPixels(t *testing.T) {
	for _, c := range []struct {
		src  string
		conf int
		want bool
	}{
		{SourceOCR, 5000, true},
		{SourceParserOCR, 5000, true},
		{SourceParserOCR, 9500, false},
		{SourceParser, 5000, false},
	} {
		e := &Element{Kind: KindText, Text: "Total due 1,234.50", Source: c.src, ConfBP: c.conf}
		if got := rereadable(e); got != c.want {
			t.Errorf("%s at %d: rereadable %v, want %v", c.src, c.conf, got, c.want)
		}
	}
}
