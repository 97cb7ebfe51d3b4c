package table

import (
	"slices"
	"sort"

	"boxd/engine/raster"
)

// Steps 3 to 5: a candidate's rows, columns and cells.

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
	// captioned: found without rules under a caption (two columns do).
	captioned bool
	full      int   // horizontal rules spanning the width
	cellOf    []int // slot r*cols+c -> cell index
	cells     []gridCell
	// figures: found without rules, with a column of figures that are
	// data (two columns do too).
	figures bool
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
	g := &grid{box: c.box, h: c.h, v: c.v, captioned: c.captioned, figures: c.figures}
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
		for _, p := range g.bodyGutters(x0, x1, bodyTop, y1, max(8, 0.7*lineH)) {
			g.xs = append(g.xs, cut{at: p})
		}
		g.method = Stream
	}
	g.xs = append(g.xs, cut{at: c.box.X1, rule: true})
	// Rows: the rules, and the lines between them in a table of at most
	// three full-width rules, or of more rules and no column rules (a
	// ruled header and total around an unruled body; lineCuts' strict
	// rule). Between a lattice's rules a band is one row.
	for i, p := range hpos {
		if i > 0 {
			if full <= 3 || len(interior) == 0 {
				g.ys = append(g.ys, g.lineCuts(hpos[i-1], p, full > 3)...)
			}
		}
		g.ys = append(g.ys, cut{at: p, rule: true})
	}
	if len(g.ys) > len(hpos) {
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
// lines (ties: the more lines). Between two of many rules (strict: a
// ruled header and total around an unruled body), only where most
// columns with text have that many lines, at least two of them: a band
// where one cell's text wraps onto a second line is one row.
func (g *grid) lineCuts(top, bottom float64, strict bool) []cut {
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
	if strict {
		filled := 0
		for _, k := range counts {
			filled += k
		}
		if counts[mode] < 2 || 2*counts[mode] <= filled {
			return nil
		}
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
				join = g.crossV(int(x.at), int(ya)+2, int(yb)-1) && phraseAcross(words, x.at, ya, yb)
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

// bodyGutters are the gutters of the text lines from the first, second
// or third line down, whichever start finds the most (the earliest among
// equals, and the header at most a third of the lines): a header over
// columns without rules (a spanning "Employed" over "Men" and "Women")
// crosses the body's gutters, and is then a spanning cell, not a reason
// to join the body's columns.
func (g *grid) bodyGutters(x0, x1, y0, y1 int, minW float64) []float64 {
	best := g.gutters(x0, x1, y0, y1, minW)
	bs := g.bands(x0, x1, y0, y1)
	for k := 1; k <= 2 && 3*k <= len(bs); k++ {
		if gs := g.gutters(x0, x1, bs[k].a, y1, minW); len(gs) > len(best) {
			best = gs
		}
	}
	return best
}

// phraseAcross says whether a phrase (words of one line whose gaps are
// under half their height) whose middle lies between ya and yb runs
// across column x, a fifth of it at least on each side (and 3 pixels):
// a header word right-aligned over its column that reaches past a
// gutter's middle is its column's, not a cell across two. With no word there at all (marks
// alone), ink across is enough.
func phraseAcross(words []Word, x, ya, yb float64) bool {
	var in []Word
	for _, w := range words {
		if _, cy := w.Box.Center(); cy >= ya && cy < yb {
			in = append(in, w)
		}
	}
	if len(in) == 0 {
		return true
	}
	slices.SortFunc(in, func(a, b Word) int { return int(a.Box.X0 - b.Box.X0) })
	for i := 0; i < len(in); i++ {
		p := in[i].Box
		for j := i + 1; j < len(in); j++ {
			b := in[j].Box
			h := min(p.Y1-p.Y0, b.Y1-b.Y0)
			if 2*(min(p.Y1, b.Y1)-max(p.Y0, b.Y0)) >= h && b.X0-p.X1 < 0.5*h && b.X0 >= p.X0 {
				p = p.Union(b)
			}
		}
		if d := min(x-p.X0, p.X1-x); d > 3 && d >= 0.2*(p.X1-p.X0) {
			return true
		}
	}
	return false
}
