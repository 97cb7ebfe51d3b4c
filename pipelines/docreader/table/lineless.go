package table

import (
	"slices"
	"sort"

	"boxd/engine/raster"
)

// Tables drawn without any rules (a grid of check boxes, a column of
// figures beside labels) are found from the text lines' ink:
//
//  1. The page's words are grouped into lines (vertical overlap of half);
//     each line's marks (ink, or anything lighter than the background by
//     30 levels: a white check box on a tinted page), column by column
//     within its height, are cut into segments at gaps of at least 1.2
//     line heights (and 16 pixels). The rows a line shares with the line
//     above or below (under a third of its height: their descenders and
//     ascenders) are left to that line, and a horizontal rule is not a
//     line's mark.
//  2. A block is a run of lines, each at most 2.2 line heights below the
//     last, of at least two segments. Two tables stacked a blank band
//     apart are parted there (split.go: a new header, or other columns).
//     A block holds at least three lines of three segments or more, or
//     has a column of figures (below). Prose in two columns has two
//     segments a line; a table has more.
//  3. Prose in three or more columns has as many; what a table has and
//     prose has not is a column of short things: the block needs a gutter
//     -bounded column whose segments are all under 8% of the block's
//     width (numbers, marks, check boxes), or a column of figures that
//     are data (split.go: not a numbering such as a table of contents'
//     page numbers or a list's "1.", "2.", and not beside a printed
//     form's "Label:" lines), which a table of two columns may have.
//  4. The block becomes a candidate bounded by two virtual rules just
//     outside it, so the grid is built as a stream table: columns from
//     gutters, rows from the lines, and the same acceptance (at least
//     three columns, or two with a caption or a column of figures; half
//     the slots filled). A horizontal rule of the page that belongs to
//     the block (under its header; split.go's ruleBelongs) is one of
//     its rules: it parts rows, and the table's box holds it.
//
// Blocks overlapping a ruled table are left to it.

// lineT is a line of text: its words' box, its segments and its words.
type lineT struct {
	box  raster.Box
	segs []span
	ws   []int
}

// linelessCands finds candidates for tables without rules; hs are the
// page's horizontal rules (a rule under a header belongs to the table).
func linelessCands(m *inkMap, words []Word, ruled []*grid, hs []rule) []tableCand {
	if len(words) == 0 {
		return nil
	}
	// 1. Lines of words.
	idx := make([]int, len(words))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return words[idx[a]].Box.Y0 < words[idx[b]].Box.Y0 })
	var lines []lineT
	for _, i := range idx {
		b := words[i].Box
		if n := len(lines); n > 0 {
			lb := lines[n-1].box
			if ov := min(lb.Y1, b.Y1) - max(lb.Y0, b.Y0); 2*ov >= min(lb.Y1-lb.Y0, b.Y1-b.Y0) {
				lines[n-1].box = lb.Union(b)
				lines[n-1].ws = append(lines[n-1].ws, i)
				continue
			}
		}
		lines = append(lines, lineT{box: b, ws: []int{i}})
	}
	var heights []float64
	for _, l := range lines {
		heights = append(heights, l.box.Y1-l.box.Y0)
	}
	slices.Sort(heights)
	lineH := heights[len(heights)/2]
	var captions []raster.Box
	for i, w := range words {
		if captionAt(words, i) {
			captions = append(captions, w.Box)
		}
	}
	gap := max(16, 1.2*lineH)
	has := make([]bool, m.w)
	for i := range lines {
		l := &lines[i]
		// A line's marks within its own height: where it overlaps the
		// line above or below a little (their descenders, its ascenders),
		// those rows are the other line's; a rule is no mark of a line.
		top, bottom := l.box.Y0, l.box.Y1
		third := (bottom - top) / 3
		if i > 0 && lines[i-1].box.Y1 > top && lines[i-1].box.Y1-top < third {
			top = lines[i-1].box.Y1
		}
		if i+1 < len(lines) && lines[i+1].box.Y0 < bottom && bottom-lines[i+1].box.Y0 < third {
			bottom = lines[i+1].box.Y0
		}
		y0, y1 := max(0, int(top)), min(m.h, int(bottom)+1)
		clear(has)
		for y := y0; y < y1; y++ {
			row := m.mark[y*m.w : (y+1)*m.w]
			var across []rule
			for _, r := range hs {
				if y >= r.c0-1 && y < r.c1+1 {
					across = append(across, r)
				}
			}
			for x, v := range row {
				if v != 0 && (len(across) == 0 || !slices.ContainsFunc(across, func(r rule) bool { return x >= r.a-1 && x < r.b+1 })) {
					has[x] = true
				}
			}
		}
		start, last := -1, -1
		for x := 0; x <= m.w; x++ {
			if x < m.w && has[x] {
				if start >= 0 && float64(x-last) > gap {
					l.segs = append(l.segs, span{start, last + 1})
					start = -1
				}
				if start < 0 {
					start = x
				}
				last = x
			}
		}
		if start >= 0 {
			l.segs = append(l.segs, span{start, last + 1})
		}
	}
	// Thin vertical strokes (a rule, a spread's fold) are not segments.
	for i := range lines {
		lines[i].segs = slices.DeleteFunc(lines[i].segs, func(s span) bool { return s.b-s.a <= 4 })
	}
	// Page columns: x ranges at least 6% of the page wide that no line
	// marks (a two-page spread, a newspaper's columns) part the page; a
	// block is looked for within one.
	covered := make([]bool, m.w)
	for _, l := range lines {
		for _, s := range l.segs {
			for x := s.a; x < s.b; x++ {
				covered[x] = true
			}
		}
	}
	// A gap parts page columns only where prose lies on both sides: the
	// median width of the segments that end at it, and that start after
	// it, is at least a tenth of the page (a table's own gutters have
	// labels, numbers or boxes beside them).
	prose := func(a, b int) bool {
		var left, right []float64
		for _, l := range lines {
			lw, rw := 0, 0
			for _, s := range l.segs {
				if s.b <= a {
					lw = s.b - s.a
				}
				if s.a >= b && rw == 0 {
					rw = s.b - s.a
				}
			}
			if lw > 0 {
				left = append(left, float64(lw))
			}
			if rw > 0 {
				right = append(right, float64(rw))
			}
		}
		if len(left) == 0 || len(right) == 0 {
			return false
		}
		slices.Sort(left)
		slices.Sort(right)
		return left[len(left)/2] >= 0.1*float64(m.w) && right[len(right)/2] >= 0.1*float64(m.w)
	}
	var cols []span
	minGap := max(80, m.w*6/100)
	for x := 0; x < m.w; {
		if !covered[x] {
			x++
			continue
		}
		a := x
		for x < m.w {
			if covered[x] {
				x++
				continue
			}
			g := x
			for g < m.w && !covered[g] {
				g++
			}
			if g == m.w || g-x >= minGap && prose(x, g) {
				break
			}
			x = g
		}
		cols = append(cols, span{a, x})
	}
	var out []tableCand
	for _, col := range cols {
		var sub []lineT
		for _, l := range lines {
			nl := lineT{box: l.box}
			for _, s := range l.segs {
				if s.a >= col.a && s.b <= col.b {
					nl.segs = append(nl.segs, s)
				}
			}
			for _, i := range l.ws {
				if x, _ := words[i].Box.Center(); x >= float64(col.a) && x < float64(col.b) {
					nl.ws = append(nl.ws, i)
				}
			}
			sub = append(sub, nl)
		}
		out = append(out, blocks(m, words, sub, lineH, ruled, captions, hs)...)
	}
	return out
}

// blocks finds the table candidates among one page column's lines
// (steps 2 to 4).
func blocks(m *inkMap, words []Word, lines []lineT, lineH float64, ruled []*grid, captions []raster.Box, hs []rule) []tableCand {
	var out []tableCand
	// flush makes a candidate of a block, the lines from startIdx;
	// header lines above it join it unless it was parted from a table
	// there (joinAbove false).
	flush := func(block []lineT, startIdx int, joinAbove bool) {
		many := 0
		for _, l := range block {
			if len(l.segs) >= 3 {
				many++
			}
		}
		var box raster.Box
		for _, l := range block {
			for _, s := range l.segs {
				box = box.Union(raster.Box{X0: float64(s.a), Y0: l.box.Y0, X1: float64(s.b), Y1: l.box.Y1})
			}
		}
		for _, g := range ruled {
			if min(box.X1, g.box.X1) > max(box.X0, g.box.X0) && min(box.Y1, g.box.Y1) > max(box.Y0, g.box.Y0) {
				return
			}
		}
		// 3. A column of short things (from the first, second or third
		// line down: a header may span the body's gutters) in lines of
		// three segments; or a caption ("Table 3") just above the block;
		// or a column of figures that are data (split.go), which two
		// columns may have, unless the lines are a printed form's.
		captioned := captionAbove(captions, box, lineH)
		figures := len(block) >= 3 && len(dataColumns(words, block)) > 0 && !formLabels(words, block)
		short := false
		for k := 0; k <= 2 && 3*k <= len(block) && !short && many >= 3; k++ {
			short = shortColumn(block[k:], box)
		}
		if !(captioned && len(block) >= 3 || many >= 3 && short || figures) {
			return
		}
		covered := coveredX(block, box)
		// Header lines over the columns right of the first (a header
		// cell wraps onto two lines, and the first column's header is
		// often empty) join the block from above.
		firstGutter := box.X1
		for x := 0; x < len(covered); x++ {
			if !covered[x] && x > 0 && covered[x-1] {
				firstGutter = box.X0 + float64(x)
				break
			}
		}
		for i := startIdx - 1; i >= 0 && joinAbove; i-- {
			l := lines[i]
			if len(l.segs) == 0 || box.Y0-l.box.Y1 > 2.2*lineH {
				break
			}
			right := true
			for _, s := range l.segs {
				if float64(s.a) < firstGutter || float64(s.b) > box.X1+0.1*(box.X1-box.X0) {
					right = false
				}
			}
			if !right {
				break
			}
			for _, s := range l.segs {
				box = box.Union(raster.Box{X0: float64(s.a), Y0: l.box.Y0, X1: float64(s.b), Y1: l.box.Y1})
			}
		}
		// The rules that belong to the table (one under its header)
		// are its own: its box holds them, and they part its rows.
		var own []rule
		for _, r := range hs {
			if ruleBelongs(r, box, lineH) {
				own = append(own, r)
			}
		}
		for _, r := range own {
			box = box.Union(r.box())
		}
		// 4. Virtual rules just outside the block.
		top := rule{horiz: true, a: int(box.X0), b: int(box.X1) + 1, c0: int(box.Y0) - 4, c1: int(box.Y0) - 3}
		bottom := rule{horiz: true, a: int(box.X0), b: int(box.X1) + 1, c0: int(box.Y1) + 3, c1: int(box.Y1) + 4}
		box.Y0, box.Y1 = top.pos(), bottom.pos()
		out = append(out, tableCand{h: append([]rule{top, bottom}, own...), box: box, marks: true,
			captioned: captioned, figures: figures})
	}
	// A block is flushed in parts: two tables stacked a blank band apart
	// part there (splitBlock).
	flushParts := func(block []lineT, start int) {
		for k, part := range splitBlock(words, block) {
			flush(part, start, k == 0)
			start += len(part)
		}
	}
	var block []lineT
	start := 0
	for i, l := range lines {
		if n := len(block); n > 0 && (len(l.segs) < 2 || l.box.Y0-block[n-1].box.Y1 > 2.2*lineH) {
			flushParts(block, start)
			block = nil
		}
		if len(l.segs) >= 2 {
			if len(block) == 0 {
				start = i
			}
			block = append(block, l)
		}
	}
	flushParts(block, start)
	return out
}

// captionAbove says whether a caption word lies just above the box: at
// most 3 line heights over it, starting at most 4 line heights left of
// it.
func captionAbove(captions []raster.Box, box raster.Box, lineH float64) bool {
	return slices.ContainsFunc(captions, func(c raster.Box) bool {
		return c.Y1 <= box.Y0+2 && box.Y0-c.Y1 <= 3*lineH && c.X0 < box.X1 && c.X0 >= box.X0-4*lineH
	})
}

// coveredX marks the x range of the box that the lines' segments cover.
func coveredX(block []lineT, box raster.Box) []bool {
	covered := make([]bool, int(box.X1-box.X0)+1)
	for _, l := range block {
		for _, s := range l.segs {
			for x := max(s.a, int(box.X0)); x < s.b && x-int(box.X0) < len(covered); x++ {
				covered[x-int(box.X0)] = true
			}
		}
	}
	return covered
}

// shortColumn says whether the lines have a column of short things: the
// box's width cut at the x ranges no segment covers, a column whose
// segments are all under 8% of the box's width.
func shortColumn(block []lineT, box raster.Box) bool {
	covered := coveredX(block, box)
	width := box.X1 - box.X0
	for c0 := 0; c0 < len(covered); {
		if !covered[c0] {
			c0++
			continue
		}
		c1 := c0
		for c1 < len(covered) && covered[c1] {
			c1++
		}
		widest := 0
		for _, l := range block {
			for _, s := range l.segs {
				if s.a-int(box.X0) >= c0 && s.b-int(box.X0) <= c1 {
					widest = max(widest, s.b-s.a)
				}
			}
		}
		if widest > 0 && float64(widest) < 0.08*width {
			return true
		}
		c0 = c1
	}
	return false
}
