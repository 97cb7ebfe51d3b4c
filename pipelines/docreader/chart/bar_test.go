package chart

import (
	"math"
	"strings"
	"testing"

	"boxd/engine/raster"
	"boxd/pipelines/docreader/ocr"
	"boxd/pipelines/docreader/samples"
)

func readBar(t *testing.T, o *ocr.OCR, spec samples.BarChart) *Chart {
	t.Helper()
	g, err := samples.DrawBar(spec)
	if err != nil {
		t.Fatal(err)
	}
	img := raster.FromImage(g)
	words, opt := ocrWords(t, o, img)
	c, err := ReadBar(img, words, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBarChart: the bar-chart sample (four clinics, two years side by
// side, values printed) reads back: eight bars in order, each within 1%
// of the y range of its value, its category and series named, its
// printed value read, nothing flagged; a planted printed value the bar
// disagrees with is flagged, alone.
func TestBarChart(t *testing.T) {
	o := newOCR(t)
	spec := samples.BarSpec()
	c := readBar(t, o, spec)
	if c.Type != BarChart || len(c.Bars) != len(spec.Categories)*len(spec.Series) || c.Flagged != 0 {
		t.Fatalf("type %s, %d bars, flagged %d: %+v", c.Type, len(c.Bars), c.Flagged, c.Bars)
	}
	for i, b := range c.Bars {
		cat, s := spec.Categories[i/2], spec.Series[i%2]
		want := s.Values[i/2]
		if b.Category != cat || b.Series != s.Name || math.Abs(b.Value-want) > 0.8 || b.Printed == nil || *b.Printed != want {
			t.Errorf("bar %d: %+v; want %s %s %v", i, b, cat, s.Name, want)
		}
	}
	spec.Series[1].Printed = []string{"58", "46", "51", "73"} // South 2025 drawn at 64
	c = readBar(t, o, spec)
	if c.Flagged != 1 || !strings.Contains(c.Bars[3].Flag, "46 is printed") {
		t.Errorf("flagged %d; South 2025: %q", c.Flagged, c.Bars[3].Flag)
	}
}

// TestBarNotOtherCharts: a survival chart and a forest plot are not read
// as bar charts (that a bar chart is not read as a forest plot is
// chart/forest's TestForestNotBar).
func TestBarNotOtherCharts(t *testing.T) {
	o := newOCR(t)
	for name, draw := range map[string]func() (*raster.Image, error){
		"survival": func() (*raster.Image, error) {
			g, err := samples.DrawKM(samples.ChartSpec())
			return raster.FromImage(g), err
		},
		"forest": func() (*raster.Image, error) {
			g, err := samples.DrawForest(samples.ForestSpec())
			return raster.FromImage(g), err
		},
	} {
		img, err := draw()
		if err != nil {
			t.Fatal(err)
		}
		words, opt := ocrWords(t, o, img)
		if c, err := ReadBar(img, words, opt); err == nil {
			t.Errorf("a %s chart read as a bar chart: %+v", name, c.Bars)
		}
	}
}
