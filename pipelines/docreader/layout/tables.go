package layout

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"boxd/engine/raster"

	"boxd/pipelines/docreader/doc"
	"boxd/pipelines/docreader/table"
)

// Table elements: a table (kind table, its text the rows, cells
// separated by " | ") followed by its cells (kind table_cell) row by
// row, each naming its table, row, column and spans. The grid comes
// from the page's pixels (package table); the words in the cells from
// the text layer on a born-digital page and from OCR on a scan. On a
// born-digital page the table is also OCRed, and every number in a cell
// is compared with the numbers read from its pixels (contract 3,
// section 2): the table is OCRed at 288 DPI as sparse text, and a cell
// whose numbers disagree is OCRed again alone, as one block; a cell
// whose numbers still differ carries a Flag saying what differs, and
// its pixel reading. Tesseract here reads English, so a table mostly in
// another script is not checked (NumbersChecked false).

// Element kinds of tables.

// tableRegion is a table found on a page, before it becomes elements.
type tableRegion struct {
	t       table.Table
	words   []word   // the page's words; the cells index them
	pixels  []string // per cell: the pixel reading (born-digital, checked)
	flags   []string // per cell: what differs
	checked bool
}

func (tr *tableRegion) cellText(c table.Cell) string {
	parts := make([]string, len(c.Words))
	for i, w := range c.Words {
		parts[i] = tr.words[w].text
	}
	return strings.Join(parts, " ")
}

// FindTables finds the tables on a page and takes their words out of
// the page's regions: the regions left, and one region per table.
func FindTables(img *raster.Image, rs []*Region, source string) ([]*Region, []*Region) {
	type ref struct{ r, l, w int }
	var words []word
	var refs []ref
	var tw []table.Word
	for ri, r := range rs {
		if r.image {
			continue
		}
		for li, l := range r.lines {
			for wi, w := range l.words {
				words = append(words, w)
				refs = append(refs, ref{ri, li, wi})
				tw = append(tw, table.Word{Text: w.text, Box: w.box})
			}
		}
	}
	found := table.Find(*img, tw)
	if len(found) == 0 {
		return rs, nil
	}
	drop := map[ref]bool{}
	var trs []*Region
	for _, t := range found {
		for _, i := range t.Words {
			drop[refs[i]] = true
		}
		tr := &Region{kind: doc.KindTable, source: source, box: t.Box,
			table: &tableRegion{t: t, words: words}}
		tr.lines = tableLines(tr.table)
		trs = append(trs, tr)
	}
	var kept []*Region
	for ri, r := range rs {
		if r.image {
			kept = append(kept, r)
			continue
		}
		nr := &Region{source: r.source, size: r.size}
		for li, l := range r.lines {
			nl := line{}
			for wi, w := range l.words {
				if !drop[ref{ri, li, wi}] {
					nl.words = append(nl.words, w)
					nl.box = nl.box.Union(w.box)
				}
			}
			if len(nl.words) > 0 {
				nr.lines = append(nr.lines, nl)
				nr.box = nr.box.Union(nl.box)
			}
		}
		if len(nr.lines) > 0 {
			kept = append(kept, nr)
		}
	}
	return kept, trs
}

// tableLines are a table's rows as lines: the cells starting in the row,
// " | " between them.
func tableLines(tr *tableRegion) []line {
	var out []line
	for _, c := range tr.t.Cells {
		if len(out) <= c.Row {
			out = append(out, make([]line, c.Row+1-len(out))...)
		}
		l := &out[c.Row]
		if len(l.words) > 0 {
			l.words = append(l.words, word{text: "|", conf: 100})
		}
		for _, w := range c.Words {
			l.words = append(l.words, tr.words[w])
			l.box = l.box.Union(tr.words[w].box)
		}
	}
	return slices.DeleteFunc(out, func(l line) bool { return len(l.words) == 0 })
}

// CheckTables reads a born-digital page's tables (FindTables) from its
// pixels with Tesseract and compares every cell's numbers with the text
// layer's. img is the page raster at dpi; hi is the page drawn at twice
// the scale (nil: img's pixels doubled). Without OCR (rd nil) the tables
// are left unchecked.
func CheckTables(ctx context.Context, rd OCR, img, hi *raster.Image, dpi int, trs []*Region) error {
	if rd == nil {
		return nil
	}
	for _, r := range trs {
		if err := ctx.Err(); err != nil {
			return err
		}
		tr := r.table
		if !latinText(r) {
			continue // Tesseract here reads English: another script's table is not checked
		}
		ws, err := rd.ReadRegion(ctx, img, hi, r.box, dpi)
		if err != nil {
			return err
		}
		tw := make([]table.Word, len(ws))
		for i, w := range ws {
			tw[i] = table.Word{Text: w.Text, Box: w.Box}
		}
		pix := make([][]string, len(tr.t.Cells))
		for i, w := range tw {
			cx, cy := (w.Box.X0+w.Box.X1)/2, (w.Box.Y0+w.Box.Y1)/2
			if c := cellAt(tr.t, tr.words, cx, cy); c >= 0 {
				pix[c] = append(pix[c], ws[i].Text)
			}
		}
		tr.pixels = make([]string, len(tr.t.Cells))
		tr.flags = make([]string, len(tr.t.Cells))
		for i, c := range tr.t.Cells {
			tr.pixels[i] = strings.Join(pix[i], " ")
			tr.flags[i] = numbersDiffer(tr.cellText(c), tr.pixels[i])
			if tr.flags[i] == "" {
				continue
			}
			// A second look at the cell alone, as one block of text:
			// the table's reading drops lone digits and can cut a cell.
			cb := c.Box
			again, err := rd.ReadBlock(ctx, img, hi, cb, dpi)
			if err != nil {
				return err
			}
			parts := make([]string, len(again))
			for j, w := range again {
				parts[j] = w.Text
			}
			if second := strings.Join(parts, " "); numbersDiffer(tr.cellText(c), second) == "" {
				tr.pixels[i], tr.flags[i] = second, ""
			}
		}
		tr.checked = true
	}
	return nil
}

// cellAt is the cell whose box, widened by half a line, holds the point
// (the nearest centre when several do), or -1.
func cellAt(t table.Table, words []word, x, y float64) int {
	best, bestD := -1, 0.0
	for i, c := range t.Cells {
		pad := 0.0
		if len(c.Words) > 0 {
			pad = (c.Box.Y1 - c.Box.Y0) / float64(2*max(1, lineCount(words, c.Words)))
		}
		if x < c.Box.X0-pad || x > c.Box.X1+pad || y < c.Box.Y0-pad || y > c.Box.Y1+pad {
			continue
		}
		cx, cy := (c.Box.X0+c.Box.X1)/2, (c.Box.Y0+c.Box.Y1)/2
		if d := (cx-x)*(cx-x) + (cy-y)*(cy-y); best < 0 || d < bestD {
			best, bestD = i, d
		}
	}
	return best
}

func lineCount(words []word, ws []int) int {
	n, last := 0, -1e9
	for _, i := range ws {
		if words[i].box.Y0 > last {
			n++
			last = words[i].box.Y1
		}
	}
	return n
}

// numberRE matches a number as printed: digits with decimal or
// thousands separators.
var numberRE = regexp.MustCompile(`[0-9]+(?:[.,][0-9]+)*`)

// numbers are the numbers in s, thousands commas dropped, sorted.
func numbers(s string) []string {
	out := numberRE.FindAllString(s, -1)
	for i, n := range out {
		out[i] = strings.ReplaceAll(n, ",", "")
	}
	slices.Sort(out)
	return out
}

// numbersDiffer says what differs between the numbers of the text layer
// and of the pixels ("" when they are the same numbers).
func numbersDiffer(layer, pixels string) string {
	a, b := numbers(layer), numbers(pixels)
	if slices.Equal(a, b) {
		return ""
	}
	show := func(ns []string) string {
		if len(ns) == 0 {
			return "no number"
		}
		return strings.Join(ns, ", ")
	}
	return fmt.Sprintf("numbers differ: the text layer has %s where the pixels show %s", show(a), show(b))
}

// tableElements are a table region's elements: the table, then its
// cells, numbered from n.
func tableElements(page, n int, r *Region) []doc.Element {
	tr := r.table
	tid := fmt.Sprintf("p%d-e%d", page, n)
	rows := make([]string, len(r.lines))
	var ls []doc.Line
	for i, l := range r.lines {
		rows[i] = l.text()
		ls = append(ls, doc.Line{BBox: l.box.BBox(), Text: rows[i]})
	}
	te := doc.Element{ID: tid, Page: page, Kind: doc.KindTable, BBox: r.box.BBox(), Text: strings.Join(rows, "\n"), Source: r.sourceName(),
		ConfBP: r.confBP(), Lines: ls,
		Table: &doc.Table{Rows: tr.t.Rows, Cols: tr.t.Cols, Method: tr.t.Method, NumbersChecked: tr.checked}}
	out := []doc.Element{te}
	for i, c := range tr.t.Cells {
		cell := &doc.Cell{Table: tid, Row: c.Row, Col: c.Col, RowSpan: c.RowSpan, ColSpan: c.ColSpan}
		if tr.checked {
			cell.PixelText, cell.Flag = tr.pixels[i], tr.flags[i]
			if cell.Flag != "" {
				out[0].Table.Flagged++
			}
		}
		cr := &Region{source: r.source}
		l := line{}
		for _, w := range c.Words {
			l.words = append(l.words, tr.words[w])
			l.box = l.box.Union(tr.words[w].box)
		}
		cr.lines = []line{l}
		out = append(out, doc.Element{ID: fmt.Sprintf("p%d-e%d", page, n+1+i), Page: page, Kind: doc.KindCell,
			BBox: c.Box.BBox(), Text: tr.cellText(c), Source: cr.sourceName(),
			ConfBP: cr.confBP(), Lines: cellLines(tr, c), Cell: cell})
	}
	return out
}

// cellLines are a cell's lines (words whose boxes overlap vertically by
// half), in order.
func cellLines(tr *tableRegion, c table.Cell) []doc.Line {
	var out []doc.Line
	var cur line
	flush := func() {
		if len(cur.words) > 0 {
			out = append(out, doc.Line{BBox: cur.box.BBox(), Text: cur.text()})
		}
		cur = line{}
	}
	for _, i := range c.Words {
		w := tr.words[i]
		if len(cur.words) > 0 {
			ov := min(cur.box.Y1, w.box.Y1) - max(cur.box.Y0, w.box.Y0)
			if 2*ov < min(cur.box.Y1-cur.box.Y0, w.box.Y1-w.box.Y0) {
				flush()
			}
		}
		cur.words = append(cur.words, w)
		cur.box = cur.box.Union(w.box)
	}
	flush()
	return out
}

// latinText says whether most of a region's letters are Latin (the
// script the box's OCR reads).
func latinText(r *Region) bool {
	n, latin := 0, 0
	for _, l := range r.lines {
		for _, w := range l.words {
			for _, c := range w.text {
				if unicode.IsLetter(c) {
					n++
					if unicode.Is(unicode.Latin, c) {
						latin++
					}
				}
			}
		}
	}
	return 2*latin > n
}
