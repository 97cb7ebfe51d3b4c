package contrast

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"testing"
)

func TestRatio(t *testing.T) {
	for _, c := range []struct {
		a, b color.RGBA
		want float64
	}{
		{color.RGBA{0, 0, 0, 255}, color.RGBA{255, 255, 255, 255}, 21},
		{color.RGBA{0x77, 0x77, 0x77, 255}, color.RGBA{255, 255, 255, 255}, 4.48},
		{color.RGBA{0x59, 0x59, 0x59, 255}, color.RGBA{255, 255, 255, 255}, 7.0},
		{color.RGBA{10, 20, 30, 255}, color.RGBA{10, 20, 30, 255}, 1},
	} {
		if got := Ratio(c.a, c.b); math.Abs(got-c.want) > 0.01 {
			t.Errorf("%v on %v: %.3f, want %.2f", c.a, c.b, got, c.want)
		}
	}
	if Required(16, 400) != 4.5 || Required(24, 400) != 3 || Required(19, 700) != 3 || Required(19, 400) != 4.5 {
		t.Error("required ratios")
	}
}

// TestMeasure: strokes of text colour (with anti-aliased edges of many
// in-between colours) over a background are told apart; a blank box has
// no text.
func TestMeasure(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 100, 30))
	bg := color.RGBA{0x88, 0x88, 0x88, 255}
	draw.Draw(img, img.Bounds(), &image.Uniform{bg}, image.Point{}, draw.Src)
	text := color.RGBA{0x77, 0x77, 0x77, 255}
	for x := 10; x < 90; x += 6 {
		draw.Draw(img, image.Rect(x, 8, x+3, 22), &image.Uniform{text}, image.Point{}, draw.Src)
		for y := 8; y < 22; y++ { // an edge: a blend, one pixel wide
			img.Set(x+3, y, color.RGBA{uint8(0x77 + (x%16)/2), 0x80, 0x7f, 255})
		}
	}
	fg, gotBG, ratio, share, ok := Measure(img)
	if !ok || Hex(fg) != "#777777" || Hex(gotBG) != "#888888" || math.Abs(ratio-Ratio(text, bg)) > 0.01 || share < 0.7 {
		t.Errorf("fg %s bg %s ratio %.2f share %.2f ok %v", Hex(fg), Hex(gotBG), ratio, share, ok)
	}
	blank := image.NewRGBA(image.Rect(0, 0, 20, 20))
	if _, _, _, _, ok := Measure(blank); ok {
		t.Error("a blank box has text")
	}
}
