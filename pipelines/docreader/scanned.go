package docreader

import (
	"boxd/engine/raster"
	"boxd/pipelines/docreader/checkbox"
	"boxd/pipelines/docreader/forms"
	"boxd/pipelines/docreader/ocr"
	"context"
)

// scannedFields adds a scanned page's check boxes to its layout fields,
// dropping the "Label: value" fields read across a line of boxes (OCR
// reads the boxes as letters). A page read from its text layer has no
// scan, and its fields are returned as they are.
func (rd *reader) scannedFields(ctx context.Context, p *Page, layout []Field) []Field {
	if p.Source != PageOCR || rd.scan == nil {
		return layout
	}
	boxes := checkbox.Find(rd.scan.Upright)
	if len(boxes) == 0 {
		return layout
	}
	var out []Field
	for _, f := range layout {
		fb := raster.Box{X0: float64(f.BBox[0]), Y0: float64(f.BBox[1]), X1: float64(f.BBox[0] + f.BBox[2]), Y1: float64(f.BBox[1] + f.BBox[3])}
		crossed := false
		for _, b := range boxes {
			if min(fb.X1, b.Box.X1) > max(fb.X0, b.Box.X0) && min(fb.Y1, b.Box.Y1) > max(fb.Y0, b.Box.Y0) {
				crossed = true
			}
		}
		if !crossed {
			out = append(out, f)
		}
	}
	img := rd.scan.Upright
	reread := func(b raster.Box) []ocr.Word {
		ws, err := rd.ocr.ReadBlock(ctx, img, nil, b, int(Scale*72))
		if err != nil {
			return nil
		}
		return ws
	}
	return append(out, forms.Checkboxes(p, boxes, rd.scan.Words, reread)...)
}
