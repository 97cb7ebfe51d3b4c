package raster

import (
	"bytes"
	"image"
	"image/color"
	"math"
	"testing"
)

// grid is a w × h raster whose pixel (x, y) is (x, y, 7).
func grid(w, h int) *Image {
	m := &Image{W: w, H: h, Pix: make([]byte, w*h*3)}
	for y := range h {
		for x := range w {
			copy(m.Pix[(y*w+x)*3:], []byte{byte(x), byte(y), 7})
		}
	}
	return m
}

func at(m *Image, x, y int) [3]byte {
	p := m.Pix[(y*m.W+x)*3:]
	return [3]byte{p[0], p[1], p[2]}
}

// TestRotate: 90 degrees clockwise sends (x, y) to (H-1-y, x); four
// quarter turns, or two half turns, give the raster back.
func TestRotate(t *testing.T) {
	m := grid(5, 3)
	r := m.Rotate(90)
	if r.W != 3 || r.H != 5 || at(r, 3-1-0, 4) != at(m, 4, 0) {
		t.Fatalf("90: %dx%d, %v", r.W, r.H, at(r, 2, 4))
	}
	if back := r.Rotate(90).Rotate(90).Rotate(90); back.PixelHash() != m.PixelHash() {
		t.Error("four quarter turns changed the raster")
	}
	if back := m.Rotate(180).Rotate(180); back.PixelHash() != m.PixelHash() {
		t.Error("two half turns changed the raster")
	}
	if m.Rotate(270).PixelHash() != m.Rotate(90).Rotate(180).PixelHash() {
		t.Error("270 is not 90 then 180")
	}
}

// TestCrop: the part within the box, clipped to the raster, each pixel
// repeated scale times; the crop's top left.
func TestCrop(t *testing.T) {
	m := grid(10, 8)
	c, x0, y0 := m.Crop(Box{X0: 2.5, Y0: 3, X1: 5, Y1: 20}, 2)
	if x0 != 2 || y0 != 3 || c.W != 6 || c.H != 10 {
		t.Fatalf("crop %dx%d at %d,%d", c.W, c.H, x0, y0)
	}
	if at(c, 0, 0) != at(m, 2, 3) || at(c, 1, 1) != at(m, 2, 3) || at(c, 5, 9) != at(m, 4, 7) {
		t.Errorf("pixels %v %v", at(c, 0, 0), at(c, 5, 9))
	}
}

// TestBoxAndHash: boxes in whole pixels, unions, and the pixel hash of
// a known raster (sha256 of "P6\n1 1\n255\n" and one white pixel).
func TestBoxAndHash(t *testing.T) {
	if b := (Box{X0: 1.2, Y0: 2.9, X1: 3.1, Y1: 4}).BBox(); b != [4]int{1, 2, 3, 2} {
		t.Errorf("bbox %v", b)
	}
	if u := (Box{}).Union(Box{X0: 1, Y0: 1, X1: 2, Y1: 2}); u != (Box{X0: 1, Y0: 1, X1: 2, Y1: 2}) {
		t.Errorf("union with empty %v", u)
	}
	white := &Image{W: 1, H: 1, Pix: []byte{255, 255, 255}}
	if h := white.PixelHash(); h != "3aaa77f17582428b99e7f04836135214e7ae36328fb233b7b284da36da2dafb3" {
		t.Errorf("hash %s", h)
	}
	src := image.NewNRGBA(image.Rect(0, 0, 1, 1))
	src.Set(0, 0, color.NRGBA{R: 255, A: 0}) // transparent: white below
	if got := FromImage(src); got.PixelHash() != white.PixelHash() {
		t.Errorf("a transparent pixel reads %v", got.Pix)
	}
}

// TestSquare: a wide region centred on a white square, scaled down by
// whole-pixel boxes when over the side asked for.
func TestSquare(t *testing.T) {
	m := &Image{W: 40, H: 10, Pix: make([]byte, 40*10*3)} // black
	sq := m.Square(Box{X0: 0, Y0: 0, X1: 40, Y1: 10}, 8, 0)
	if sq.W != 40 || sq.H != 40 || at(sq, 0, 14) != [3]byte{255, 255, 255} || at(sq, 0, 15) != [3]byte{} || at(sq, 39, 24) != [3]byte{} || at(sq, 39, 25) != [3]byte{255, 255, 255} {
		t.Errorf("square %d × %d; rows 14/15 and 24/25 are the region's edges", sq.W, sq.H)
	}
	small := m.Square(Box{X0: 0, Y0: 0, X1: 40, Y1: 10}, 8, 16)
	if small.W != 13 || small.H != 13 { // boxes of ceil(40/16) = 3 pixels: 40/3 = 13 a side
		t.Errorf("scaled to %d × %d", small.W, small.H)
	}
	if tiny := m.Square(Box{X0: 5, Y0: 5, X1: 7, Y1: 6}, 8, 0); tiny.W != 8 {
		t.Errorf("min side: %d", tiny.W)
	}
}

// lines is a white page with dark text-like bars, lineH apart.
func lines(w, h, lineH int) *Image {
	m := &Image{W: w, H: h, Pix: make([]byte, w*h*3)}
	for i := range m.Pix {
		m.Pix[i] = 255
	}
	for y := 60; y+8 < h-60; y += lineH {
		for x := 80; x < w-80; x++ {
			if (x/23)%5 == 4 { // gaps between "words"
				continue
			}
			for dy := range 8 {
				copy(m.Pix[3*((y+dy)*w+x):], []byte{20, 20, 20})
			}
		}
	}
	return m
}

// TestSkewFindsTheTurn: a page of lines turned clockwise by a known
// angle is measured within 0.1°, either way; turning it back by the
// measure leaves it straight; a straight page, a blank one and a dark
// one measure 0.
func TestSkewFindsTheTurn(t *testing.T) {
	page := lines(1200, 1600, 40)
	if s := page.Skew(); s != 0 {
		t.Errorf("straight page: %v", s)
	}
	for _, deg := range []float64{2.5, -1.3, 0.6, -4.2} {
		turned := page.Turn(deg)
		got := turned.Skew()
		if math.Abs(got-deg) > 0.1 {
			t.Errorf("turned %v°: measured %v°", deg, got)
		}
		if back := turned.Turn(-got).Skew(); math.Abs(back) > 0.1 {
			t.Errorf("turned %v° and back by %v°: %v° left", deg, got, back)
		}
	}
	blank := &Image{W: 400, H: 400, Pix: make([]byte, 400*400*3)}
	for i := range blank.Pix {
		blank.Pix[i] = 255
	}
	if s := blank.Skew(); s != 0 {
		t.Errorf("blank page: %v", s)
	}
	dark := &Image{W: 400, H: 400, Pix: make([]byte, 400*400*3)}
	if s := dark.Skew(); s != 0 {
		t.Errorf("dark page: %v", s)
	}
}

// TestTurn: a quarter turn by Turn moves a pixel right of centre to below
// it (clockwise, y down), and a turn by 0 is the same raster.
func TestTurn(t *testing.T) {
	m := &Image{W: 21, H: 21, Pix: make([]byte, 21*21*3)}
	for i := range m.Pix {
		m.Pix[i] = 255
	}
	copy(m.Pix[3*(10*21+18):], []byte{0, 0, 0})
	q := m.Turn(90)
	if at(q, 10, 18) != [3]byte{} {
		t.Errorf("a pixel right of centre turned 90° clockwise is not below it")
	}
	if z := m.Turn(0); !bytes.Equal(z.Pix, m.Pix) {
		t.Error("a turn by 0 changed the raster")
	}
}
