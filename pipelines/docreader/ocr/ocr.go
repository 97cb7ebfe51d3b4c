//go:build !boxd_noocr

package ocr

import (
	"context"
	"fmt"
	"strings"

	"boxd/engine/raster"

	"github.com/otiai10/gosseract/v2"
)

// Local is Tesseract in this process (English, its LSTM model from
// Debian's tesseract-ocr-eng). It recognises one raster at a time.
type Local struct {
	client *gosseract.Client
}

// New starts Tesseract in this process.
func New() (*OCR, error) {
	l, err := NewLocal()
	if err != nil {
		return nil, err
	}
	return With(l), nil
}

// NewLocal starts Tesseract; the error says what to install when it is
// missing.
func NewLocal() (l *Local, err error) {
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
	return &Local{client: c}, nil
}

// blankPPM is a small white image.
var blankPPM = (&raster.Image{W: 8, H: 8, Pix: []byte(strings.Repeat("\xff", 8*8*3))}).PPM()

// Version is Tesseract's version.
func (l *Local) Version() string { return l.client.Version() }

// Close stops Tesseract.
func (l *Local) Close() { l.client.Close() }

// Recognize OCRs a raster in a page segmentation mode, at a resolution
// in DPI (0: Tesseract estimates it). A raster over MaxSide is refused.
func (l *Local) Recognize(ctx context.Context, img *raster.Image, mode Mode, dpi int) ([]Word, error) {
	if img.W > MaxSide || img.H > MaxSide {
		return nil, &TooLargeError{W: img.W, H: img.H}
	}
	if err := l.client.SetVariable("user_defined_dpi", dpiVar(dpi)); err != nil {
		return nil, fmt.Errorf("tesseract: %w", err)
	}
	if err := l.client.SetImageFromBytes(img.PPM()); err != nil {
		return nil, fmt.Errorf("tesseract: %w", err)
	}
	if err := l.client.SetPageSegMode(gosseract.PageSegMode(mode)); err != nil {
		return nil, fmt.Errorf("tesseract: %w", err)
	}
	// The verbose form numbers each word's block, paragraph and line
	// (GetBoundingBoxes leaves them 0, which made every scan one
	// paragraph of one line).
	boxes, err := l.client.GetBoundingBoxesVerbose()
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
