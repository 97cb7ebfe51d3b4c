// Package contrast measures the contrast of rendered text from a
// screenshot's pixels, for the elements the rule engine could not decide
// (text over a background image or a gradient, behind a pseudo-element,
// under an overlapping box: axe-core answers "needs review" there). The
// element's pixels are grouped into colours; the most common is the
// background, and the text is the colour, among those covering a real
// share of the element, that differs most from it in luminance. The ratio
// is WCAG 2's: (L1 + 0.05) / (L2 + 0.05) of relative luminances.
package contrast

import (
	"fmt"
	"image"
	"image/color"
	"math"
)

// Measured is one element's measurement.
type Measured struct {
	Selector string  `json:"selector"`
	FG       string  `json:"fg"` // #rrggbb
	BG       string  `json:"bg"`
	Ratio    float64 `json:"ratio"`
	Required float64 `json:"required"` // 4.5, or 3 for large text
	// Background says how uniform the background was: the share of the
	// element's pixels in its most common colour.
	Background float64 `json:"background_share"`
}

// Passes says whether the measured ratio meets the requirement.
func (m Measured) Passes() bool { return m.Ratio >= m.Required }

// Luminance is a colour's relative luminance (WCAG 2).
func Luminance(c color.RGBA) float64 {
	lin := func(v uint8) float64 {
		s := float64(v) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.R) + 0.7152*lin(c.G) + 0.0722*lin(c.B)
}

// Ratio is the contrast ratio of two colours, at least 1.
func Ratio(a, b color.RGBA) float64 {
	la, lb := Luminance(a), Luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// Required is WCAG 1.4.3's minimum for text of this size (CSS pixels)
// and weight: large text (24 px, or 18.66 px bold) needs 3:1, other text
// 4.5:1.
func Required(fontPx float64, weight int) float64 {
	if fontPx >= 24 || (fontPx >= 18.66 && weight >= 700) {
		return 3
	}
	return 4.5
}

// Hex writes a colour as #rrggbb.
func Hex(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// Measure finds img's background and text colours and their ratio; ok is
// false when the pixels hold no second colour (no text drawn).
func Measure(img image.Image) (fg, bg color.RGBA, ratio, bgShare float64, ok bool) {
	type bin struct {
		n       int
		r, g, b int
	}
	bins := map[uint16]*bin{}
	b := img.Bounds()
	total := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			k := uint16(c.R>>4)<<8 | uint16(c.G>>4)<<4 | uint16(c.B>>4)
			e := bins[k]
			if e == nil {
				e = &bin{}
				bins[k] = e
			}
			e.n++
			e.r += int(c.R)
			e.g += int(c.G)
			e.b += int(c.B)
			total++
		}
	}
	if total == 0 {
		return fg, bg, 0, 0, false
	}
	mean := func(e *bin) color.RGBA {
		return color.RGBA{uint8(e.r / e.n), uint8(e.g / e.n), uint8(e.b / e.n), 255}
	}
	var top *bin
	for _, e := range bins {
		if top == nil || e.n > top.n {
			top = e
		}
	}
	bg = mean(top)
	// Text: a colour that covers a real share of the element (anti-aliased
	// edges are many colours of a few pixels each), the farthest from the
	// background in luminance.
	floor := max(6, total/200)
	best := 0.0
	for _, e := range bins {
		if e == top || e.n < floor {
			continue
		}
		if r := Ratio(mean(e), bg); r > best {
			best, fg = r, mean(e)
		}
	}
	if best == 0 {
		return fg, bg, 0, float64(top.n) / float64(total), false
	}
	return fg, bg, best, float64(top.n) / float64(total), true
}
