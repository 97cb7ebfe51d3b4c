package samples

import (
	"image"
	"image/color"
	"math"
	"strconv"
)

// Line charts drawn from known values: the chart reader's tests read them
// back, and the line-chart sample is one.

// LineSeries is one line: a value at each of the chart's x points.
type LineSeries struct {
	Name   string
	Values []float64
	Color  color.RGBA
}

// LineChartSpec is a line chart over numeric x points.
type LineChartSpec struct {
	Title  string
	X      []float64 // the points, also the x ticks
	YTicks []float64
	Series []LineSeries
}

// Line chart geometry (pixels).
const (
	lcW, lcH   = 1100, 760
	lcX0, lcX1 = 160, 1040
	lcY0, lcY1 = 110, 600
)

// DrawLine draws the chart: the axes with tick labels, each series as a
// 3-pixel line through its points, and a legend of the series' names in
// their colours.
func DrawLine(c LineChartSpec) (*image.RGBA, error) {
	cv, err := newCanvas(lcW, lcH, bcTextPx)
	if err != nil {
		return nil, err
	}
	black := color.RGBA{20, 20, 20, 255}
	px := func(x float64) float64 {
		return lcX0 + (x-c.X[0])/(c.X[len(c.X)-1]-c.X[0])*float64(lcX1-lcX0)
	}
	py := func(v float64) float64 {
		lo, hi := c.YTicks[0], c.YTicks[len(c.YTicks)-1]
		return lcY1 - (v-lo)/(hi-lo)*float64(lcY1-lcY0)
	}
	cv.text(c.Title, lcX0, 50, black, false)
	cv.rect(lcX0-2, lcY1, lcX1, lcY1+2, black)
	cv.rect(lcX0-2, lcY0, lcX0, lcY1+2, black)
	for _, t := range c.X {
		x := int(math.Round(px(t)))
		cv.rect(x-1, lcY1, x+1, lcY1+10, black)
		cv.text(strconv.FormatFloat(t, 'f', -1, 64), x, lcY1+44, black, true)
	}
	for _, t := range c.YTicks {
		y := int(math.Round(py(t)))
		cv.rect(lcX0-12, y-1, lcX0, y+1, black)
		cv.text(strconv.FormatFloat(t, 'f', -1, 64), lcX0-80, y+8, black, false)
	}
	for _, s := range c.Series {
		for i := 1; i < len(c.X); i++ {
			x0, y0, x1, y1 := px(c.X[i-1]), py(s.Values[i-1]), px(c.X[i]), py(s.Values[i])
			steps := int(math.Max(math.Abs(x1-x0), math.Abs(y1-y0)))
			for k := 0; k <= steps; k++ {
				f := float64(k) / float64(max(1, steps))
				x, y := int(math.Round(x0+f*(x1-x0))), int(math.Round(y0+f*(y1-y0)))
				cv.rect(x-1, y-1, x+2, y+2, s.Color)
			}
		}
	}
	for k, s := range c.Series {
		x := lcX0 + 20 + k*260
		cv.rect(x, lcY1+70, x+30, lcY1+76, s.Color)
		cv.text(s.Name, x+40, lcY1+82, s.Color, false)
	}
	return cv.done(), nil
}

// Line is the line-chart sample's id (POST /docreader/chart {"sample"}).
const Line = "line-chart"

// LineSpec is the line-chart sample: monthly clinic visits of two sites.
func LineSpec() LineChartSpec {
	return LineChartSpec{Title: "Visits per month (hundreds)", X: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
		YTicks: []float64{0, 10, 20, 30, 40},
		Series: []LineSeries{
			{Name: "Lakeside", Values: []float64{12, 15, 21, 18, 24, 29, 27, 31, 26, 22, 19, 17}, Color: ArmColors[0]},
			{Name: "Hillcrest", Values: []float64{8, 9, 12, 16, 14, 13, 18, 22, 25, 28, 24, 21}, Color: ArmColors[1]},
		}}
}

// LinePNG is the line-chart sample as a PNG.
func LinePNG() ([]byte, error) { return pngOf(DrawLine(LineSpec())) }
