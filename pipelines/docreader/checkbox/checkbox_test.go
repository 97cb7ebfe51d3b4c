package checkbox

import (
	"testing"

	"boxd/engine/raster"
	"boxd/pipelines/docreader/samples"
)

// TestFind: every box of the scanned form is found, in order, and read
// marked (a cross, a tick, a fill) or empty as drawn; the letters of the
// text are no boxes.
func TestFind(t *testing.T) {
	form := samples.CheckboxForm()
	g, err := samples.DrawCheckboxForm(form)
	if err != nil {
		t.Fatal(err)
	}
	bs := Find(raster.FromImage(g))
	var want []bool
	for _, l := range form {
		for _, it := range l {
			want = append(want, it.Marked)
		}
	}
	if len(bs) != len(want) {
		t.Fatalf("%d boxes, want %d: %+v", len(bs), len(want), bs)
	}
	for i, b := range bs {
		if b.Marked != want[i] {
			t.Errorf("box %d at %v: marked %v (fill %v), want %v", i, b.Box, b.Marked, b.Fill, want[i])
		}
		if w := b.Box.X1 - b.Box.X0; w != 24 {
			t.Errorf("box %d is %v wide", i, w)
		}
	}
}
