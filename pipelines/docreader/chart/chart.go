// Package chart reads charts back into numbers by geometry: forest plots
// (chart/forest) and Kaplan–Meier survival charts. For a survival chart: the axes are found in the pixels and calibrated from their
// OCRed tick labels, each coloured curve is traced column by column into
// survival steps, the median is where a curve first reaches 0.5, the
// number-at-risk table under the plot is read from its words aligned to
// the ticks, and the printed medians and hazard ratio are read from the
// text. A printed median the drawing disagrees with is flagged.
//
// The rules (revision boxd-chart-2; chart/forest adds forest plots, F1-F4,
// and bar.go bar charts, B1-B5):
//  1. Pixels: "coloured" when their channels differ by more than 60;
//     "ink" when neutral and darker than 100.
//  2. Axes: the x axis is the row with the longest run of ink (at least
//     40% of the width), the y axis the column with the longest run (at
//     least 25% of the height); the plot box runs from the y axis to the
//     x axis's right end, and from the y axis's top to the x axis.
//  3. Calibration: numbers read under the x axis (within 90 pixels) and
//     left of the y axis (within 160), placed at the tick mark they sit
//     by (short ink runs beside the axis), are fitted value = a + b ×
//     pixel by least squares; a mark whose label was missed is read again
//     alone; a fit needs two distinct values, and a label more than 2% of
//     the axis's range off the fit is dropped once.
//  4. Curves: coloured pixels in the plot box are grouped by colour
//     (channels quantised to 32 levels; groups of at least 150 pixels,
//     groups closer than 80 merged); for each column, a curve's value is
//     the middle of its pixels there, or their bottom when they span more
//     than 6 pixels (the drop of a step).
//  5. Medians: the first time a curve is at or below 0.5. A printed
//     median (a line of text holding "median" and a number, in the
//     curve's colour) more than 3% of the x range from the drawn one is
//     flagged.
//  6. Numbers at risk: lines under the x tick labels whose integers sit
//     within 40 pixels of ticks, or whose label is drawn in a curve's
//     colour; the row's label is its other words, its curve the one whose
//     colour its label is drawn in. A number the first reading missed is
//     read again under its tick. A row whose numbers rise over time is
//     flagged.
//  7. Hazard ratio: "HR 0.62 (95% CI 0.45-0.85)" in the text, as printed.
package chart

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"boxd/engine/raster"
)

// Revision names the rules above.
const Revision = "boxd-chart-2"

// Word is an OCRed word with its box in the chart's pixels.
type Word struct {
	Text string
	Box  raster.Box
}

// Tick is one calibration label: its value and where it sits.
type Tick struct {
	Value float64 `json:"value"`
	Pixel float64 `json:"pixel"`
	// Fitted: the label was not read; the value is the fit's at the mark.
	Fitted bool `json:"fitted,omitempty"`
}

// Axis is a calibrated axis: value = Offset + Scale × pixel.
type Axis struct {
	Ticks    []Tick  `json:"ticks"`
	Offset   float64 `json:"offset"`
	Scale    float64 `json:"scale"`
	Min, Max float64 `json:"-"`
	// Log: value = exp(Offset + Scale × pixel) (a ratio axis).
	Log bool `json:"log,omitempty"`
	// ResidualMax is the largest distance of a kept label from the fit,
	// in the axis's units.
	ResidualMax float64 `json:"residual_max"`
}

func (a *Axis) value(px float64) float64 { return a.Offset + a.Scale*px }

// Step is a curve's value from T on.
type Step struct {
	T float64 `json:"t"`
	S float64 `json:"s"`
}

// Series is one curve.
type Series struct {
	Name string `json:"name"`
	// NameFrom is "model" when the vision model named the series (the
	// geometry read no label in its colour); "" when the chart's words did.
	NameFrom string   `json:"name_from,omitempty"`
	Color    [3]uint8 `json:"color"`
	Steps    []Step   `json:"steps"`
	// Median is the drawn median (nil: the curve never reaches 0.5);
	// PrintedMedian the printed one (nil: none printed).
	Median        *float64 `json:"median"`
	PrintedMedian *float64 `json:"printed_median"`
	// Flag says what disagrees ("" when nothing does).
	Flag string `json:"flag,omitempty"`
}

// RiskRow is one row of the number-at-risk table.
type RiskRow struct {
	Label  string    `json:"label"`
	Series string    `json:"series"` // the curve it belongs to ("" when its colour matches none)
	Times  []float64 `json:"times"`
	Counts []int     `json:"counts"`
	Flag   string    `json:"flag,omitempty"`
}

// HazardRatio is a printed hazard ratio.
type HazardRatio struct {
	Text  string   `json:"text"`
	Value float64  `json:"value"`
	Low   *float64 `json:"ci_low"`
	High  *float64 `json:"ci_high"`
}

// Chart is a chart read back as data.
type Chart struct {
	Type        string       `json:"type"` // kaplan_meier, forest or bar
	PlotBox     [4]int       `json:"plot_box"`
	X           Axis         `json:"x"`
	Y           Axis         `json:"y"`
	Series      []Series     `json:"series"`
	AtRisk      []RiskRow    `json:"numbers_at_risk"`
	HazardRatio *HazardRatio `json:"hazard_ratio"`
	// Rows are a forest plot's rows (type forest), top to bottom.
	Rows []ForestRow `json:"rows,omitempty"`
	// Bars are a bar chart's bars (type bar), left to right.
	Bars []Bar `json:"bars,omitempty"`
	// Flagged counts the series and rows whose printed numbers the
	// drawing disagrees with.
	Flagged int `json:"flagged"`
}

// ForestRow is one row of a forest plot.
type ForestRow struct {
	Label    string  `json:"label"`
	Estimate float64 `json:"estimate"`
	Low      float64 `json:"ci_low"`
	High     float64 `json:"ci_high"`
	// Pooled: drawn as a diamond (a pooled or subtotal estimate).
	Pooled bool `json:"pooled"`
	// Printed are the numbers printed on the row ("est (lo-hi)"), nil
	// when none were read.
	Printed *Printed `json:"printed"`
	// Y is the row's centre in the chart's pixels.
	Y    float64 `json:"y"`
	Flag string  `json:"flag,omitempty"`
}

// Printed is a row's printed estimate and interval, and their text.
type Printed struct {
	Text     string  `json:"text"`
	Estimate float64 `json:"estimate"`
	Low      float64 `json:"ci_low"`
	High     float64 `json:"ci_high"`
}

// Forest is the chart type of a forest plot.
const Forest = "forest"

// Shift moves the chart's pixel positions by (dx, dy): a chart read from
// a crop placed back on its page.
func (c *Chart) Shift(dx, dy float64) {
	c.PlotBox[0] += int(dx)
	c.PlotBox[1] += int(dy)
	for _, a := range []*Axis{&c.X, &c.Y} {
		d := dx
		if a == &c.Y {
			d = dy
		}
		for i := range a.Ticks {
			a.Ticks[i].Pixel += d
		}
		a.Offset -= a.Scale * d
	}
	for i := range c.Rows {
		c.Rows[i].Y += dy
	}
	for i := range c.Bars {
		c.Bars[i].X += dx
	}
}

// NotCalibrated is the error when the axes cannot be calibrated.
type NotCalibrated struct{ Why string }

func (e *NotCalibrated) Error() string { return "the axes could not be calibrated: " + e.Why }

// ink says whether a pixel is ink: neutral and darker than 100 (rule 1).
func ink(p []byte) bool {
	return !Colored(p) && (int(p[0])+int(p[1])+int(p[2]))/3 < 100
}

// Options tune a reading.
type Options struct {
	// Reread, when set, reads one small box of the chart again (OCR as
	// a single block): a tick label or a number at risk the first
	// reading missed (sparse OCR drops lone digits).
	Reread func(raster.Box) []Word
}

// Read reads a chart from its raster and OCRed words.
func Read(img *raster.Image, words []Word, opt Options) (*Chart, error) {
	at := func(x, y int) []byte { return img.Pix[(y*img.W+x)*3 : (y*img.W+x)*3+3] }
	// 2. Axes.
	box, ok := axes(img)
	if !ok {
		return nil, &NotCalibrated{Why: "no pair of axis lines (a long horizontal and a long vertical line) was found"}
	}
	c := &Chart{Type: "kaplan_meier", PlotBox: box.BBox(), Series: []Series{}, AtRisk: []RiskRow{}}
	// 3. Calibration: tick labels, placed at the tick marks they sit
	// by; a mark whose label was missed is read again.
	xMarks := Marks(img.W, func(x int) bool {
		n := 0
		for y := int(box.Y1) + 3; y < min(img.H, int(box.Y1)+10); y++ {
			if ink(at(x, y)) {
				n++
			}
		}
		return n >= 4
	})
	var xt []Tick
	tickRow := 0.0
	xLabelled := map[int]bool{}
	for _, w := range words {
		v, err := strconv.ParseFloat(strings.TrimSpace(w.Text), 64)
		if err != nil {
			continue
		}
		cx, cy := w.Box.Center()
		switch {
		case cy > box.Y1 && cy < box.Y1+90 && cx >= box.X0-30 && cx <= box.X1+30:
			if i := NearestMark(xMarks, cx, 25); i >= 0 {
				cx = xMarks[i]
				xLabelled[i] = true
			}
			xt = append(xt, Tick{Value: v, Pixel: cx})
			tickRow = max(tickRow, w.Box.Y1)
		}
	}
	if opt.Reread != nil {
		for i, mx := range xMarks {
			if xLabelled[i] || mx < box.X0-5 || mx > box.X1+5 {
				continue
			}
			for _, w := range opt.Reread(raster.Box{X0: mx - 45, Y0: box.Y1 + 12, X1: mx + 45, Y1: box.Y1 + 72}) {
				if v, err := strconv.ParseFloat(strings.TrimSpace(w.Text), 64); err == nil {
					xt = append(xt, Tick{Value: v, Pixel: mx})
					tickRow = max(tickRow, w.Box.Y1)
					break
				}
			}
		}
	}
	if c.X, ok = Fit(xt); !ok {
		return nil, &NotCalibrated{Why: "fewer than two numeric tick labels were read under the x axis"}
	}
	if c.Y, ok = yAxis(img, words, box); !ok {
		return nil, &NotCalibrated{Why: "fewer than two numeric tick labels were read left of the y axis"}
	}
	// Marks whose labels were never read take the fitted value, rounded
	// as the labels are (a lone "0" is the label OCR misses most).
	for _, mx := range xMarks {
		if mx < box.X0-5 || mx > box.X1+5 || nearestTickIndex(c.X.Ticks, mx, 8) >= 0 {
			continue
		}
		v := c.X.value(mx)
		if r := math.Round(v); math.Abs(v-r) < 0.01*math.Abs(c.X.Max-c.X.Min) {
			v = r
		}
		c.X.Ticks = append(c.X.Ticks, Tick{Value: v, Pixel: mx, Fitted: true})
	}
	sort.Slice(c.X.Ticks, func(i, j int) bool { return c.X.Ticks[i].Pixel < c.X.Ticks[j].Pixel })
	xRange := c.X.value(box.X1) - c.X.value(box.X0)
	// 4. Curves.
	type group struct {
		sum [3]int
		n   int
	}
	groups := map[[3]uint8]*group{}
	for y := int(box.Y0); y < int(box.Y1)-2; y++ {
		for x := int(box.X0) + 3; x < int(box.X1); x++ {
			p := at(x, y)
			if !Colored(p) {
				continue
			}
			k := [3]uint8{p[0] >> 5, p[1] >> 5, p[2] >> 5}
			g := groups[k]
			if g == nil {
				g = &group{}
				groups[k] = g
			}
			g.n++
			for i := range 3 {
				g.sum[i] += int(p[i])
			}
		}
	}
	var colors [][3]uint8
	var counts []int
	keys := make([][3]uint8, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return groups[keys[i]].n > groups[keys[j]].n })
	for _, k := range keys {
		g := groups[k]
		if g.n < 150 {
			break
		}
		col := [3]uint8{uint8(g.sum[0] / g.n), uint8(g.sum[1] / g.n), uint8(g.sum[2] / g.n)}
		merged := false
		for i, o := range colors {
			if dist(col, o) < 80 {
				counts[i] += g.n
				merged = true
				break
			}
		}
		if !merged {
			colors = append(colors, col)
			counts = append(counts, g.n)
		}
	}
	for _, col := range colors {
		s := Series{Color: col, Steps: []Step{}}
		last := math.NaN()
		for x := int(box.X0) + 3; x < int(box.X1); x++ {
			lo, hi := -1, -1
			for y := int(box.Y0); y < int(box.Y1)-1; y++ {
				p := at(x, y)
				if Colored(p) && dist([3]uint8{p[0], p[1], p[2]}, col) < 70 {
					if lo < 0 {
						lo = y
					}
					hi = y
				}
			}
			if lo < 0 {
				continue
			}
			py := float64(lo+hi) / 2
			if hi-lo > 6 {
				py = float64(hi) - 1
			}
			v := clamp(c.Y.value(py), 0, 1)
			t := c.X.value(float64(x))
			if math.IsNaN(last) || math.Abs(v-last) > 0.004 {
				s.Steps = append(s.Steps, Step{T: Round(t, 2), S: Round(v, 4)})
				last = v
			}
			if s.Median == nil && v <= 0.5 {
				m := Round(t, 2)
				s.Median = &m
			}
		}
		c.Series = append(c.Series, s)
	}
	// Lines of text, with their colour.
	lines := TextLines(words)
	lineColor := func(l []Word) ([3]uint8, bool) {
		var sum [3]int
		n := 0
		for _, w := range l {
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
		}
		if n < 20 {
			return [3]uint8{}, false
		}
		return [3]uint8{uint8(sum[0] / n), uint8(sum[1] / n), uint8(sum[2] / n)}, true
	}
	seriesOf := func(col [3]uint8) int {
		best, bestD := -1, 80.0
		for i, s := range c.Series {
			if d := dist(col, s.Color); d < bestD {
				best, bestD = i, d
			}
		}
		return best
	}
	medianRE := regexp.MustCompile(`(?i)^(.*?)\s*median\s*[:=]?\s*([0-9]+(?:\.[0-9]+)?)`)
	var all []string
	for _, l := range lines {
		text := joinWords(l)
		all = append(all, text)
		cy := (l[0].Box.Y0 + l[0].Box.Y1) / 2
		// 5. Printed medians.
		if m := medianRE.FindStringSubmatch(text); m != nil {
			if col, ok := lineColor(l); ok {
				if i := seriesOf(col); i >= 0 {
					v, _ := strconv.ParseFloat(m[2], 64)
					c.Series[i].PrintedMedian = &v
					if c.Series[i].Name == "" {
						c.Series[i].Name = strings.TrimSpace(m[1])
					}
				}
			}
			continue
		}
		// 6. Numbers at risk.
		if cy <= tickRow+10 || cy <= box.Y1 {
			continue
		}
		row := RiskRow{Times: []float64{}, Counts: []int{}}
		var label []string
		byTick := map[int]int{}
		lineBox := l[0].Box
		for _, w := range l {
			lineBox = lineBox.Union(w.Box)
			n, err := strconv.Atoi(w.Text)
			cx, _ := w.Box.Center()
			if err == nil && n >= 0 {
				if i := nearestTickIndex(c.X.Ticks, cx, 40); i >= 0 {
					byTick[i] = n
					continue
				}
			}
			label = append(label, w.Text)
		}
		_, labelColored := lineColor(l)
		if len(byTick) == 0 && !labelColored {
			continue
		}
		if opt.Reread != nil {
			for i, tk := range c.X.Ticks {
				if _, ok := byTick[i]; ok {
					continue
				}
				for _, w := range opt.Reread(raster.Box{X0: tk.Pixel - 55, Y0: lineBox.Y0 - 8, X1: tk.Pixel + 55, Y1: lineBox.Y1 + 8}) {
					if n, err := strconv.Atoi(strings.TrimSpace(w.Text)); err == nil && n >= 0 {
						byTick[i] = n
						break
					}
				}
			}
		}
		for i, tk := range c.X.Ticks {
			if n, ok := byTick[i]; ok {
				row.Times = append(row.Times, tk.Value)
				row.Counts = append(row.Counts, n)
			}
		}
		if len(row.Counts) < 2 {
			continue
		}
		row.Label = strings.Join(label, " ")
		if col, ok := lineColor(l); ok {
			if i := seriesOf(col); i >= 0 {
				if c.Series[i].Name == "" {
					c.Series[i].Name = row.Label
				}
				row.Series = c.Series[i].Name
			}
		}
		for i := 1; i < len(row.Counts); i++ {
			if row.Counts[i] > row.Counts[i-1] {
				row.Flag = "the number at risk rises over time, which a survival table cannot do"
			}
		}
		c.AtRisk = append(c.AtRisk, row)
	}
	tol := 0.03 * math.Abs(xRange)
	for i := range c.Series {
		s := &c.Series[i]
		if s.Name == "" {
			s.Name = "series " + strconv.Itoa(i+1)
		}
		switch {
		case s.PrintedMedian == nil:
		case s.Median == nil:
			s.Flag = "a median of " + Ftoa(*s.PrintedMedian) + " is printed, but the drawn curve never reaches 0.5"
		case math.Abs(*s.Median-*s.PrintedMedian) > tol:
			s.Flag = "the printed median is " + Ftoa(*s.PrintedMedian) + "; the drawn curve reaches 0.5 at " + Ftoa(*s.Median)
		}
		if s.Flag != "" {
			c.Flagged++
		}
	}
	for _, r := range c.AtRisk {
		if r.Flag != "" {
			c.Flagged++
		}
	}
	// 7. Hazard ratio.
	hrRE := regexp.MustCompile(`(?i)\bHR\s*[:=]?\s*([0-9]+(?:\.[0-9]+)?)(?:\s*\(\s*95\s*%\s*CI\s*[:,]?\s*([0-9]+(?:\.[0-9]+)?)\s*(?:-|–|—|to)\s*([0-9]+(?:\.[0-9]+)?)\s*\))?`)
	if m := hrRE.FindStringSubmatch(MendZeros(strings.Join(all, "\n"))); m != nil {
		hr := &HazardRatio{Text: strings.TrimSpace(m[0])}
		hr.Value, _ = strconv.ParseFloat(m[1], 64)
		if m[2] != "" {
			lo, _ := strconv.ParseFloat(m[2], 64)
			hi, _ := strconv.ParseFloat(m[3], 64)
			hr.Low, hr.High = &lo, &hi
		}
		c.HazardRatio = hr
	}
	return c, nil
}

// axes finds a chart's x axis (the row with the longest run of ink, at
// least 40% of the width) and y axis (the column with the longest run, at
// least 25% of the height): the plot box runs from the y axis to the x
// axis's right end, and from the y axis's top to the x axis.
func axes(img *raster.Image) (raster.Box, bool) {
	at := func(x, y int) []byte { return img.Pix[(y*img.W+x)*3 : (y*img.W+x)*3+3] }
	xAxisY, xa, xb := -1, 0, 0
	for y := range img.H {
		a, b := LongestRun(img.W, func(x int) bool { return ink(at(x, y)) })
		if b-a > xb-xa {
			xAxisY, xa, xb = y, a, b
		}
	}
	yAxisX, ya, yb := -1, 0, 0
	for x := range img.W {
		a, b := LongestRun(img.H, func(y int) bool { return ink(at(x, y)) })
		if b-a > yb-ya {
			yAxisX, ya, yb = x, a, b
		}
	}
	if xAxisY < 0 || xb-xa < img.W*2/5 || yAxisX < 0 || yb-ya < img.H/4 {
		return raster.Box{}, false
	}
	return raster.Box{X0: float64(yAxisX), Y0: float64(ya), X1: float64(xb), Y1: float64(xAxisY)}, true
}

// yAxis calibrates the y axis from the numbers left of it (within 160
// pixels), each placed at the tick mark it sits by.
func yAxis(img *raster.Image, words []Word, box raster.Box) (Axis, bool) {
	at := func(x, y int) []byte { return img.Pix[(y*img.W+x)*3 : (y*img.W+x)*3+3] }
	yMarks := Marks(img.H, func(y int) bool {
		n := 0
		for x := max(0, int(box.X0)-10); x < int(box.X0)-2; x++ {
			if ink(at(x, y)) {
				n++
			}
		}
		return n >= 5
	})
	var yt []Tick
	for _, w := range words {
		v, err := strconv.ParseFloat(strings.TrimSpace(w.Text), 64)
		if err != nil {
			continue
		}
		cx, cy := w.Box.Center()
		if cx < box.X0 && cx > box.X0-160 && cy >= box.Y0-20 && cy <= box.Y1+20 {
			if i := NearestMark(yMarks, cy, 15); i >= 0 {
				cy = yMarks[i]
			}
			yt = append(yt, Tick{Value: v, Pixel: cy})
		}
	}
	return Fit(yt)
}

func nearestTickIndex(ts []Tick, px, within float64) int {
	best, bestD := -1, within
	for i, t := range ts {
		if d := math.Abs(t.Pixel - px); d <= bestD {
			best, bestD = i, d
		}
	}
	return best
}

func joinWords(l []Word) string {
	parts := make([]string, len(l))
	for i, w := range l {
		parts[i] = w.Text
	}
	return strings.Join(parts, " ")
}

func dist(a, b [3]uint8) float64 {
	d := 0.0
	for i := range 3 {
		x := float64(a[i]) - float64(b[i])
		d += x * x
	}
	return math.Sqrt(d)
}

func clamp(v, lo, hi float64) float64 { return max(lo, min(hi, v)) }

func round4(v float64) float64 { return Round(v, 4) }
