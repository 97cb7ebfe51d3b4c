package samples

import (
	"image"
	"image/color"
	"image/draw"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"
)

// canvas is a white image to draw a chart on, with the Go font at one
// size.
type canvas struct {
	img  *image.RGBA
	face font.Face
}

func newCanvas(w, h int, px float64) (*canvas, error) {
	face, err := goFace(px)
	if err != nil {
		return nil, err
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	return &canvas{img: img, face: face}, nil
}

// text draws s with its baseline at y, from x or centred on it.
func (c *canvas) text(s string, x, y int, col color.Color, center bool) {
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: c.face}
	if center {
		x -= d.MeasureString(s).Round() / 2
	}
	d.Dot = fixed.P(x, y)
	d.DrawString(s)
}

// rect fills the rectangle between two corners.
func (c *canvas) rect(x0, y0, x1, y1 int, col color.Color) {
	draw.Draw(c.img, image.Rect(min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)), image.NewUniform(col), image.Point{}, draw.Src)
}

// done closes the font and gives the image.
func (c *canvas) done() *image.RGBA {
	c.face.Close()
	return c.img
}
