package forms

import (
	"regexp"

	"boxd/engine/mupdf"
	"boxd/pipelines/docreader/doc"
	"sort"
	"strings"

	"boxd/engine/raster"
)

// TextLine is one text line of a page, for Pairs: its box, its text and
// the region (block) of the page it belongs to.
type TextLine struct {
	Box    raster.Box
	Text   string
	Region int
}

var (
	// markerRE is a list's number printed apart from its entry: "1.",
	// "2)", "[3]", "(4)".
	markerRE = regexp.MustCompile(`^(\[[0-9]{1,3}\]|\(?[0-9]{1,3}[.)]?)$`)
	// pageNumberRE is a table of contents' page number.
	pageNumberRE = regexp.MustCompile(`^([0-9]{1,4}|(?i)[ivxlcdm]{1,7})$`)
)

// The kinds of pair, strongest first: a line claimed by a stronger pair
// is not offered to a weaker one.
const (
	pairLabel  = iota // "Label:" then its value
	pairMarker        // a list's number, then its entry
	pairPage          // a contents entry, then its page number
)

// Pairs finds the printed rows of a page that are read across a gutter,
// where the XY-cut alone reads them column by column: a "Label:" and
// its value on a flattened form or in a letter's reference block, a
// reference's number and its text, a contents entry and its page number
// far right (no dot leaders). It gives each line the index of its pair
// (both lines of a pair share one), or -1. Two lines pair when they
// stand on one baseline (each covers at least 60% of the shorter one's
// height), in different regions, each the other's nearest line across
// the gap (after it in the reading direction, and before), and
//   - the first is a label: at most six words ending in ":" (the second
//     does not end in one); or
//   - the first is a number ("1.", "[2]", "(3)"); or
//   - the second is a page number (digits, or roman numerals) and the
//     first has a letter.
//
// Two short lines alone (no colon, no number) do not pair: two columns
// of a short list ("lisinopril 10 mg daily" beside "penicillin
// (rash)") read column by column.
//
// A region's lines pair only where at least half of them do, so two
// columns of prose whose baselines line up (long lines, none a label)
// stay two columns, and a paragraph one of whose lines happens to end
// in a colon stays whole; a line of such a region that pairs with
// nothing goes with the row above it (a value, or an entry, that
// wraps).
func Pairs(lines []TextLine, rtl bool) []int {
	out := make([]int, len(lines))
	for i := range out {
		out[i] = -1
	}
	// The nearest line after each line on its row, and before it.
	after, before := make([]int, len(lines)), make([]int, len(lines))
	for i := range lines {
		after[i], before[i] = -1, -1
	}
	gapAfter := func(a, b raster.Box) float64 {
		if rtl {
			return a.X0 - b.X1
		}
		return b.X0 - a.X1
	}
	for i, a := range lines {
		best, bestGap := -1, 0.0
		for j, b := range lines {
			if i == j || !sameRow(a.Box, b.Box) {
				continue
			}
			g := gapAfter(a.Box, b.Box)
			if g < 0 {
				continue
			}
			if best < 0 || g < bestGap {
				best, bestGap = j, g
			}
		}
		after[i] = best
	}
	for i, j := range after {
		if j >= 0 && (before[j] < 0 || gapAfter(lines[i].Box, lines[j].Box) < gapAfter(lines[before[j]].Box, lines[j].Box)) {
			before[j] = i
		}
	}
	type cand struct{ l, r, kind int }
	var cs []cand
	for i, j := range after {
		if j < 0 || before[j] != i || lines[i].Region == lines[j].Region {
			continue
		}
		l, r := strings.TrimSpace(lines[i].Text), strings.TrimSpace(lines[j].Text)
		nl := len(strings.Fields(l))
		rLabel := strings.HasSuffix(r, ":")
		switch {
		case strings.HasSuffix(l, ":") && nl <= 6 && !rLabel:
			cs = append(cs, cand{i, j, pairLabel})
		case markerRE.MatchString(l):
			cs = append(cs, cand{i, j, pairMarker})
		case pageNumberRE.MatchString(r) && hasLetter(l):
			cs = append(cs, cand{i, j, pairPage})
		}
	}
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].kind < cs[b].kind })
	used := map[int]bool{}
	var pairs []cand
	for _, c := range cs {
		if used[c.l] || used[c.r] {
			continue
		}
		used[c.l], used[c.r] = true, true
		pairs = append(pairs, c)
	}
	// The majority rule, region by region, until no region changes.
	alive := make([]bool, len(pairs))
	for k := range alive {
		alive[k] = true
	}
	for changed := true; changed; {
		changed = false
		paired, total := map[int]int{}, map[int]int{}
		for _, l := range lines {
			total[l.Region]++
		}
		for k, p := range pairs {
			if alive[k] {
				paired[lines[p.l].Region]++
				paired[lines[p.r].Region]++
			}
		}
		for k, p := range pairs {
			if !alive[k] {
				continue
			}
			for _, reg := range []int{lines[p.l].Region, lines[p.r].Region} {
				if 2*paired[reg] < total[reg] {
					alive[k], changed = false, true
					break
				}
			}
		}
	}
	n := 0
	for k, p := range pairs {
		if alive[k] {
			out[p.l], out[p.r] = n, n
			n++
		}
	}
	return out
}

// sameRow says whether two lines stand on one baseline: their heights
// overlap by at least 60% of the shorter one's.
func sameRow(a, b raster.Box) bool {
	h := min(a.Y1-a.Y0, b.Y1-b.Y0)
	return h > 0 && min(a.Y1, b.Y1)-max(a.Y0, b.Y0) >= 0.6*h
}

// labelOnlyRE is a printed label standing alone: up to six words
// starting with a letter, ending in a colon.
var labelOnlyRE = regexp.MustCompile(`^\s*([\p{L}][\p{L}\p{N} /()#&'.,-]{0,48}?)\s*:\s*$`)

// labelAcross finds printed labels that stand alone on their line
// ("Date of birth:") with their value the nearest line after them on
// their baseline, in another element, across a gap with nothing in it
// (a flattened form, a letter's reference block): the field is tied to
// the element holding the value. Left to right pages only.
func labelAcross(p *doc.Page, widgets []mupdf.Field) []doc.Field {
	type at struct {
		box  raster.Box
		text string
		elem string
	}
	var ls []at
	for _, e := range p.Elements {
		switch e.Kind {
		case doc.KindText, doc.KindListItem, doc.KindTitle, doc.KindCell:
		default:
			continue
		}
		for _, l := range e.Lines {
			ls = append(ls, at{box(l.BBox), l.Text, e.ID})
		}
	}
	var out []doc.Field
	for i, l := range ls {
		m := labelOnlyRE.FindStringSubmatch(l.text)
		if m == nil || len(strings.Fields(m[1])) > 6 {
			continue
		}
		best, bestGap := -1, 0.0
		for j, v := range ls {
			if j == i || !sameRow(l.box, v.box) {
				continue
			}
			if g := v.box.X0 - l.box.X1; g >= 0 && (best < 0 || g < bestGap) {
				best, bestGap = j, g
			}
		}
		if best < 0 || ls[best].elem == l.elem {
			continue
		}
		v := ls[best]
		val := strings.TrimSpace(v.text)
		if strings.HasSuffix(val, ":") || !hasLetter(val) && !hasDigit(val) {
			continue // another label, or no value
		}
		if underWidget(l.box, widgets) || underWidget(v.box, widgets) {
			continue
		}
		b := l.box.Union(v.box)
		out = append(out, doc.Field{Name: m[1], Type: "label_value", Value: val, Page: p.Page, BBox: b.BBox(),
			Element: v.elem, Source: doc.FieldLayout, ValueIn: doc.ValueInElement})
	}
	return out
}

// box is a [x, y, width, height] box as a raster.Box.
func box(b [4]int) raster.Box {
	return raster.Box{X0: float64(b[0]), Y0: float64(b[1]), X1: float64(b[0] + b[2]), Y1: float64(b[1] + b[3])}
}
