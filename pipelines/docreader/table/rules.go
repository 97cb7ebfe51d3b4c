package table

import (
	"encoding/binary"
	"slices"
	"strings"

	"boxd/engine/raster"
)

// Step 1 and 2: ink, rules and candidate tables.

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
	ruleStackGap = 720 // horizontal rules of one table are at most this far apart
)

// tableCand is a group of rules that may be a table.
type tableCand struct {
	h, v []rule
	box  raster.Box
	// marks: build the grid on marks (anything off the background), not
	// ink alone (a table without rules whose check boxes are white).
	marks bool
	// captioned: a table without rules under a caption ("Table 3"),
	// which may have two columns; figures: one with a column of figures
	// that are data (split.go), which may too.
	captioned, figures bool
}

// candidates groups rules into possible tables (step 2).
func candidates(hs, vs []rule, words []Word) []tableCand {
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
	// Nor does a stack reach across a break (stackBreaks): two tables
	// one under the other stay two.
	breaks := stackBreaks(long, crossed, words)
	for i, h := range long {
		for k := i + 1; k < len(long) && !crossed[i]; k++ {
			g := long[k]
			if crossed[k] {
				continue
			}
			tolX := max(6, 0.03*float64(max(h.length(), g.length())))
			lo, hi := min(h.pos(), g.pos()), max(h.pos(), g.pos())
			across := slices.ContainsFunc(breaks, func(y float64) bool { return y > lo && y < hi })
			if !across && abs(float64(h.a-g.a)) <= tolX && abs(float64(h.b-g.b)) <= tolX && hi-lo <= ruleStackGap {
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

// stackBreaks are the places a stack of rules does not reach across: the
// middle of a blank band over 12 pixels tall between two neighbouring
// uncrossed rules (no word between them over their common width: the
// end of one table and the start of the next), and a caption line
// ("Table 3", "Figure 2").
func stackBreaks(long []rule, crossed []bool, words []Word) []float64 {
	var out []float64
	for i, w := range words {
		if captionAt(words, i) {
			out = append(out, (w.Box.Y0+w.Box.Y1)/2)
		}
	}
	var free []rule
	for i, r := range long {
		if !crossed[i] {
			free = append(free, r)
		}
	}
	slices.SortFunc(free, func(a, b rule) int { return int(a.pos()) - int(b.pos()) })
	for i := 1; i < len(free); i++ {
		a, b := free[i-1], free[i]
		x0, x1 := float64(max(a.a, b.a)), float64(min(a.b, b.b))
		if b.pos()-a.pos() <= 12 || x1 <= x0 {
			continue
		}
		empty := !slices.ContainsFunc(words, func(w Word) bool {
			cx, cy := w.Box.Center()
			return cx > x0 && cx < x1 && cy > a.pos() && cy < b.pos()
		})
		if empty {
			out = append(out, (a.pos()+b.pos())/2)
		}
	}
	return out
}

// captionAt says whether word i starts a caption: "Table", "Figure",
// "Exhibit" or "Chart" with a number (digits or a roman numeral) just
// right of it on its line.
func captionAt(words []Word, i int) bool {
	switch strings.ToLower(strings.TrimRight(words[i].Text, ".:")) {
	case "table", "figure", "fig", "exhibit", "chart":
	default:
		return false
	}
	b := words[i].Box
	h := b.Y1 - b.Y0
	for _, w := range words {
		o := w.Box
		if o.X0 < b.X1 || o.X0 > b.X1+1.5*h || 2*(min(o.Y1, b.Y1)-max(o.Y0, b.Y0)) < h {
			continue
		}
		t := strings.TrimRight(w.Text, ".:")
		if t != "" && (t[0] >= '0' && t[0] <= '9' || strings.Trim(t, "IVXivx") == "") {
			return true
		}
	}
	return false
}
