// Package checkbox finds check boxes in a page's pixels (a scanned form):
// small squares drawn as outlines, and whether each is marked (a cross, a
// tick or a fill inside). It knows pixels only; the document reader ties
// each box to the words beside it.
package checkbox

import "boxd/engine/raster"

// Size bounds of a check box's side, in raster pixels (144 DPI: 6 to 24
// points).
const (
	MinSide = 12
	MaxSide = 48
)

// Box is a check box found.
type Box struct {
	Box raster.Box
	// Marked: ink inside the outline (at least 8% of its inside).
	Marked bool
	// Fill is the share of the inside that is ink.
	Fill float64
}

// Find finds the check boxes on a page: connected ink (darker than 140)
// whose bounds are a near-square of MinSide to MaxSide pixels and whose
// four sides are each at least 85% ink along one of their three outer
// rows or columns (an outline, not a letter: an "O" or a "D" has no four
// straight sides). Boxes are in reading order of their tops, then lefts.
func Find(img *raster.Image) []Box {
	w, h := img.W, img.H
	ink := make([]bool, w*h)
	for i := range w * h {
		p := img.Pix[3*i : 3*i+3]
		ink[i] = (77*int(p[0])+150*int(p[1])+29*int(p[2]))>>8 < 140
	}
	seen := make([]bool, w*h)
	var out []Box
	var stack []int
	for start := range w * h {
		if !ink[start] || seen[start] {
			continue
		}
		x0, y0, x1, y1 := w, h, -1, -1
		n := 0
		stack = append(stack[:0], start)
		seen[start] = true
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			x, y := i%w, i/w
			x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			n++
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					nx, ny := x+dx, y+dy
					if nx < 0 || ny < 0 || nx >= w || ny >= h {
						continue
					}
					if j := ny*w + nx; ink[j] && !seen[j] {
						seen[j] = true
						stack = append(stack, j)
					}
				}
			}
		}
		bw, bh := x1-x0+1, y1-y0+1
		if bw < MinSide || bh < MinSide || bw > MaxSide || bh > MaxSide || 4*bw < 3*bh || 4*bh < 3*bw {
			continue
		}
		side := func(horiz bool, at int) float64 {
			best := 0.0
			for k := 0; k < 3; k++ {
				c, total := 0, 0
				if horiz {
					y := at + k
					if at == y1 {
						y = at - k
					}
					for x := x0; x <= x1; x++ {
						total++
						if ink[y*w+x] {
							c++
						}
					}
				} else {
					x := at + k
					if at == x1 {
						x = at - k
					}
					for y := y0; y <= y1; y++ {
						total++
						if ink[y*w+x] {
							c++
						}
					}
				}
				best = max(best, float64(c)/float64(total))
			}
			return best
		}
		if side(true, y0) < 0.85 || side(true, y1) < 0.85 || side(false, x0) < 0.85 || side(false, x1) < 0.85 {
			continue
		}
		in := max(3, min(bw, bh)/5)
		c, total := 0, 0
		for y := y0 + in; y <= y1-in; y++ {
			for x := x0 + in; x <= x1-in; x++ {
				total++
				if ink[y*w+x] {
					c++
				}
			}
		}
		if total == 0 {
			continue
		}
		fill := float64(c) / float64(total)
		out = append(out, Box{Box: raster.Box{X0: float64(x0), Y0: float64(y0), X1: float64(x1 + 1), Y1: float64(y1 + 1)}, Marked: fill >= 0.08, Fill: float64(int(fill*1000+0.5)) / 1000})
	}
	// A solid mark inside a box is its fill, not a box of its own.
	var kept []Box
	for i, b := range out {
		inside := false
		for j, o := range out {
			if i != j && b.Box.X0 >= o.Box.X0 && b.Box.Y0 >= o.Box.Y0 && b.Box.X1 <= o.Box.X1 && b.Box.Y1 <= o.Box.Y1 {
				inside = true
			}
		}
		if !inside {
			kept = append(kept, b)
		}
	}
	return kept
}
