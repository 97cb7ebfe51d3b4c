package a11y

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	_ "image/png" // screenshots

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/pipelines/a11y/axe"
	"boxd/pipelines/a11y/contrast"
)

// maxMeasured bounds the elements measured per page.
const maxMeasured = 40

// measureContrast measures, from the rendered pixels, the text contrast of
// the elements the rule engine could not decide (color-contrast "needs
// review"), keyed by the node's selector as findings name it.
func measureContrast(tab *browser.Tab, rules []axe.Result) (map[string]contrast.Measured, error) {
	var sels []string
	for _, r := range rules {
		if r.Rule != "color-contrast" || r.Outcome != axe.NeedsReview {
			continue
		}
		for _, n := range r.Nodes {
			if len(n.Target) == 1 && len(sels) < maxMeasured { // not inside a frame
				sels = append(sels, n.Target[0])
			}
		}
	}
	out := map[string]contrast.Measured{}
	if len(sels) == 0 {
		return out, nil
	}
	arg, err := json.Marshal(sels)
	if err != nil {
		return nil, err
	}
	type box struct {
		X, Y, W, H float64
		Font       float64 `json:"font"`
		Weight     int     `json:"weight"`
		Found      bool    `json:"found"`
	}
	// The box of the element's text (a range over its contents), in page
	// coordinates.
	boxes, err := chromedp.Run(tab.Context(), chromedp.Evaluate[[]box](`((sels) => sels.map(sel => {
  const el = document.querySelector(sel); if (!el) return {found: false};
  const range = document.createRange(); range.selectNodeContents(el);
  const r = range.getBoundingClientRect(), cs = getComputedStyle(el);
  return {found: r.width > 0 && r.height > 0, X: r.left + scrollX, Y: r.top + scrollY, W: r.width, H: r.height,
    font: parseFloat(cs.fontSize) || 16, weight: parseInt(cs.fontWeight, 10) || 400};
}))(`+string(arg)+`)`))
	if err != nil {
		return nil, fmt.Errorf("a11y: contrast boxes: %w", err)
	}
	beyond := true
	for i, b := range boxes {
		if !b.Found || b.W*b.H > 800*400 {
			continue // gone, or too large to be one run of text
		}
		shot, err := chromedp.Call(tab.Context(), page.CaptureScreenshot, page.CaptureScreenshotParams{
			Clip: &page.Viewport{X: b.X, Y: b.Y, Width: b.W, Height: b.H, Scale: 1}, CaptureBeyondViewport: &beyond})
		if err != nil {
			return nil, fmt.Errorf("a11y: contrast screenshot: %w", err)
		}
		img, _, err := image.Decode(bytes.NewReader(shot.Data))
		if err != nil {
			return nil, fmt.Errorf("a11y: contrast screenshot: %w", err)
		}
		fg, bg, ratio, share, ok := contrast.Measure(img)
		if !ok {
			continue
		}
		out[sels[i]] = contrast.Measured{Selector: sels[i], FG: contrast.Hex(fg), BG: contrast.Hex(bg), Ratio: float64(int(ratio*100)) / 100,
			Required: contrast.Required(b.Font, b.Weight), Background: float64(int(share*100)) / 100}
	}
	return out, nil
}
