package pagecheck

import (
	"fmt"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/pipelines/a11y/axe"
)

// Viewport is a tab's viewport, to lay the page out at again after the
// reflow check.
type Viewport struct {
	Width, Height int
	Mobile        bool
}

// Reflow lays the tab's page out at ReflowWidth CSS pixels wide (a
// desktop browser zoomed to 400%), measures whether the document then
// scrolls sideways, and names the widest element that makes it (WCAG
// 1.4.10): content WCAG exempts (data tables, images, video, maps and
// other drawings, code, toolbars) and what scrolls inside its own
// container do not count. The tab goes back to back afterwards, even
// when the measurement fails.
func Reflow(tab *browser.Tab, back Viewport) (res axe.Result, err error) {
	set := func(w, h int, mobile bool) error {
		_, err := chromedp.Call(tab.Context(), emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: int64(w), Height: int64(h), DeviceScaleFactor: 1, Mobile: mobile})
		return err
	}
	if err := set(ReflowWidth, back.Height, false); err != nil {
		return axe.Result{}, fmt.Errorf("pagecheck: lay the page out %d px wide: %w", ReflowWidth, err)
	}
	defer func() {
		if e := set(back.Width, back.Height, back.Mobile); e != nil && err == nil {
			err = fmt.Errorf("pagecheck: lay the page out %d px wide again: %w", back.Width, e)
		}
	}()
	type measured struct {
		Viewport int        `json:"viewport"`
		Scroll   int        `json:"scroll"`
		Nodes    []axe.Node `json:"nodes"`
	}
	m, err := chromedp.Run(tab.Context(), chromedp.Evaluate[measured](withSel(reflowJS), chromedp.EvalAwaitPromise))
	if err != nil {
		return axe.Result{}, fmt.Errorf("pagecheck: measure the page %d px wide: %w", ReflowWidth, err)
	}
	return result(RuleReflow, m.Nodes, "serious", []string{"cat.structure", "wcag21aa", "wcag1410"},
		fmt.Sprintf("Content must fit %d CSS pixels wide without scrolling sideways", ReflowWidth),
		fmt.Sprintf("Laid out %d CSS pixels wide (a 1280 px window zoomed to 400%%, or a small phone), the page is %d px wide, so a person who zooms must scroll sideways for every line. (Found by boxd's reflow check.)", ReflowWidth, m.Scroll)), nil
}

// reflowJS measures the document at the current width (after two frames,
// so the new layout is drawn) and finds what sticks out past the
// viewport: the widest element that is not exempt and not held inside a
// container that clips or scrolls it.
const reflowJS = `(async () => {
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const se = document.scrollingElement || document.documentElement;
  const vw = se.clientWidth, scroll = se.scrollWidth;
  const out = {viewport: vw, scroll, nodes: []};
  if (scroll <= vw + 1) return out;
  // A viewport that clips instead of scrolling (overflow-x: hidden on
  // html, or on body propagated to it) is not judged here.
  const ho = getComputedStyle(document.documentElement).overflowX, bo = document.body ? getComputedStyle(document.body).overflowX : "visible";
  if ((ho !== "visible" ? ho : bo) === "hidden" || (ho !== "visible" ? ho : bo) === "clip") return out;
  const exempt = "table:not([role=presentation]):not([role=none]), pre, code, samp, kbd, img, picture, svg, video, canvas, iframe, object, embed, math, map, [role=toolbar], [role=application], [role=img], [role=grid], [role=treegrid]";
  const clipped = (el) => {
    for (let p = el.parentElement; p && p !== document.body && p !== document.documentElement; p = p.parentElement) {
      const ox = getComputedStyle(p).overflowX;
      if (ox !== "visible" && p.getBoundingClientRect().right <= vw + 1) return true;
    }
    return false;
  };
  let best = null, bestW = 0;
  for (const el of document.body.querySelectorAll("*")) {
    const b = el.getBoundingClientRect();
    if (b.right <= vw + 1 || b.width <= 0 || b.height <= 0) continue;
    const cs = getComputedStyle(el);
    if (cs.position === "fixed" || cs.visibility === "hidden" || el.closest(exempt) || clipped(el)) continue;
    if (b.width > bestW + 0.5) { best = el; bestW = b.width; }
  }
  // One that fits the viewport but is pushed out (a third column) is
  // named by its nearest container whose content does not fit (the grid).
  if (best && bestW <= vw + 1) {
    for (let p = best.parentElement; p && p !== document.body && p !== document.documentElement; p = p.parentElement) {
      if (p.scrollWidth > p.clientWidth + 1) { best = p; bestW = p.scrollWidth; break; }
    }
  }
  if (best) out.nodes.push({target: [sel(best)], html: tagOf(best),
    failure_summary: "Fix the following:\n  At " + vw + " CSS px wide this element is " + Math.round(bestW) + " px wide (the page scrolls to " + scroll + " px)"});
  return out;
})()`
