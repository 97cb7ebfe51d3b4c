// Package raster holds a page as the document reader sees it: an 8-bit
// RGB raster and boxes in its pixels. MuPDF draws into it, Tesseract
// reads it, the table finder walks it, and its hash is what a receipt
// binds.
package raster

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

// Image is a page raster: 8-bit RGB, rows top to bottom.
type Image struct {
	W, H int
	Pix  []byte // W*H*3
}

// PPM is the raster as a binary PPM (P6): what the page's pixel hash
// covers and what Tesseract reads.
func (m *Image) PPM() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "P6\n%d %d\n255\n", m.W, m.H)
	b.Grow(len(m.Pix))
	b.Write(m.Pix)
	return b.Bytes()
}

// PixelHash is a raster's hash: sha256 of its binary PPM (P6, "P6\n<w>
// <h>\n255\n" then the RGB bytes row by row).
func (m *Image) PixelHash() string {
	h := sha256.New()
	fmt.Fprintf(h, "P6\n%d %d\n255\n", m.W, m.H)
	h.Write(m.Pix)
	return hex.EncodeToString(h.Sum(nil))
}

// Rotate turns the raster clockwise by deg (0, 90, 180 or 270).
func (m *Image) Rotate(deg int) *Image {
	switch deg % 360 {
	case 0:
		return m
	case 180:
		out := &Image{W: m.W, H: m.H, Pix: make([]byte, len(m.Pix))}
		n := m.W * m.H
		for i := range n {
			copy(out.Pix[3*(n-1-i):3*(n-i)], m.Pix[3*i:3*i+3])
		}
		return out
	}
	out := &Image{W: m.H, H: m.W, Pix: make([]byte, len(m.Pix))}
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

// FromImage converts a decoded image to RGB (alpha composited on white).
func FromImage(src image.Image) *Image {
	b := src.Bounds()
	rgba := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(rgba, rgba.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(rgba, rgba.Bounds(), src, b.Min, draw.Over)
	out := &Image{W: b.Dx(), H: b.Dy(), Pix: make([]byte, b.Dx()*b.Dy()*3)}
	for i := range b.Dx() * b.Dy() {
		copy(out.Pix[3*i:3*i+3], rgba.Pix[4*i:4*i+3])
	}
	return out
}

// Box is a box in raster pixels: X0, Y0 (top left) to X1, Y1.
type Box struct{ X0, Y0, X1, Y1 float64 }

// Empty says whether the box holds no area.
func (r Box) Empty() bool { return r.X1 <= r.X0 || r.Y1 <= r.Y0 }

// Union is the smallest box holding both (an empty box adds nothing).
func (r Box) Union(o Box) Box {
	if r.Empty() {
		return o
	}
	if o.Empty() {
		return r
	}
	return Box{min(r.X0, o.X0), min(r.Y0, o.Y0), max(r.X1, o.X1), max(r.Y1, o.Y1)}
}

// BBox is the contract's [x, y, width, height] in whole pixels (the
// smallest integer box holding r).
func (r Box) BBox() [4]int {
	x0, y0 := int(math.Floor(r.X0)), int(math.Floor(r.Y0))
	x1, y1 := int(math.Ceil(r.X1)), int(math.Ceil(r.Y1))
	return [4]int{x0, y0, max(0, x1-x0), max(0, y1-y0)}
}

// ToImage is the raster as an image.RGBA (tests, encoders).
func (m *Image) ToImage() *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, m.W, m.H))
	for i := range m.W * m.H {
		copy(out.Pix[4*i:4*i+3], m.Pix[3*i:3*i+3])
		out.Pix[4*i+3] = 255
	}
	return out
}

// Crop copies the part of the raster within r (clipped to the raster),
// each pixel repeated scale times both ways; and the crop's top left.
func (m *Image) Crop(r Box, scale int) (*Image, int, int) {
	x0, y0 := max(0, int(math.Floor(r.X0))), max(0, int(math.Floor(r.Y0)))
	x1, y1 := min(m.W, int(math.Ceil(r.X1))), min(m.H, int(math.Ceil(r.Y1)))
	w, h := max(0, x1-x0), max(0, y1-y0)
	out := &Image{W: w * scale, H: h * scale, Pix: make([]byte, w*h*scale*scale*3)}
	for y := range out.H {
		src := m.Pix[((y0+y/scale)*m.W+x0)*3:]
		dst := out.Pix[y*out.W*3:]
		for x := range out.W {
			copy(dst[x*3:x*3+3], src[(x/scale)*3:(x/scale)*3+3])
		}
	}
	return out, x0, y0
}

// Square is the part of the raster within r (clipped), centred on a
// white square of at least minSide pixels, then scaled down (box filter)
// when its side is over maxSide (0: never): what a vision projector reads
// (Gemma 3's squeezes any picture into a square, so a line of text or a
// wide chart must not be stretched).
func (m *Image) Square(r Box, minSide, maxSide int) *Image {
	c, _, _ := m.Crop(r, 1)
	side := max(c.W, c.H, minSide, 1)
	out := &Image{W: side, H: side, Pix: make([]byte, side*side*3)}
	for i := range out.Pix {
		out.Pix[i] = 255
	}
	ox, oy := (side-c.W)/2, (side-c.H)/2
	for y := range c.H {
		copy(out.Pix[3*((oy+y)*side+ox):], c.Pix[3*y*c.W:3*(y+1)*c.W])
	}
	if maxSide <= 0 || side <= maxSide {
		return out
	}
	f := (side + maxSide - 1) / maxSide // whole-pixel boxes: the result is at most maxSide
	n := side / f
	small := &Image{W: n, H: n, Pix: make([]byte, n*n*3)}
	for y := range n {
		for x := range n {
			var sum [3]int
			for dy := range f {
				row := out.Pix[3*((y*f+dy)*side+x*f):]
				for dx := range f {
					sum[0] += int(row[3*dx])
					sum[1] += int(row[3*dx+1])
					sum[2] += int(row[3*dx+2])
				}
			}
			for k := range 3 {
				small.Pix[3*(y*n+x)+k] = byte(sum[k] / (f * f))
			}
		}
	}
	return small
}

// Center is the box's middle.
func (r Box) Center() (float64, float64) { return (r.X0 + r.X1) / 2, (r.Y0 + r.Y1) / 2 }
