package docreader

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image/png"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"boxd/pipelines/docreader/samples"

	"boxd/pipelines/docreader/ocr"

	"boxd/engine/raster"

	"github.com/agnivade/levenshtein"
	"github.com/go-pdf/fpdf"
	"golang.org/x/image/tiff"

	"boxd/internal/problem"
)

// ocrForTest starts Tesseract: required under CI (make deps installs it),
// skipped elsewhere when missing.
func ocrForTest(t *testing.T) *ocr.OCR {
	t.Helper()
	o, err := ocr.New()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tesseract is required under CI (make deps installs libtesseract-dev and tesseract-ocr-eng): %v", err)
		}
		t.Skipf("no tesseract: %v", err)
	}
	t.Cleanup(o.Close)
	return o
}

func pdfBytes(t *testing.T, p *fpdf.Fpdf) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func read(t *testing.T, rd *reader, data []byte) (FileInfo, []Page) {
	t.Helper()
	info, pages, err := rd.readFile(context.Background(), data, MaxPages)
	if err != nil {
		t.Fatal(err)
	}
	return info, pages
}

// TestTextLayerExactBoxes: words in the text layer come back with boxes
// where the PDF put them: x from the text position and Helvetica's
// advance widths (fpdf's own metrics), the baseline inside the box, in
// pixels at 144 DPI.
func TestTextLayerExactBoxes(t *testing.T) {
	p := samples.NewPDF()
	p.AddPage()
	p.SetFont("Helvetica", "", 12)
	p.Text(72, 100, "Alpha beta")
	wb := p.GetStringWidth("Alpha beta")
	p.SetFont("Helvetica", "", 24)
	p.Text(300, 400, "Gamma")
	wg := p.GetStringWidth("Gamma")
	data := pdfBytes(t, p)
	info, pages := read(t, &reader{}, data)
	if info.Type != TypePDF || info.Pages != 1 || len(pages) != 1 {
		t.Fatalf("info %+v, %d pages", info, len(pages))
	}
	pg := pages[0]
	if pg.Width != 1224 || pg.Height != 1584 || pg.Source != PageTextLayer || len(pg.PixelSHA256) != 64 {
		t.Fatalf("page %+v", pg)
	}
	if len(pg.Elements) != 2 {
		t.Fatalf("want 2 elements, got %+v", pg.Elements)
	}
	near := func(got int, want float64) bool { return float64(got) >= want-1 && float64(got) <= want+1 }
	for _, c := range []struct {
		e              Element
		text           string
		x, w, baseline float64
		size           float64
	}{
		{pg.Elements[0], "Alpha beta", 72, wb, 100, 12},
		{pg.Elements[1], "Gamma", 300, wg, 400, 24},
	} {
		b := c.e.BBox
		if c.e.Text != c.text || c.e.Source != SourceParser || c.e.ConfBP != 10000 {
			t.Errorf("element %+v: want text %q from the parser", c.e, c.text)
		}
		if !near(b[0], 2*c.x) || !near(b[0]+b[2], 2*(c.x+c.w)) {
			t.Errorf("%q: x %d..%d, want %.1f..%.1f", c.text, b[0], b[0]+b[2], 2*c.x, 2*(c.x+c.w))
		}
		if top, bottom := float64(b[1]), float64(b[1]+b[3]); top >= 2*c.baseline || bottom <= 2*c.baseline || bottom-top < 2*c.size || bottom-top > 2*1.6*c.size {
			t.Errorf("%q: y %v..%v, want the baseline %.0f inside and a height of 1 to 1.6 em (%.0f px)", c.text, top, bottom, 2*c.baseline, 2*c.size)
		}
	}
	// The element's one line (the first word's own box, "Alpha" ending
	// where its advance widths say, is layout's TestWordBoxesFromLayer).
	if l := pg.Elements[0].Lines; len(l) != 1 || l[0].Text != "Alpha beta" {
		t.Fatalf("lines %+v", l)
	}
}

// TestBornDigitalSample: the generated letter reads from its text layer
// alone (no OCR even offered), with its header, title, list items, two
// columns in order, its table's caption, table and cells, and footer.
func TestBornDigitalSample(t *testing.T) {
	data, err := Sample(SampleBornDigital)
	if err != nil {
		t.Fatal(err)
	}
	_, pages := read(t, &reader{}, data) // no OCR: a page needing it would fail
	var got []string
	for _, e := range pages[0].Elements {
		got = append(got, e.Kind+": "+e.Text)
		if e.Source != SourceParser {
			t.Errorf("%s read by %s", e.ID, e.Source)
		}
	}
	want := []string{
		"page_header: Lakeside Family Clinic - Referral",
		"title: Referral to Cardiology",
		"text: Patient: Jordan Sample (synthetic), date of birth 1961-04-12. Reason: exertional chest tightness for three weeks, relieved by rest. Blood pressure 142/88 mmHg; resting ECG shows sinus rhythm at 78 bpm.",
		"list_item: 1. Exercise stress test",
		"list_item: 2. Lipid panel and HbA1c",
		"list_item: 3. Review of current medication",
		"text: Current medication:",
		"text: lisinopril 10 mg daily,",
		"text: atorvastatin 20 mg nightly.",
		"text: Allergies:",
		"text: penicillin (rash),",
		"text: no known food allergies.",
		"caption: Table 1. Lipid panel, 2026-02-20",
		"table: Test | Lipid panel (fasting) | Reference\nResult | Units\nTotal cholesterol | 212 | mg/dL | < 200\n" +
			"LDL cholesterol | 141 | mg/dL | < 130\nHDL cholesterol | 38 | mg/dL | > 40\nTriglycerides | 166 | mg/dL | < 150",
	}
	for _, c := range samples.LabCells {
		want = append(want, "table_cell: "+c.Text)
	}
	want = append(want, "page_footer: Page 1 of 1")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("elements:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, e := range pages[0].Elements {
		if e.ID != fmt.Sprintf("p1-e%d", i+1) || e.Order != i+1 || e.Page != 1 {
			t.Errorf("element %d: id %s order %d page %d", i, e.ID, e.Order, e.Page)
		}
	}
}

// TestTwoColumnReadingOrder: two columns whose paragraph breaks line up
// (so horizontal bands cross both) read left column first, under a
// full-width title and above a full-width footer note.
func TestTwoColumnReadingOrder(t *testing.T) {
	p := samples.NewPDF()
	p.AddPage()
	p.SetFont("Helvetica", "B", 16)
	p.Text(54, 80, "Two Column Study")
	p.SetFont("Helvetica", "", 10)
	y := 120.0
	for para := range 3 {
		for l := range 3 {
			p.Text(54, y, fmt.Sprintf("Left paragraph %d line %d text", para+1, l+1))
			p.Text(320, y, fmt.Sprintf("Right paragraph %d line %d text", para+1, l+1))
			y += 12
		}
		y += 14
	}
	p.Text(54, y+20, "A closing note that spans the whole width of the page below both columns of text.")
	_, pages := read(t, &reader{}, pdfBytes(t, p))
	var order []string
	for _, e := range pages[0].Elements {
		order = append(order, e.Text)
	}
	text := strings.Join(order, " | ")
	last := -1
	for _, want := range []string{"Two Column Study", "Left paragraph 1", "Left paragraph 2", "Left paragraph 3", "Right paragraph 1", "Right paragraph 2", "Right paragraph 3", "A closing note"} {
		i := strings.Index(text, want)
		if i < 0 || i < last {
			t.Fatalf("reading order:\n%s\nwant %q after position %d", strings.Join(order, "\n"), want, last)
		}
		last = i
	}
	if pages[0].Elements[0].Kind != KindTitle {
		t.Errorf("first element %+v, want a title", pages[0].Elements[0])
	}
}

// cer is the character error rate of got against want: Levenshtein
// distance over the want length, whitespace collapsed.
func cer(got, want string) float64 {
	g, w := strings.Join(strings.Fields(got), " "), strings.Join(strings.Fields(want), " ")
	return float64(levenshtein.ComputeDistance(g, w)) / float64(max(1, utf8.RuneCountInString(w)))
}

func pageText(p Page) string {
	var parts []string
	for _, e := range p.Elements {
		parts = append(parts, e.Text)
	}
	return strings.Join(parts, " ")
}

// TestScannedSampleOCR: the image-only sample is OCRed (its page has no
// text layer) and reads back within a 3% character error rate.
func TestScannedSampleOCR(t *testing.T) {
	rd := &reader{ocr: ocrForTest(t)}
	data, err := Sample(SampleScanned)
	if err != nil {
		t.Fatal(err)
	}
	_, pages := read(t, rd, data)
	p := pages[0]
	if p.Source != PageOCR || p.Rotation != 0 {
		t.Fatalf("page source %s rotation %d", p.Source, p.Rotation)
	}
	want := strings.Join(samples.ScannedLines, " ")
	c := cer(pageText(p), want)
	t.Logf("scanned sample: CER %.4f over %d characters", c, len(want))
	if c > 0.03 {
		t.Errorf("CER %.3f:\n got %q\nwant %q", c, pageText(p), want)
	}
	for _, e := range p.Elements {
		if e.Source != SourceOCR || e.ConfBP <= 0 || e.ConfBP > 10000 {
			t.Errorf("element %+v", e)
		}
	}
}

// TestRotatedScans: a scan turned 90, 180 or 270 degrees is turned back
// upright before it is read, with the same error rate; the page says how
// far it was turned.
func TestRotatedScans(t *testing.T) {
	rd := &reader{ocr: ocrForTest(t)}
	img, err := samples.RenderLines(samples.ScannedLines, 1275, 1650, 34, 150)
	if err != nil {
		t.Fatal(err)
	}
	upright := raster.FromImage(img)
	want := strings.Join(samples.ScannedLines, " ")
	for _, deg := range []int{0, 90, 180, 270} {
		r := upright.Rotate(deg)
		var b bytes.Buffer
		if err := png.Encode(&b, r.ToImage()); err != nil {
			t.Fatal(err)
		}
		info, pages := read(t, rd, b.Bytes())
		p := pages[0]
		c := cer(pageText(p), want)
		t.Logf("turned %d°: read turned back %d°, CER %.4f", deg, p.Rotation, c)
		if info.Type != TypePNG || p.Rotation != (360-deg)%360 || c > 0.03 {
			t.Errorf("turned %d°: type %s rotation %d CER %.3f: %q", deg, info.Type, p.Rotation, c, pageText(p))
		}
		if p.Width != upright.W || p.Height != upright.H {
			t.Errorf("turned %d°: page %d × %d, want the upright %d × %d", deg, p.Width, p.Height, upright.W, upright.H)
		}
	}
}

// TestBadFiles: each refusal is the contract's status with a message
// that says what to fix.
func TestBadFiles(t *testing.T) {
	many := samples.NewPDF()
	for range MaxPages + 1 {
		many.AddPage()
	}
	big := &raster.Image{W: 300, H: 300, Pix: make([]byte, 300*300*3)}
	var bigPNG bytes.Buffer
	if err := png.Encode(&bigPNG, big.ToImage()); err != nil {
		t.Fatal(err)
	}
	// A page of 100 × 100 points is 200 × 200 = 40,000 pixels at 144 DPI.
	huge := samples.NewPDF()
	huge.AddPageFormat("P", fpdf.SizeType{Wd: 100, Ht: 100})
	huge.SetFont("Helvetica", "", 10)
	huge.Text(10, 50, "a large page")
	for _, c := range []struct {
		name string
		data []byte
		kind problem.Kind
		msg  string
	}{
		{"unknown type", []byte("hello, this is plain text"), problem.Unsupported, "not a PDF, PNG, JPEG, WebP or TIFF"},
		{"broken PDF", []byte("%PDF-1.7\n garbage garbage"), problem.Invalid, "not a PDF that opens"},
		{"too many pages", pdfBytes(t, many), problem.TooLarge, "at most 10 pages"},
		{"broken PNG", []byte("\x89PNG\r\n\x1a\nnot really"), problem.Invalid, "image/png image that decodes"},
		{"too many pixels", bigPNG.Bytes(), problem.TooLarge, "at most 10000 pixels"},
		{"page too large", pdfBytes(t, huge), problem.TooLarge, "page 1 is 100 × 100 points, 200 × 200 pixels at 144 DPI; at most 10000 pixels"},
		{"multi-page TIFF", twoPageTIFF(t), problem.Unsupported, "a TIFF of 2 pages"},
	} {
		rd := &reader{maxPixels: 10000}
		_, _, err := rd.readFile(context.Background(), c.data, MaxPages)
		if !problem.Is(err, c.kind) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v (kind %v), want %v saying %q", c.name, err, problem.KindOf(err), c.kind, c.msg)
		}
	}
	// A page without a text layer and no OCR: 503 naming what to install.
	data, err := Sample(SampleScanned)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = (&reader{}).readFile(context.Background(), data, MaxPages)
	if !problem.Is(err, problem.Unavailable) || !strings.Contains(err.Error(), "tesseract-ocr-eng") {
		t.Errorf("scanned page without OCR: %v", err)
	}
}

// twoPageTIFF is a TIFF with two images: Go's encoder writes one, and a
// copy of its directory is chained after it.
func twoPageTIFF(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := tiff.Encode(&b, (&raster.Image{W: 4, H: 4, Pix: make([]byte, 48)}).ToImage(), nil); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	if tiffPages(data) != 1 {
		t.Fatalf("Go's TIFF has %d images", tiffPages(data))
	}
	le := binary.LittleEndian
	if data[0] != 'I' {
		t.Fatal("Go's TIFF encoder writes big-endian now")
	}
	off := le.Uint32(data[4:8])
	n := uint32(le.Uint16(data[off : off+2]))
	ifd := append([]byte{}, data[off:off+2+12*n]...)
	second := uint32(len(data))
	data = append(data, ifd...)
	data = le.AppendUint32(data, 0)
	le.PutUint32(data[off+2+12*n:], second)
	return data
}

func TestTIFFPages(t *testing.T) {
	if n := tiffPages(twoPageTIFF(t)); n != 2 {
		t.Errorf("two-page TIFF: %d", n)
	}
	for _, b := range [][]byte{nil, []byte("II*\x00"), []byte("II*\x00\xff\xff\xff\xff")} {
		if n := tiffPages(b); n > 1 {
			t.Errorf("%q: %d pages", b, n)
		}
	}
}
