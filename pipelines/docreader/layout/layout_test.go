package layout

import (
	"bytes"
	"context"
	"testing"

	"boxd/engine/mupdf"
	"boxd/pipelines/docreader/samples"
)

// TestWordBoxesFromLayer: a text-layer word keeps its own box, where the
// PDF put it: "Alpha" ends where Helvetica's advance widths (fpdf's own
// metrics) say, in pixels at 144 DPI (scale 2).
func TestWordBoxesFromLayer(t *testing.T) {
	p := samples.NewPDF()
	p.AddPage()
	p.SetFont("Helvetica", "", 12)
	p.Text(72, 100, "Alpha beta")
	w1 := p.GetStringWidth("Alpha")
	p.SetFont("Helvetica", "", 24)
	p.Text(300, 400, "Gamma")
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		t.Fatal(err)
	}
	d, err := mupdf.Open(b.Bytes(), "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	layer, err := d.Text(context.Background(), 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	near := func(got int, want float64) bool { return float64(got) >= want-1 && float64(got) <= want+1 }
	rs := FromLayer(layer)
	if got := rs[0].lines[0].words[0]; got.text != "Alpha" || !near(int(got.box.X1+0.5), 2*(72+w1)) {
		t.Errorf("word %+v: want Alpha ending at %.1f", got, 2*(72+w1))
	}
}
