package docreader

import (
	"bytes"
	"context"
	"image"
	"image/draw"
	"image/png"
	"math"
	"testing"

	"boxd/pipelines/docreader/samples"
)

// scannedTrialPage is a scanned page of a trial report: two paragraphs
// of text above a Kaplan–Meier chart and one below it, as one PNG.
func scannedTrialPage(t *testing.T) ([]byte, image.Rectangle) {
	t.Helper()
	const w, h = 1500, 2000
	above := []string{
		"Results. Of the 240 patients randomised, 120 received the study drug",
		"and 120 received placebo. Median follow-up was 24 months.",
		"",
		"Overall survival was longer in the study arm (Figure 2), with a",
		"hazard ratio for death of 0.62 in the intention-to-treat population.",
	}
	below := []string{
		"Figure 2. Kaplan-Meier estimates of overall survival by arm.",
		"Adverse events of grade 3 or higher occurred in 18 percent of patients.",
	}
	top, err := samples.RenderLines(above, w, 330, 26, 90)
	if err != nil {
		t.Fatal(err)
	}
	bottom, err := samples.RenderLines(below, w, 200, 26, 90)
	if err != nil {
		t.Fatal(err)
	}
	km, err := samples.DrawKM(samples.ChartSpec())
	if err != nil {
		t.Fatal(err)
	}
	page := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(page, page.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(page, top.Bounds(), top, image.Point{}, draw.Src)
	at := image.Rect(150, 360, 150+km.Bounds().Dx(), 360+km.Bounds().Dy())
	draw.Draw(page, at, km, km.Bounds().Min, draw.Src)
	draw.Draw(page, image.Rect(0, at.Max.Y+30, w, at.Max.Y+230), bottom, image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := png.Encode(&b, page); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), at
}

// TestChartOnAScannedPageWithText: a scanned page holding text and a
// chart: the chart is found where it is drawn (the drawing outside the
// OCRed text, widened by the text next to it: labels, legend, numbers at
// risk; not the whole page, which fails with the prose around it), and
// read as on its own: medians within a
// month of the truth, numbers at risk exact.
func TestChartOnAScannedPageWithText(t *testing.T) {
	data, at := scannedTrialPage(t)
	rd := &reader{ocr: ocrForTest(t), wantChart: true}
	_, _, err := rd.readFile(context.Background(), data, MaxPages)
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.charts) != 1 {
		t.Fatalf("%d charts", len(rd.charts))
	}
	dc := rd.charts[0]
	t.Logf("region %v, chart drawn at %v", dc.BBox, at)
	spec := samples.ChartSpec()
	for _, arm := range spec.Arms {
		found := false
		for _, s := range dc.Chart.Series {
			if s.Name == arm.Name {
				found = true
				if s.Median == nil || math.Abs(*s.Median-arm.Median()) > 1 {
					t.Errorf("%s: median %v, true %.1f", arm.Name, s.Median, arm.Median())
				}
			}
		}
		if !found {
			t.Errorf("no series %s", arm.Name)
		}
	}
	for _, row := range dc.Chart.AtRisk {
		arm := spec.Arms[0]
		if row.Series == spec.Arms[1].Name {
			arm = spec.Arms[1]
		}
		for j, tk := range row.Times {
			if row.Counts[j] != arm.AtRisk(tk) {
				t.Errorf("%s at %v: %d, want %d", row.Series, tk, row.Counts[j], arm.AtRisk(tk))
			}
		}
	}
	r := image.Rect(dc.BBox[0], dc.BBox[1], dc.BBox[0]+dc.BBox[2], dc.BBox[1]+dc.BBox[3])
	// The region is the chart's, without the prose above it or the
	// caption below (the chart image's own white margins may be left).
	if !r.In(at.Inset(-40)) || r.Dy() < at.Dy()/2 || r.Dx() < at.Dx()*3/4 {
		t.Errorf("region %v for a chart drawn at %v", r, at)
	}
}

// TestNoChartOnAScannedLetter: the scanned clinical-chart sample (text,
// no drawing) gives no chart with charts on.
func TestNoChartOnAScannedLetter(t *testing.T) {
	data, err := Sample("scanned-chart")
	if err != nil {
		t.Fatal(err)
	}
	rd := &reader{ocr: ocrForTest(t), wantChart: true}
	if _, _, err := rd.readFile(context.Background(), data, MaxPages); err != nil || len(rd.charts) != 0 {
		t.Errorf("%d charts, %v", len(rd.charts), err)
	}
}
