// Package ocr reads page rasters with Tesseract: words with boxes,
// confidences and their block, paragraph and line; pages turned upright
// first; regions (a table) read as sparse text at twice the page's scale.
//
// OCR holds the reading rules; an Engine recognises one raster. The
// engine is Tesseract in this process (Local, through gosseract) or, as
// the document reader runs it, Tesseract in a supervised worker process
// (pipelines/docreader/worker), where a crash ends one request and not
// the box.
package ocr

import (
	"context"
	"fmt"
	"strconv"

	"boxd/engine/raster"
)

// Mode is a Tesseract page segmentation mode.
type Mode int

// The modes the reader uses (Tesseract's PSM numbers).
const (
	ModeAuto   Mode = 3  // PSM_AUTO: a page
	ModeBlock  Mode = 6  // PSM_SINGLE_BLOCK: one block of text (a cell)
	ModeSparse Mode = 11 // PSM_SPARSE_TEXT: a table's cells
)

// Engine recognises the words of one raster in a mode, at a resolution
// in DPI (0: the engine estimates it).
type Engine interface {
	Recognize(ctx context.Context, img *raster.Image, mode Mode, dpi int) ([]Word, error)
	Version() string
	Close()
}

// MaxSide is the longest raster side handed to an engine. Tesseract
// refuses an image with a side of 32,768 pixels or more, and that refusal
// took the whole process down (a SIGSEGV) in the version Debian ships:
// no raster that long reaches it.
const MaxSide = 32000

// TooLargeError is a raster with a side over MaxSide.
type TooLargeError struct{ W, H int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("a raster of %d × %d pixels is over OCR's limit of %d pixels a side", e.W, e.H, MaxSide)
}

// OCR reads rasters through an engine. One OCR reads one raster at a
// time.
type OCR struct {
	eng Engine
}

// With reads through eng.
func With(eng Engine) *OCR { return &OCR{eng: eng} }

// Version is the engine's version.
func (o *OCR) Version() string { return o.eng.Version() }

// Close stops the engine.
func (o *OCR) Close() { o.eng.Close() }

// Read OCRs one raster as it is.
func (o *OCR) Read(ctx context.Context, img *raster.Image) ([]Word, error) {
	return o.readMode(ctx, img, ModeAuto, 0)
}

// ReadRegion OCRs the part of a page within r as sparse text (a
// table's cells are not a column of prose) at RegionScale times the
// page's scale: from hi, the page drawn at that scale, or else from img,
// each pixel repeated. dpi is img's resolution. The boxes are in img's
// pixels.
func (o *OCR) ReadRegion(ctx context.Context, img, hi *raster.Image, r raster.Box, dpi int) ([]Word, error) {
	return o.readRegion(ctx, img, hi, r, dpi, ModeSparse)
}

// ReadBlock is ReadRegion reading the region as one block of text (a
// second look at one cell).
func (o *OCR) ReadBlock(ctx context.Context, img, hi *raster.Image, r raster.Box, dpi int) ([]Word, error) {
	return o.readRegion(ctx, img, hi, r, dpi, ModeBlock)
}

func (o *OCR) readRegion(ctx context.Context, img, hi *raster.Image, r raster.Box, dpi int, mode Mode) ([]Word, error) {
	const k = RegionScale
	r = raster.Box{X0: r.X0 - RegionMargin, Y0: r.Y0 - RegionMargin, X1: r.X1 + RegionMargin, Y1: r.Y1 + RegionMargin}
	var c *raster.Image
	var x0, y0 int
	if hi != nil && hi.W == img.W*k && hi.H == img.H*k {
		c, x0, y0 = hi.Crop(raster.Box{X0: r.X0 * k, Y0: r.Y0 * k, X1: r.X1 * k, Y1: r.Y1 * k}, 1)
	} else {
		c, x0, y0 = img.Crop(r, k)
		x0, y0 = x0*k, y0*k
	}
	if c.W == 0 || c.H == 0 {
		return nil, nil
	}
	// The resolution is said: Tesseract's estimate from a crop can be so
	// far off that it reads nothing.
	ws, err := o.readMode(ctx, c, mode, dpi*k)
	if err != nil {
		return nil, err
	}
	for i := range ws {
		b := ws[i].Box
		ws[i].Box = raster.Box{X0: (b.X0 + float64(x0)) / k, Y0: (b.Y0 + float64(y0)) / k, X1: (b.X1 + float64(x0)) / k, Y1: (b.Y1 + float64(y0)) / k}
	}
	return ws, nil
}

// readMode OCRs a raster in a mode at a resolution (0: estimated); a
// raster over MaxSide is refused before it reaches the engine.
func (o *OCR) readMode(ctx context.Context, img *raster.Image, mode Mode, dpi int) ([]Word, error) {
	if img.W > MaxSide || img.H > MaxSide {
		return nil, &TooLargeError{W: img.W, H: img.H}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return o.eng.Recognize(ctx, img, mode, dpi)
}

// dpiVar is Tesseract's user_defined_dpi value for dpi.
func dpiVar(dpi int) string { return strconv.Itoa(max(dpi, 0)) }

// score ranks readings of one page in different orientations: the
// confidence summed over words of at least two letters (a sideways page
// reads as short, low-confidence fragments).
func (p *Page) score() float64 {
	s := 0.0
	for _, w := range p.Words {
		if letters(w.Text) >= 2 {
			s += w.Conf
		}
	}
	return s
}

// onEnd says whether most words of three letters or more are taller than
// wide: text running up or down the raster.
func (p *Page) onEnd() bool {
	n, tall := 0, 0
	for _, w := range p.Words {
		if letters(w.Text) >= 3 {
			n++
			if w.Box.Y1-w.Box.Y0 > w.Box.X1-w.Box.X0 {
				tall++
			}
		}
	}
	return n > 0 && 2*tall > n
}

// better prefers a reading with words lying flat, then the higher score.
func (p *Page) better(o *Page) bool {
	if p.onEnd() != o.onEnd() {
		return !p.onEnd()
	}
	return p.score() > o.score()
}

func (p *Page) meanConf() float64 {
	if len(p.Words) == 0 {
		return 0
	}
	s := 0.0
	for _, w := range p.Words {
		s += w.Conf
	}
	return s / float64(len(p.Words))
}

func letters(s string) int {
	n := 0
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			n++
		}
	}
	return n
}

// ReadUpright OCRs a raster, and when the reading is poor (mean
// confidence under 70, or fewer than 3 words) or its words stand on end
// (Tesseract reads a sideways page as vertical text, boxes taller than
// wide, which no layout rule can order) the raster turned by 90, 180 and
// 270 degrees as well, keeping the best reading with words lying flat:
// scans come in sideways and upside down.
func (o *OCR) ReadUpright(ctx context.Context, img *raster.Image) (*Page, error) {
	words, err := o.Read(ctx, img)
	if err != nil {
		return nil, err
	}
	best := &Page{Words: words, Upright: img}
	if best.meanConf() >= 70 && len(words) >= 3 && !best.onEnd() {
		return best, nil
	}
	for _, deg := range []int{90, 180, 270} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := img.Rotate(deg)
		w, err := o.Read(ctx, r)
		if err != nil {
			return nil, err
		}
		if p := (&Page{Words: w, Rotation: deg, Upright: r}); p.better(best) {
			best = p
		}
	}
	return best, nil
}
