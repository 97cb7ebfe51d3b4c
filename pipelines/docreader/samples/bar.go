package samples

import (
	"image"
	"image/color"
	"math"
	"strconv"
)

// Bar charts drawn from known values: the chart reader's tests read them
// back, and the bar-chart sample is one.

// BarSeries is one series of a bar chart: a value per category, drawn in
// its colour side by side with the other series' bars.
type BarSeries struct {
	Name   string
	Values []float64
	Color  color.RGBA
	// Printed, when set, is printed above each bar instead of its value
	// ("" prints nothing; a planted disagreement).
	Printed []string
}

// BarChart is a vertical bar chart: categories along x, values up y.
type BarChart struct {
	Title      string
	Categories []string
	Series     []BarSeries
	Ticks      []float64 // y axis
	// PrintValues prints each bar's value above it.
	PrintValues bool
}

// Bar chart geometry (pixels).
const (
	bcW, bcH   = 1100, 760
	bcX0, bcX1 = 160, 1040
	bcY0, bcY1 = 110, 600
	bcTextPx   = 22
)

// BarPx is the pixel row of value v.
func (c BarChart) BarPx(v float64) int {
	lo, hi := c.Ticks[0], c.Ticks[len(c.Ticks)-1]
	return bcY1 - int(math.Round((v-lo)/(hi-lo)*float64(bcY1-bcY0)))
}

// DrawBar draws the chart: the title, the axes with y tick labels, each
// category's bars side by side (a gap between categories), the value
// printed above each bar when asked, the category names under the axis,
// and a legend of the series' names in their colours.
func DrawBar(c BarChart) (*image.RGBA, error) {
	cv, err := newCanvas(bcW, bcH, bcTextPx)
	if err != nil {
		return nil, err
	}
	black := color.RGBA{20, 20, 20, 255}
	text, rect := cv.text, cv.rect
	text(c.Title, bcX0, 50, black, false)
	rect(bcX0-2, bcY1, bcX1, bcY1+2, black)
	rect(bcX0-2, bcY0, bcX0, bcY1+2, black)
	for _, t := range c.Ticks {
		y := c.BarPx(t)
		rect(bcX0-12, y-1, bcX0, y+1, black)
		text(strconv.FormatFloat(t, 'f', -1, 64), bcX0-80, y+8, black, false)
	}
	n := len(c.Categories)
	slot := float64(bcX1-bcX0) / float64(n)
	barW := int(slot * 0.7 / float64(len(c.Series)))
	for i, cat := range c.Categories {
		left := bcX0 + int(float64(i)*slot+slot*0.15)
		for k, s := range c.Series {
			x := left + k*barW
			top := c.BarPx(s.Values[i])
			rect(x+2, top, x+barW-2, bcY1, s.Color)
			printed := strconv.FormatFloat(s.Values[i], 'f', -1, 64)
			if s.Printed != nil {
				printed = s.Printed[i]
			}
			if c.PrintValues && printed != "" {
				text(printed, x+barW/2, top-10, black, true)
			}
		}
		text(cat, bcX0+int(float64(i)*slot+slot/2), bcY1+40, black, true)
	}
	for k, s := range c.Series {
		x := bcX0 + 20 + k*260
		rect(x, bcY1+70, x+24, bcY1+94, s.Color)
		text(s.Name, x+34, bcY1+90, s.Color, false)
	}
	return cv.done(), nil
}

// Bar is the bar-chart sample's id (POST /docreader/chart {"sample"}).
const Bar = "bar-chart"

// BarSpec is the bar-chart sample: HbA1c by clinic, two years side by
// side, values printed.
func BarSpec() BarChart {
	return BarChart{Title: "Patients at HbA1c target (%) by clinic", PrintValues: true, Ticks: []float64{0, 20, 40, 60, 80},
		Categories: []string{"North", "South", "East", "West"},
		Series: []BarSeries{
			{Name: "2024", Values: []float64{52, 61, 44, 70}, Color: ArmColors[0]},
			{Name: "2025", Values: []float64{58, 64, 51, 73}, Color: ArmColors[1]},
		}}
}

// BarPNG is the bar-chart sample as a PNG.
func BarPNG() ([]byte, error) { return pngOf(DrawBar(BarSpec())) }
