package raster

import "math"

// Skew bounds and steps (degrees).
const (
	maxSkew    = 5.0
	coarseStep = 0.1
	fineStep   = 0.01
	// MinSkew is the least skew worth turning a page for: under it a
	// ruling line 1,200 px long drifts by less than 4 px.
	MinSkew = 0.2
)

// Skew estimates how far a page's lines of text and rules are turned
// clockwise from horizontal, in degrees within ±5 (0 when the page has
// too little ink to say, or no angle stands out). It is the projection
// profile method: ink pixels are projected across the page at each
// candidate angle, and the angle whose row profile is sharpest (the
// largest sum of squared row counts) is the one along which the lines
// run. A 0.1° scan, then 0.01° around the best.
func (m *Image) Skew() float64 {
	// Ink on a copy at most 2,000 px wide (box-averaged), as points. (At
	// 1,000 px a page of thin rules and small text measured 0.13° too
	// steep: its 1-px strokes averaged away unevenly.)
	f := max(1, (m.W+1999)/2000)
	w, h := m.W/f, m.H/f
	if w < 50 || h < 50 {
		return 0
	}
	var xs, ys []float64
	for y := range h {
		for x := range w {
			sum := 0
			for dy := range f {
				p := m.Pix[3*((y*f+dy)*m.W+x*f):]
				for dx := range f {
					sum += int(p[3*dx]) + int(p[3*dx+1]) + int(p[3*dx+2])
				}
			}
			if sum < 3*128*f*f {
				xs = append(xs, float64(x)-float64(w)/2)
				ys = append(ys, float64(y)-float64(h)/2)
			}
		}
	}
	if len(xs) < 200 || len(xs) > w*h/2 {
		return 0 // a blank page, or a dark one (a photo): no lines to find
	}
	diag := int(math.Hypot(float64(w), float64(h))) + 2
	bins := make([]float64, 2*diag+1)
	score := func(deg float64) float64 {
		s, c := math.Sincos(deg * math.Pi / 180)
		clear(bins)
		for i := range xs {
			bins[int(math.Round(ys[i]*c-xs[i]*s))+diag]++
		}
		e := 0.0
		for _, b := range bins {
			e += b * b
		}
		return e
	}
	best, bestScore := 0.0, score(0)
	flat := bestScore
	for i := -int(maxSkew / coarseStep); i <= int(maxSkew/coarseStep); i++ {
		if a := float64(i) * coarseStep; a != 0 {
			if sc := score(a); sc > bestScore {
				best, bestScore = a, sc
			}
		}
	}
	lo := best
	for i := -int(coarseStep / fineStep); i <= int(coarseStep/fineStep); i++ {
		a := lo + float64(i)*fineStep
		if sc := score(a); sc > bestScore {
			best, bestScore = a, sc
		}
	}
	if bestScore < 1.02*flat {
		return 0 // no angle is clearly better than none
	}
	return math.Round(best*100) / 100
}

// Straighten turns the raster clockwise by deg degrees about its centre
// taking each pixel from its nearest source (the corners uncovered are
// white), keeping its size: the small turn that straightens a skewed
// scan. Nearest, not interpolated: interpolation greys the gaps between
// letters, and a line of small text blurred so reads as a ruling line to
// the table finder (a spanning header lost its span).
func (m *Image) Straighten(deg float64) *Image {
	out := &Image{W: m.W, H: m.H, Pix: make([]byte, len(m.Pix))}
	s, c := math.Sincos(deg * math.Pi / 180)
	cx, cy := float64(m.W-1)/2, float64(m.H-1)/2
	for y := range m.H {
		for x := range m.W {
			dx, dy := float64(x)-cx, float64(y)-cy
			sx, sy := int(math.Round(dx*c+dy*s+cx)), int(math.Round(-dx*s+dy*c+cy))
			d := out.Pix[3*(y*m.W+x) : 3*(y*m.W+x)+3]
			if sx < 0 || sy < 0 || sx >= m.W || sy >= m.H {
				d[0], d[1], d[2] = 255, 255, 255
				continue
			}
			copy(d, m.Pix[3*(sy*m.W+sx):])
		}
	}
	return out
}

// Turn turns the raster clockwise by deg degrees about its centre
// (bilinear; the corners uncovered are white), keeping its size: a scan
// fed in at a slant, as the tests make one.
func (m *Image) Turn(deg float64) *Image {
	out := &Image{W: m.W, H: m.H, Pix: make([]byte, len(m.Pix))}
	s, c := math.Sincos(deg * math.Pi / 180)
	cx, cy := float64(m.W-1)/2, float64(m.H-1)/2
	for y := range m.H {
		for x := range m.W {
			dx, dy := float64(x)-cx, float64(y)-cy
			// The source of a pixel turned clockwise by deg.
			sx, sy := dx*c+dy*s+cx, -dx*s+dy*c+cy
			d := out.Pix[3*(y*m.W+x):]
			x0, y0 := int(math.Floor(sx)), int(math.Floor(sy))
			fx, fy := sx-float64(x0), sy-float64(y0)
			for k := range 3 {
				v := 0.0
				for _, q := range [4]struct {
					x, y int
					w    float64
				}{{x0, y0, (1 - fx) * (1 - fy)}, {x0 + 1, y0, fx * (1 - fy)}, {x0, y0 + 1, (1 - fx) * fy}, {x0 + 1, y0 + 1, fx * fy}} {
					p := 255.0
					if q.x >= 0 && q.y >= 0 && q.x < m.W && q.y < m.H {
						p = float64(m.Pix[3*(q.y*m.W+q.x)+k])
					}
					v += q.w * p
				}
				d[k] = byte(math.Round(v))
			}
		}
	}
	return out
}
