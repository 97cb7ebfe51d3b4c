package judge

import (
	"image"
	"image/color"
	"image/draw"
	"strings"
	"testing"
)

// TestSquare: a wide image is centred on a white square, its pixels kept.
func TestSquare(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 10))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{200, 10, 20, 255}}, image.Point{}, draw.Src)
	p := Square(img)
	if p.Width != 40 || p.Height != 40 || len(p.RGB) != 40*40*3 {
		t.Fatalf("%dx%d, %d bytes", p.Width, p.Height, len(p.RGB))
	}
	at := func(x, y int) [3]byte { i := (y*40 + x) * 3; return [3]byte{p.RGB[i], p.RGB[i+1], p.RGB[i+2]} }
	if at(0, 0) != [3]byte{255, 255, 255} || at(20, 20) != [3]byte{200, 10, 20} || at(20, 14) != [3]byte{255, 255, 255} || at(20, 15) != [3]byte{200, 10, 20} {
		t.Errorf("pixels %v %v %v %v", at(0, 0), at(20, 20), at(20, 14), at(20, 15))
	}
}

// TestQuestion: the alt text is quoted to the model; a decorative image
// is asked about text only.
func TestQuestion(t *testing.T) {
	if q := Question("Red shoe", false); !strings.Contains(q, `"Red shoe"`) || !strings.Contains(q, "describes") {
		t.Errorf("%s", q)
	}
	if q := Question("", true); !strings.Contains(q, "decoration") || !strings.Contains(q, "has_text") {
		t.Errorf("%s", q)
	}
}
