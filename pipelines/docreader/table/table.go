// Package table finds tables in a page raster, from its ruling lines
// and its whitespace, and places a page's words in their cells with row
// and column spans. It knows pixels and boxes only: the document reader
// gives it a page's raster and words (text layer or OCR) and turns the
// tables into elements.
package table

import (
	"encoding/binary"
	"slices"
	"sort"

	"boxd/pipelines/docreader/raster"
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

// Methods: how a table's grid was found.
const (
	Lattice = "lattice" // rows and columns from ruling lines
	Stream  = "stream"  // some of them from whitespace
)

// Word is one word of the page, with its box.
type Word struct {
	Text string
	Box  raster.Box
}

// Table is a table found on a page, its words placed in cells.
type Table struct {
	Box    raster.Box
	Rows   int
	Cols   int
	Method string // Lattice or Stream
	// Cells with words, row by row (by first row, then first column).
	Cells []Cell
	// Words are the indices of the words placed in the table (every
	// word whose centre lies in its box).
	Words []int
}

// Cell is one cell: its first row and column (from 0), its spans, and
// its words (indices into the words placed, in reading order: line by
// line, left to right).
type Cell struct {
	Row, Col         int
	RowSpan, ColSpan int
	Box              raster.Box // the words' box
	Words            []int
}

// inkMap is a raster thresholded against its background.
type inkMap struct {
	w, h int
	dark []uint8 // 1 where there is ink
	// mark is 1 where a pixel differs from the background either way (a
	// white check box on a tinted page is a mark, not ink).
	mark []uint8
}

func newInkMap(img raster.Image) *inkMap {
	n := img.W * img.H
	// The background is the commonest grey of a sample of the pixels.
	var hist [256]int
	for i := 0; i < n; i += 7 {
		hist[grey(img.Pix[3*i:3*i+3])]++
	}
	bg := 0
	for g := range 256 {
		if hist[g] > hist[bg] {
			bg = g
		}
	}
	thr := uint8(max(0, bg-45))
	hi := uint8(min(255, bg+30))
	m := &inkMap{w: img.W, h: img.H, dark: make([]uint8, n), mark: make([]uint8, n)}
	pix := img.Pix[:3*n]
	for i, j := 0, 0; i < n; i, j = i+1, j+3 {
		p := pix[j : j+3 : j+3]
		g := uint8((77*uint32(p[0]) + 150*uint32(p[1]) + 29*uint32(p[2])) >> 8)
		if g < thr {
			m.dark[i], m.mark[i] = 1, 1
		} else if g > hi {
			m.mark[i] = 1
		}
	}
	return m
}

// grey is a pixel's luma (BT.601 weights in 8-bit fixed point).
func grey(p []byte) uint8 {
	return uint8((77*uint32(p[0]) + 150*uint32(p[1]) + 29*uint32(p[2])) >> 8)
}

// cropTransposed is the part of the map within [x0, x1) × [y0, y1),
// transposed (x and y swapped), with the blank boxes cleared: vertical
// rules are then found walking rows, several times faster than walking
// columns.
func (m *inkMap) cropTransposed(x0, y0, x1, y1 int, blank []raster.Box) *inkMap {
	w, h := x1-x0, y1-y0
	t := &inkMap{w: h, h: w, dark: make([]uint8, w*h)}
	defer func() {
		// Blank boxes: filled bands, whose gaps between light letters
		// would read as rows of short vertical rules.
		for _, b := range blank {
			for x := max(x0, int(b.X0)); x < min(x1, int(b.X1)); x++ {
				for y := max(y0, int(b.Y0)); y < min(y1, int(b.Y1)); y++ {
					t.dark[(x-x0)*t.w+y-y0] = 0
				}
			}
		}
	}()
	const tile = 64
	for ty := 0; ty < h; ty += tile {
		for tx := 0; tx < w; tx += tile {
			for y := ty; y < min(ty+tile, h); y++ {
				row := m.dark[(y0+y)*m.w+x0:]
				for x := tx; x < min(tx+tile, w); x++ {
					t.dark[x*t.w+y] = row[x]
				}
			}
		}
	}
	return t
}

// span is [a, b) along one axis.
type span struct{ a, b int }

// runs are the dark runs of row y at least minLen long, bridging gaps
// of up to 2 pixels, at least 90% dark (a slice through a line of bold
// text has more gaps).
func (m *inkMap) runs(y int, minLen int, buf []span) []span {
	row := m.dark[y*m.w : (y+1)*m.w]
	n := len(row)
	buf = buf[:0]
	start, last, dark := -1, -10, 0
	keep := func() bool { l := last + 1 - start; return l >= minLen && 10*dark >= 9*l }
	for i := 0; i < n; i++ {
		if row[i] == 0 {
			// Most of a page is blank: skip eight blank pixels at a time.
			for i+8 < n && binary.LittleEndian.Uint64(row[i+1:]) == 0 {
				i += 8
			}
			continue
		}
		if start >= 0 && i-last > 3 {
			if keep() {
				buf = append(buf, span{start, last + 1})
			}
			start = -1
		}
		if start < 0 {
			start, dark = i, 0
		}
		last = i
		dark++
	}
	if start >= 0 && keep() {
		buf = append(buf, span{start, last + 1})
	}
	return buf
}

// rule is a ruling line: [a, b) along it, [c0, c1) across it.
type rule struct {
	horiz  bool
	a, b   int
	c0, c1 int
	band   bool // an edge of a filled band
}

func (r rule) pos() float64 { return float64(r.c0+r.c1) / 2 }
func (r rule) length() int  { return r.b - r.a }

func (r rule) box() raster.Box {
	if r.horiz {
		return raster.Box{X0: float64(r.a), Y0: float64(r.c0), X1: float64(r.b), Y1: float64(r.c1)}
	}
	return raster.Box{X0: float64(r.c0), Y0: float64(r.a), X1: float64(r.c1), Y1: float64(r.b)}
}

// rules finds the map's horizontal rules: runs of at least minLen grown
// across neighbouring rows while they overlap by half, kept when at
// most maxThick thick (vertical rules: the transposed map's, horiz
// false).
func (m *inkMap) rules(horiz bool, minLen, maxThick int) ([]rule, []raster.Box) {
	n := m.h
	var open, out []rule
	var bands []raster.Box
	finish := func(r rule) {
		if horiz && r.c1-r.c0 <= maxThick && !m.clearBeside(r) {
			return // a slice through blurred text, not a rule
		}
		es := edges(r, maxThick)
		if len(es) == 2 {
			bands = append(bands, r.box())
		}
		out = append(out, es...)
	}
	var buf []span
	for c := range n {
		buf = m.runs(c, minLen, buf)
		used := make([]bool, len(buf))
		next := make([]rule, 0, len(open)+len(buf))
		for _, r := range open {
			grown := false
			for i, s := range buf {
				if used[i] {
					continue
				}
				if ov := min(r.b, s.b) - max(r.a, s.a); 2*ov >= min(r.b-r.a, s.b-s.a) {
					r.a, r.b, r.c1 = min(r.a, s.a), max(r.b, s.b), c+1
					used[i], grown = true, true
					break
				}
			}
			if grown {
				next = append(next, r)
			} else {
				finish(r)
			}
		}
		for i, s := range buf {
			if !used[i] {
				next = append(next, rule{horiz: horiz, a: s.a, b: s.b, c0: c, c1: c + 1})
			}
		}
		open = next
	}
	for _, r := range open {
		finish(r)
	}
	return out, bands
}

// clearBeside says whether a thin horizontal run has clear paper beside
// it on one side: each of the 4 rows from 2 to 5 pixels above it, or
// from 1 to 4 below, at most half ink along its length. A rule does, on
// one side at least (the other may be a shaded band, or text sitting on
// it); a run through a line of blurred text, whose letters the blur has
// joined (a scan, or one turned straight), has the rest of the letters'
// bodies on both sides.
func (m *inkMap) clearBeside(r rule) bool {
	clear := func(from, to int) bool {
		for y := from; y <= to; y++ {
			if y < 0 || y >= m.h {
				continue
			}
			row, dark := m.dark[y*m.w:(y+1)*m.w], 0
			for x := r.a; x < r.b; x++ {
				dark += int(row[x])
			}
			if 2*dark >= r.b-r.a {
				return false
			}
		}
		return true
	}
	return clear(r.c0-5, r.c0-2) || clear(r.c1, r.c1+3)
}

// maxBand is the tallest filled band (a shaded header row) whose edges
// count as rules.
const maxBand = 80

// edges are the rules a grown run makes: itself when thin; the top and
// bottom edges of a filled horizontal band (a shaded row of a table);
// none for anything else.
func edges(r rule, maxThick int) []rule {
	switch t := r.c1 - r.c0; {
	case t <= maxThick:
		return []rule{r}
	case r.horiz && t <= maxBand:
		top, bottom := r, r
		top.c1 = r.c0 + 1
		bottom.c0 = r.c1 - 1
		top.band, bottom.band = true, true
		return []rule{top, bottom}
	}
	return nil
}

// Rule detection parameters, in raster pixels (144 DPI).
const (
	ruleMinH     = 30  // a horizontal rule's least length
	ruleMinV     = 18  // a vertical rule's (one row of a tight table)
	ruleMaxThick = 6   // thicker is a filled shape
	tableMinRule = 60  // a table's horizontal rules are at least this long
	ruleStackGap = 320 // horizontal rules of one table are at most this far apart
)

// tableCand is a group of rules that may be a table.
type tableCand struct {
	h, v []rule
	box  raster.Box
	// marks: build the grid on marks (anything off the background), not
	// ink alone (a table without rules whose check boxes are white).
	marks bool
}

// candidates groups rules into possible tables (step 2).
func candidates(hs, vs []rule) []tableCand {
	var long []rule
	for _, h := range hs {
		if h.length() >= tableMinRule {
			long = append(long, h)
		}
	}
	all := append(slices.Clone(long), vs...)
	sets := newSets(len(all))
	find, union := sets.find, sets.union
	const tol = 3
	crossed := make([]bool, len(long))
	for i, h := range long {
		for j, v := range vs {
			if v.c0 >= h.a-tol && v.c1 <= h.b+tol && h.c0 >= v.a-tol && h.c1 <= v.b+tol {
				union(i, len(long)+j)
				crossed[i] = true
			}
		}
	}
	// The two edges of a filled band go together.
	for i, h := range long {
		for k := i + 1; k < len(long); k++ {
			g := long[k]
			if h.band && g.band && h.a == g.a && h.b == g.b && abs(h.pos()-g.pos()) <= maxBand {
				union(i, k)
			}
		}
	}
	// Stacks join rules no vertical rule crosses: a ruled grid is held
	// together by its own lines, and should not reach for a rule above
	// or below it.
	for i, h := range long {
		for k := i + 1; k < len(long) && !crossed[i]; k++ {
			g := long[k]
			if crossed[k] {
				continue
			}
			tolX := max(6, 0.03*float64(max(h.length(), g.length())))
			if abs(float64(h.a-g.a)) <= tolX && abs(float64(h.b-g.b)) <= tolX && abs(h.pos()-g.pos()) <= ruleStackGap {
				union(i, k)
			}
		}
	}
	groups := map[int]*tableCand{}
	var order []int
	for i, r := range all {
		root := find(i)
		c := groups[root]
		if c == nil {
			c = &tableCand{}
			groups[root] = c
			order = append(order, root)
		}
		if r.horiz {
			c.h = append(c.h, r)
		} else {
			c.v = append(c.v, r)
		}
		c.box = c.box.Union(r.box())
	}
	var out []tableCand
	for _, root := range order {
		c := groups[root]
		if len(clusterPos(c.h, 4)) < 2 || c.box.Y1-c.box.Y0 < 16 {
			continue
		}
		// Shorter rules inside the box belong to the table too (a rule
		// under a header spanning some columns).
		for _, h := range hs {
			b := h.box()
			if h.length() < tableMinRule && b.X0 >= c.box.X0-3 && b.X1 <= c.box.X1+3 && b.Y0 > c.box.Y0+3 && b.Y1 < c.box.Y1-3 {
				c.h = append(c.h, h)
			}
		}
		for _, h := range long {
			b := h.box()
			if !slices.Contains(c.h, h) && b.X0 >= c.box.X0-3 && b.X1 <= c.box.X1+3 && b.Y0 > c.box.Y0+3 && b.Y1 < c.box.Y1-3 {
				c.h = append(c.h, h)
			}
		}
		out = append(out, *c)
	}
	return out
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// clusterPos merges the rules' positions within tol pixels; the
// positions, in order.
func clusterPos(rs []rule, tol float64) []float64 {
	ps := make([]float64, len(rs))
	for i, r := range rs {
		ps[i] = r.pos()
	}
	slices.Sort(ps)
	var out []float64
	for _, p := range ps {
		if n := len(out); n > 0 && p-out[n-1] <= tol {
			continue
		}
		out = append(out, p)
	}
	return out
}

// cut is a row or column boundary: at a rule position, or a whitespace
// cut (a gutter's middle, or the top of a text line).
type cut struct {
	at   float64
	rule bool
}

// grid is a table's rows and columns before words are placed.
type grid struct {
	box    raster.Box
	xs, ys []cut // column and row boundaries, the box's edges included
	h, v   []rule
	method string
	full   int   // horizontal rules spanning the width
	cellOf []int // slot r*cols+c -> cell index
	cells  []gridCell
	// The ink within the box, less the table's rules.
	mask           []bool
	mx, my, mw, mh int
}

type gridCell struct {
	r0, c0, r1, c1 int // slots [r0, r1] × [c0, c1], inclusive
}

func (g *grid) rows() int { return len(g.ys) - 1 }
func (g *grid) cols() int { return len(g.xs) - 1 }

// newMask copies the ink within the box, less the rules (each widened
// by a pixel).
func (g *grid) newMask(m *inkMap, marks bool) {
	src := m.dark
	if marks && m.mark != nil {
		src = m.mark
	}
	g.mx, g.my = max(0, int(g.box.X0)), max(0, int(g.box.Y0))
	x1, y1 := min(m.w, int(g.box.X1)+1), min(m.h, int(g.box.Y1)+1)
	g.mw, g.mh = max(0, x1-g.mx), max(0, y1-g.my)
	g.mask = make([]bool, g.mw*g.mh)
	for y := range g.mh {
		row := src[(g.my+y)*m.w+g.mx : (g.my+y)*m.w+g.mx+g.mw]
		dst := g.mask[y*g.mw : (y+1)*g.mw]
		for x, d := range row {
			dst[x] = d != 0
		}
	}
	for _, rs := range [2][]rule{g.h, g.v} {
		for _, r := range rs {
			b := r.box()
			for y := max(g.my, int(b.Y0)-1); y < min(g.my+g.mh, int(b.Y1)+1); y++ {
				for x := max(g.mx, int(b.X0)-1); x < min(g.mx+g.mw, int(b.X1)+1); x++ {
					g.mask[(y-g.my)*g.mw+x-g.mx] = false
				}
			}
		}
	}
}

// inkAt is the page's ink within the box, less the table's rules.
func (g *grid) inkAt(x, y int) bool {
	x, y = x-g.mx, y-g.my
	return x >= 0 && y >= 0 && x < g.mw && y < g.mh && g.mask[y*g.mw+x]
}

// bands are the runs of rows holding ink within [x0, x1) × [y0, y1),
// bridging gaps of one pixel, at least 2 pixels tall.
func (g *grid) bands(x0, x1, y0, y1 int) []span {
	var out []span
	start, last := -1, -10
	for y := y0; y < y1; y++ {
		has := false
		for x := x0; x < x1 && !has; x++ {
			has = g.inkAt(x, y)
		}
		if !has {
			continue
		}
		if start >= 0 && y-last > 2 {
			if last+1-start >= 2 {
				out = append(out, span{start, last + 1})
			}
			start = -1
		}
		if start < 0 {
			start = y
		}
		last = y
	}
	if start >= 0 && last+1-start >= 2 {
		out = append(out, span{start, last + 1})
	}
	return out
}

// buildGrid finds a candidate's rows, columns and cells (steps 3 to 5).
func buildGrid(m *inkMap, c tableCand, words []Word, bands []raster.Box) *grid {
	g := &grid{box: c.box, h: c.h, v: c.v}
	g.newMask(m, c.marks)
	x0, x1 := int(c.box.X0), int(c.box.X1)
	y0, y1 := int(c.box.Y0), int(c.box.Y1)
	// Horizontal rule positions, and which span the width.
	hpos := clusterPos(c.h, 4)
	full := 0
	for _, p := range hpos {
		if g.coverH(p, c.box.X0, c.box.X1) >= 0.9 {
			full++
		}
	}
	g.full = full
	// Interior vertical rules.
	var interior []float64
	for _, p := range clusterPos(c.v, 4) {
		if p > c.box.X0+4 && p < c.box.X1-4 {
			interior = append(interior, p)
		}
	}
	// The body: below the first full-width rule after the top one.
	bodyTop := y0
	seen := 0
	for _, p := range hpos {
		if g.coverH(p, c.box.X0, c.box.X1) >= 0.9 {
			seen++
			if seen == 2 && len(hpos) >= 3 {
				bodyTop = int(p)
				break
			}
		}
	}
	lineH := 20.0
	if bs := g.bands(x0, x1, bodyTop, y1); len(bs) > 0 {
		hs := make([]float64, len(bs))
		for i, b := range bs {
			hs[i] = float64(b.b - b.a)
		}
		slices.Sort(hs)
		lineH = hs[len(hs)/2]
	}
	g.xs = []cut{{at: c.box.X0, rule: true}}
	if len(interior) > 0 {
		for _, p := range interior {
			g.xs = append(g.xs, cut{at: p, rule: true})
		}
		g.method = Lattice
	} else {
		for _, p := range g.gutters(x0, x1, bodyTop, y1, max(8, 0.7*lineH)) {
			g.xs = append(g.xs, cut{at: p})
		}
		g.method = Stream
	}
	g.xs = append(g.xs, cut{at: c.box.X1, rule: true})
	// Rows: the rules, and in a table of at most three full-width rules
	// the lines between them.
	for i, p := range hpos {
		if i > 0 && full <= 3 {
			g.ys = append(g.ys, g.lineCuts(hpos[i-1], p)...)
		}
		g.ys = append(g.ys, cut{at: p, rule: true})
	}
	if full <= 3 && len(g.ys) > len(hpos) {
		g.method = Stream
	}
	g.spans(words, bands)
	return g
}

// coverH is the share of [a, b) covered by the horizontal rules at
// position p (within 4 pixels).
func (g *grid) coverH(p, a, b float64) float64 {
	return cover(g.h, p, a, b)
}

func cover(rs []rule, p, a, b float64) float64 {
	if b <= a {
		return 0
	}
	var segs []span
	for _, r := range rs {
		if abs(r.pos()-p) <= 4 {
			lo, hi := max(float64(r.a), a), min(float64(r.b), b)
			if hi > lo {
				segs = append(segs, span{int(lo), int(hi)})
			}
		}
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].a < segs[j].a })
	n, end := 0, -1
	for _, s := range segs {
		if s.a > end {
			n += s.b - s.a
			end = s.b
		} else if s.b > end {
			n += s.b - end
			end = s.b
		}
	}
	return float64(n) / (b - a)
}

// gutters are the middles of the x ranges, at least minW wide, where no
// text line of [y0, y1) has ink, between the table's first and last ink.
func (g *grid) gutters(x0, x1, y0, y1 int, minW float64) []float64 {
	bs := g.bands(x0, x1, y0, y1)
	if len(bs) == 0 {
		return nil
	}
	count := make([]int, x1-x0)
	for _, b := range bs {
		for x := x0; x < x1; x++ {
			for y := b.a; y < b.b; y++ {
				if g.inkAt(x, y) {
					count[x-x0]++
					break
				}
			}
		}
	}
	first, last := -1, -1
	for i, n := range count {
		if n > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	var out []float64
	for i := first; i >= 0 && i <= last; {
		if count[i] > 0 {
			i++
			continue
		}
		j := i
		for j <= last && count[j] == 0 {
			j++
		}
		if float64(j-i) >= minW {
			out = append(out, float64(x0)+float64(i+j)/2)
		}
		i = j
	}
	return out
}

// lineCuts cuts the text between two rules into rows: at 3 pixels above
// each line but the first of the column with the commonest number of
// lines (ties: the more lines).
func (g *grid) lineCuts(top, bottom float64) []cut {
	counts := map[int]int{}
	var per [][]span
	for c := range len(g.xs) - 1 {
		bs := g.bands(int(g.xs[c].at)+2, int(g.xs[c+1].at)-1, int(top)+3, int(bottom)-2)
		per = append(per, bs)
		if len(bs) > 0 {
			counts[len(bs)]++
		}
	}
	mode := 0
	for n, k := range counts {
		if k > counts[mode] || k == counts[mode] && n > mode {
			mode = n
		}
	}
	if mode < 2 {
		return nil
	}
	for _, bs := range per {
		if len(bs) == mode {
			var out []cut
			// Above the first line too: a header over the other columns
			// (a table without rules has no rule under it) is a row of
			// its own; where nothing is there, the row is empty and
			// dropped.
			if float64(bs[0].a-3) > top+3 {
				out = append(out, cut{at: float64(bs[0].a - 3)})
			}
			for _, b := range bs[1:] {
				out = append(out, cut{at: float64(b.a - 3)})
			}
			return out
		}
	}
	return nil
}

// spans joins the grid's slots into cells (step 5).
func (g *grid) spans(words []Word, bands []raster.Box) {
	rows, cols := g.rows(), g.cols()
	sets := newSets(rows * cols)
	find := sets.find
	for r := range rows {
		ya, yb := g.ys[r].at, g.ys[r+1].at
		for c := range cols - 1 {
			x := g.xs[c+1]
			var join bool
			if x.rule {
				join = cover(g.v, x.at, ya, yb) < 0.5
				// Inside a filled band (a shaded header row) the cells
				// are parted by colour, not lines: they are one cell only
				// where a word runs across.
				if join && inBand(bands, x.at, ya, yb) {
					join = wordAcross(words, x.at, ya, yb)
				}
			} else {
				join = g.crossV(int(x.at), int(ya)+2, int(yb)-1)
			}
			if join {
				sets.union(r*cols+c, r*cols+c+1)
			}
		}
	}
	for r := range rows - 1 {
		y := g.ys[r+1]
		for c := range cols {
			xa, xb := g.xs[c].at, g.xs[c+1].at
			var join bool
			if y.rule {
				join = cover(g.h, y.at, xa, xb) < 0.5
			} else {
				join = g.crossH(int(y.at), int(xa)+2, int(xb)-1)
			}
			if join {
				sets.union(r*cols+c, (r+1)*cols+c)
			}
		}
	}
	byRoot := map[int]int{}
	g.cellOf = make([]int, rows*cols)
	for r := range rows {
		for c := range cols {
			root := find(r*cols + c)
			i, ok := byRoot[root]
			if !ok {
				i = len(g.cells)
				byRoot[root] = i
				g.cells = append(g.cells, gridCell{r, c, r, c})
			}
			gc := &g.cells[i]
			gc.r0, gc.c0, gc.r1, gc.c1 = min(gc.r0, r), min(gc.c0, c), max(gc.r1, r), max(gc.c1, c)
			g.cellOf[r*cols+c] = i
		}
	}
}

// crossV says whether ink runs across the column x within (y0, y1):
// ink within 3 pixels of it (the gaps between letters are narrower, a
// gutter's half wider).
func (g *grid) crossV(x, y0, y1 int) bool {
	for y := y0; y < y1; y++ {
		for dx := -3; dx <= 3; dx++ {
			if g.inkAt(x+dx, y) {
				return true
			}
		}
	}
	return false
}

// crossH says whether a stroke runs through the row y within (x0, x1):
// ink at y and 2 pixels above and below.
func (g *grid) crossH(y, x0, x1 int) bool {
	for x := x0; x < x1; x++ {
		if g.inkAt(x, y) && g.inkAt(x, y-2) && g.inkAt(x, y+2) {
			return true
		}
	}
	return false
}

// slot is the grid slot holding the point, or -1 outside the table.
func (g *grid) slot(x, y float64) int {
	if x < g.box.X0 || x >= g.box.X1 || y < g.box.Y0 || y >= g.box.Y1 {
		return -1
	}
	c := sort.Search(len(g.xs), func(i int) bool { return g.xs[i].at > x }) - 1
	r := sort.Search(len(g.ys), func(i int) bool { return g.ys[i].at > y }) - 1
	if c < 0 || r < 0 || c >= g.cols() || r >= g.rows() {
		return -1
	}
	return r*g.cols() + c
}

// ruledGrids finds the page's ruled table grids (steps 1 to 5).
func ruledGrids(m *inkMap, words []Word) ([]*grid, []raster.Box) {
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
		return out, bands
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
	for _, c := range candidates(hs, vs) {
		if g := buildGrid(m, c, words, bands); g.rows() >= 1 && g.cols() >= 1 {
			out = append(out, g)
		}
	}
	return out, bands
}

// findGrids finds the page's table grids: ruled ones (steps 1 to 5),
// then tables of whitespace alone away from them (lineless.go).
func findGrids(img raster.Image, words []Word) []*grid {
	m := newInkMap(img)
	out, bands := ruledGrids(m, words)
	for _, c := range linelessCands(m, words, out) {
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
	case g.method == Stream && g.full <= 2 && t.Cols < 3:
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
	for _, l := range groupLines(words, s) {
		out = append(out, l...)
	}
	return out
}

// groupLines groups the words ws (indices) into lines, top to bottom:
// words whose vertical extents overlap by half the shorter one's height
// with the line so far; each line left to right.
func groupLines(words []Word, ws []int) [][]int {
	s := slices.Clone(ws)
	sort.SliceStable(s, func(i, j int) bool { return words[s[i]].Box.Y0 < words[s[j]].Box.Y0 })
	var lines [][]int
	var lineBox raster.Box
	for _, i := range s {
		b := words[i].Box
		if n := len(lines); n > 0 {
			ov := min(lineBox.Y1, b.Y1) - max(lineBox.Y0, b.Y0)
			if 2*ov >= min(lineBox.Y1-lineBox.Y0, b.Y1-b.Y0) {
				lines[n-1] = append(lines[n-1], i)
				lineBox = lineBox.Union(b)
				continue
			}
		}
		lines = append(lines, []int{i})
		lineBox = b
	}
	for _, l := range lines {
		sort.SliceStable(l, func(a, b int) bool { return words[l[a]].Box.X0 < words[l[b]].Box.X0 })
	}
	return lines
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
