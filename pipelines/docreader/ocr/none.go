//go:build boxd_noocr

package ocr

import (
	"context"
	"errors"

	"boxd/engine/raster"
)

// A build with the boxd_noocr tag has no Tesseract: the GPU-check bundle
// runs on machines without libtesseract and leptonica, and measures
// nothing OCR does. Every call says so; the document reader answers 503
// for pages that need OCR, as on a box without tesseract-ocr-eng.

// ErrNoOCR is what every call of this build returns.
var ErrNoOCR = errors.New("tesseract: this boxd was built without OCR (the boxd_noocr tag, for the GPU check)")

// Local is absent in this build.
type Local struct{}

// New says this build has no OCR.
func New() (*OCR, error) { return nil, ErrNoOCR }

// NewLocal says this build has no OCR.
func NewLocal() (*Local, error) { return nil, ErrNoOCR }

// Version is empty.
func (l *Local) Version() string { return "" }

// Close does nothing.
func (l *Local) Close() {}

// Recognize says this build has no OCR.
func (l *Local) Recognize(context.Context, *raster.Image, Mode, int) ([]Word, error) {
	return nil, ErrNoOCR
}
