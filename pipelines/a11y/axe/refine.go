package axe

import (
	"encoding/json"
	"fmt"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
)

// refine corrects the rule engine's answers where it reads a rule's
// applicability differently from the W3C ACT rule that defines it (each
// correction is held to the ACT test cases by boxd a11y act-report):
//
//   - scrollable-region-focusable: a region counts only when it scrolls
//     further than its padding (ACT 0ssw9k); the others are dropped.
//   - html-has-lang, html-lang-valid: a document that is not an HTML page
//     (an SVG or MathML file) has no html element to test (ACT b5c3f8).
//   - frame-focusable-content: answered by boxd in the page itself (axe
//     would need its script in every frame): an iframe taken out of the
//     tab order (negative tabindex) whose document holds a visible
//     element in the tab order (ACT akn7bn); hidden and inert frames,
//     frames behind a modal dialog, and content outside the frame's
//     viewport do not count.
func refine(tab *browser.Tab, rs []Result) error {
	// (Corrected lists the same rules.)
	for i := range rs {
		r := &rs[i]
		var err error
		switch r.Rule {
		case "scrollable-region-focusable":
			err = scrollRegions(tab, r)
		case "html-has-lang", "html-lang-valid":
			err = htmlOnly(tab, r)
		case "frame-focusable-content":
			err = frameFocus(tab, r)
		}
		if err != nil {
			return fmt.Errorf("axe: refine %s: %w", r.Rule, err)
		}
	}
	return nil
}

// Corrected are the rules whose answers refine corrects.
var Corrected = []string{"scrollable-region-focusable", "html-has-lang", "html-lang-valid", "frame-focusable-content"}

func scrollRegions(tab *browser.Tab, r *Result) error {
	if r.Outcome != Violation {
		return nil
	}
	var sels []string
	for _, n := range r.Nodes {
		sels = append(sels, n.Target[len(n.Target)-1])
	}
	arg, err := json.Marshal(sels)
	if err != nil {
		return err
	}
	keep, err := chromedp.Run(tab.Context(), chromedp.Evaluate[[]bool](`((sels) => sels.map(sel => {
  const el = document.querySelector(sel); if (!el) return true;
  const cs = getComputedStyle(el), px = (v) => parseFloat(v) || 0;
  return el.scrollWidth - el.clientWidth > px(cs.paddingLeft) + px(cs.paddingRight) ||
    el.scrollHeight - el.clientHeight > px(cs.paddingTop) + px(cs.paddingBottom);
}))(`+string(arg)+`)`))
	if err != nil {
		return err
	}
	var nodes []Node
	for i, n := range r.Nodes {
		if i < len(keep) && keep[i] {
			nodes = append(nodes, n)
		}
	}
	r.Nodes = nodes
	if len(nodes) == 0 {
		r.Outcome, r.Nodes = Inapplicable, []Node{}
	}
	return nil
}

func htmlOnly(tab *browser.Tab, r *Result) error {
	html, err := chromedp.Run(tab.Context(), chromedp.Evaluate[bool](`(() => { const d = document.documentElement;
  return (document.contentType === "text/html" || document.contentType === "application/xhtml+xml") && !!d && d.namespaceURI === "http://www.w3.org/1999/xhtml" && d.localName === "html"; })()`))
	if err != nil {
		return err
	}
	if !html {
		r.Outcome, r.Nodes = Inapplicable, []Node{}
	}
	return nil
}

func frameFocus(tab *browser.Tab, r *Result) error {
	type frame struct {
		Target     string `json:"target"`
		HTML       string `json:"html"`
		Applicable bool   `json:"applicable"`
		Focusable  bool   `json:"focusable"`
	}
	fs, err := chromedp.Run(tab.Context(), chromedp.Evaluate[[]frame](`(() => {
  const modal = document.querySelector("dialog:modal");
  const sel = (el) => el.id ? "#" + CSS.escape(el.id) : "iframe:nth-of-type(" + ([...el.parentElement.children].filter(c => c.tagName === "IFRAME").indexOf(el) + 1) + ")";
  return [...document.querySelectorAll("iframe[tabindex]")].filter(f => f.tabIndex < 0).map(f => {
    const out = {target: sel(f), html: f.outerHTML.slice(0, 300), applicable: false, focusable: false};
    if (f.closest("[inert]") || (modal && !modal.contains(f)) || !f.getClientRects().length || getComputedStyle(f).visibility !== "visible") return out;
    let doc = null; try { doc = f.contentDocument; } catch (e) {}
    if (!doc) return out;
    const w = f.contentWindow;
    out.focusable = [...doc.querySelectorAll("a[href], area[href], button, input, select, textarea, iframe, summary, [tabindex], [contenteditable]")].some(el => {
      if (el.tabIndex < 0 || el.disabled || el.closest("[inert]") || el.type === "hidden") return false;
      const b = el.getBoundingClientRect();
      if (!b.width || !b.height || w.getComputedStyle(el).visibility !== "visible") return false;
      return b.right > 0 && b.bottom > 0 && b.left < w.innerWidth && b.top < w.innerHeight;
    });
    out.applicable = out.focusable;
    return out;
  });
})()`))
	if err != nil {
		return err
	}
	r.Outcome, r.Nodes = Inapplicable, []Node{}
	for _, f := range fs {
		if f.Applicable {
			r.Outcome = Violation
			r.Nodes = append(r.Nodes, Node{Target: []string{f.Target}, HTML: f.HTML,
				Summary: "Fix any of the following:\n  The iframe has tabindex=\"-1\" but its document holds elements a keyboard user must reach: remove the tabindex, or take the elements out of the tab order too"})
		}
	}
	return nil
}
