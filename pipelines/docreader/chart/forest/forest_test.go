package forest

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"

	"boxd/engine/raster"
	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/docreader/ocr"
	"boxd/pipelines/docreader/samples"
)

// newOCR starts Tesseract: required under CI, skipped elsewhere when
// missing (as package chart's tests do).
func newOCR(t *testing.T) *ocr.OCR {
	t.Helper()
	o, err := ocr.New()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tesseract: %v (make deps installs it)", err)
		}
		t.Skipf("tesseract: %v", err)
	}
	t.Cleanup(o.Close)
	return o
}

// ocrWords reads a chart's words as the document reader does (sparse
// text at 144 DPI, a missed label read again alone).
func ocrWords(t *testing.T, o *ocr.OCR, img *raster.Image) ([]chart.Word, chart.Options) {
	t.Helper()
	conv := func(ws []ocr.Word) []chart.Word {
		out := make([]chart.Word, len(ws))
		for i, w := range ws {
			out[i] = chart.Word{Text: w.Text, Box: w.Box}
		}
		return out
	}
	ws, err := o.ReadRegion(context.Background(), img, nil, raster.Box{X1: float64(img.W), Y1: float64(img.H)}, 144)
	if err != nil {
		t.Fatal(err)
	}
	return conv(ws), chart.Options{Reread: func(b raster.Box) []chart.Word {
		ws, err := o.ReadBlock(context.Background(), img, nil, b, 144)
		if err != nil {
			t.Fatal(err)
		}
		return conv(ws)
	}}
}

// readForest draws a forest plot and reads it back (OCR then geometry).
func readForest(t *testing.T, o *ocr.OCR, spec samples.ForestChart) *chart.Chart {
	t.Helper()
	g, err := samples.DrawForest(spec)
	if err != nil {
		t.Fatal(err)
	}
	img := raster.FromImage(g)
	words, opt := ocrWords(t, o, img)
	c, err := Read(img, words, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// within says whether drawn is within 2% of the axis's span (in its
// scale) of want.
func within(c *chart.Chart, drawn, want float64) bool {
	span := scaled(c.X, c.X.Max) - scaled(c.X, c.X.Min)
	return math.Abs(scaled(c.X, drawn)-scaled(c.X, want)) <= 0.02*span
}

// TestForestPlot: the forest-plot sample (six trials and the pooled
// hazard ratio on a log axis) reads back: the axis is found logarithmic,
// every row's label, estimate and interval within 2% of the axis's span
// of the truth, the pooled row a diamond, the printed numbers read and
// none flagged.
func TestForestPlot(t *testing.T) {
	o := newOCR(t)
	spec := samples.ForestSpec()
	c := readForest(t, o, spec)
	if c.Type != chart.Forest || !c.X.Log || len(c.Rows) != len(spec.Rows) {
		t.Fatalf("type %s, log %v, %d rows: %+v", c.Type, c.X.Log, len(c.Rows), c.Rows)
	}
	for i, want := range spec.Rows {
		r := c.Rows[i]
		if r.Label != want.Label || r.Pooled != want.Pooled {
			t.Errorf("row %d: %q pooled %v, want %q pooled %v", i, r.Label, r.Pooled, want.Label, want.Pooled)
		}
		if !within(c, r.Estimate, want.Est) || !within(c, r.Low, want.Low) || !within(c, r.High, want.High) {
			t.Errorf("%s: drawn %v (%v-%v), truth %v (%v-%v)", want.Label, r.Estimate, r.Low, r.High, want.Est, want.Low, want.High)
		}
		if r.Printed == nil || r.Printed.Estimate != want.Est || r.Printed.Low != want.Low || r.Printed.High != want.High {
			t.Errorf("%s: printed %+v, want %v (%v-%v)", want.Label, r.Printed, want.Est, want.Low, want.High)
		}
		if r.Flag != "" {
			t.Errorf("%s flagged: %s", want.Label, r.Flag)
		}
	}
	if c.Flagged != 0 {
		t.Errorf("flagged %d", c.Flagged)
	}
}

// TestForestPlotFlagsAndLinearAxis: a row whose printed estimate the
// drawing disagrees with is flagged, and only that row; a mean-difference
// plot on a linear axis (ticks -2 to 2, no effect at 0) reads as linear.
func TestForestPlotFlagsAndLinearAxis(t *testing.T) {
	o := newOCR(t)
	spec := samples.ForestSpec()
	spec.Rows[2].Printed = "0.81 (0.40-0.93)" // drawn at 0.61
	c := readForest(t, o, spec)
	if c.Flagged != 1 || !strings.Contains(c.Rows[2].Flag, "estimate is printed 0.81") {
		t.Errorf("flagged %d; row 2: %q", c.Flagged, c.Rows[2].Flag)
	}
	lin := samples.ForestChart{Title: "Change in HbA1c, mean difference", Ref: 0, Ticks: []float64{-2, -1, 0, 1, 2}, Rows: []samples.ForestRow{
		{Label: "Trial one", Est: -0.6, Low: -1.1, High: -0.1, Weight: 0.6},
		{Label: "Trial two", Est: 0.3, Low: -0.4, High: 1.0, Weight: 0.4},
		{Label: "Trial three", Est: -1.2, Low: -1.9, High: -0.5, Weight: 0.5},
		{Label: "Overall", Est: -0.5, Low: -0.9, High: -0.1, Pooled: true},
	}}
	c = readForest(t, o, lin)
	if c.X.Log || len(c.Rows) != 4 {
		t.Fatalf("linear plot: log %v, %d rows", c.X.Log, len(c.Rows))
	}
	for i, want := range lin.Rows {
		if r := c.Rows[i]; !within(c, r.Estimate, want.Est) || !within(c, r.Low, want.Low) || !within(c, r.High, want.High) || r.Flag != "" {
			t.Errorf("%s: drawn %v (%v to %v), truth %v (%v to %v); flag %q", want.Label, r.Estimate, r.Low, r.High, want.Est, want.Low, want.High, r.Flag)
		}
	}
}

// TestForestNotKaplanMeier: a survival chart is not read as a forest
// plot, nor a forest plot as a survival chart.
func TestForestNotKaplanMeier(t *testing.T) {
	o := newOCR(t)
	g, err := samples.DrawKM(samples.ChartSpec())
	if err != nil {
		t.Fatal(err)
	}
	img := raster.FromImage(g)
	if _, err := Read(img, nil, chart.Options{}); err == nil {
		t.Error("a survival chart read as a forest plot")
	}
	f, err := samples.DrawForest(samples.ForestSpec())
	if err != nil {
		t.Fatal(err)
	}
	fi := raster.FromImage(f)
	words, _ := ocrWords(t, o, fi)
	if _, err := chart.Read(fi, words, chart.Options{}); err == nil {
		t.Error("a forest plot read as a survival chart")
	}
}

// TestForestNotBar: a bar chart is not read as a forest plot (moved from
// package chart's TestBarNotOtherCharts with the forest reader).
func TestForestNotBar(t *testing.T) {
	o := newOCR(t)
	g, err := samples.DrawBar(samples.BarSpec())
	if err != nil {
		t.Fatal(err)
	}
	img := raster.FromImage(g)
	words, opt := ocrWords(t, o, img)
	if _, err := Read(img, words, opt); err == nil {
		t.Error("a bar chart read as a forest plot")
	}
}
