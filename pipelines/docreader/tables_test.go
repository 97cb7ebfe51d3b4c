package docreader

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math"
	"strings"
	"testing"

	"boxd/pipelines/docreader/samples"

	"boxd/engine/mupdf"

	"boxd/pipelines/docreader/table"
)

// tablePDF is a page with a paragraph above the lab table drawn with
// the given rules, cells in plant shown as other text in the pixels.
func tablePDF(t *testing.T, rules string, plant map[int]string) []byte {
	t.Helper()
	return cellsPDF(t, samples.LabCells, 2, rules, plant)
}

func cellsPDF(t *testing.T, cells []samples.Cell, headerRows int, rules string, plant map[int]string) []byte {
	t.Helper()
	p := samples.NewPDF()
	p.AddPage()
	p.SetFont("Helvetica", "", 10)
	p.Text(54, 80, "Results of the fasting lipid panel drawn on 2026-02-20 are below.")
	if err := samples.DrawTable(p, 54, 110, samples.LabWidths, 20, cells, rules, headerRows, plant); err != nil {
		t.Fatal(err)
	}
	p.Text(54, 280, "Repeat the panel in twelve weeks.")
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// tableOf returns the page's one table element and its cells by
// (row, column).
func tableOf(t *testing.T, pg Page) (Element, map[[2]int]Element) {
	t.Helper()
	var tables []Element
	cells := map[[2]int]Element{}
	for _, e := range pg.Elements {
		switch e.Kind {
		case KindTable:
			tables = append(tables, e)
		case KindCell:
			if e.Cell == nil {
				t.Fatalf("%s: a table cell without its place", e.ID)
			}
			cells[[2]int{e.Cell.Row, e.Cell.Col}] = e
		}
	}
	if len(tables) != 1 {
		t.Fatalf("%d tables, want 1", len(tables))
	}
	for _, c := range cells {
		if c.Cell.Table != tables[0].ID {
			t.Errorf("%s names table %s, want %s", c.ID, c.Cell.Table, tables[0].ID)
		}
	}
	return tables[0], cells
}

// checkLabCells checks every cell's place, spans and text against
// samples.LabCells (text compared by same(want, got)).
func checkLabCells(t *testing.T, cells map[[2]int]Element, same func(want, got string) bool) {
	t.Helper()
	checkCells(t, samples.LabCells, cells, same)
}

func checkCells(t *testing.T, want []samples.Cell, cells map[[2]int]Element, same func(want, got string) bool) {
	t.Helper()
	if len(cells) != len(want) {
		t.Errorf("%d cells, want %d", len(cells), len(want))
	}
	for _, w := range want {
		e, ok := cells[[2]int{w.R, w.C}]
		if !ok {
			t.Errorf("no cell at row %d column %d (%q)", w.R, w.C, w.Text)
			continue
		}
		if !same(w.Text, e.Text) || e.Cell.RowSpan != w.RS || e.Cell.ColSpan != w.CS {
			t.Errorf("cell r%d c%d: %q spans %d×%d, want %q spans %d×%d", w.R, w.C, e.Text, e.Cell.RowSpan, e.Cell.ColSpan, w.Text, w.RS, w.CS)
		}
	}
}

func exact(want, got string) bool { return want == got }

// TestTableLattice: a ruled table with row and column spans on a
// born-digital page: found from its lines, every cell in place with its
// spans and the text layer's text, its numbers checked against the
// pixels and none flagged; the paragraphs around it stay text.
func TestTableLattice(t *testing.T) {
	_, pages := read(t, &reader{ocr: ocrForTest(t)}, tablePDF(t, samples.RulesLattice, nil))
	tb, cells := tableOf(t, pages[0])
	if tb.Table.Method != table.Lattice || tb.Table.Rows != 6 || tb.Table.Cols != 4 || !tb.Table.NumbersChecked || tb.Table.Flagged != 0 {
		t.Errorf("table %+v", *tb.Table)
	}
	checkLabCells(t, cells, exact)
	for _, c := range cells {
		if c.Source != SourceParser || c.Cell.Flag != "" {
			t.Errorf("%s %q: source %s, flag %q (pixels %q)", c.ID, c.Text, c.Source, c.Cell.Flag, c.Cell.PixelText)
		}
	}
	var texts []string
	for _, e := range pages[0].Elements {
		if e.Kind == KindText {
			texts = append(texts, e.Text)
		}
	}
	if strings.Join(texts, "|") != "Results of the fasting lipid panel drawn on 2026-02-20 are below.|Repeat the panel in twelve weeks." {
		t.Errorf("text elements %q", texts)
	}
	// The table's box is its lines' box: 338 × 120 points at (54, 110).
	if b := tb.BBox; abs2(b[0]-108) > 3 || abs2(b[1]-220) > 3 || abs2(b[2]-676) > 4 || abs2(b[3]-240) > 4 {
		t.Errorf("table box %v, want about [108 220 676 240]", b)
	}
}

func abs2(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestTableStream: the same table with booktabs rules only (top, under
// the header, bottom, and a short rule under the spanning header): the
// columns come from whitespace, the body rows from the text lines, the
// spans from the missing rule and from text running across a gutter.
func TestTableStream(t *testing.T) {
	_, pages := read(t, &reader{ocr: ocrForTest(t)}, tablePDF(t, samples.RulesBooktabs, nil))
	tb, cells := tableOf(t, pages[0])
	if tb.Table.Method != table.Stream || tb.Table.Rows != 6 || tb.Table.Cols != 4 || tb.Table.Flagged != 0 {
		t.Errorf("table %+v", *tb.Table)
	}
	checkLabCells(t, cells, exact)
}

// TestTableNumbersFlagged: a text layer that says 212 where the page
// shows 272 (the visible digits an image, the text written invisibly):
// that cell, and only it, is flagged, naming both numbers.
func TestTableNumbersFlagged(t *testing.T) {
	planted := -1
	for i, c := range samples.LabCells {
		if c.Text == "212" {
			planted = i
		}
	}
	_, pages := read(t, &reader{ocr: ocrForTest(t)}, tablePDF(t, samples.RulesLattice, map[int]string{planted: "272"}))
	tb, cells := tableOf(t, pages[0])
	if !tb.Table.NumbersChecked || tb.Table.Flagged != 1 {
		t.Errorf("table %+v, want 1 cell flagged", *tb.Table)
	}
	for _, c := range cells {
		if c.Text == "212" {
			if !strings.Contains(c.Cell.Flag, "212") || !strings.Contains(c.Cell.Flag, "272") || !strings.Contains(c.Cell.PixelText, "272") {
				t.Errorf("planted cell: flag %q, pixels %q", c.Cell.Flag, c.Cell.PixelText)
			}
		} else if c.Cell.Flag != "" {
			t.Errorf("%s %q flagged: %s", c.ID, c.Text, c.Cell.Flag)
		}
	}
	// Without OCR the numbers are not checked, and nothing is flagged.
	_, pages = read(t, &reader{}, tablePDF(t, samples.RulesLattice, map[int]string{planted: "272"}))
	if tb, _ := tableOf(t, pages[0]); tb.Table.NumbersChecked || tb.Table.Flagged != 0 {
		t.Errorf("without OCR: %+v", *tb.Table)
	}
}

// TestTableScanned: the ruled table as a scan (the page drawn at 144
// DPI, sent as a PNG): found from the pixels, its cells' words from
// OCR, every cell in place with its spans.
func TestTableScanned(t *testing.T) {
	doc, err := mupdf.Open(tablePDF(t, samples.RulesLattice, nil), "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	_, img, err := doc.Page(context.Background(), 0, Scale, MaxPagePixels)
	doc.Close()
	if err != nil {
		t.Fatal(err)
	}
	var scan bytes.Buffer
	if err := png.Encode(&scan, img.ToImage()); err != nil {
		t.Fatal(err)
	}
	_, pages := read(t, &reader{ocr: ocrForTest(t)}, scan.Bytes())
	if pages[0].Source != PageOCR {
		t.Fatalf("page read by %s", pages[0].Source)
	}
	tb, cells := tableOf(t, pages[0])
	if tb.Table.Rows != 6 || tb.Table.Cols != 4 || tb.Table.NumbersChecked {
		t.Errorf("table %+v", *tb.Table)
	}
	// OCR reads "<" and ">" as it will; the words and numbers must match.
	checkLabCells(t, cells, func(want, got string) bool {
		return fmt.Sprint(words(want)) == fmt.Sprint(words(got))
	})
	for _, c := range cells {
		if c.Source != SourceOCR || c.ConfBP <= 0 {
			t.Errorf("%s: source %s conf %d", c.ID, c.Source, c.ConfBP)
		}
	}
}

// TestTableShadedHeader: a header row filled dark with white text and
// no lines in it (as Docling's normal_4pages): the fill's edges bound
// the row, the gaps between its light letters are not rules, and its
// cells part where no word runs across a column line.
func TestTableShadedHeader(t *testing.T) {
	var cells []samples.Cell
	for i, h := range []string{"Test", "Result", "Units", "Reference"} {
		cells = append(cells, samples.Cell{R: 0, C: i, RS: 1, CS: 1, Text: h})
	}
	for _, c := range samples.LabCells {
		if c.R >= 2 {
			c.R--
			cells = append(cells, c)
		}
	}
	_, pages := read(t, &reader{ocr: ocrForTest(t)}, cellsPDF(t, cells, 1, samples.RulesShaded, nil))
	tb, got := tableOf(t, pages[0])
	if tb.Table.Method != table.Lattice || tb.Table.Rows != 5 || tb.Table.Cols != 4 || tb.Table.Flagged != 0 {
		t.Errorf("table %+v", *tb.Table)
	}
	checkCells(t, cells, got, exact)
}

// TestTableScannedSkewed: the ruled table scanned at a slant (2.4°
// clockwise, then 1.7° the other way): the page is measured, turned
// straight (deskew, bound by the receipt), and read as the straight scan
// is, every cell in place. Unturned, its rules drift 40 px across the
// table and no grid is found.
func TestTableScannedSkewed(t *testing.T) {
	doc, err := mupdf.Open(tablePDF(t, samples.RulesLattice, nil), "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	_, img, err := doc.Page(context.Background(), 0, Scale, MaxPagePixels)
	doc.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, deg := range []float64{2.4, -1.7} {
		var scan bytes.Buffer
		if err := png.Encode(&scan, img.Turn(deg).ToImage()); err != nil {
			t.Fatal(err)
		}
		_, pages := read(t, &reader{ocr: ocrForTest(t)}, scan.Bytes())
		if d := pages[0].Deskew; math.Abs(d+deg) > 0.1 {
			t.Errorf("turned %v°: deskew %v°", deg, d)
		}
		tb, cells := tableOf(t, pages[0])
		if tb.Table.Rows != 6 || tb.Table.Cols != 4 {
			t.Errorf("turned %v°: table %+v", deg, *tb.Table)
		}
		checkLabCells(t, cells, func(want, got string) bool {
			return fmt.Sprint(words(want)) == fmt.Sprint(words(got))
		})
		if rp := receiptPages(pages); rp[0].Deskew != pages[0].Deskew {
			t.Errorf("the receipt's page does not bind the deskew: %+v", rp[0])
		}
	}
	// Unturned, the slanted rules are no grid.
	for _, tb := range table.Find(*img.Turn(2.4), nil) {
		if tb.Method == table.Lattice {
			t.Errorf("a slanted scan gave a lattice table: %d × %d", tb.Rows, tb.Cols)
		}
	}
}
