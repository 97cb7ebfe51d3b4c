// Package forest reads forest plots back into numbers by geometry
// (revision boxd-chart-2 of package chart adds them): each row's
// estimate and interval measured from the drawing against the
// calibrated axis, its label and printed numbers from the OCRed words,
// and a printed number the drawing disagrees with flagged. The rules:
//
//	F1. Axis: the row with the longest run of ink (at least 20% of the
//	    width) whose tick labels, read under it as for a survival chart,
//	    calibrate; ratio axes (0.25, 0.5, 1, 2, 4) are log axes: with at
//	    least three positive labels, the axis is logarithmic when value's
//	    logarithm fits pixels at least four times better than the value.
//	F2. The line of no effect: columns within the axis whose ink covers
//	    at least 40% of the height above it (dashed lines too); they are
//	    set aside, and a row's line is followed across them.
//	F3. Rows: ink above the axis and within 30 pixels of its ends, in
//	    connected pieces joined across the line of no effect, each piece
//	    at least 12 pixels wide: a study is a thin line (at most 4 pixels
//	    thick over at least 30% of its width) with a block (at least 6
//	    thick) on it, its estimate the block's middle and its interval
//	    the line's ends; a pooled estimate is a diamond (no thin line, a
//	    profile rising to one peak and falling), its estimate the peak.
//	F4. Text: a row's label is the words left of the axis on its line,
//	    its printed numbers the words right of it read as "est (lo-hi)";
//	    a printed number more than 3% of the axis's span (in its scale)
//	    from the drawing is flagged.
//
// The rows are chart.ForestRow; the chart's type is chart.Forest.
package forest

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"boxd/engine/raster"
	"boxd/pipelines/docreader/chart"
)

var printedRE = regexp.MustCompile(`(-?[0-9]+(?:\.[0-9]+)?)\s*[(\[]\s*(-?[0-9]+(?:\.[0-9]+)?)\s*(?:-|–|—|to|,|;)\s*(-?[0-9]+(?:\.[0-9]+)?)\s*[)\]]`)

// Read reads a forest plot from its raster and OCRed words; a
// chart with fewer than two rows drawn as a forest plot's is not one
// (chart.NotCalibrated).
func Read(img *raster.Image, words []chart.Word, opt chart.Options) (*chart.Chart, error) {
	at := func(x, y int) []byte { return img.Pix[(y*img.W+x)*3 : (y*img.W+x)*3+3] }
	dark := func(x, y int) bool {
		p := at(x, y)
		return !chart.Colored(p) && (int(p[0])+int(p[1])+int(p[2]))/3 < 120
	}
	// F1. The axis.
	axisY, xa, xb := -1, 0, 0
	for y := range img.H {
		a, b := chart.LongestRun(img.W, func(x int) bool { return dark(x, y) })
		if b-a > xb-xa {
			axisY, xa, xb = y, a, b
		}
	}
	if axisY < 0 || xb-xa < img.W/5 {
		return nil, &chart.NotCalibrated{Why: "no axis line (a long horizontal line) was found"}
	}
	// The axis may be drawn several pixels thick: its bottom edge.
	for axisY+1 < img.H && dark((xa+xb)/2, axisY+1) {
		axisY++
	}
	xMarks := chart.Marks(img.W, func(x int) bool {
		n := 0
		for y := axisY + 3; y < min(img.H, axisY+10); y++ {
			if dark(x, y) {
				n++
			}
		}
		return n >= 4
	})
	var ts []chart.Tick
	labelled := map[int]bool{}
	number := func(s string) (float64, error) {
		return strconv.ParseFloat(chart.MendZeros(strings.TrimSpace(s)), 64)
	}
	for _, w := range words {
		v, err := number(w.Text)
		if err != nil {
			continue
		}
		cx, cy := w.Box.Center()
		if cy > float64(axisY) && cy < float64(axisY)+90 && cx >= float64(xa)-30 && cx <= float64(xb)+30 {
			if i := chart.NearestMark(xMarks, cx, 25); i >= 0 {
				cx = xMarks[i]
				labelled[i] = true
			}
			ts = append(ts, chart.Tick{Value: v, Pixel: cx})
		}
	}
	if opt.Reread != nil {
		// A mark whose label was missed (a lone "1" most often) is read
		// again alone.
		for i, mx := range xMarks {
			if labelled[i] || mx < float64(xa)-5 || mx > float64(xb)+5 {
				continue
			}
			for _, w := range opt.Reread(raster.Box{X0: mx - 45, Y0: float64(axisY) + 12, X1: mx + 45, Y1: float64(axisY) + 72}) {
				if v, err := number(w.Text); err == nil {
					ts = append(ts, chart.Tick{Value: v, Pixel: mx})
					break
				}
			}
		}
	}
	ax, ok := fitForestAxis(ts)
	if !ok {
		return nil, &chart.NotCalibrated{Why: "fewer than two numeric tick labels were read under the axis"}
	}
	// F2. The line of no effect.
	ref := map[int]bool{}
	for x := xa; x < xb; x++ {
		n, first := 0, -1
		for y := range axisY - 2 {
			if dark(x, y) {
				if first < 0 {
					first = y
				}
				n++
			}
		}
		if ext := axisY - 2 - first; first >= 0 && 10*ext >= 3*axisY && 10*n >= 4*ext {
			ref[x] = true
		}
	}
	// F3. Rows: connected ink above the axis, the line of no effect set
	// aside.
	x0, x1 := max(0, xa-30), min(img.W, xb+30)
	w, h := x1-x0, max(0, axisY-3)
	seen := make([]bool, w*h)
	type piece struct {
		minX, maxX, minY, maxY int
		cols                   map[int]int    // ink per column
		span                   map[int][2]int // each column's top and bottom ink
	}
	var pieces []*piece
	var stack [][2]int
	for y := range h {
		for x := x0; x < x1; x++ {
			if seen[y*w+x-x0] || ref[x] || !dark(x, y) {
				continue
			}
			p := &piece{minX: x, maxX: x, minY: y, maxY: y, cols: map[int]int{}, span: map[int][2]int{}}
			stack = append(stack[:0], [2]int{x, y})
			seen[y*w+x-x0] = true
			for len(stack) > 0 {
				q := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				p.minX, p.maxX, p.minY, p.maxY = min(p.minX, q[0]), max(p.maxX, q[0]), min(p.minY, q[1]), max(p.maxY, q[1])
				p.cols[q[0]]++
				if sp, ok := p.span[q[0]]; ok {
					p.span[q[0]] = [2]int{min(sp[0], q[1]), max(sp[1], q[1])}
				} else {
					p.span[q[0]] = [2]int{q[1], q[1]}
				}
				for _, d := range [4][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
					nx, ny := q[0]+d[0], q[1]+d[1]
					if nx < x0 || nx >= x1 || ny < 0 || ny >= h || seen[ny*w+nx-x0] || ref[nx] || !dark(nx, ny) {
						continue
					}
					seen[ny*w+nx-x0] = true
					stack = append(stack, [2]int{nx, ny})
				}
			}
			pieces = append(pieces, p)
		}
	}
	// Join pieces across the line of no effect: same middle row, and
	// nothing but the line between them.
	sort.Slice(pieces, func(i, j int) bool { return pieces[i].minX < pieces[j].minX })
	mid := func(p *piece) float64 { return float64(p.minY+p.maxY) / 2 }
	var joined []*piece
	for _, p := range pieces {
		merged := false
		for _, q := range joined {
			if math.Abs(mid(p)-mid(q)) > 3 || p.minX <= q.maxX {
				continue
			}
			gapOnlyRef := true
			for x := q.maxX + 1; x < p.minX; x++ {
				if !ref[x] {
					gapOnlyRef = false
					break
				}
			}
			if gapOnlyRef {
				// The row's line runs on under the line of no effect.
				y := int(math.Round(mid(q)))
				for x := q.maxX + 1; x < p.minX; x++ {
					q.cols[x], q.span[x] = 3, [2]int{y - 1, y + 1}
				}
				q.maxX, q.minY, q.maxY = p.maxX, min(q.minY, p.minY), max(q.maxY, p.maxY)
				for x, n := range p.cols {
					q.cols[x] += n
					q.span[x] = p.span[x]
				}
				merged = true
				break
			}
		}
		if !merged {
			joined = append(joined, p)
		}
	}
	c := &chart.Chart{Type: chart.Forest, X: ax, Y: chart.Axis{Ticks: []chart.Tick{}}, Series: []chart.Series{}, AtRisk: []chart.RiskRow{}, Rows: []chart.ForestRow{}}
	for _, p := range joined {
		width := p.maxX - p.minX + 1
		if width < 12 {
			continue
		}
		// The line's row: the middle of the thin columns.
		var mids []float64
		thin, peak, peakX := 0, 0, 0
		for x := p.minX; x <= p.maxX; x++ {
			n := p.cols[x]
			if n > 0 && n <= 4 {
				thin++
				mids = append(mids, float64(p.span[x][0]+p.span[x][1])/2)
			}
			if n > peak {
				peak, peakX = n, x
			}
		}
		level := func(x int, y float64, tol float64) bool {
			sp := p.span[x]
			return math.Abs(float64(sp[0]+sp[1])/2-y) <= tol
		}
		row := chart.ForestRow{Y: chart.Round(mid(p), 1)}
		if est, y, ok := study(p.cols, p.span, p.minX, p.maxX, thin, mids); ok {
			row.Y, row.Estimate = chart.Round(y, 1), valueAt(ax, est)
		} else if 10*thin < 3*width && peak >= 8 && unimodal(p.cols, p.minX, p.maxX) && level(p.minX, mid(p), 3) && level(p.maxX, mid(p), 3) {
			row.Pooled = true
			// The peak's middle: the columns within 90% of it.
			lo, hi := peakX, peakX
			for x := p.minX; x <= p.maxX; x++ {
				if 10*p.cols[x] >= 9*peak {
					lo, hi = min(lo, x), max(hi, x)
				}
			}
			row.Estimate = valueAt(ax, float64(lo+hi)/2)
		} else {
			continue // text, a tick, a legend mark
		}
		row.Low, row.High = valueAt(ax, float64(p.minX)), valueAt(ax, float64(p.maxX))
		row.Estimate, row.Low, row.High = chart.Sig3(row.Estimate), chart.Sig3(row.Low), chart.Sig3(row.High)
		c.Rows = append(c.Rows, row)
	}
	if len(c.Rows) < 2 {
		return nil, &chart.NotCalibrated{Why: "fewer than two rows drawn as a forest plot's (an interval with an estimate) were found"}
	}
	sort.Slice(c.Rows, func(i, j int) bool { return c.Rows[i].Y < c.Rows[j].Y })
	top := c.Rows[0].Y - 30
	c.PlotBox = raster.Box{X0: float64(xa), Y0: max(0, top), X1: float64(xb), Y1: float64(axisY)}.BBox()
	// F4. Labels and printed numbers.
	for _, l := range chart.TextLines(words) {
		cy := (l[0].Box.Y0 + l[len(l)-1].Box.Y1) / 2
		best, bestD := -1, 22.0
		for i, r := range c.Rows {
			if d := math.Abs(r.Y - cy); d < bestD {
				best, bestD = i, d
			}
		}
		if best < 0 {
			continue
		}
		r := &c.Rows[best]
		var left, right []string
		for _, w := range l {
			switch {
			case w.Box.X1 < float64(xa)-5:
				left = append(left, w.Text)
			case w.Box.X0 > float64(xb)+5:
				right = append(right, w.Text)
			}
		}
		if len(left) > 0 && r.Label == "" {
			r.Label = strings.Join(left, " ")
		}
		text := chart.MendZeros(strings.Join(right, " "))
		if m := printedRE.FindStringSubmatch(text); m != nil && r.Printed == nil {
			pr := &chart.Printed{Text: strings.TrimSpace(m[0])}
			pr.Estimate, _ = strconv.ParseFloat(m[1], 64)
			pr.Low, _ = strconv.ParseFloat(m[2], 64)
			pr.High, _ = strconv.ParseFloat(m[3], 64)
			r.Printed = pr
		}
	}
	span := scaled(ax, ax.Max) - scaled(ax, ax.Min)
	for i := range c.Rows {
		r := &c.Rows[i]
		if r.Printed == nil {
			continue
		}
		var off []string
		for _, p := range [3]struct {
			name           string
			drawn, printed float64
		}{{"estimate", r.Estimate, r.Printed.Estimate}, {"lower limit", r.Low, r.Printed.Low}, {"upper limit", r.High, r.Printed.High}} {
			if ax.Log && p.printed <= 0 {
				off = append(off, fmt.Sprintf("the printed %s %s cannot sit on a log axis", p.name, chart.Ftoa(p.printed)))
				continue
			}
			if math.Abs(scaled(ax, p.drawn)-scaled(ax, p.printed)) > 0.03*math.Abs(span) {
				off = append(off, fmt.Sprintf("the %s is printed %s and drawn at %s", p.name, chart.Ftoa(p.printed), chart.Ftoa(p.drawn)))
			}
		}
		if len(off) > 0 {
			r.Flag = strings.Join(off, "; ")
			c.Flagged++
		}
	}
	return c, nil
}

// fitForestAxis calibrates a forest plot's axis, logarithmic when the
// labels' logarithms fit at least four times better (F1).
func fitForestAxis(ts []chart.Tick) (chart.Axis, bool) {
	lin, ok := chart.Fit(ts)
	if !ok {
		return chart.Axis{}, false
	}
	positive := len(ts) >= 3
	for _, t := range ts {
		positive = positive && t.Value > 0
	}
	if !positive {
		return lin, true
	}
	logs := make([]chart.Tick, len(ts))
	for i, t := range ts {
		logs[i] = chart.Tick{Value: math.Log(t.Value), Pixel: t.Pixel}
	}
	if 4*rawResidual(logs) > rawResidual(ts) {
		return lin, true
	}
	lg, ok := chart.Fit(logs)
	if !ok {
		return lin, true
	}
	// The ticks keep their printed values.
	for i := range lg.Ticks {
		lg.Ticks[i].Value = chart.Round(math.Exp(lg.Ticks[i].Value), 6)
	}
	lg.Log, lg.Min, lg.Max = true, math.Exp(lg.Min), math.Exp(lg.Max)
	return lg, true
}

// valueAt is the axis's value at pixel px.
func valueAt(a chart.Axis, px float64) float64 {
	if a.Log {
		return math.Exp(a.Offset + a.Scale*px)
	}
	return a.Offset + a.Scale*px
}

// scaled is v in the axis's own scale (its logarithm on a log axis).
func scaled(a chart.Axis, v float64) float64 {
	if a.Log {
		return math.Log(v)
	}
	return v
}

// unimodal says whether the profile rises to one peak and falls (a
// diamond), allowing steps back of a pixel.
func unimodal(cols map[int]int, lo, hi int) bool {
	falling := false
	prev := 0
	for x := lo; x <= hi; x++ {
		n := cols[x]
		switch {
		case n < prev-1:
			falling = true
		case n > prev+1 && falling:
			return false
		}
		prev = n
	}
	return true
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// study reads a piece as a study's row: a straight thin line (its
// columns' middles within 2 pixels of the line's row) over at least 30%
// of the width, and on it one block (columns at least 6 thick, centred
// on the line). It returns the block's middle and the line's row.
func study(cols map[int]int, span map[int][2]int, lo, hi, thin int, mids []float64) (float64, float64, bool) {
	if 10*thin < 3*(hi-lo+1) {
		return 0, 0, false
	}
	y := median(mids)
	level := func(x int, tol float64) bool {
		sp := span[x]
		return math.Abs(float64(sp[0]+sp[1])/2-y) <= tol
	}
	b0, b1 := -1, -1
	for x := lo; x <= hi; x++ {
		n := cols[x]
		switch {
		case n > 0 && n <= 4 && !level(x, 2):
			return 0, 0, false
		case n >= 6:
			if b0 < 0 {
				b0 = x
			}
			b1 = x
		}
	}
	if b0 < 0 || !level((b0+b1)/2, 3) {
		return 0, 0, false
	}
	for x := b0 + 1; x < b1; x++ {
		if cols[x] < 6 && cols[x+1] < 6 && cols[x-1] < 6 {
			return 0, 0, false // two blocks
		}
	}
	return float64(b0+b1) / 2, y, true
}

// rawResidual is the largest distance of a tick from the least-squares
// line through all of them, as a share of their range (no label dropped:
// comparing scales needs every label).
func rawResidual(ts []chart.Tick) float64 {
	var sx, sy, sxx, sxy float64
	n := float64(len(ts))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, t := range ts {
		sx += t.Pixel
		sy += t.Value
		sxx += t.Pixel * t.Pixel
		sxy += t.Pixel * t.Value
		lo, hi = min(lo, t.Value), max(hi, t.Value)
	}
	den := n*sxx - sx*sx
	if den == 0 || hi <= lo {
		return math.Inf(1)
	}
	b := (n*sxy - sx*sy) / den
	a := (sy - b*sx) / n
	worst := 0.0
	for _, t := range ts {
		worst = max(worst, math.Abs(a+b*t.Pixel-t.Value))
	}
	return worst / (hi - lo)
}
