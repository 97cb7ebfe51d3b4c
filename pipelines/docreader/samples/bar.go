package samples

import (
	"bytes"
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

// BarPDF draws the bar chart as vectors on a born-digital page (a
// report's figure: filled rectangles and lines, its labels in the text
// layer), under a paragraph of text, on US Letter.
func BarPDF(c BarChart) ([]byte, error) {
	p := NewPDF()
	p.AddPage()
	p.SetFont("Helvetica", "", 11)
	p.Text(54, 60, "Figure 1 shows the share of patients at their HbA1c target by clinic, 2024 and 2025.")
	// The plot: 440 x 245 points from (90, 110).
	const x0, x1, y0, y1 = 90.0, 530.0, 110.0, 355.0
	lo, hi := c.Ticks[0], c.Ticks[len(c.Ticks)-1]
	py := func(v float64) float64 { return y1 - (v-lo)/(hi-lo)*(y1-y0) }
	p.SetDrawColor(20, 20, 20)
	p.SetLineWidth(1)
	p.Line(x0, y1, x1, y1)
	p.Line(x0, y0, x0, y1)
	p.SetFont("Helvetica", "", 10)
	for _, t := range c.Ticks {
		p.Line(x0-6, py(t), x0, py(t))
		s := strconv.FormatFloat(t, 'f', -1, 64)
		p.Text(x0-12-p.GetStringWidth(s), py(t)+3.5, s)
	}
	slot := (x1 - x0) / float64(len(c.Categories))
	barW := slot * 0.7 / float64(len(c.Series))
	for i, cat := range c.Categories {
		left := x0 + float64(i)*slot + slot*0.15
		for k, s := range c.Series {
			p.SetFillColor(int(s.Color.R), int(s.Color.G), int(s.Color.B))
			bx := left + float64(k)*barW
			p.Rect(bx+1, py(s.Values[i]), barW-2, y1-py(s.Values[i]), "F")
		}
		p.Text(x0+float64(i)*slot+slot/2-p.GetStringWidth(cat)/2, y1+20, cat)
	}
	for k, s := range c.Series {
		lx := x0 + 10 + float64(k)*130
		p.SetFillColor(int(s.Color.R), int(s.Color.G), int(s.Color.B))
		p.Rect(lx, y1+34, 12, 12, "F")
		p.SetTextColor(int(s.Color.R), int(s.Color.G), int(s.Color.B))
		p.Text(lx+18, y1+44, s.Name)
	}
	p.SetTextColor(20, 20, 20)
	p.SetFont("Helvetica", "", 11)
	p.Text(54, y1+80, "Figure 1. Patients at HbA1c target (%) by clinic.")
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
