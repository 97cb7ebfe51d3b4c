package mupdf

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"boxd/pipelines/docreader/samples"
)

// TestPageTextAndRaster: a generated page's characters in raster pixels
// at scale 2 (144 DPI), its raster the page's size, and no raster over
// the pixel limit; a file that is not a PDF does not open.
func TestPageTextAndRaster(t *testing.T) {
	p := samples.NewPDF()
	p.AddPage()
	p.SetFont("Helvetica", "", 12)
	p.Text(72, 100, "Hi")
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		t.Fatal(err)
	}
	d, err := Open(b.Bytes(), "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Pages() != 1 {
		t.Fatalf("%d pages", d.Pages())
	}
	layer, img, err := d.Page(context.Background(), 0, 2, 40_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if img == nil || img.W != 1224 || img.H != 1584 || layer.W != 1224 || layer.H != 1584 {
		t.Fatalf("raster %v, layer %dx%d", img != nil, layer.W, layer.H)
	}
	if len(layer.Chars) != 2 || layer.Chars[0].R != 'H' || layer.Chars[1].R != 'i' {
		t.Fatalf("chars %+v", layer.Chars)
	}
	// "H" starts at x = 72 pt = 144 px; the baseline y = 100 pt = 200 px
	// lies inside its box.
	if h := layer.Chars[0]; h.Box.X0 < 143 || h.Box.X0 > 146 || h.Box.Y0 > 200 || h.Box.Y1 < 198 || h.Size < 23 || h.Size > 25 {
		t.Errorf("H at %+v size %.1f", h.Box, h.Size)
	}
	if _, img, err := d.Page(context.Background(), 0, 2, 1000); err != nil || img != nil {
		t.Errorf("over the limit: raster %v, %v", img != nil, err)
	}
	if f, err := d.Fields(0, 2); err != nil || len(f) != 0 {
		t.Errorf("a page without a form: %v %v", f, err)
	}
	if _, err := Open([]byte("not a pdf at all"), "application/pdf"); err == nil || errors.Is(err, ErrPassword) {
		t.Errorf("junk opened: %v", err)
	}
}

// TestPageStopsWithItsContext: a read whose context has ended is stopped
// (MuPDF's cookie) and says so, and the document still reads afterwards;
// a context ending while a page is being drawn stops the drawing.
func TestPageStopsWithItsContext(t *testing.T) {
	p := samples.NewPDF()
	p.AddPage()
	p.SetFont("Helvetica", "", 12)
	for i := range 60 {
		p.Text(20, 20+float64(i%60)*12, "many words to interpret and draw on a crowded page")
		for j := range 20 {
			p.Line(float64(j*14), 0, float64(600-j*14), 800)
		}
	}
	var pdf bytes.Buffer
	if err := p.Output(&pdf); err != nil {
		t.Fatal(err)
	}
	d, err := Open(pdf.Bytes(), "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := d.Page(ctx, 0, 2, 1<<30); !errors.Is(err, ErrStopped) || !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled read: %v", err)
	}
	t0 := time.Now()
	if _, img, err := d.Page(context.Background(), 0, 1, 1<<30); err != nil || img == nil {
		t.Fatalf("the next read: %v", err)
	}
	t.Logf("the whole page at scale 1: %v", time.Since(t0))
	// Drawn large (16 times the pixels of scale 2), stopped after 20 ms.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = d.Page(ctx, 0, 8, 1<<30)
	t.Logf("stopped read %v: %v", time.Since(start), err)
	if !errors.Is(err, ErrStopped) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a read past its deadline, after %v: %v (scale 1 alone took longer than the deadline)", time.Since(start), err)
	}
}
