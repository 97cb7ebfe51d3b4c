package table

import (
	"slices"
	"sort"

	"boxd/pipelines/docreader/raster"
)

// Tables drawn without any rules (a grid of check boxes, a column of
// figures beside labels) are found from the text lines' ink:
//
//  1. The page's words are grouped into lines (vertical overlap of half);
//     each line's marks (ink, or anything lighter than the background by
//     30 levels: a white check box on a tinted page), column by column
//     within its height, are cut into segments at gaps of at least 1.2
//     line heights (and 16 pixels).
//  2. A block is a run of lines, each at most 2.2 line heights below the
//     last, of at least two segments, holding at least three lines of
//     three segments or more. Prose in two columns has two segments a
//     line; a table has more.
//  3. Prose in three or more columns has as many; what a table has and
//     prose has not is a column of short things: the block needs a gutter
//     -bounded column whose segments are all under 8% of the block's
//     width (numbers, marks, check boxes).
//  4. The block becomes a candidate bounded by two virtual rules just
//     outside it, so the grid is built as a stream table: columns from
//     gutters, rows from the lines, and the same acceptance (at least
//     three columns, half the slots filled).
//
// Blocks overlapping a ruled table are left to it.

// lineT is a line of text: its words' box and its segments.
type lineT struct {
	box  raster.Box
	segs []span
}

// linelessCands finds candidates for tables without rules.
func linelessCands(m *inkMap, words []Word, ruled []*grid) []tableCand {
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
				continue
			}
		}
		lines = append(lines, lineT{box: b})
	}
	var hs []float64
	for _, l := range lines {
		hs = append(hs, l.box.Y1-l.box.Y0)
	}
	slices.Sort(hs)
	lineH := hs[len(hs)/2]
	var captions []raster.Box
	for i, w := range words {
		if captionAt(words, i) {
			captions = append(captions, w.Box)
		}
	}
	gap := max(16, 1.2*lineH)
	for i := range lines {
		l := &lines[i]
		y0, y1 := max(0, int(l.box.Y0)), min(m.h, int(l.box.Y1)+1)
		start, last := -1, -1
		for x := 0; x <= m.w; x++ {
			has := false
			if x < m.w {
				for y := y0; y < y1 && !has; y++ {
					has = m.mark[y*m.w+x] != 0
				}
			}
			if has {
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
			sub = append(sub, nl)
		}
		out = append(out, blocks(m, sub, lineH, ruled, captions)...)
	}
	return out
}

// blocks finds the table candidates among one page column's lines
// (steps 2 to 4).
func blocks(m *inkMap, lines []lineT, lineH float64, ruled []*grid, captions []raster.Box) []tableCand {
	var out []tableCand
	flush := func(block []lineT, startIdx int) {
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
		if many < 3 && !(len(block) >= 3 && captionAbove(captions, box, lineH)) {
			return
		}
		// 3. A column of short things (from the first, second or third
		// line down: a header may span the body's gutters); or a
		// caption ("Table 3") just above the block.
		captioned := captionAbove(captions, box, lineH)
		short := captioned
		for k := 0; k <= 2 && 3*k <= len(block) && !short; k++ {
			short = shortColumn(block[k:], box)
		}
		covered := coveredX(block, box)
		if !short {
			return
		}
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
		for i := startIdx - 1; i >= 0; i-- {
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
		// 4. Virtual rules just outside the block.
		top := rule{horiz: true, a: int(box.X0), b: int(box.X1) + 1, c0: int(box.Y0) - 4, c1: int(box.Y0) - 3}
		bottom := rule{horiz: true, a: int(box.X0), b: int(box.X1) + 1, c0: int(box.Y1) + 3, c1: int(box.Y1) + 4}
		box.Y0, box.Y1 = top.pos(), bottom.pos()
		out = append(out, tableCand{h: []rule{top, bottom}, box: box, marks: true, captioned: captioned})
	}
	var block []lineT
	start := 0
	for i, l := range lines {
		if n := len(block); n > 0 && (len(l.segs) < 2 || l.box.Y0-block[n-1].box.Y1 > 2.2*lineH) {
			flush(block, start)
			block = nil
		}
		if len(l.segs) >= 2 {
			if len(block) == 0 {
				start = i
			}
			block = append(block, l)
		}
	}
	flush(block, start)
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
