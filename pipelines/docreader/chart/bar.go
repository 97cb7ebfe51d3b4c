package chart

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"boxd/engine/raster"
)

// Bar charts by geometry (revision boxd-chart-2):
//  B1. Axes and the y calibration as for a survival chart (rules 2, 3).
//  B2. Bars: columns of the plot box filled (coloured, or grey or dark)
//      from just above the x axis upward without a break, in runs at
//      least 6 pixels wide of one colour; a bar's top is the median of
//      its columns' tops, its value the y axis's there. At least two bars,
//      each solid (90% of its rectangle its colour), make a bar chart.
//  B3. Series: bars of one colour (within 70); named by a line of text
//      drawn in that colour (a legend), else "series n".
//  B4. Categories: bars side by side with gaps under a fifth of a bar's
//      width are one category, named by the words under the x axis
//      (within 80 pixels) over it.
//  B5. Printed values: a number whose box sits within 40 pixels above a
//      bar's top, over the bar; one more than 2% of the y range from the
//      drawn value flags the bar.

// Bar is one bar of a bar chart.
type Bar struct {
	Category string   `json:"category"`
	Series   string   `json:"series"`
	Value    float64  `json:"value"`
	Printed  *float64 `json:"printed"`
	X        float64  `json:"x"` // the bar's middle, chart pixels
	Color    [3]uint8 `json:"color"`
	Flag     string   `json:"flag,omitempty"`
}

// BarChart is the chart type of a bar chart.
const BarChart = "bar"

// ReadBar reads a vertical bar chart from its raster and OCRed words; a
// chart without two solid bars rising from its x axis is not one
// (NotCalibrated).
func ReadBar(img *raster.Image, words []Word, opt Options) (*Chart, error) {
	at := func(x, y int) []byte { return img.Pix[(y*img.W+x)*3 : (y*img.W+x)*3+3] }
	box, ok := axes(img)
	if !ok {
		return nil, &NotCalibrated{Why: "no pair of axis lines (a long horizontal and a long vertical line) was found"}
	}
	yAx, ok := yAxis(img, words, box)
	if !ok {
		return nil, &NotCalibrated{Why: "fewer than two numeric tick labels were read left of the y axis"}
	}
	filled := func(p []byte) bool { return Colored(p) || (int(p[0])+int(p[1])+int(p[2]))/3 < 200 }
	// B2. Each column's fill from just above the axis: its colour and top.
	type col struct {
		top   int
		color [3]uint8
	}
	base := int(box.Y1) - 2
	cols := map[int]col{}
	for x := int(box.X0) + 3; x < int(box.X1); x++ {
		p := at(x, base)
		if !filled(p) {
			continue
		}
		c := [3]uint8{p[0], p[1], p[2]}
		top := base
		for y := base - 1; y >= int(box.Y0); y-- {
			q := at(x, y)
			if !filled(q) || dist([3]uint8{q[0], q[1], q[2]}, c) > 70 {
				break
			}
			top = y
		}
		cols[x] = col{top, c}
	}
	type run struct {
		x0, x1 int
		color  [3]uint8
		tops   []int
	}
	var runs []run
	for x := int(box.X0) + 3; x < int(box.X1); x++ {
		c, ok := cols[x]
		if !ok {
			continue
		}
		if n := len(runs); n > 0 && runs[n-1].x1 == x-1 && dist(runs[n-1].color, c.color) <= 70 {
			runs[n-1].x1 = x
			runs[n-1].tops = append(runs[n-1].tops, c.top)
			continue
		}
		runs = append(runs, run{x0: x, x1: x, color: c.color, tops: []int{c.top}})
	}
	ch := &Chart{Type: BarChart, PlotBox: box.BBox(), X: Axis{Ticks: []Tick{}}, Y: yAx, Series: []Series{}, AtRisk: []RiskRow{}, Bars: []Bar{}}
	var palette [][3]uint8
	var bars []Bar
	for _, r := range runs {
		w := r.x1 - r.x0 + 1
		if w < 6 {
			continue
		}
		sort.Ints(r.tops)
		top := r.tops[len(r.tops)/2]
		if base-top < 2 {
			continue
		}
		// Solid: 90% of the rectangle its colour.
		in := 0
		for y := top; y <= base; y++ {
			for x := r.x0; x <= r.x1; x++ {
				if q := at(x, y); dist([3]uint8{q[0], q[1], q[2]}, r.color) <= 70 {
					in++
				}
			}
		}
		if 10*in < 9*w*(base-top+1) {
			continue
		}
		si := -1
		for i, p := range palette {
			if dist(p, r.color) <= 70 {
				si = i
			}
		}
		if si < 0 {
			si = len(palette)
			palette = append(palette, r.color)
		}
		bars = append(bars, Bar{Value: Sig3(yAx.value(float64(top))), X: float64(r.x0+r.x1) / 2, Color: r.color, Series: strconv.Itoa(si)})
	}
	if len(bars) < 2 {
		return nil, &NotCalibrated{Why: "fewer than two solid bars rising from the x axis were found"}
	}
	// B3. Series names: the legend's words in each series' colour.
	names := namesByColor(img, words, palette)
	// B4. Categories: bars side by side.
	widths := make([]float64, 0, len(runs))
	for _, r := range runs {
		if r.x1-r.x0+1 >= 6 {
			widths = append(widths, float64(r.x1-r.x0+1))
		}
	}
	sort.Float64s(widths)
	barW := widths[len(widths)/2]
	var groups [][]int
	for i := range bars {
		if n := len(groups); n > 0 {
			last := bars[groups[n-1][len(groups[n-1])-1]]
			if bars[i].X-last.X <= barW*1.25 {
				groups[n-1] = append(groups[n-1], i)
				continue
			}
		}
		groups = append(groups, []int{i})
	}
	for _, g := range groups {
		lo, hi := bars[g[0]].X-barW/2, bars[g[len(g)-1]].X+barW/2
		var label []string
		for _, w := range words {
			cx, cy := w.Box.Center()
			if cy > box.Y1 && cy < box.Y1+80 && cx >= lo-barW/2 && cx <= hi+barW/2 {
				label = append(label, w.Text)
			}
		}
		for _, i := range g {
			bars[i].Category = strings.Join(label, " ")
		}
	}
	// B5. Printed values above the bars.
	yRange := math.Abs(yAx.Max - yAx.Min)
	for i := range bars {
		b := &bars[i]
		si, _ := strconv.Atoi(b.Series)
		b.Series = names[si]
		top := float64(0)
		for y := int(box.Y0); y < int(box.Y1); y++ {
			if q := at(int(b.X), y); dist([3]uint8{q[0], q[1], q[2]}, b.Color) <= 70 {
				top = float64(y)
				break
			}
		}
		above := raster.Box{X0: b.X - barW/2 - 4, Y0: top - 40, X1: b.X + barW/2 + 4, Y1: top}
		printed := func(ws []Word) (float64, bool) {
			for _, w := range ws {
				cx, _ := w.Box.Center()
				if w.Box.Y1 > above.Y1+2 || w.Box.Y1 < above.Y0 || cx < above.X0 || cx > above.X1 {
					continue
				}
				if m := barNumberRE.FindStringSubmatch(w.Text); m != nil {
					v, _ := strconv.ParseFloat(m[1], 64)
					return v, true
				}
			}
			return 0, false
		}
		v, ok := printed(words)
		if !ok && opt.Reread != nil && inkIn(img, above) >= 20 {
			// Ink above the bar, and no number read there: a lone
			// number sparse OCR missed, read again alone.
			// Within the bar's own width: a neighbour's edge reads as "|".
			v, ok = printed(opt.Reread(raster.Box{X0: b.X - barW/2 + 2, Y0: above.Y0, X1: b.X + barW/2 - 2, Y1: above.Y1}))
		}
		if !ok {
			continue
		}
		b.Printed = &v
		if math.Abs(v-b.Value) > 0.02*yRange {
			b.Flag = fmt.Sprintf("%s is printed above the bar, which is drawn to %s", Ftoa(v), Ftoa(b.Value))
			ch.Flagged++
		}
	}
	ch.Bars = bars
	return ch, nil
}

// barNumberRE is a printed value: a number, then at most a per cent sign
// or a stray mark OCR makes of the edge beside it.
var barNumberRE = regexp.MustCompile(`^\s*(-?[0-9]+(?:\.[0-9]+)?)%?[_|.,]?\s*$`)

// inkIn counts the ink pixels in b.
func inkIn(img *raster.Image, b raster.Box) int {
	n := 0
	for y := max(0, int(b.Y0)); y < min(img.H, int(b.Y1)); y++ {
		for x := max(0, int(b.X0)); x < min(img.W, int(b.X1)); x++ {
			if ink(img.Pix[(y*img.W+x)*3 : (y*img.W+x)*3+3]) {
				n++
			}
		}
	}
	return n
}

// namesByColor names each colour of palette by the words drawn in it (a
// legend), in reading order; "series n" when none is. A word's colour is
// the mean of its coloured pixels, and a word whose box is over 60%
// colour is a swatch (a solid square OCR read as letters), not a word.
func namesByColor(img *raster.Image, words []Word, palette [][3]uint8) []string {
	at := func(x, y int) []byte { return img.Pix[(y*img.W+x)*3 : (y*img.W+x)*3+3] }
	names := make([]string, len(palette))
	wordColor := func(w Word) ([3]uint8, bool) {
		var sum [3]int
		n := 0
		for y := max(0, int(w.Box.Y0)); y < min(img.H, int(w.Box.Y1)); y++ {
			for x := max(0, int(w.Box.X0)); x < min(img.W, int(w.Box.X1)); x++ {
				if p := at(x, y); Colored(p) {
					for i := range 3 {
						sum[i] += int(p[i])
					}
					n++
				}
			}
		}
		if area := (w.Box.X1 - w.Box.X0) * (w.Box.Y1 - w.Box.Y0); n < 12 || float64(n) > 0.6*area {
			return [3]uint8{}, false
		}
		return [3]uint8{uint8(sum[0] / n), uint8(sum[1] / n), uint8(sum[2] / n)}, true
	}
	for _, l := range TextLines(words) {
		for _, w := range l {
			c, ok := wordColor(w)
			if !ok {
				continue
			}
			for i, p := range palette {
				if dist(p, c) <= 80 {
					names[i] = strings.TrimSpace(names[i] + " " + w.Text)
				}
			}
		}
	}
	for i := range names {
		if names[i] == "" {
			names[i] = "series " + strconv.Itoa(i+1)
		}
	}
	return names
}
