package docreader

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/draw"
	_ "image/jpeg" // decoders for image documents
	_ "image/png"
	"math"

	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"
)

// rgbImage is a page raster: 8-bit RGB, rows top to bottom.
type rgbImage struct {
	W, H int
	Pix  []byte // W*H*3
}

// ppm is the raster as a binary PPM (P6): what the page's pixel hash
// covers and what Tesseract reads.
func (m *rgbImage) ppm() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "P6\n%d %d\n255\n", m.W, m.H)
	b.Grow(len(m.Pix))
	b.Write(m.Pix)
	return b.Bytes()
}

// PixelHash is a raster's hash: sha256 of its binary PPM (P6, "P6\n<w>
// <h>\n255\n" then the RGB bytes row by row).
func (m *rgbImage) PixelHash() string {
	h := sha256.New()
	fmt.Fprintf(h, "P6\n%d %d\n255\n", m.W, m.H)
	h.Write(m.Pix)
	return hex.EncodeToString(h.Sum(nil))
}

// rotate turns the raster clockwise by deg (0, 90, 180 or 270).
func (m *rgbImage) rotate(deg int) *rgbImage {
	switch deg % 360 {
	case 0:
		return m
	case 180:
		out := &rgbImage{W: m.W, H: m.H, Pix: make([]byte, len(m.Pix))}
		n := m.W * m.H
		for i := range n {
			copy(out.Pix[3*(n-1-i):3*(n-i)], m.Pix[3*i:3*i+3])
		}
		return out
	}
	out := &rgbImage{W: m.H, H: m.W, Pix: make([]byte, len(m.Pix))}
	for y := range m.H {
		for x := range m.W {
			var nx, ny int
			if deg%360 == 90 { // (x, y) → (H-1-y, x)
				nx, ny = m.H-1-y, x
			} else { // 270: (x, y) → (y, W-1-x)
				nx, ny = y, m.W-1-x
			}
			copy(out.Pix[3*(ny*out.W+nx):], m.Pix[3*(y*m.W+x):3*(y*m.W+x)+3])
		}
	}
	return out
}

// fromImage converts a decoded image to RGB (alpha composited on white).
func fromImage(src image.Image) *rgbImage {
	b := src.Bounds()
	rgba := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(rgba, rgba.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(rgba, rgba.Bounds(), src, b.Min, draw.Over)
	out := &rgbImage{W: b.Dx(), H: b.Dy(), Pix: make([]byte, b.Dx()*b.Dy()*3)}
	for i := range b.Dx() * b.Dy() {
		copy(out.Pix[3*i:3*i+3], rgba.Pix[4*i:4*i+3])
	}
	return out
}

// rectF is a box in raster pixels: x0, y0 (top left) to x1, y1.
type rectF struct{ x0, y0, x1, y1 float64 }

func (r rectF) empty() bool { return r.x1 <= r.x0 || r.y1 <= r.y0 }

func (r rectF) union(o rectF) rectF {
	if r.empty() {
		return o
	}
	if o.empty() {
		return r
	}
	return rectF{min(r.x0, o.x0), min(r.y0, o.y0), max(r.x1, o.x1), max(r.y1, o.y1)}
}

// bbox is the contract's [x, y, width, height] in whole pixels (the
// smallest integer box holding r).
func (r rectF) bbox() [4]int {
	x0, y0 := int(math.Floor(r.x0)), int(math.Floor(r.y0))
	x1, y1 := int(math.Ceil(r.x1)), int(math.Ceil(r.y1))
	return [4]int{x0, y0, max(0, x1-x0), max(0, y1-y0)}
}

// toImage is the raster as an image.RGBA (tests, encoders).
func (m *rgbImage) toImage() *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, m.W, m.H))
	for i := range m.W * m.H {
		copy(out.Pix[4*i:4*i+3], m.Pix[3*i:3*i+3])
		out.Pix[4*i+3] = 255
	}
	return out
}

// crop copies the part of the raster within r (clipped to the raster),
// each pixel repeated scale times both ways; and the crop's top left.
func (m *rgbImage) crop(r rectF, scale int) (*rgbImage, int, int) {
	x0, y0 := max(0, int(math.Floor(r.x0))), max(0, int(math.Floor(r.y0)))
	x1, y1 := min(m.W, int(math.Ceil(r.x1))), min(m.H, int(math.Ceil(r.y1)))
	w, h := max(0, x1-x0), max(0, y1-y0)
	out := &rgbImage{W: w * scale, H: h * scale, Pix: make([]byte, w*h*scale*scale*3)}
	for y := range out.H {
		src := m.Pix[((y0+y/scale)*m.W+x0)*3:]
		dst := out.Pix[y*out.W*3:]
		for x := range out.W {
			copy(dst[x*3:x*3+3], src[(x/scale)*3:(x/scale)*3+3])
		}
	}
	return out, x0, y0
}
