package docreader

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/otiai10/gosseract/v2"
)

// ocrWord is one word Tesseract read, in the raster's pixels.
type ocrWord struct {
	text        string
	box         rectF
	conf        float64 // 0 to 100
	block, para int
	line        int
}

// ocrPage is Tesseract's reading of a raster turned upright.
type ocrPage struct {
	words    []ocrWord
	rotation int // degrees the raster was turned clockwise
	upright  *rgbImage
}

// score ranks readings of one page in different orientations: the
// confidence summed over words of at least two letters (a sideways page
// reads as short, low-confidence fragments).
func (p *ocrPage) score() float64 {
	s := 0.0
	for _, w := range p.words {
		if letters(w.text) >= 2 {
			s += w.conf
		}
	}
	return s
}

// onEnd says whether most words of three letters or more are taller than
// wide: text running up or down the raster.
func (p *ocrPage) onEnd() bool {
	n, tall := 0, 0
	for _, w := range p.words {
		if letters(w.text) >= 3 {
			n++
			if w.box.y1-w.box.y0 > w.box.x1-w.box.x0 {
				tall++
			}
		}
	}
	return n > 0 && 2*tall > n
}

// better prefers a reading with words lying flat, then the higher score.
func (p *ocrPage) better(o *ocrPage) bool {
	if p.onEnd() != o.onEnd() {
		return !p.onEnd()
	}
	return p.score() > o.score()
}

func (p *ocrPage) meanConf() float64 {
	if len(p.words) == 0 {
		return 0
	}
	s := 0.0
	for _, w := range p.words {
		s += w.conf
	}
	return s / float64(len(p.words))
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

// NewOCR starts Tesseract; the error says what to install when it is
// missing.
func NewOCR() (o *OCR, err error) {
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
var blankPPM = (&rgbImage{W: 8, H: 8, Pix: []byte(strings.Repeat("\xff", 8*8*3))}).ppm()

// Version is Tesseract's version.
func (o *OCR) Version() string { return o.client.Version() }

// Close stops Tesseract.
func (o *OCR) Close() { o.client.Close() }

// read OCRs one raster as it is.
func (o *OCR) read(img *rgbImage) ([]ocrWord, error) {
	return o.readMode(img, gosseract.PSM_AUTO, "0")
}

// tableMargin and tableScale: a table is OCRed with a margin around its
// box, at twice the page's scale (288 DPI: table type is small).
const (
	tableMargin = 6
	tableScale  = 2
)

// readRegion OCRs the part of a page within r as sparse text (a
// table's cells are not a column of prose) at twice the page's scale:
// from hi, the page drawn at that scale, or else from img, each pixel
// doubled. The boxes are in img's pixels.
func (o *OCR) readRegion(img, hi *rgbImage, r rectF) ([]ocrWord, error) {
	return o.readRegionMode(img, hi, r, gosseract.PSM_SPARSE_TEXT)
}

// readRegionMode is readRegion in a page segmentation mode.
func (o *OCR) readRegionMode(img, hi *rgbImage, r rectF, mode gosseract.PageSegMode) ([]ocrWord, error) {
	r = rectF{r.x0 - tableMargin, r.y0 - tableMargin, r.x1 + tableMargin, r.y1 + tableMargin}
	var c *rgbImage
	var x0, y0 int
	if hi != nil && hi.W == img.W*tableScale && hi.H == img.H*tableScale {
		c, x0, y0 = hi.crop(rectF{r.x0 * tableScale, r.y0 * tableScale, r.x1 * tableScale, r.y1 * tableScale}, 1)
	} else {
		c, x0, y0 = img.crop(r, tableScale)
		x0, y0 = x0*tableScale, y0*tableScale
	}
	if c.W == 0 || c.H == 0 {
		return nil, nil
	}
	// The resolution is said: Tesseract's estimate from a crop can be so
	// far off that it reads nothing.
	ws, err := o.readMode(c, mode, strconv.Itoa(int(Scale*72*tableScale)))
	if err != nil {
		return nil, err
	}
	for i := range ws {
		b := ws[i].box
		ws[i].box = rectF{(b.x0 + float64(x0)) / tableScale, (b.y0 + float64(y0)) / tableScale, (b.x1 + float64(x0)) / tableScale, (b.y1 + float64(y0)) / tableScale}
	}
	return ws, nil
}

// readMode OCRs a raster in a page segmentation mode, at a resolution
// in DPI ("0": Tesseract estimates it).
func (o *OCR) readMode(img *rgbImage, mode gosseract.PageSegMode, dpi string) ([]ocrWord, error) {
	if err := o.client.SetVariable("user_defined_dpi", dpi); err != nil {
		return nil, fmt.Errorf("tesseract: %w", err)
	}
	if err := o.client.SetImageFromBytes(img.ppm()); err != nil {
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
	out := make([]ocrWord, 0, len(boxes))
	for _, b := range boxes {
		t := strings.TrimSpace(b.Word)
		if t == "" {
			continue
		}
		out = append(out, ocrWord{text: t, conf: b.Confidence, block: b.BlockNum, para: b.ParNum, line: b.LineNum,
			box: rectF{float64(b.Box.Min.X), float64(b.Box.Min.Y), float64(b.Box.Max.X), float64(b.Box.Max.Y)}})
	}
	return out, nil
}

// readUpright OCRs a raster, and when the reading is poor (mean
// confidence under 70, or fewer than 3 words) or its words stand on end
// (Tesseract reads a sideways page as vertical text, boxes taller than
// wide, which no layout rule can order) the raster turned by 90, 180 and
// 270 degrees as well, keeping the best reading with words lying flat:
// scans come in sideways and upside down.
func (o *OCR) readUpright(ctx context.Context, img *rgbImage) (*ocrPage, error) {
	words, err := o.read(img)
	if err != nil {
		return nil, err
	}
	best := &ocrPage{words: words, upright: img}
	if best.meanConf() >= 70 && len(words) >= 3 && !best.onEnd() {
		return best, nil
	}
	for _, deg := range []int{90, 180, 270} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := img.rotate(deg)
		w, err := o.read(r)
		if err != nil {
			return nil, err
		}
		if p := (&ocrPage{words: w, rotation: deg, upright: r}); p.better(best) {
			best = p
		}
	}
	return best, nil
}
