package table

import (
	"slices"
	"strings"
	"unicode"

	"boxd/engine/raster"
)

// A block of lines without rules is looked at in columns of words:
// where its lines have figures (the short things of a table), where a
// header sits over them, and where one table ends and the next begins.
//
//   - A cell is numeric when every word in it is a figure: digits with
//     decimal or thousands separators, a sign, a currency sign before or
//     a percent sign after, brackets around (a dash alone is an empty
//     cell, neither figure nor text).
//   - A column of figures is data when at least three of its body cells
//     are figures and none is text, and it is not a numbering: whole
//     numbers that never go down ("1.", "2.", … of a list, a table of
//     contents' page numbers, a run of years) number the lines beside
//     them rather than measure anything.
//   - A header line has text over a column whose cells below are
//     figures.
//   - Two tables stacked without rules or captions part at a blank band
//     (a line pitch over 1.5 times the block's own median pitch) when
//     the part below (three lines at least) starts with a header line
//     of its own, or the two parts' columns differ (both of three lines
//     at least): a different commonest number of segments, or a segment
//     of one across the middle of a gutter of the other. Row groups of
//     one table parted by blank lines (same columns, the next group
//     starting with figures) stay together, and so does a header parted
//     from its body by a blank line.

// columnsOf are the x ranges the lines' segments cover, left to right:
// the block's columns.
func columnsOf(lines []lineT) []span {
	var segs []span
	for _, l := range lines {
		segs = append(segs, l.segs...)
	}
	slices.SortFunc(segs, func(p, q span) int { return p.a - q.a })
	var out []span
	for _, s := range segs {
		if n := len(out); n > 0 && s.a <= out[n-1].b {
			out[n-1].b = max(out[n-1].b, s.b)
			continue
		}
		out = append(out, s)
	}
	return out
}

// cellWords are the words of line l whose centres lie in [a, b).
func cellWords(words []Word, l lineT, a, b int) []string {
	var out []string
	for _, i := range l.ws {
		if x, _ := words[i].Box.Center(); x >= float64(a) && x < float64(b) {
			out = append(out, words[i].Text)
		}
	}
	return out
}

// cellKind says what a cell holds: 0 nothing (or a dash), 1 figures, 2
// text.
func cellKind(ws []string) int {
	kind := 0
	for _, w := range ws {
		switch {
		case isDash(w):
		case figure(w):
			kind = max(kind, 1)
		default:
			return 2
		}
	}
	return kind
}

func isDash(w string) bool {
	switch w {
	case "-", "–", "—", "..", "…", "n/a":
		return true
	}
	return false
}

// figure says whether a word is a number as tables print them.
func figure(w string) bool {
	w = strings.TrimLeft(w, "(+-−–$€£¥")
	w = strings.TrimRight(w, ")%*†.:")
	if w == "" || !unicode.IsDigit(rune(w[0])) || !unicode.IsDigit(rune(w[len(w)-1])) {
		return false
	}
	for i, r := range w {
		switch {
		case unicode.IsDigit(r):
		case r == ',' || r == '.' || r == '\u202f' || r == '\u00a0':
			if !unicode.IsDigit(rune(w[i-1])) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// wholeNumber is a figure's value when it is a plain whole number ("7",
// "12.", "2019"), else -1.
func wholeNumber(ws []string) int {
	if len(ws) != 1 {
		return -1
	}
	w := strings.TrimRight(ws[0], ".")
	if w == "" || len(w) > 6 {
		return -1
	}
	n := 0
	for _, r := range w {
		if r < '0' || r > '9' {
			return -1
		}
		n = 10*n + int(r-'0')
	}
	return n
}

// dataColumns are the block's columns of figures that are data (not a
// numbering), judged on its lines below the header: its first line, or
// its first two or three (whichever first finds some).
func dataColumns(words []Word, lines []lineT) []span {
	for k := 1; k <= 3 && k+3 <= len(lines); k++ {
		if cs := dataColumnsOf(words, lines[k:]); len(cs) > 0 {
			return cs
		}
	}
	return nil
}

// dataColumnsOf are the columns of figures that are data among body
// lines.
func dataColumnsOf(words []Word, body []lineT) []span {
	var out []span
	for _, c := range columnsOf(body) {
		figs, text := 0, 0
		numbering, last := true, -1
		for _, l := range body {
			ws := cellWords(words, l, c.a, c.b)
			switch cellKind(ws) {
			case 1:
				figs++
				n := wholeNumber(ws)
				if n < 0 || n < last {
					numbering = false
				}
				last = n
			case 2:
				text++
			}
		}
		if figs >= 3 && text == 0 && !numbering {
			out = append(out, c)
		}
	}
	return out
}

// headerLine says whether the block's first line has text over a column
// whose cells below are figures.
func headerLine(words []Word, lines []lineT) bool {
	for _, c := range dataColumns(words, lines) {
		if cellKind(cellWords(words, lines[0], c.a, c.b)) == 2 {
			return true
		}
	}
	return false
}

// formLabels says whether most lines' first cell ends with a colon (a
// printed form's "Label:"), which makes the lines a form, not a table.
func formLabels(words []Word, lines []lineT) bool {
	n := 0
	for _, l := range lines {
		if len(l.segs) == 0 {
			continue
		}
		ws := cellWords(words, l, l.segs[0].a, l.segs[0].b)
		if len(ws) > 0 && strings.HasSuffix(ws[len(ws)-1], ":") {
			n++
		}
	}
	return 2*n > len(lines)
}

// commonSegs is the commonest number of segments a line of the lines
// has (ties: the more).
func commonSegs(lines []lineT) int {
	counts := map[int]int{}
	for _, l := range lines {
		counts[len(l.segs)]++
	}
	mode := 0
	for n, k := range counts {
		if k > counts[mode] || k == counts[mode] && n > mode {
			mode = n
		}
	}
	return mode
}

// crossesGutter says whether a segment of b's lines runs across the
// middle of a gutter of a's (an x range between two of a's columns).
func crossesGutter(a, b []lineT) bool {
	cols := columnsOf(a)
	for i := 1; i < len(cols); i++ {
		mid := (cols[i-1].b + cols[i].a) / 2
		for _, l := range b {
			for _, s := range l.segs {
				if s.a < mid && s.b > mid {
					return true
				}
			}
		}
	}
	return false
}

// splitBlock parts a block of lines where one table ends and another
// begins (see above); each part is a run of lines.
func splitBlock(words []Word, block []lineT) [][]lineT {
	if len(block) < 4 {
		return [][]lineT{block}
	}
	var steps []float64
	for i := 1; i < len(block); i++ {
		steps = append(steps, block[i].box.Y0-block[i-1].box.Y0)
	}
	sorted := slices.Clone(steps)
	slices.Sort(sorted)
	pitch := sorted[len(sorted)/2]
	// The blank bands, and the groups of lines between them.
	var bands []int
	for i, d := range steps {
		if d > 1.5*pitch {
			bands = append(bands, i+1)
		}
	}
	if len(bands) == 0 {
		return [][]lineT{block}
	}
	var out [][]lineT
	start := 0
	for k, at := range bands {
		end := len(block)
		if k+1 < len(bands) {
			end = bands[k+1]
		}
		above, below := block[start:at], block[at:end]
		// Columns are compared between runs of three lines at least: a
		// header of one or two lines over a blank band (a spanning
		// header's columns are not the body's), or a total row with an
		// empty cell under one, is the same table's.
		differ := len(above) >= 3 && len(below) >= 3 &&
			(commonSegs(above) != commonSegs(below) || crossesGutter(above, below) || crossesGutter(below, above))
		if differ || len(below) >= 3 && headerLine(words, below) {
			out = append(out, block[start:at])
			start = at
		}
	}
	return append(out, block[start:])
}

// ruleBelongs says whether a horizontal rule belongs to a block without
// rules: it lies within the block's height (or half a line outside it)
// and at least half its length lies over the block, which it is at least
// half as wide as. A stream table's rule under its header often runs
// past its columns: the table's box holds it.
func ruleBelongs(r rule, box raster.Box, lineH float64) bool {
	if !r.horiz || r.band {
		return false
	}
	y := r.pos()
	if y < box.Y0-lineH/2 || y > box.Y1+lineH/2 {
		return false
	}
	over := min(float64(r.b), box.X1) - max(float64(r.a), box.X0)
	return 2*over >= float64(r.length()) && 2*float64(r.length()) >= box.X1-box.X0
}
