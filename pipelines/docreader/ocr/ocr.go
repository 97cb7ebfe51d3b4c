// Package ocr reads page rasters with Tesseract (through gosseract):
// words with boxes, confidences and their block, paragraph and line;
// pages turned upright first; regions (a table) read as sparse text at
// twice the page's scale.
//go:build !boxd_noocr

package ocr

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"boxd/pipelines/docreader/raster"

	"github.com/otiai10/gosseract/v2"
)

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

// OCR reads rasters with Tesseract (English, its LSTM model from Debian's
// tesseract-ocr-eng). One OCR reads one raster at a time.
type OCR struct {
	client *gosseract.Client
}

// New starts Tesseract; the error says what to install when it is
// missing.
func New() (o *OCR, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tesseract: %v", r)
		}
	}()
	c := gosseract.NewClient()
	if err := c.SetLanguage("eng"); err != nil {
		c.Close()
		return nil, err
	}
	// Probe: the language data loads on first use.
	if err := c.SetImageFromBytes(blankPPM); err != nil {
		c.Close()
		return nil, fmt.Errorf("tesseract: %w", err)
	}
	if _, err := c.Text(); err != nil {
		c.Close()
		return nil, fmt.Errorf("tesseract (install libtesseract5 and tesseract-ocr-eng): %w", err)
	}
	return &OCR{client: c}, nil
}

// blankPPM is a small white image.
var blankPPM = (&raster.Image{W: 8, H: 8, Pix: []byte(strings.Repeat("\xff", 8*8*3))}).PPM()

// Version is Tesseract's version.
func (o *OCR) Version() string { return o.client.Version() }

// Close stops Tesseract.
func (o *OCR) Close() { o.client.Close() }

// Read OCRs one raster as it is.
func (o *OCR) Read(img *raster.Image) ([]Word, error) {
	return o.readMode(img, gosseract.PSM_AUTO, "0")
}

// ReadRegion OCRs the part of a page within r as sparse text (a
// table's cells are not a column of prose) at RegionScale times the
// page's scale: from hi, the page drawn at that scale, or else from img,
// each pixel repeated. dpi is img's resolution. The boxes are in img's
// pixels.
func (o *OCR) ReadRegion(img, hi *raster.Image, r raster.Box, dpi int) ([]Word, error) {
	return o.readRegion(img, hi, r, dpi, gosseract.PSM_SPARSE_TEXT)
}

// ReadBlock is ReadRegion reading the region as one block of text (a
// second look at one cell).
func (o *OCR) ReadBlock(img, hi *raster.Image, r raster.Box, dpi int) ([]Word, error) {
	return o.readRegion(img, hi, r, dpi, gosseract.PSM_SINGLE_BLOCK)
}

func (o *OCR) readRegion(img, hi *raster.Image, r raster.Box, dpi int, mode gosseract.PageSegMode) ([]Word, error) {
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
	ws, err := o.readMode(c, mode, strconv.Itoa(dpi*k))
	if err != nil {
		return nil, err
	}
	for i := range ws {
		b := ws[i].Box
		ws[i].Box = raster.Box{X0: (b.X0 + float64(x0)) / k, Y0: (b.Y0 + float64(y0)) / k, X1: (b.X1 + float64(x0)) / k, Y1: (b.Y1 + float64(y0)) / k}
	}
	return ws, nil
}

// readMode OCRs a raster in a page segmentation mode, at a resolution
// in DPI ("0": Tesseract estimates it).
func (o *OCR) readMode(img *raster.Image, mode gosseract.PageSegMode, dpi string) ([]Word, error) {
	if err := o.client.SetVariable("user_defined_dpi", dpi); err != nil {
		return nil, fmt.Errorf("tesseract: %w", err)
	}
	if err := o.client.SetImageFromBytes(img.PPM()); err != nil {
		return nil, fmt.Errorf("tesseract: %w", err)
	}
	if err := o.client.SetPageSegMode(mode); err != nil {
		return nil, fmt.Errorf("tesseract: %w", err)
	}
	// The verbose form numbers each word's block, paragraph and line
	// (GetBoundingBoxes leaves them 0, which made every scan one
	// paragraph of one line).
	boxes, err := o.client.GetBoundingBoxesVerbose()
	if err != nil {
		return nil, fmt.Errorf("tesseract: %w", err)
	}
	out := make([]Word, 0, len(boxes))
	for _, b := range boxes {
		t := strings.TrimSpace(b.Word)
		if t == "" {
			continue
		}
		out = append(out, Word{Text: t, Conf: b.Confidence, Block: b.BlockNum, Para: b.ParNum, Line: b.LineNum,
			Box: raster.Box{X0: float64(b.Box.Min.X), Y0: float64(b.Box.Min.Y), X1: float64(b.Box.Max.X), Y1: float64(b.Box.Max.Y)}})
	}
	return out, nil
}

// ReadUpright OCRs a raster, and when the reading is poor (mean
// confidence under 70, or fewer than 3 words) or its words stand on end
// (Tesseract reads a sideways page as vertical text, boxes taller than
// wide, which no layout rule can order) the raster turned by 90, 180 and
// 270 degrees as well, keeping the best reading with words lying flat:
// scans come in sideways and upside down.
func (o *OCR) ReadUpright(ctx context.Context, img *raster.Image) (*Page, error) {
	words, err := o.Read(img)
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
		w, err := o.Read(r)
		if err != nil {
			return nil, err
		}
		if p := (&Page{Words: w, Rotation: deg, Upright: r}); p.better(best) {
			best = p
		}
	}
	return best, nil
}
