package docreader

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"boxd/engine/mupdf"

	"boxd/engine/raster"
)

// doclingDoc is the part of a DoclingDocument (schema 1.x) the scoring
// reads: the body's tree in reading order and the text items.
type doclingDoc struct {
	Body   doclingItem   `json:"body"`
	Groups []doclingItem `json:"groups"`
	Texts  []doclingItem `json:"texts"`
	Tables []doclingItem `json:"tables"`
}

type doclingItem struct {
	Children []struct {
		Ref string `json:"$ref"`
	} `json:"children"`
	Label string `json:"label"`
	Text  string `json:"text"`
	Prov  []struct {
		PageNo int       `json:"page_no"`
		BBox   doclingBB `json:"bbox"`
	} `json:"prov"`
	Data struct {
		TableCells []struct {
			Text     string `json:"text"`
			StartRow int    `json:"start_row_offset_idx"`
			EndRow   int    `json:"end_row_offset_idx"`
			StartCol int    `json:"start_col_offset_idx"`
			EndCol   int    `json:"end_col_offset_idx"`
		} `json:"table_cells"`
	} `json:"data"`
}

// doclingBB is a box in PDF points, its origin at the bottom left
// unless CoordOrigin says TOPLEFT.
type doclingBB struct {
	L, T, R, B  float64
	CoordOrigin string `json:"coord_origin"`
}

// tableScore is the reader's agreement with the groundtruth's tables.
type tableScore struct {
	tables, found    int // groundtruth tables; those we found (boxes overlapping by IoU 0.3 or more)
	cells            int // groundtruth cells with text, in all tables
	cellsOK, spansOK int // of these: ours at the same row and column with the same words; and the same spans
}

// scoreTables compares our tables with the groundtruth's. A cell is
// right when the table matched holds a cell starting at the same row
// and column with the same words (lower-cased runs of letters and
// digits); the spans are counted apart. Cells of tables we missed count
// as wrong.
func scoreTables(pages []Page, gt *doclingDoc) tableScore {
	var s tableScore
	for _, t := range gt.Tables {
		if len(t.Prov) == 0 {
			continue
		}
		s.tables++
		var gtCells int
		for _, c := range t.Data.TableCells {
			if len(words(c.Text)) > 0 {
				gtCells++
			}
		}
		s.cells += gtCells
		pv := t.Prov[0]
		var page *Page
		for i := range pages {
			if pages[i].Page == pv.PageNo {
				page = &pages[i]
			}
		}
		if page == nil {
			continue
		}
		hPt := float64(page.Height) / Scale
		b := pv.BBox
		box := raster.Box{X0: b.L * Scale, Y0: (hPt - b.T) * Scale, X1: b.R * Scale, Y1: (hPt - b.B) * Scale}
		if b.CoordOrigin == "TOPLEFT" {
			box = raster.Box{X0: b.L * Scale, Y0: b.T * Scale, X1: b.R * Scale, Y1: b.B * Scale}
		}
		var best *Element
		bestIoU := 0.0
		for i := range page.Elements {
			e := &page.Elements[i]
			if e.Kind != KindTable {
				continue
			}
			eb := raster.Box{X0: float64(e.BBox[0]), Y0: float64(e.BBox[1]), X1: float64(e.BBox[0] + e.BBox[2]), Y1: float64(e.BBox[1] + e.BBox[3])}
			if iou := iouOf(box, eb); iou > bestIoU {
				best, bestIoU = e, iou
			}
		}
		if best == nil || bestIoU < 0.3 {
			if os.Getenv("BOXD_DOCLING_TABLES") != "" {
				fmt.Printf("missed table p%d box %v (%d cells, best IoU %.2f)\n", pv.PageNo, box, gtCells, bestIoU)
			}
			continue
		}
		s.found++
		type key struct{ r, c int }
		ours := map[key]*Element{}
		for i := range page.Elements {
			e := &page.Elements[i]
			if e.Cell != nil && e.Cell.Table == best.ID {
				ours[key{e.Cell.Row, e.Cell.Col}] = e
			}
		}
		for _, c := range t.Data.TableCells {
			w := words(c.Text)
			if len(w) == 0 {
				continue
			}
			e := ours[key{c.StartRow, c.StartCol}]
			if e == nil || strings.Join(words(e.Text), " ") != strings.Join(w, " ") {
				if os.Getenv("BOXD_DOCLING_TABLES") != "" {
					got := "none"
					if e != nil {
						got = e.Text
					}
					fmt.Printf("miss p%d r%d c%d %q got %q\n", pv.PageNo, c.StartRow, c.StartCol, c.Text, got)
				}
				continue
			}
			s.cellsOK++
			if e.Cell.RowSpan == c.EndRow-c.StartRow && e.Cell.ColSpan == c.EndCol-c.StartCol {
				s.spansOK++
			}
		}
	}
	return s
}

func iouOf(a, b raster.Box) float64 {
	ix := max(0, min(a.X1, b.X1)-max(a.X0, b.X0))
	iy := max(0, min(a.Y1, b.Y1)-max(a.Y0, b.Y0))
	in := ix * iy
	u := (a.X1-a.X0)*(a.Y1-a.Y0) + (b.X1-b.X0)*(b.Y1-b.Y0) - in
	if u <= 0 {
		return 0
	}
	return in / u
}

func (s tableScore) String() string {
	return fmt.Sprintf("tables %d of %d found, cells %d of %d right (%.4f), spans too %d (%.4f)", s.found, s.tables,
		s.cellsOK, s.cells, ratio(s.cellsOK, s.cells), s.spansOK, ratio(s.spansOK, s.cells))
}

// gtText is one groundtruth text item in the body's reading order.
type gtText struct {
	page  int
	words []string
}

// bodyTexts walks the body's tree in order and returns its text items
// (furniture, the running headers and footers, is not in the body).
func (d *doclingDoc) bodyTexts() []gtText {
	var out []gtText
	var walk func(it *doclingItem)
	walk = func(it *doclingItem) {
		for _, c := range it.Children {
			parts := strings.Split(strings.TrimPrefix(c.Ref, "#/"), "/")
			if len(parts) != 2 {
				continue
			}
			i, err := strconv.Atoi(parts[1])
			if err != nil {
				continue
			}
			switch parts[0] {
			case "texts":
				if i < len(d.Texts) {
					t := &d.Texts[i]
					if w := words(t.Text); len(w) > 0 && len(t.Prov) > 0 {
						out = append(out, gtText{page: t.Prov[0].PageNo, words: w})
					}
					walk(t)
				}
			case "groups":
				if i < len(d.Groups) {
					walk(&d.Groups[i])
				}
			}
		}
	}
	walk(&d.Body)
	return out
}

// words are a text's lower-cased runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// docScore is one document's agreement with its groundtruth.
type docScore struct {
	gtWords, found int // recall: groundtruth body words found on their page
	pairs, agree   int // reading order: groundtruth pairs on one page, in our order
	pages, ocred   int
}

// score compares our pages with the groundtruth's body texts:
//   - text recall: of the groundtruth's words on a page (as a multiset),
//     the share found among our elements' words on that page;
//   - reading order: each groundtruth text is matched to our element on
//     its page that holds the most of its words (at least half; among
//     elements holding as many, one not matched yet, the first after the
//     page's last match: a text printed twice goes to its second copy);
//     of the pairs of groundtruth texts on one page matched to different
//     elements, the share our order keeps in the groundtruth's order.
func score(pages []Page, gt []gtText) docScore {
	var s docScore
	byPage := map[int]*Page{}
	for i := range pages {
		byPage[pages[i].Page] = &pages[i]
		s.pages++
		if pages[i].Source == PageOCR {
			s.ocred++
		}
	}
	pageWords := map[int]map[string]int{}
	elemWords := map[int][]map[string]int{}
	for _, p := range pages {
		all := map[string]int{}
		for _, e := range p.Elements {
			ew := map[string]int{}
			for _, w := range words(e.Text) {
				all[w]++
				ew[w]++
			}
			elemWords[p.Page] = append(elemWords[p.Page], ew)
		}
		pageWords[p.Page] = all
	}
	type match struct{ page, order, gt int }
	var matched []match
	taken := map[int]map[int]bool{}
	lastOrder := map[int]int{}
	for gi, g := range gt {
		avail := pageWords[g.page]
		used := map[string]int{}
		for _, w := range g.words {
			s.gtWords++
			if used[w] < avail[w] {
				used[w]++
				s.found++
			}
		}
		p := byPage[g.page]
		if p == nil {
			continue
		}
		counts := make([]int, len(elemWords[g.page]))
		bestN := 0
		for ei, ew := range elemWords[g.page] {
			n := 0
			seen := map[string]int{}
			for _, w := range g.words {
				if seen[w] < ew[w] {
					seen[w]++
					n++
				}
			}
			counts[ei] = n
			bestN = max(bestN, n)
		}
		// Ties (a text printed twice, such as "Yes" or "Don't know") go
		// to an element not matched yet, the first after the page's last
		// match in our order; else the first unmatched; else the first.
		best := -1
		if bestN > 0 {
			if taken[g.page] == nil {
				taken[g.page] = map[int]bool{}
			}
			var first, firstFree, after = -1, -1, -1
			for ei, n := range counts {
				if n != bestN {
					continue
				}
				if first < 0 {
					first = ei
				}
				if taken[g.page][ei] {
					continue
				}
				if firstFree < 0 {
					firstFree = ei
				}
				if after < 0 && p.Elements[ei].Order > lastOrder[g.page] {
					after = ei
				}
			}
			best = first
			if firstFree >= 0 {
				best = firstFree
			}
			if after >= 0 {
				best = after
			}
		}
		if best >= 0 && 2*bestN >= len(g.words) {
			matched = append(matched, match{g.page, p.Elements[best].Order, gi})
			taken[g.page][best] = true
			lastOrder[g.page] = p.Elements[best].Order
		}
	}
	for i := range matched {
		for j := i + 1; j < len(matched); j++ {
			a, b := matched[i], matched[j]
			if a.page != b.page || a.order == b.order {
				continue
			}
			s.pairs++
			if (a.gt < b.gt) == (a.order < b.order) {
				s.agree++
			}
		}
	}
	return s
}

// doclingReads keeps each Docling PDF's reading for the package's tests
// (TestDoclingGroundtruth and TestTableDoclingICDAR read the same files,
// one page with OCR): read once, scored twice.
var doclingReads struct {
	sync.Mutex
	pages map[string][]Page
}

// readDocling reads the PDF at path (its bytes data) with rd, or returns
// the reading an earlier test made.
func readDocling(rd *reader, path string, data []byte) ([]Page, error) {
	doclingReads.Lock()
	defer doclingReads.Unlock()
	if p, ok := doclingReads.pages[path]; ok {
		return p, nil
	}
	_, pages, err := rd.readFile(context.Background(), data, 100)
	if err != nil {
		return nil, err
	}
	if doclingReads.pages == nil {
		doclingReads.pages = map[string][]Page{}
	}
	doclingReads.pages[path] = pages
	return pages, nil
}

// TestDoclingGroundtruth scores the reader on Docling's test PDFs
// (../shared/data/docling-tests, its own pipeline's output committed as
// regression reference, not human annotation) and on its OCR set: text
// recall and pairwise reading-order agreement per document, and that no
// page with a text layer was OCRed. The floors below are the figures
// measured when the test was written, less a margin: a change that reads
// worse fails.
func TestDoclingGroundtruth(t *testing.T) {
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("BOXD_TEST_DATA is not set (the Makefile sets it)")
		}
		t.Skip("BOXD_TEST_DATA is not set; run through make")
	}
	base := filepath.Join(dir, "docling-tests")
	type set struct {
		name, pdf, gt string
	}
	var sets []set
	srcs, _ := filepath.Glob(filepath.Join(base, "pdf/sources/*.pdf"))
	for _, src := range srcs {
		stem := strings.TrimSuffix(filepath.Base(src), ".pdf")
		gt := filepath.Join(base, "pdf/groundtruth", stem+".json")
		if _, err := os.Stat(gt); err == nil {
			sets = append(sets, set{stem, src, gt})
		}
	}
	for _, stem := range []string{"ocr_test", "ocr_test_rotated_90", "ocr_test_rotated_180", "ocr_test_rotated_270"} {
		sets = append(sets, set{stem, filepath.Join(base, "ocr/sources", stem+".pdf"), filepath.Join(base, "ocr/groundtruth/tesseract/full_page", stem+".tesseract.full_page.json")})
	}
	if len(sets) < 12 {
		t.Fatalf("only %d documents with groundtruth under %s", len(sets), base)
	}
	rd := &reader{ocr: ocrForTest(t)}
	var total docScore
	var tables tableScore
	var lines []string
	for _, st := range sets {
		data, err := os.ReadFile(st.pdf)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(st.gt)
		if err != nil {
			t.Fatal(err)
		}
		var gt doclingDoc
		if err := json.Unmarshal(raw, &gt); err != nil {
			t.Fatalf("%s: %v", st.gt, err)
		}
		pages, err := readDocling(rd, st.pdf, data)
		if err != nil {
			t.Errorf("%s: %v", st.name, err)
			continue
		}
		s := score(pages, gt.bodyTexts())
		ts := scoreTables(pages, &gt)
		tables.tables += ts.tables
		tables.found += ts.found
		tables.cells += ts.cells
		tables.cellsOK += ts.cellsOK
		tables.spansOK += ts.spansOK
		if ts.tables > 0 {
			lines = append(lines, st.name+": "+ts.String())
		}
		if os.Getenv("BOXD_DOCLING_TABLES") != "" {
			for _, p := range pages {
				for _, e := range p.Elements {
					if e.Kind == KindTable {
						t.Logf("%s p%d %s %v %+v\n%s", st.name, p.Page, e.ID, e.BBox, *e.Table, e.Text)
					}
					if e.Cell != nil && e.Cell.Flag != "" {
						t.Logf("%s %s r%d c%d %q: %s", st.name, e.ID, e.Cell.Row, e.Cell.Col, e.Text, e.Cell.Flag)
					}
				}
			}
		}
		total.gtWords += s.gtWords
		total.found += s.found
		total.pairs += s.pairs
		total.agree += s.agree
		total.pages += s.pages
		total.ocred += s.ocred
		lines = append(lines, st.name+": "+s.String())
		// The born-digital rule: a page OCRed had no usable text layer.
		if doc, err := mupdf.Open(data, "application/pdf"); err == nil {
			for _, p := range pages {
				if p.Source != PageOCR {
					continue
				}
				if l, err := doc.Text(context.Background(), p.Page-1, Scale); err != nil || usableLayer(l) {
					t.Errorf("%s: page %d has a text layer and was OCRed", st.name, p.Page)
				}
			}
			doc.Close()
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Log(l)
	}
	t.Logf("all: %s", total.String())
	t.Logf("all tables: %s", tables.String())
	if r := ratio(total.found, total.gtWords); r < doclingRecallFloor {
		t.Errorf("text recall %.4f, under the floor %.2f", r, doclingRecallFloor)
	}
	if r := ratio(total.agree, total.pairs); r < doclingOrderFloor {
		t.Errorf("reading-order agreement %.4f, under the floor %.2f", r, doclingOrderFloor)
	}
	if tables.found < doclingTablesFloor || ratio(tables.cellsOK, tables.cells) < doclingCellFloor {
		t.Errorf("tables: %s; the floors are %d tables and cell accuracy %.2f", tables.String(), doclingTablesFloor, doclingCellFloor)
	}
}

// The floors of TestDoclingGroundtruth: measured 0.9422 and 0.9283 on
// 2026-11-26 (40 pages, 10,277 words, 2,791 pairs), less a margin; the
// order floor raised when duplicate texts were matched one to one (text
// recall 0.9394, order 0.9522 of 2,910 pairs, later that day).
//
// The table floors: 8 of the 9 groundtruth tables found and 219 of 261
// cells right (0.8391) on 2026-11-26, once tables of dot leaders were
// read (7 and 163 before). The table missed is a short SQL statement
// Docling's groundtruth calls a table; most cells counted wrong are in
// the table of contents' last rows, where the groundtruth itself joins
// two entries in a cell and shifts the rest by a row; see
// docs/decisions.md.
const (
	doclingRecallFloor = 0.93
	doclingOrderFloor  = 0.93
	doclingTablesFloor = 8
	doclingCellFloor   = 0.80
)

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func (s docScore) String() string {
	return "pages " + strconv.Itoa(s.pages) + " (OCRed " + strconv.Itoa(s.ocred) + "), text recall " +
		strconv.FormatFloat(ratio(s.found, s.gtWords), 'f', 4, 64) + " of " + strconv.Itoa(s.gtWords) + " words, reading order " +
		strconv.FormatFloat(ratio(s.agree, s.pairs), 'f', 4, 64) + " of " + strconv.Itoa(s.pairs) + " pairs"
}
