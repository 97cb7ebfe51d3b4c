package samples

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
)

// Kaplan–Meier charts drawn from known survival data: the chart reader's
// tests read them back, and the km-survival sample is one.

// Arm is one arm of a trial: each subject's time (months) and whether
// the event happened then (false: censored).
type Arm struct {
	Name   string
	Times  []float64
	Events []bool
	Color  color.RGBA
}

// KMStep is the curve's value from T on.
type KMStep struct {
	T, S float64
}

// KM is an arm's Kaplan–Meier curve: S(t) from t = 0, a step at each
// event time.
func (a Arm) KM() []KMStep {
	type ev struct {
		t     float64
		event bool
	}
	evs := make([]ev, len(a.Times))
	for i := range a.Times {
		evs[i] = ev{a.Times[i], a.Events[i]}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].t < evs[j].t })
	out := []KMStep{{0, 1}}
	s, n := 1.0, len(evs)
	for i := 0; i < len(evs); {
		j, d := i, 0
		for j < len(evs) && evs[j].t == evs[i].t {
			if evs[j].event {
				d++
			}
			j++
		}
		if d > 0 {
			s *= 1 - float64(d)/float64(n)
			out = append(out, KMStep{evs[i].t, s})
		}
		n -= j - i
		i = j
	}
	return out
}

// Median is the first time the curve is at or below 0.5 (NaN: never).
func (a Arm) Median() float64 {
	for _, st := range a.KM() {
		if st.S <= 0.5 {
			return st.T
		}
	}
	return math.NaN()
}

// AtRisk is the number still followed (no event, not censored) just
// before t.
func (a Arm) AtRisk(t float64) int {
	n := 0
	for _, x := range a.Times {
		if x >= t {
			n++
		}
	}
	return n
}

// SimArm draws n subjects with exponential event times of the given
// median (months) and uniform censoring up to maxT, times rounded to 0.1.
func SimArm(name string, n int, median, maxT float64, seed uint64, c color.RGBA) Arm {
	r := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	a := Arm{Name: name, Color: c}
	for range n {
		t := -math.Log(1-r.Float64()) * median / math.Ln2
		cens := 4 + r.Float64()*(maxT+8)
		ev := t <= cens
		if !ev {
			t = cens
		}
		if t > maxT {
			t, ev = maxT+1, false
		}
		a.Times = append(a.Times, math.Round(t*10)/10)
		a.Events = append(a.Events, ev)
	}
	return a
}

// KMChart describes a chart to draw.
type KMChart struct {
	Arms  []Arm
	MaxT  float64   // the x axis runs 0 to MaxT months
	Ticks []float64 // x tick values (also the number-at-risk times)
	// PrintedMedians are the medians printed above the plot, per arm
	// (nil: the true ones, one decimal).
	PrintedMedians []float64
	// HR is printed when not "" ("HR 0.62 (95% CI 0.45-0.85)").
	HR string
}

// Layout of a drawn chart, in pixels.
const (
	kmW, kmH          = 1100, 900
	kmX0, kmY0        = 170, 140 // plot box top left
	kmX1, kmY1        = 1050, 560
	kmTextPx          = 26
	kmRiskTop         = 680 // first number-at-risk row's baseline
	kmRiskRowPx       = 44
	kmLabelX          = 20
	kmMedianBaseline0 = 40
)

var (
	kmBlack = color.RGBA{0, 0, 0, 255}
	// ArmColors are the arms' colours: blue and orange.
	ArmColors = []color.RGBA{{31, 90, 200, 255}, {230, 110, 10, 255}}
)

// DrawKM draws the chart: printed medians (and HR) above the plot in
// each arm's colour, the axes with tick labels, each arm's step curve,
// and the number-at-risk table under the plot, its row labels in the
// arm's colour.
func DrawKM(c KMChart) (*image.RGBA, error) {
	cv, err := newCanvas(kmW, kmH, kmTextPx)
	if err != nil {
		return nil, err
	}
	text, rect := cv.text, cv.rect
	px := func(t float64) int { return kmX0 + int(math.Round(t/c.MaxT*float64(kmX1-kmX0))) }
	py := func(s float64) int { return kmY1 - int(math.Round(s*float64(kmY1-kmY0))) }
	// Printed medians and the hazard ratio.
	y := kmMedianBaseline0
	for i, a := range c.Arms {
		m := a.Median()
		if c.PrintedMedians != nil {
			m = c.PrintedMedians[i]
		}
		text(fmt.Sprintf("%s median %.1f months", a.Name, m), kmX0, y, a.Color, false)
		y += 36
	}
	if c.HR != "" {
		text(c.HR, 640, kmMedianBaseline0, kmBlack, false)
	}
	// Axes, ticks and labels.
	rect(kmX0-2, kmY1, kmX1, kmY1+2, kmBlack)
	rect(kmX0-2, kmY0, kmX0, kmY1+2, kmBlack)
	for _, t := range c.Ticks {
		rect(px(t)-1, kmY1, px(t)+1, kmY1+10, kmBlack)
		text(strconv.FormatFloat(t, 'f', -1, 64), px(t), kmY1+44, kmBlack, true)
	}
	for _, s := range []float64{0, 0.25, 0.5, 0.75, 1} {
		rect(kmX0-12, py(s)-1, kmX0, py(s)+1, kmBlack)
		text(strconv.FormatFloat(s, 'f', 2, 64), kmX0-90, py(s)+9, kmBlack, false)
	}
	// Curves: 3 pixels thick, horizontal then down at each step.
	for _, a := range c.Arms {
		steps := a.KM()
		for i, st := range steps {
			end := c.MaxT
			if i+1 < len(steps) {
				end = min(steps[i+1].T, c.MaxT)
			}
			if st.T > c.MaxT {
				break
			}
			rect(px(st.T), py(st.S)-1, px(end)+1, py(st.S)+2, a.Color)
			if i+1 < len(steps) && steps[i+1].T <= c.MaxT {
				rect(px(end)-1, py(st.S)-1, px(end)+2, py(steps[i+1].S)+2, a.Color)
			}
		}
	}
	// Number at risk.
	text("Number at risk", kmLabelX, kmRiskTop-kmRiskRowPx, kmBlack, false)
	for i, a := range c.Arms {
		by := kmRiskTop + i*kmRiskRowPx
		text(a.Name, kmLabelX, by, a.Color, false)
		for _, t := range c.Ticks {
			text(strconv.Itoa(a.AtRisk(t)), px(t), by, kmBlack, true)
		}
	}
	return cv.done(), nil
}

// Chart is the chart sample's id (POST /docreader/chart {"sample"}).
const Chart = "km-survival"

// ChartSpec is the chart sample: two simulated arms of 120 patients,
// their true medians and numbers at risk printed.
func ChartSpec() KMChart {
	return KMChart{Arms: []Arm{SimArm("Arm A", 120, 14, 24, 1, ArmColors[0]), SimArm("Arm B", 120, 8, 24, 2, ArmColors[1])},
		MaxT: 24, Ticks: []float64{0, 6, 12, 18, 24}, HR: "HR 0.62 (95% CI 0.45-0.85)"}
}

// ChartPNG is the chart sample as a PNG.
func ChartPNG() ([]byte, error) { return pngOf(DrawKM(ChartSpec())) }

// pngOf encodes a drawn chart as a PNG.
func pngOf(img *image.RGBA, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
