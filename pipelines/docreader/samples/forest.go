package samples

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strconv"
)

// Forest plots drawn from known estimates: the chart reader's tests read
// them back, and the forest-plot sample is one.

// ForestRow is one row of a forest plot: a study (or the pooled
// estimate, drawn as a diamond) with its estimate and interval.
type ForestRow struct {
	Label          string
	Est, Low, High float64
	Weight         float64 // the square's size, 0 to 1
	Pooled         bool
	// Printed, when set, is printed instead of the true numbers (a
	// planted disagreement).
	Printed string
}

// ForestChart is a forest plot on a log (ratio) or linear axis.
type ForestChart struct {
	Title string
	Rows  []ForestRow
	Ticks []float64
	Log   bool
	Ref   float64 // the line of no effect
}

// Forest plot geometry (pixels).
const (
	fpW, fpH       = 1200, 760
	fpX0, fpX1     = 420, 860 // the axis
	fpTop          = 120      // first row's centre
	fpRowPx        = 58
	fpLabelX       = 40
	fpPrintedX     = 900
	forestTextPx   = 22
	forestHeaderPx = 70
)

// ForestPx is where value v sits on the chart's axis.
func (c ForestChart) ForestPx(v float64) float64 {
	lo, hi := c.Ticks[0], c.Ticks[len(c.Ticks)-1]
	f := (v - lo) / (hi - lo)
	if c.Log {
		f = (math.Log(v) - math.Log(lo)) / (math.Log(hi) - math.Log(lo))
	}
	return float64(fpX0) + f*float64(fpX1-fpX0)
}

// PrintedText is how a row's numbers are printed: "0.72 (0.55-0.94)".
func (r ForestRow) PrintedText() string {
	if r.Printed != "" {
		return r.Printed
	}
	return fmt.Sprintf("%.2f (%.2f-%.2f)", r.Est, r.Low, r.High)
}

// DrawForest draws the plot: a header, each row's label on the left, its
// interval as a line with a square at the estimate (sized by weight) or,
// pooled, a diamond spanning the interval; the printed numbers on the
// right; the line of no effect, dashed; the axis with ticks and labels.
func DrawForest(c ForestChart) (*image.RGBA, error) {
	cv, err := newCanvas(fpW, fpH, forestTextPx)
	if err != nil {
		return nil, err
	}
	black := color.RGBA{20, 20, 20, 255}
	text := func(s string, x, y int, center bool) { cv.text(s, x, y, black, center) }
	rect := func(x0, y0, x1, y1 int) { cv.rect(x0, y0, x1, y1, black) }
	px := func(v float64) int { return int(math.Round(c.ForestPx(v))) }
	text(c.Title, fpLabelX, forestHeaderPx-20, false)
	text("Study", fpLabelX, forestHeaderPx+20, false)
	text("Ratio (95% CI)", fpPrintedX, forestHeaderPx+20, false)
	axisY := fpTop + len(c.Rows)*fpRowPx
	for i, r := range c.Rows {
		y := fpTop + i*fpRowPx + 12
		text(r.Label, fpLabelX, y+8, false)
		text(r.PrintedText(), fpPrintedX, y+8, false)
		lo, hi, est := px(r.Low), px(r.High), px(r.Est)
		if r.Pooled {
			h := 13
			for x := lo; x <= hi; x++ {
				var t float64
				if x <= est {
					t = float64(x-lo) / float64(max(1, est-lo))
				} else {
					t = float64(hi-x) / float64(max(1, hi-est))
				}
				half := int(math.Round(t * float64(h)))
				rect(x, y-half, x+1, y+half+1)
			}
			continue
		}
		rect(lo, y-1, hi+1, y+2)
		half := 5 + int(math.Round(r.Weight*9))
		rect(est-half, y-half, est+half+1, y+half+1)
	}
	// The line of no effect, dashed, through every row.
	rx := px(c.Ref)
	for y := fpTop - 30; y < axisY; y += 14 {
		rect(rx-1, y, rx+1, min(axisY, y+8))
	}
	rect(fpX0, axisY, fpX1+1, axisY+2)
	for _, t := range c.Ticks {
		rect(px(t)-1, axisY, px(t)+1, axisY+10)
		text(strconv.FormatFloat(t, 'f', -1, 64), px(t), axisY+40, true)
	}
	text("favours treatment", fpX0, axisY+78, false)
	text("favours control", px(c.Ref)+30, axisY+78, false)
	return cv.done(), nil
}

// Forest is the forest-plot sample's id (POST /docreader/chart
// {"sample"}).
const Forest = "forest-plot"

// ForestSpec is the forest-plot sample: six trials and their pooled
// hazard ratio on a log axis.
func ForestSpec() ForestChart {
	return ForestChart{Title: "Overall survival, hazard ratio", Log: true, Ref: 1, Ticks: []float64{0.25, 0.5, 1, 2, 4},
		Rows: []ForestRow{
			{Label: "ALPHA 2016", Est: 0.72, Low: 0.55, High: 0.94, Weight: 0.7},
			{Label: "BETA 2017", Est: 0.85, Low: 0.60, High: 1.20, Weight: 0.5},
			{Label: "GAMMA 2019", Est: 0.61, Low: 0.40, High: 0.93, Weight: 0.35},
			{Label: "DELTA 2020", Est: 1.10, Low: 0.78, High: 1.55, Weight: 0.45},
			{Label: "EPSILON 2022", Est: 0.50, Low: 0.30, High: 0.83, Weight: 0.25},
			{Label: "ZETA 2023", Est: 0.79, Low: 0.66, High: 0.95, Weight: 1},
			{Label: "Pooled", Est: 0.76, Low: 0.67, High: 0.86, Pooled: true},
		}}
}

// ForestPNG is the forest-plot sample as a PNG.
func ForestPNG() ([]byte, error) { return pngOf(DrawForest(ForestSpec())) }
