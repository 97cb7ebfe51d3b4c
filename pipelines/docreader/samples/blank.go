package samples

import (
	"image"
	"image/color"
)

// BlankChartPNG is a 400 × 300 PNG that looks like a chart's frame and is
// none: two grey lines, no labels, nothing the chart readers can calibrate
// (the tests of the model's readings of charts and figures).
func BlankChartPNG() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 400, 300))
	for y := range 300 {
		for x := range 400 {
			c := color.RGBA{255, 255, 255, 255}
			if x == 40 || y == 260 {
				c = color.RGBA{90, 90, 90, 255}
			}
			img.Set(x, y, c)
		}
	}
	return pngOf(img, nil)
}
