package chart

import (
	"math"
	"testing"

	"github.com/agnivade/levenshtein"

	"boxd/engine/raster"
	"boxd/pipelines/docreader/samples"
)

// TestLineChart: the line-chart sample (two sites, twelve months) reads
// back as a line chart: each series named from the legend, a value at
// every month within 2% of the y range of the truth; a survival chart is
// not read as a line chart (its curves only fall).
func TestLineChart(t *testing.T) {
	o := newOCR(t)
	spec := samples.LineSpec()
	g, err := samples.DrawLine(spec)
	if err != nil {
		t.Fatal(err)
	}
	img := raster.FromImage(g)
	words, opt := ocrWords(t, o, img)
	c, err := ReadLine(img, words, opt)
	if err != nil {
		t.Fatal(err)
	}
	if c.Type != LineChart || len(c.Series) != 2 {
		t.Fatalf("type %s, %d series", c.Type, len(c.Series))
	}
	for _, want := range spec.Series {
		var got *Series
		// The names are OCR's reading of coloured legend text: one letter
		// may be misread ("|akeside").
		for i := range c.Series {
			if levenshtein.ComputeDistance(c.Series[i].Name, want.Name) <= 1 {
				got = &c.Series[i]
			}
		}
		if got == nil {
			t.Errorf("no series %q in %+v", want.Name, c.Series)
			continue
		}
		if len(got.Steps) != len(spec.X) {
			t.Errorf("%s: %d points, want %d", want.Name, len(got.Steps), len(spec.X))
			continue
		}
		for i, p := range got.Steps {
			if p.T != spec.X[i] || math.Abs(p.S-want.Values[i]) > 0.02*40 {
				t.Errorf("%s at %v: %v (month %v), want %v", want.Name, spec.X[i], p.S, p.T, want.Values[i])
			}
		}
	}
	km, err := samples.DrawKM(samples.ChartSpec())
	if err != nil {
		t.Fatal(err)
	}
	kimg := raster.FromImage(km)
	kw, kopt := ocrWords(t, o, kimg)
	if _, err := ReadLine(kimg, kw, kopt); err == nil {
		t.Error("a survival chart read as a line chart")
	}
}
