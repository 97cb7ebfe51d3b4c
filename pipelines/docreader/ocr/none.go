//go:build boxd_noocr

package ocr

import (
	"context"
	"errors"

	"boxd/pipelines/docreader/raster"
)

// A build with the boxd_noocr tag has no Tesseract: the GPU-check bundle
// runs on machines without libtesseract and leptonica, and measures
// nothing OCR does. Every call says so; the document reader answers 503
// for pages that need OCR, as on a box without tesseract-ocr-eng.

// ErrNoOCR is what every call of this build returns.
var ErrNoOCR = errors.New("tesseract: this boxd was built without OCR (the boxd_noocr tag, for the GPU check)")

// OCR is absent in this build.
type OCR struct{}

// New says this build has no OCR.
func New() (*OCR, error) { return nil, ErrNoOCR }

// Version is empty.
func (o *OCR) Version() string { return "" }

// Close does nothing.
func (o *OCR) Close() {}

// Read says this build has no OCR.
func (o *OCR) Read(*raster.Image) ([]Word, error) { return nil, ErrNoOCR }

// ReadRegion says this build has no OCR.
func (o *OCR) ReadRegion(_, _ *raster.Image, _ raster.Box, _ int) ([]Word, error) {
	return nil, ErrNoOCR
}

// ReadBlock says this build has no OCR.
func (o *OCR) ReadBlock(_, _ *raster.Image, _ raster.Box, _ int) ([]Word, error) {
	return nil, ErrNoOCR
}

// ReadUpright says this build has no OCR.
func (o *OCR) ReadUpright(context.Context, *raster.Image) (*Page, error) { return nil, ErrNoOCR }
