// Package words holds the types of the tables package table finds, and
// the tables read from a page's words alone: tables of dot leaders.
package words

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	"boxd/engine/raster"
)

// Methods: how a table's grid was found.
const (
	Lattice = "lattice" // rows and columns from ruling lines
	Stream  = "stream"  // some of them from whitespace
	// Leaders: by its dot leaders (a table of contents or an index,
	// lines of "title . . . . page").
	Leaders = "leaders"
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

// Leader tables (rules D1–D4):
//   - D1 A line is the words whose vertical extents overlap by half,
//     cut where the gap between two words is over four times the line's
//     height (a neighbouring column).
//   - D2 A leader line ends in a page reference (digits, a roman numeral,
//     or letters and digits joined by a dash or a dot, as A-1 or 3.2) and
//     holds, before it, a run of leader dots (at least minLeaderDots dots
//     in words made only of dots, or trailing a word) after at least one
//     word that is not dots.
//   - D3 Leader lines one under another, their page references' right
//     edges within leaderAlign pixels and no more than leaderGap line
//     heights apart, with no other line of the same column between them,
//     are one table; at least minLeaderRows lines make a table.
//   - D4 Each line is a row of two cells: the title with its dots, and the
//     page reference.
const (
	minLeaderDots = 4
	minLeaderRows = 3
	leaderAlign   = 12.0
	leaderGap     = 4.0
)

// leaderLine is one line of words (indices), left to right.
type leaderLine struct {
	words []int
	box   raster.Box
	// ref is the index in words of the page reference (-1: not a
	// leader line).
	ref int
}

// FindLeaders finds tables of dot leaders among the words not taken.
func FindLeaders(words []Word, taken []bool) []Table {
	lines := wordLines(words, taken)
	var cands []*leaderLine
	for i := range lines {
		l := &lines[i]
		l.ref = leaderRef(words, l.words)
		cands = append(cands, l)
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].box.Y0 < cands[j].box.Y0 })
	var out []Table
	used := make([]bool, len(cands))
	for i, l := range cands {
		if used[i] || l.ref < 0 {
			continue
		}
		group := []int{i}
		last := l
		for j := i + 1; j < len(cands); j++ {
			m := cands[j]
			if used[j] || !overlapX(m.box, last.box) {
				continue
			}
			h := max(last.box.Y1-last.box.Y0, 1)
			if m.ref < 0 || m.box.Y0-last.box.Y1 > leaderGap*h ||
				math.Abs(words[m.words[m.ref]].Box.X1-words[last.words[last.ref]].Box.X1) > leaderAlign {
				break
			}
			group = append(group, j)
			last = m
		}
		if len(group) < minLeaderRows {
			continue
		}
		t := Table{Rows: len(group), Cols: 2, Method: Leaders}
		for r, gi := range group {
			used[gi] = true
			gl := cands[gi]
			title := slices.Clone(gl.words[:gl.ref])
			ref := gl.words[gl.ref:]
			for k, ws := range [][]int{title, ref} {
				c := Cell{Row: r, Col: k, RowSpan: 1, ColSpan: 1, Words: ws}
				for _, w := range ws {
					c.Box = c.Box.Union(words[w].Box)
				}
				t.Cells = append(t.Cells, c)
			}
			t.Words = append(t.Words, gl.words...)
			t.Box = t.Box.Union(gl.box)
		}
		out = append(out, t)
	}
	return out
}

// overlapX says whether two boxes share some of their width.
func overlapX(a, b raster.Box) bool { return min(a.X1, b.X1) > max(a.X0, b.X0) }

// wordLines groups the words not taken into lines (D1).
func wordLines(words []Word, taken []bool) []leaderLine {
	var idx []int
	for i := range words {
		if !taken[i] && strings.TrimSpace(words[i].Text) != "" {
			idx = append(idx, i)
		}
	}
	var out []leaderLine
	for _, r := range GroupLines(words, idx) {
		var h float64
		for _, i := range r {
			h = max(h, words[i].Box.Y1-words[i].Box.Y0)
		}
		start := 0
		for k := 1; k <= len(r); k++ {
			if k < len(r) && words[r[k]].Box.X0-words[r[k-1]].Box.X1 <= 4*h {
				continue
			}
			l := leaderLine{words: slices.Clone(r[start:k]), ref: -1}
			for _, i := range l.words {
				l.box = l.box.Union(words[i].Box)
			}
			out = append(out, l)
			start = k
		}
	}
	return out
}

// leaderRef is the index in ws of the line's page reference, or -1 when
// the line is not a leader line (D2).
func leaderRef(words []Word, ws []int) int {
	n := len(ws)
	if n < 2 {
		return -1
	}
	ref := n - 1
	rt := words[ws[ref]].Text
	if !pageRef(strings.TrimLeft(rt, ".")) {
		return -1
	}
	// ". vii": the last dots may ride on the reference.
	dots, text := len(rt)-len(strings.TrimLeft(rt, ".")), false
	for k := ref - 1; k >= 0; k-- {
		t := words[ws[k]].Text
		if strings.Trim(t, ".…· ") == "" {
			dots += strings.Count(t, ".") + 3*strings.Count(t, "…") + strings.Count(t, "·")
			continue
		}
		// The first word that is not only dots: its trailing dots count,
		// and it is the title's last word.
		dots += len(t) - len(strings.TrimRight(t, "."))
		text = true
		break
	}
	if !text || dots < minLeaderDots {
		return -1
	}
	return ref
}

// pageRef says whether s reads as a page reference: digits, a roman
// numeral, or letters and digits joined by one dash or dot (A-1, 3.2).
func pageRef(s string) bool {
	if s == "" || len(s) > 8 {
		return false
	}
	if strings.Trim(s, "0123456789") == "" {
		return true
	}
	if strings.Trim(strings.ToLower(s), "ivxlc") == "" {
		return true
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '.' || r == '–' })
	if len(parts) != 2 {
		return false
	}
	digits := false
	for _, p := range parts {
		for _, r := range p {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				return false
			}
			digits = digits || unicode.IsDigit(r)
		}
	}
	return digits
}

// GroupLines groups the words ws (indices) into lines, top to bottom:
// words whose vertical extents overlap by half the shorter one's height
// with the line so far; each line left to right.
func GroupLines(words []Word, ws []int) [][]int {
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
