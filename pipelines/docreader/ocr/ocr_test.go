//go:build !boxd_noocr

package ocr

import (
	"context"
	"os"
	"testing"

	"boxd/engine/raster"
	"boxd/pipelines/docreader/samples"
)

func newOCR(t *testing.T) *OCR {
	t.Helper()
	o, err := New()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tesseract: %v (make deps installs it)", err)
		}
		t.Skipf("tesseract: %v", err)
	}
	t.Cleanup(o.Close)
	return o
}

// TestReadNumbersLines: words come with their block, paragraph and line
// (the first gosseract call used left them all 0, and a scan read as one
// line); a page turned on its side is read upright again.
func TestReadNumbersLines(t *testing.T) {
	o := newOCR(t)
	g, err := samples.RenderLines([]string{"First line of the note", "Second line here", "", "A new paragraph"}, 1000, 500, 34, 60)
	if err != nil {
		t.Fatal(err)
	}
	img := raster.FromImage(g)
	ws, err := o.Read(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[[3]int]string{}
	for _, w := range ws {
		k := [3]int{w.Block, w.Para, w.Line}
		lines[k] += w.Text + " "
		if w.Line == 0 || w.Conf <= 0 || w.Box.Empty() {
			t.Errorf("word %+v", w)
		}
	}
	if len(lines) != 3 {
		t.Errorf("%d lines, want 3: %v", len(lines), lines)
	}
	p, err := o.ReadUpright(context.Background(), img.Rotate(90))
	if err != nil {
		t.Fatal(err)
	}
	if p.Rotation != 270 || p.Upright.W != img.W || len(p.Words) < 8 {
		t.Errorf("sideways page: turned %d, %d words", p.Rotation, len(p.Words))
	}
}
