// Package order reads a page's blocks in order: headers, the body by a
// recursive XY-cut that keeps columns apart, then footers. It knows boxes
// only; the document reader gives it the regions it found.
package order

import (
	"slices"
	"sort"

	"boxd/engine/raster"
)

// Where a block sits on its page.
const (
	Body = iota
	Header
	Footer
)

// Block is one region of a page to order.
type Block struct {
	Box raster.Box
	// Size is its text's size (pixels): columns run on across a
	// paragraph break, not across a gap of several lines.
	Size  float64
	Place int // Body, Header or Footer
	// Group, when above 0, ties body blocks read as one unit: a form
	// widget's printed label and its value. The unit takes its place in
	// the page by the box around its blocks, and its blocks are read in
	// order among themselves.
	Group int

	index   int
	members []*Block // a unit's blocks
}

// Order gives the reading order of a page's blocks, as indices into bs:
// page headers first and footers last (each top to bottom, then left to
// right), and the rest by a recursive XY-cut. A region is cut into
// horizontal bands wherever no block spans a gap in y; adjacent bands
// that share a column gutter (a gap in x at least minGutter wide, at the
// same place) are joined again, so two columns whose paragraph breaks
// happen to line up stay columns; a band is cut into columns at its
// gutters, and each part is ordered the same way. Blocks that overlap
// both ways are read top to bottom, left to right. XY-cut, because it
// needs no model, is exact on the Manhattan layouts of letters, reports,
// forms and papers, and says plainly why it orders as it does; the band
// joining is the refinement that keeps it from interleaving columns.
//
// Blocks of one Group are ordered as one unit (the box around them):
// a form's label and value stay together, row by row, however wide the
// gap between them, where the XY-cut alone would read a column of labels
// and then a column of values. Columns of such units are still columns.
//
// On a right-to-left page (rtl) columns, and blocks side by side, are
// read right to left.
func Order(bs []Block, pageW int, rtl bool) []int {
	var head, foot, body []*Block
	for i := range bs {
		b := &bs[i]
		b.index = i
		switch b.Place {
		case Header:
			head = append(head, b)
		case Footer:
			foot = append(foot, b)
		default:
			body = append(body, b)
		}
	}
	byPos(head, rtl)
	byPos(foot, rtl)
	minGutter := max(8, 0.012*float64(pageW))
	out := append([]*Block{}, head...)
	for _, b := range xyCut(units(body), minGutter, rtl) {
		if b.members == nil {
			out = append(out, b)
			continue
		}
		// Within a unit any gap parts a label from its value.
		out = append(out, xyCut(b.members, 0, rtl)...)
	}
	out = append(out, foot...)
	idx := make([]int, len(out))
	for i, b := range out {
		idx[i] = b.index
	}
	return idx
}

// units replaces the blocks of each Group of two or more by one block
// around them, holding them as its members.
func units(body []*Block) []*Block {
	groups := map[int][]*Block{}
	for _, b := range body {
		if b.Group > 0 {
			groups[b.Group] = append(groups[b.Group], b)
		}
	}
	var out []*Block
	done := map[int]bool{}
	for _, b := range body {
		g := groups[b.Group]
		if b.Group <= 0 || len(g) < 2 {
			out = append(out, b)
			continue
		}
		if done[b.Group] {
			continue
		}
		done[b.Group] = true
		u := &Block{Box: g[0].Box, index: -1, members: g}
		for _, m := range g {
			u.Box = u.Box.Union(m.Box)
			u.Size = max(u.Size, m.Size)
		}
		out = append(out, u)
	}
	return out
}

func xyCut(rs []*Block, minGutter float64, rtl bool) []*Block {
	if len(rs) <= 1 {
		return rs
	}
	bands := splitAxis(rs, true, 0)
	if len(bands) > 1 {
		bands = joinBands(bands, minGutter)
	}
	if len(bands) > 1 {
		var out []*Block
		for _, b := range bands {
			out = append(out, xyCut(b, minGutter, rtl)...)
		}
		return out
	}
	cols := splitAxis(rs, false, minGutter)
	if rtl {
		slices.Reverse(cols)
	}
	if len(cols) > 1 {
		var out []*Block
		for _, c := range cols {
			out = append(out, xyCut(c, minGutter, rtl)...)
		}
		return out
	}
	s := slices.Clone(rs)
	byPos(s, rtl)
	return s
}

// byPos sorts regions top to bottom, then left to right (right to left).
func byPos(s []*Block, rtl bool) {
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Box.Y0 != s[j].Box.Y0 {
			return s[i].Box.Y0 < s[j].Box.Y0
		}
		if rtl {
			return s[i].Box.X1 > s[j].Box.X1
		}
		return s[i].Box.X0 < s[j].Box.X0
	})
}

// splitAxis groups regions whose extents overlap along y (horizontal
// bands) or x (columns), in order; groups are split only at gaps wider
// than minGap.
func splitAxis(rs []*Block, y bool, minGap float64) [][]*Block {
	lo := func(r *Block) float64 {
		if y {
			return r.Box.Y0
		}
		return r.Box.X0
	}
	hi := func(r *Block) float64 {
		if y {
			return r.Box.Y1
		}
		return r.Box.X1
	}
	s := slices.Clone(rs)
	sort.SliceStable(s, func(i, j int) bool { return lo(s[i]) < lo(s[j]) })
	var out [][]*Block
	var cur []*Block
	end := 0.0
	for _, r := range s {
		if len(cur) > 0 && lo(r) > end+minGap {
			out = append(out, cur)
			cur = nil
		}
		if len(cur) == 0 {
			end = hi(r)
		}
		cur = append(cur, r)
		end = max(end, hi(r))
	}
	return append(out, cur)
}

// gutters are the x gaps (at least minGutter wide) between a band's
// columns, as [from, to] pairs.
func gutters(band []*Block, minGutter float64) [][2]float64 {
	cols := splitAxis(band, false, minGutter)
	var out [][2]float64
	for i := 1; i < len(cols); i++ {
		left := 0.0
		for _, r := range cols[i-1] {
			left = max(left, r.Box.X1)
		}
		right := cols[i][0].Box.X0
		for _, r := range cols[i] {
			right = min(right, r.Box.X0)
		}
		out = append(out, [2]float64{left, right})
	}
	return out
}

// joinBands joins adjacent bands that together still have a column
// gutter, and are at most three lines' height apart: the columns run
// on, even through a band where only one column has text.
// A joined group whose columns nowhere stand side by side (no two of
// them overlap in y: a letter's date at the right, then the address
// under it at the left) is parted into its bands again, read top to
// bottom.
func joinBands(bands [][]*Block, minGutter float64) [][]*Block {
	var out [][]*Block
	from := 0 // the first band of the current group
	for i := 1; i <= len(bands); i++ {
		if i < len(bands) && join(bands[i], bands[from:i], minGutter) {
			continue
		}
		group := slices.Concat(bands[from:i]...)
		if i-from > 1 && !sideBySide(group, minGutter) {
			out = append(out, bands[from:i]...)
		} else {
			out = append(out, group)
		}
		from = i
	}
	return out
}

// join says whether band b runs on from the group of bands before it.
func join(b []*Block, group [][]*Block, minGutter float64) bool {
	last := slices.Concat(group...)
	bottom, top, size := 0.0, b[0].Box.Y0, 0.0
	for _, r := range last {
		bottom = max(bottom, r.Box.Y1)
		size = max(size, r.Size)
	}
	for _, r := range b {
		top = min(top, r.Box.Y0)
		size = max(size, r.Size)
	}
	// Columns run on across a paragraph break, not across a gap of
	// several lines (a table's caption under two short columns).
	if size > 0 && top-bottom > 3*size {
		return false
	}
	return len(gutters(append(last, b...), minGutter)) > 0
}

// sideBySide says whether a joined band's columns stand side by side
// somewhere (two of them overlap in y). Where none do (a letter's date
// at the right, the address under it at the left), the bands were
// blocks one under another, not columns, and are read top to bottom.
func sideBySide(band []*Block, minGutter float64) bool {
	cols := splitAxis(band, false, minGutter)
	span := func(c []*Block) (lo, hi float64) {
		lo, hi = c[0].Box.Y0, c[0].Box.Y1
		for _, r := range c {
			lo, hi = min(lo, r.Box.Y0), max(hi, r.Box.Y1)
		}
		return lo, hi
	}
	for i := range cols {
		a0, a1 := span(cols[i])
		for j := i + 1; j < len(cols); j++ {
			if b0, b1 := span(cols[j]); min(a1, b1) > max(a0, b0) {
				return true
			}
		}
	}
	return false
}
