package chart

import (
	"math"

	"boxd/engine/raster"
)

// Line charts by geometry (revision boxd-chart-2):
//  L1. Axes, calibration and the curves' colours as for a survival chart
//      (rules 2 to 4).
//  L2. Each curve is traced column by column at the middle of its pixels
//      there (a line's steep stretch is not a step's drop).
//  L3. A chart with a curve that rises (by more than 3% of the y range
//      from its lowest point so far) is a line chart; one whose curves
//      only fall is a survival chart.
//  L4. A curve's values are read at the x axis's ticks (the nearest
//      traced column within 3 pixels); its name is the legend's words in
//      its colour.

// LineChart is the chart type of a line chart.
const LineChart = "line"

// ReadLine reads a line chart (values over a numeric x axis) from its
// raster and OCRed words; a chart whose curves only fall is a survival
// chart, not a line chart (NotCalibrated).
func ReadLine(img *raster.Image, words []Word, opt Options) (*Chart, error) {
	c, err := Read(img, words, opt)
	if err != nil {
		return nil, err
	}
	return LineFrom(img, words, c)
}

// LineFrom reads as a line chart what Read read (its axes, calibration
// and curves' colours), changing c; when every curve only falls it is a
// NotCalibrated error and c, untouched, is the survival chart it is.
func LineFrom(img *raster.Image, words []Word, c *Chart) (*Chart, error) {
	at := func(x, y int) []byte { return img.Pix[(y*img.W+x)*3 : (y*img.W+x)*3+3] }
	box := raster.Box{X0: float64(c.PlotBox[0]), Y0: float64(c.PlotBox[1]), X1: float64(c.PlotBox[0] + c.PlotBox[2]), Y1: float64(c.PlotBox[1] + c.PlotBox[3])}
	yRange := math.Abs(c.Y.Max - c.Y.Min)
	rises := false
	palette := make([][3]uint8, len(c.Series))
	series := make([]Series, len(c.Series))
	copy(series, c.Series)
	for i := range series {
		s := &series[i]
		palette[i] = s.Color
		// L2.
		vals := map[int]float64{}
		low := math.Inf(1)
		for x := int(box.X0) + 3; x < int(box.X1); x++ {
			lo, hi := -1, -1
			for y := int(box.Y0); y < int(box.Y1)-1; y++ {
				if p := at(x, y); Colored(p) && dist([3]uint8{p[0], p[1], p[2]}, s.Color) < 70 {
					if lo < 0 {
						lo = y
					}
					hi = y
				}
			}
			if lo < 0 {
				continue
			}
			v := c.Y.value(float64(lo+hi) / 2)
			vals[x] = v
			// L3.
			if v > low+0.03*yRange {
				rises = true
			}
			low = min(low, v)
		}
		// L4.
		s.Steps = []Step{}
		for _, tk := range c.X.Ticks {
			for d := 0; d <= 3; d++ {
				v, ok := vals[int(math.Round(tk.Pixel))-d]
				if !ok {
					v, ok = vals[int(math.Round(tk.Pixel))+d]
				}
				if ok {
					s.Steps = append(s.Steps, Step{T: tk.Value, S: Sig3(v)})
					break
				}
			}
		}
		s.Median, s.PrintedMedian, s.Flag = nil, nil, ""
	}
	if !rises {
		return nil, &NotCalibrated{Why: "every curve only falls, as a survival chart's do"}
	}
	for i, n := range namesByColor(img, words, palette) {
		series[i].Name = n
	}
	c.Series, c.Type, c.AtRisk, c.HazardRatio, c.Flagged = series, LineChart, []RiskRow{}, nil, 0
	return c, nil
}
