package forms

import (
	"boxd/engine/mupdf"
	"boxd/engine/raster"
)

// Line is one text line of a page, for Rows: its box and the region
// (block) of the page it belongs to.
type Line struct {
	Box    raster.Box
	Region int
}

// OrderWidgets are the widgets of a page that guide its reading order:
// those that hold a value a reader sees (text, choice, check box, radio
// button), and none larger than a quarter of the page (a widget laid
// over a whole page, as some signature and button widgets are, says
// nothing about rows).
func OrderWidgets(ws []mupdf.Field, pageW, pageH int) []raster.Box {
	var out []raster.Box
	for _, w := range ws {
		switch w.Type {
		case "text", "choice", "checkbox", "radio":
		default:
			continue
		}
		if w.Box.Empty() || (w.Box.X1-w.Box.X0)*(w.Box.Y1-w.Box.Y0) > float64(pageW)*float64(pageH)/4 {
			continue
		}
		out = append(out, w.Box)
	}
	return out
}

// Rows ties a page's text lines to the form widgets whose rows they
// are read in, so that reading order keeps a widget's printed label and
// its value together (label, then value, as a person reads a form),
// however wide the gap between them. It gives each line the index of
// its widget in ws, or -1:
//   - a line whose centre lies inside a widget is that widget's value
//     (the widget's appearance, drawn into the page's text);
//   - a line not inside a widget is a label of the nearest widget after
//     it in the reading direction (to its right; on a right-to-left page
//     to its left) on its row (the widget covers at least half of the
//     line's height), when no other line stands between the two;
//   - a region's lines are labels only where at least half of its lines
//     that are not values are: a label, or a block of labels stacked
//     beside a column of widgets, is; a paragraph one of whose lines
//     happens to end beside a widget is not, and stays whole.
func Rows(lines []Line, ws []raster.Box, rtl bool) []int {
	out := make([]int, len(lines))
	inside := make([]bool, len(lines))
	for i, l := range lines {
		out[i] = -1
		cx, cy := l.Box.Center()
		best := -1
		for j, w := range ws {
			const slack = 2
			if cx < w.X0-slack || cx > w.X1+slack || cy < w.Y0-slack || cy > w.Y1+slack {
				continue
			}
			// Nested or overlapping widgets: the smallest holds the line.
			if best < 0 || area(w) < area(ws[best]) {
				best = j
			}
		}
		if best >= 0 {
			out[i], inside[i] = best, true
		}
	}
	for i, l := range lines {
		if inside[i] {
			continue
		}
		out[i] = labelOf(i, l.Box, lines, inside, out, ws, rtl)
	}
	// The majority rule, region by region.
	type tally struct{ labels, others int }
	counts := map[int]*tally{}
	for i, l := range lines {
		if inside[i] {
			continue
		}
		c := counts[l.Region]
		if c == nil {
			c = &tally{}
			counts[l.Region] = c
		}
		if out[i] >= 0 {
			c.labels++
		} else {
			c.others++
		}
	}
	for i, l := range lines {
		if c := counts[l.Region]; !inside[i] && c != nil && c.labels < c.others {
			out[i] = -1
		}
	}
	return out
}

// labelOf is the widget line i is a label of, or -1.
func labelOf(i int, b raster.Box, lines []Line, inside []bool, owner []int, ws []raster.Box, rtl bool) int {
	h := b.Y1 - b.Y0
	if h <= 0 {
		return -1
	}
	const slack = 2
	best, bestGap := -1, 0.0
	for j, w := range ws {
		if min(b.Y1, w.Y1)-max(b.Y0, w.Y0) < h/2 {
			continue // not on the line's row
		}
		gap := w.X0 - b.X1
		if rtl {
			gap = b.X0 - w.X1
		}
		if gap < -slack {
			continue // not after the line
		}
		if best < 0 || gap < bestGap {
			best, bestGap = j, gap
		}
	}
	if best < 0 {
		return -1
	}
	w := ws[best]
	lo, hi := b.X1, w.X0 // the space between the line and the widget
	if rtl {
		lo, hi = w.X1, b.X0
	}
	for k, o := range lines {
		if k == i || inside[k] && owner[k] == best {
			continue
		}
		if min(o.Box.Y1, b.Y1)-max(o.Box.Y0, b.Y0) < min(h, o.Box.Y1-o.Box.Y0)/2 {
			continue // another row
		}
		if o.Box.X1 > lo+slack && o.Box.X0 < hi-slack {
			return -1 // something stands between the line and the widget
		}
	}
	return best
}

func area(b raster.Box) float64 { return (b.X1 - b.X0) * (b.Y1 - b.Y0) }
