package ocr

import "boxd/engine/raster"

// Word is one word Tesseract read, in the raster's pixels.
type Word struct {
	Text        string
	Box         raster.Box
	Conf        float64 // 0 to 100
	Block, Para int
	Line        int
}

// Page is Tesseract's reading of a raster turned upright.
type Page struct {
	Words    []Word
	Rotation int // degrees the raster was turned clockwise
	Upright  *raster.Image
}

// RegionScale is how much finer than the page a region is read: twice
// (288 DPI for a page at 144: table type is small). RegionMargin pads
// the region, in page pixels.
const (
	RegionScale  = 2
	RegionMargin = 6
)
