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
//   - tabindex (best practice in axe-core): an element whose positive
//     tabindex moves it in the tab order away from the document's order
//     fails WCAG 2.4.3 (Focus Order; F44), so the rule gets the criterion's
//     tags and keeps those elements; when no positive tabindex changes
//     the order, the rule stays best practice.
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
		case "tabindex":
			err = tabOrder(tab, r)
		}
		if err != nil {
			return fmt.Errorf("axe: refine %s: %w", r.Rule, err)
		}
	}
	return nil
}

// Corrected are the rules whose answers refine corrects.
var Corrected = []string{"scrollable-region-focusable", "html-has-lang", "html-lang-valid", "frame-focusable-content", "tabindex"}

// tabOrder keeps the tabindex rule's elements whose positive tabindex
// changes where they come in the tab order (their place among the
// page's visible focusable elements sorted as the browser tabs through
// them, positive tabindex first by value, differs from their place in
// the document), and ties them to 2.4.3.
func tabOrder(tab *browser.Tab, r *Result) error {
	if r.Outcome != Violation {
		return nil
	}
	arg, err := nodeSelectors(r)
	if err != nil {
		return err
	}
	moved, err := chromedp.Run(tab.Context(), chromedp.Evaluate[[]bool](`((sels) => {
  const focusable = [...document.querySelectorAll("a[href], area[href], button, input, select, textarea, iframe, summary, [tabindex], [contenteditable]")].filter(el =>
    el.tabIndex >= 0 && !el.disabled && el.type !== "hidden" && !el.closest("[inert]") && el.getClientRects().length && getComputedStyle(el).visibility === "visible");
  const tabbed = focusable.map((el, i) => [el, i]).sort((a, b) => {
    const ka = a[0].tabIndex > 0 ? a[0].tabIndex : Infinity, kb = b[0].tabIndex > 0 ? b[0].tabIndex : Infinity;
    return ka === kb ? a[1] - b[1] : ka - kb;
  }).map(x => x[0]);
  return sels.map(sel => { const el = document.querySelector(sel);
    return !!el && el.tabIndex > 0 && focusable.indexOf(el) >= 0 && focusable.indexOf(el) !== tabbed.indexOf(el); });
})(`+string(arg)+`)`))
	if err != nil {
		return err
	}
	var nodes []Node
	for i, n := range r.Nodes {
		if i < len(moved) && moved[i] {
			n.Summary = "Fix the following:\n  Its positive tabindex takes it out of the document's order: Tab reaches it before elements that come first on the page"
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	r.Nodes = nodes
	r.Tags = append(r.Tags, "wcag2a", "wcag243")
	return nil
}

func scrollRegions(tab *browser.Tab, r *Result) error {
	if r.Outcome != Violation {
		return nil
	}
	arg, err := nodeSelectors(r)
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

// nodeSelectors are a result's elements as a JSON array of selectors
// (each node's innermost document's; ":not(*)", which finds nothing, for
// a node with none), the
// argument of the refining scripts, in the nodes' order.
func nodeSelectors(r *Result) ([]byte, error) {
	sels := make([]string, 0, len(r.Nodes))
	for _, n := range r.Nodes {
		sel := ":not(*)"
		if len(n.Target) > 0 {
			sel = n.Target[len(n.Target)-1]
		}
		sels = append(sels, sel)
	}
	return json.Marshal(sels)
}
