package docreader

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/go-pdf/fpdf"

	"boxd/internal/run"
	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/docreader/samples"
)

// TestChartsInDocuments: charts: true reads a Kaplan–Meier figure placed
// in a born-digital PDF (an image under a caption) and the same chart as
// a scanned page: medians within a month of the truth, numbers at risk
// exact, positions on the page; the receipt binds the charts. Without
// charts, none are read.
func TestChartsInDocuments(t *testing.T) {
	spec := samples.ChartSpec()
	img, err := samples.DrawKM(spec)
	if err != nil {
		t.Fatal(err)
	}
	var pngb bytes.Buffer
	if err := png.Encode(&pngb, img); err != nil {
		t.Fatal(err)
	}
	p := samples.NewPDF()
	p.AddPage()
	p.SetFont("Helvetica", "", 10)
	p.Text(54, 60, "Figure 2. Overall survival by arm.")
	p.RegisterImageOptionsReader("km", fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(pngb.Bytes()))
	// 1100 × 900 pixels at 144 DPI: 550 × 450 points.
	p.ImageOptions("km", 30, 80, 550, 450, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	var pdf bytes.Buffer
	if err := p.Output(&pdf); err != nil {
		t.Fatal(err)
	}
	o := ocrForTest(t)
	check := func(name string, data []byte, wantElement bool) {
		rd := &reader{ocr: o, wantChart: true}
		_, pages, err := rd.readFile(context.Background(), data, MaxPages)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(rd.charts) != 1 {
			t.Fatalf("%s: %d charts", name, len(rd.charts))
		}
		dc := rd.charts[0]
		if (dc.Element != "") != wantElement || dc.Page != 1 || dc.ConfBP < 9000 {
			t.Errorf("%s: chart at %q page %d conf %d", name, dc.Element, dc.Page, dc.ConfBP)
		}
		for i, arm := range spec.Arms {
			s := dc.Chart.Series[i]
			if s.Name != arm.Name {
				for _, x := range dc.Chart.Series {
					if x.Name == arm.Name {
						s = x
					}
				}
			}
			if s.Median == nil || math.Abs(*s.Median-arm.Median()) > 1 || s.Flag != "" {
				t.Errorf("%s %s: median %v (true %.1f) flag %q", name, arm.Name, s.Median, arm.Median(), s.Flag)
			}
		}
		for _, row := range dc.Chart.AtRisk {
			arm := spec.Arms[0]
			if strings.Contains(row.Series, "B") {
				arm = spec.Arms[1]
			}
			for j, tk := range row.Times {
				if row.Counts[j] != arm.AtRisk(tk) {
					t.Errorf("%s %s at %v: %d, want %d", name, row.Series, tk, row.Counts[j], arm.AtRisk(tk))
				}
			}
		}
		if pb := dc.Chart.PlotBox; pb[0] < dc.BBox[0] || pb[1] < dc.BBox[1] || pb[0]+pb[2] > dc.BBox[0]+dc.BBox[2] {
			t.Errorf("%s: plot box %v outside the region %v", name, pb, dc.BBox)
		}
		d := &Document{ID: "doc-1", Pages: pages, Fields: []Field{}, Models: []ModelRef{}, Charts: rd.charts}
		k := testKey(4)
		if err := sign(k, d, Revisions{}, nil, true); err != nil {
			t.Fatal(err)
		}
		if cs, _ := Verify(d, k.PublicKey()); !allOK(cs) {
			t.Errorf("%s: verify %+v", name, cs)
		}
		m := *d.Charts[0].Chart.Series[0].Median + 4
		d.Charts[0].Chart.Series[0].Median = &m
		if cs, _ := Verify(d, k.PublicKey()); allOK(cs) || !strings.Contains(checkText(cs), "charts differ") {
			t.Errorf("%s: a changed chart verified: %+v", name, cs)
		}
	}
	check("figure in a PDF", pdf.Bytes(), true)
	check("scanned page", pngb.Bytes(), false)
	rd := &reader{ocr: o}
	if _, _, err := rd.readFile(context.Background(), pdf.Bytes(), MaxPages); err != nil || len(rd.charts) != 0 {
		t.Errorf("charts off: %d charts, %v", len(rd.charts), err)
	}
}

// TestForestChartRoute: POST /docreader/chart's forest-plot sample is read
// by geometry as a forest plot (seven rows, the pooled one a diamond, a
// log axis), signed, and verifies; charts: true finds the same plot on a
// scanned page, its rows placed on the page.
func TestForestChartRoute(t *testing.T) {
	s := &Service{Key: testKey(7)}
	r, err := s.Chart(context.Background(), run.Env{}, ChartRequest{Sample: SampleForest, Method: MethodGeometry})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Chart
	if r.Method != MethodGeometry || c.Type != "forest" || !c.X.Log || len(c.Rows) != 7 || !c.Rows[6].Pooled || c.Flagged != 0 || r.ConfBP < 9000 {
		t.Fatalf("method %s type %s log %v rows %d conf %d flagged %d", r.Method, c.Type, c.X.Log, len(c.Rows), r.ConfBP, c.Flagged)
	}
	if r.Receipt.Revisions.Chart != "boxd-chart-2" {
		t.Errorf("revision %q", r.Receipt.Revisions.Chart)
	}
	cs, err := chartChecks(s, r)
	if err != nil || !cs {
		t.Errorf("the forest result does not verify: %v", err)
	}
	b, err := s.Chart(context.Background(), run.Env{}, ChartRequest{Sample: SampleBar, Method: MethodGeometry})
	if err != nil {
		t.Fatal(err)
	}
	if b.Chart.Type != "bar" || len(b.Chart.Bars) != 8 || b.Chart.Flagged != 0 {
		t.Errorf("bar sample: type %s, %d bars, flagged %d", b.Chart.Type, len(b.Chart.Bars), b.Chart.Flagged)
	}
	if ok, err := chartChecks(s, b); err != nil || !ok {
		t.Errorf("the bar result does not verify: %v", err)
	}
	l, err := s.Chart(context.Background(), run.Env{}, ChartRequest{Sample: SampleLine, Method: MethodGeometry})
	if err != nil {
		t.Fatal(err)
	}
	if l.Chart.Type != "line" || len(l.Chart.Series) != 2 || len(l.Chart.Series[0].Steps) != 12 {
		t.Errorf("line sample: type %s, %d series", l.Chart.Type, len(l.Chart.Series))
	}
	km, err := s.Chart(context.Background(), run.Env{}, ChartRequest{Sample: SampleChart, Method: MethodGeometry})
	if err != nil || km.Chart.Type != "kaplan_meier" {
		t.Fatalf("the survival sample: %v", err)
	}
	png, err := samples.ForestPNG()
	if err != nil {
		t.Fatal(err)
	}
	rd := &reader{ocr: ocrForTest(t), wantChart: true}
	if _, _, err := rd.readFile(context.Background(), png, MaxPages); err != nil {
		t.Fatal(err)
	}
	if len(rd.charts) != 1 || rd.charts[0].Chart.Type != "forest" || len(rd.charts[0].Chart.Rows) != 7 {
		t.Fatalf("charts in the scanned page: %+v", rd.charts)
	}
	for i, row := range rd.charts[0].Chart.Rows {
		if math.Abs(row.Y-c.Rows[i].Y) > 3 {
			t.Errorf("row %d at y %v on the page, %v in the chart", i, row.Y, c.Rows[i].Y)
		}
	}
}

func chartChecks(s *Service, r *chart.Result) (bool, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return false, err
	}
	v, err := s.ChartVerify(ChartVerifyRequest{Chart: raw})
	if err != nil {
		return false, err
	}
	return v.OK, nil
}

// TestVectorChartInPDF: a bar chart drawn as vectors on a born-digital
// page (filled rectangles and lines, its labels in the text layer) is
// found by charts: true and read as the raster sample is: eight bars,
// each within 1 of its value, categories and series named; the page's
// text stays text.
func TestVectorChartInPDF(t *testing.T) {
	spec := samples.BarSpec()
	pdf, err := samples.BarPDF(spec)
	if err != nil {
		t.Fatal(err)
	}
	rd := &reader{ocr: ocrForTest(t), wantChart: true}
	_, pages, err := rd.readFile(context.Background(), pdf, MaxPages)
	if err != nil {
		t.Fatal(err)
	}
	if pages[0].Source != PageTextLayer {
		t.Fatalf("page read by %s", pages[0].Source)
	}
	if len(rd.charts) != 1 || rd.charts[0].Chart.Type != "bar" {
		t.Fatalf("charts %+v", rd.charts)
	}
	c := rd.charts[0].Chart
	if len(c.Bars) != 8 {
		t.Fatalf("%d bars: %+v", len(c.Bars), c.Bars)
	}
	for i, b := range c.Bars {
		cat, s := spec.Categories[i/2], spec.Series[i%2]
		if b.Category != cat || b.Series != s.Name || math.Abs(b.Value-s.Values[i/2]) > 1 {
			t.Errorf("bar %d: %s %s %v, want %s %s %v", i, b.Category, b.Series, b.Value, cat, s.Name, s.Values[i/2])
		}
	}
	// Without charts: true, none; and a page with only a ruled table
	// (lines, no drawing) gives no chart.
	rd = &reader{ocr: ocrForTest(t), wantChart: true}
	data, err := Sample(SampleBornDigital)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := rd.readFile(context.Background(), data, MaxPages); err != nil || len(rd.charts) != 0 {
		t.Errorf("the born-digital letter gave charts %+v (%v)", rd.charts, err)
	}
}
