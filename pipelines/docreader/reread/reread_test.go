package reread

import (
	"testing"

	"boxd/engine/raster"
)

func TestSameFoldsCaseSpacingPunctuation(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"Metformin 500 mg", "metformin  500mg", true},
		{"HbA1c, three months.", "hba1c three months", true},
		{"metformin 50@ mg", "metformin 500 mg", false},
		{"", "", true},
		{"Café", "cafe", false},
	} {
		if got := Same(c.a, c.b); got != c.want {
			t.Errorf("Same(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

func TestDue(t *testing.T) {
	if !Due("x", 8999) || Due("x", 9000) || Due("  ", 100) {
		t.Error("Due: under 9,000 bp with text only")
	}
}

// TestCrop: the region with its margin, centred on a white square, its
// pixels the page's; a region at the page's edge is clipped.
func TestCrop(t *testing.T) {
	img := &raster.Image{W: 100, H: 50, Pix: make([]byte, 100*50*3)}
	for i := range img.Pix {
		img.Pix[i] = byte(i / 3 % 251)
	}
	p := Crop(img, [4]int{20, 10, 40, 8})
	// 40+12 wide, 8+12 tall: a 52-pixel square, the rows centred.
	if p.Width != 52 || p.Height != 52 || len(p.RGB) != 52*52*3 {
		t.Fatalf("crop %d × %d, %d bytes", p.Width, p.Height, len(p.RGB))
	}
	oy := (52 - 20) / 2
	at := func(x, y int) byte { return p.RGB[3*(y*52+x)] }
	if at(0, oy) != img.Pix[3*(4*100+14)] || at(51, oy+19) != img.Pix[3*(23*100+65)] {
		t.Error("the crop's corners are not the page's pixels")
	}
	if at(0, 0) != 255 || at(51, 51) != 255 {
		t.Error("the canvas around the region is not white")
	}
	edge := Crop(img, [4]int{90, 45, 30, 30})
	if edge.Width != 32 || edge.Height != 32 {
		t.Errorf("edge crop %d × %d; want the 32-pixel minimum", edge.Width, edge.Height)
	}
}
