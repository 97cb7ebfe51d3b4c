// Package table finds tables in a page raster, from its ruling lines
// and its whitespace, and places a page's words in their cells with row
// and column spans. It knows pixels and boxes only: the document reader
// gives it a page's raster and words (text layer or OCR) and turns the
// tables into elements.
package table

import (
	wd "boxd/pipelines/docreader/table/words"
	"slices"
	"sort"

	"boxd/engine/raster"
)

// Tables are found in a page's pixels (contract 3, section 2: "only
// tables are read from pixels"): ruling lines first, then whitespace.
//
//  1. The raster is thresholded against its background (the commonest
//     grey), and runs of ink at least 30 pixels long (18 vertically),
//     bridging gaps of 2 pixels and at least 90% ink, are grown across rows (columns) into
//     rules at most 6 pixels thick; a filled horizontal band up to 80
//     pixels tall (a shaded header row) gives its top and bottom edges,
//     and other filled shapes nothing.
//  2. Candidate tables are groups of rules: rules that cross (within 3
//     pixels), and horizontal rules of the same extent (within 3% of
//     their width) at most 320 pixels apart, as in a ruled table with
//     no vertical lines or a booktabs table (top, middle and bottom
//     rules). A group needs two horizontal rules at least 60 pixels
//     long; its box is the table's, and it takes in the other horizontal
//     rules inside its box (a short rule under a spanning header).
//  3. Columns: the interior vertical rules where there are any
//     (lattice); otherwise whitespace gutters, x ranges at least 0.7 of
//     a text line's height where no text line of the table's body (below
//     its header rule) has ink, each cut at its middle (stream).
//  4. Rows: the horizontal rules; where the table has at most three
//     full-width rules (booktabs, or a box), the text between two rules
//     is also cut into rows at the lines of the column with the commonest
//     number of lines.
//  5. Spans: two neighbouring slots of the grid are one cell where the
//     rule between them is missing (lattice semantics: a cell spanning
//     columns has no line through it), or, for a whitespace cut, where
//     ink runs across the cut.
//  6. The page's words (text layer, or OCR on a scan) are placed in the
//     cell holding their centre. A table needs two rows and two columns
//     of cells with text, at least four such cells, and at most 15
//     words a cell on average (prose between two rules is not a table).
//
// On a born-digital page the cells' text is the text layer's; the table
// is also read from its pixels by Tesseract, and every number in a cell
// is compared: a cell whose numbers differ is flagged (Cell.Flag).

// Methods: how a table's grid was found (and Leaders, words.Leaders).
const (
	Lattice = wd.Lattice
	Stream  = wd.Stream
	Leaders = wd.Leaders
)

// The types of tables found live in package words, with the tables read
// from words alone (dot leaders).
type (
	Word  = wd.Word
	Table = wd.Table
	Cell  = wd.Cell
)

// FindLeaders finds tables of dot leaders among the words not taken
// (words.FindLeaders).
func FindLeaders(ws []Word, taken []bool) []Table { return wd.FindLeaders(ws, taken) }

// ruledGrids finds the page's ruled table grids (steps 1 to 5); and the
// page's filled bands and horizontal rules.
func ruledGrids(m *inkMap, words []Word) ([]*grid, []raster.Box, []rule) {
	hs, bands := m.rules(true, ruleMinH, ruleMaxThick)
	// Runs inside a filled band (the gaps between its light letters
	// leave long dark stretches) are not rules.
	hs = slices.DeleteFunc(hs, func(r rule) bool {
		b := r.box()
		for _, band := range bands {
			if b.X0 >= band.X0-2 && b.X1 <= band.X1+2 && b.Y0 > band.Y0+1 && b.Y1 < band.Y1-1 {
				return true
			}
		}
		return false
	})
	// A table needs two long horizontal rules: vertical rules are looked
	// for only within the box of those, on the transposed map.
	var span raster.Box
	long := 0
	for _, h := range hs {
		if h.length() >= tableMinRule {
			span = span.Union(h.box())
			long++
		}
	}
	var out []*grid
	if long < 2 {
		return out, bands, hs
	}
	x0, y0 := max(0, int(span.X0)-4), max(0, int(span.Y0)-4)
	x1, y1 := min(m.w, int(span.X1)+4), min(m.h, int(span.Y1)+4)
	vs, _ := m.cropTransposed(x0, y0, x1, y1, bands).rules(true, ruleMinV, ruleMaxThick)
	for i := range vs {
		// Along the transposed rows is down the page; across is x.
		vs[i].horiz = false
		vs[i].a, vs[i].b = vs[i].a+y0, vs[i].b+y0
		vs[i].c0, vs[i].c1 = vs[i].c0+x0, vs[i].c1+x0
	}
	for _, c := range candidates(hs, vs, words) {
		if g := buildGrid(m, c, words, bands); g.rows() >= 1 && g.cols() >= 1 {
			out = append(out, g)
		}
	}
	return out, bands, hs
}

// findGrids finds the page's table grids: ruled ones (steps 1 to 5),
// then tables of whitespace alone away from them (lineless.go).
func findGrids(img raster.Image, words []Word) []*grid {
	m := newInkMap(img)
	out, bands, hs := ruledGrids(m, words)
	for _, c := range linelessCands(m, words, out, hs) {
		if g := buildGrid(m, c, words, bands); g.rows() >= 1 && g.cols() >= 1 {
			out = append(out, g)
		}
	}
	return out
}

// Find finds the page's tables and places its words in their cells
// (step 6). A word belongs to at most one table.
func Find(img raster.Image, words []Word) []Table {
	taken := make([]bool, len(words))
	// Leader lines first: they are the more specific reading.
	out := FindLeaders(words, taken)
	for _, t := range out {
		for _, i := range t.Words {
			taken[i] = true
		}
	}
	for _, g := range findGrids(img, words) {
		if t, ok := g.place(words, taken); ok {
			for _, i := range t.Words {
				taken[i] = true
			}
			out = append(out, t)
		}
	}
	return out
}

// Table acceptance (step 6).
const (
	minTextCells   = 4
	maxWordsACell  = 15.0
	minRowsAndCols = 2
	// minFill: the least share of a table's rows × columns that hold a
	// cell with text (a drawing made of lines holds a few words in a
	// large grid); minStreamFill: the same for a grid cut by whitespace,
	// whose columns come from the text itself.
	minFill       = 0.25
	minStreamFill = 0.5
)

// place puts the words whose centres lie in the grid into its cells,
// and says whether the result is a table.
func (g *grid) place(words []Word, taken []bool) (Table, bool) {
	t := Table{Box: g.box, Method: g.method}
	byCell := make([][]int, len(g.cells))
	for i, w := range words {
		if taken[i] {
			continue
		}
		x, y := w.Box.Center()
		s := g.slot(x, y)
		if s < 0 {
			continue
		}
		c := g.cellOf[s]
		byCell[c] = append(byCell[c], i)
		t.Words = append(t.Words, i)
	}
	// Rows and columns holding text; cells renumbered over them.
	usedR := make([]bool, g.rows())
	usedC := make([]bool, g.cols())
	n, nWords := 0, 0
	for ci, ws := range byCell {
		if len(ws) == 0 {
			continue
		}
		n++
		nWords += len(ws)
		gc := g.cells[ci]
		usedR[gc.r0], usedC[gc.c0] = true, true
	}
	rowAt, colAt := renumber(usedR), renumber(usedC)
	t.Rows, t.Cols = rowAt[len(rowAt)-1], colAt[len(colAt)-1]
	if n < minTextCells || t.Rows < minRowsAndCols || t.Cols < minRowsAndCols || float64(nWords)/float64(n) > maxWordsACell {
		return Table{}, false
	}
	fill := float64(n) / float64(t.Rows*t.Cols)
	switch {
	case fill < minFill:
		return Table{}, false
	case g.method == Stream && fill < minStreamFill:
		return Table{}, false
	case g.method == Stream && g.full <= 2 && t.Cols < 3 && !g.captioned && !g.figures:
		// Two rules around two columns of text is more often a framed
		// example or a note than a table.
		return Table{}, false
	}
	for ci, ws := range byCell {
		if len(ws) == 0 {
			continue
		}
		gc := g.cells[ci]
		c := Cell{Row: rowAt[gc.r0], Col: colAt[gc.c0], Words: readingOrder(words, ws)}
		c.RowSpan = max(1, rowAt[gc.r1+1]-c.Row)
		c.ColSpan = max(1, colAt[gc.c1+1]-c.Col)
		for _, i := range ws {
			c.Box = c.Box.Union(words[i].Box)
		}
		t.Cells = append(t.Cells, c)
	}
	// The box holds the rules (a pixel more: a rule's antialiased edge)
	// and every word placed.
	t.Box = raster.Box{X0: g.box.X0 - 1, Y0: g.box.Y0 - 1, X1: g.box.X1 + 1, Y1: g.box.Y1 + 1}
	for _, c := range t.Cells {
		t.Box = t.Box.Union(c.Box)
	}
	sort.SliceStable(t.Cells, func(i, j int) bool {
		if t.Cells[i].Row != t.Cells[j].Row {
			return t.Cells[i].Row < t.Cells[j].Row
		}
		return t.Cells[i].Col < t.Cells[j].Col
	})
	return t, true
}

// renumber maps slot indices to the indices of the used ones: out[i] is
// the number of used slots before i (out has one more entry, the total).
func renumber(used []bool) []int {
	out := make([]int, len(used)+1)
	n := 0
	for i, u := range used {
		out[i] = n
		if u {
			n++
		}
	}
	out[len(used)] = n
	return out
}

// readingOrder orders a cell's words line by line (words whose vertical
// extents overlap by half are on one line), left to right; a cell whose
// words all stand on end (a rotated column header, read bottom to top)
// left to right, then bottom to top.
func readingOrder(words []Word, ws []int) []int {
	s := slices.Clone(ws)
	upright := false
	for _, i := range s {
		b := words[i].Box
		if b.Y1-b.Y0 <= b.X1-b.X0 || len([]rune(words[i].Text)) < 2 {
			upright = true
		}
	}
	if !upright {
		sort.SliceStable(s, func(i, j int) bool {
			a, b := words[s[i]].Box, words[s[j]].Box
			if min(a.X1, b.X1)-max(a.X0, b.X0) > 0 {
				return a.Y1 > b.Y1
			}
			return a.X0 < b.X0
		})
		return s
	}
	var out []int
	for _, l := range wd.GroupLines(words, s) {
		out = append(out, l...)
	}
	return out
}

// sets are disjoint sets of 0..n-1 (union-find).
type sets []int

func newSets(n int) sets {
	s := make(sets, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func (s sets) find(i int) int {
	for s[i] != i {
		s[i] = s[s[i]]
		i = s[i]
	}
	return i
}

func (s sets) union(i, j int) { s[s.find(i)] = s.find(j) }

// inBand says whether the stretch of column x from ya to yb lies in a
// filled band.
func inBand(bands []raster.Box, x, ya, yb float64) bool {
	for _, b := range bands {
		if x >= b.X0 && x <= b.X1 && ya >= b.Y0-4 && yb <= b.Y1+4 {
			return true
		}
	}
	return false
}

// wordAcross says whether a word whose middle lies between ya and yb
// runs across column x.
func wordAcross(words []Word, x, ya, yb float64) bool {
	for _, w := range words {
		if _, cy := w.Box.Center(); cy >= ya && cy < yb && w.Box.X0 < x-2 && w.Box.X1 > x+2 {
			return true
		}
	}
	return false
}
