// Package pagecheck holds boxd's own rules, run in the audited page next
// to the rule engine's (axe-core) for what it passes: alt text that is a
// file name or a placeholder (1.1.1), links whose text and programmatic
// context say nothing of where they go (2.4.4), and content that needs
// horizontal scrolling at 320 CSS pixels wide (1.4.10). Their answers
// are shaped as the rule engine's (axe.Result), with WCAG tags, so that
// findings.Build ranks and names them as it does the engine's.
package pagecheck

import (
	"fmt"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/pipelines/a11y/axe"
)

// Rule ids of the checks (prefixed so that they never clash with the
// engine's).
const (
	RuleAltPlaceholder = "boxd-alt-placeholder"
	RuleLinkPurpose    = "boxd-link-purpose"
	RuleReflow         = "boxd-reflow"
)

// ReflowWidth is the width WCAG 1.4.10 asks content to fit without
// horizontal scrolling (1280 CSS px at 400% zoom).
const ReflowWidth = 320

// Run runs the alt text and link purpose checks on the tab's page: one
// result each, a violation with its elements or a pass.
func Run(tab *browser.Tab) ([]axe.Result, error) {
	type found struct {
		Alt   []axe.Node `json:"alt"`
		Links []axe.Node `json:"links"`
	}
	f, err := chromedp.Run(tab.Context(), chromedp.Evaluate[found](withSel(contentJS)))
	if err != nil {
		return nil, fmt.Errorf("pagecheck: alt text and links: %w", err)
	}
	alt := result(RuleAltPlaceholder, f.Alt, "serious", []string{"cat.text-alternatives", "wcag2a", "wcag111"},
		"Images must not have a file name or a placeholder as their text alternative",
		"An image's text alternative that is a file name (IMG_2041.jpg) or a placeholder (\"image\", \"product image\") tells a screen reader user nothing of what the image shows. (Found by boxd's alt text check.)")
	links := result(RuleLinkPurpose, f.Links, "serious", []string{"cat.name-role-value", "wcag2a", "wcag244"},
		"Links must say where they go, in their text or their context",
		"The link's text (\"click here\", \"read more\") says nothing of where it goes, and neither do its description, its sentence, paragraph, list item or table cell, nor the heading before it: a screen reader user listing the page's links hears only the generic text. (Found by boxd's link purpose check.)")
	return []axe.Result{alt, links}, nil
}

func result(rule string, nodes []axe.Node, impact string, tags []string, help, desc string) axe.Result {
	r := axe.Result{Rule: rule, Outcome: axe.Passed, Help: help, Description: desc, Tags: tags,
		HelpURL: "https://www.w3.org/WAI/WCAG22/Understanding/", Nodes: []axe.Node{}}
	if len(nodes) > 0 {
		r.Outcome, r.Impact, r.Nodes = axe.Violation, impact, nodes
	}
	r.WCAG = axe.Criteria(tags)
	return r
}

// withSel wraps expr in a function that defines selectorJS's helpers
// first (in a scope of their own: a page's global scope keeps a script's
// top-level const, so a second run would clash).
func withSel(expr string) string { return "(() => {\n" + selectorJS + "return " + expr + ";\n})()" }

// selectorJS defines sel(el): a CSS selector that finds el (its id, or
// its path of nth-child steps from the nearest ancestor with an id).
const selectorJS = `const sel = (el) => {
  const steps = [];
  for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
    if (e.id && document.querySelectorAll("#" + CSS.escape(e.id)).length === 1) { steps.unshift("#" + CSS.escape(e.id)); break; }
    if (e === document.documentElement) { steps.unshift("html"); break; }
    const i = [...e.parentElement.children].indexOf(e) + 1;
    steps.unshift(e.localName + ":nth-child(" + i + ")");
  }
  return steps.join(" > ");
};
const tagOf = (el) => { const c = el.cloneNode(false); return c.outerHTML.slice(0, 300); };
`

// contentJS finds images whose alt text is a file name or a placeholder,
// and links whose text is generic with no context that says more.
const contentJS = `(() => {
  const norm = (s) => (s || "").replace(/\s+/g, " ").trim().toLowerCase();
  const shown = (el) => !el.closest("[hidden], [aria-hidden=true], [inert]") && getComputedStyle(el).display !== "none" && getComputedStyle(el).visibility !== "hidden";
  // 1.1.1: the alt text a file name, a camera's name for a photo, or a placeholder.
  const placeholders = new Set(["image", "img", "picture", "pic", "photo", "photograph", "graphic", "product image", "product photo",
    "product picture", "banner", "banner image", "untitled", "placeholder", "image placeholder", "alt", "alt text", "spacer", "thumbnail", "insert alt text here"]);
  const fileRE = /^[^\s\/\\]+\.(jpe?g|png|gif|webp|avif|svg|bmp|tiff?|heic|ico)$/i;
  const cameraRE = /^(img|dsc|dscn|dscf|dcim|pxl|mvimg|gopr|sam|p|screenshot|photo|image|untitled)[\s_-]?\d{2,}[\w-]*$/i;
  const fileOf = (src) => { try { const p = new URL(src, document.baseURI).pathname; return decodeURIComponent(p.split("/").pop() || ""); } catch (e) { return ""; } };
  const alt = [];
  for (const el of document.querySelectorAll("img[alt], input[type=image][alt], area[alt]")) {
    if (!shown(el) || el.getAttribute("role") === "presentation" || el.getAttribute("role") === "none") continue;
    if (el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby")) continue; // named otherwise
    const a = norm(el.getAttribute("alt"));
    if (!a) continue;
    const file = norm(fileOf(el.getAttribute("src") || el.getAttribute("href") || ""));
    const stem = file.replace(/\.[a-z0-9]+$/, "");
    let why = "";
    if (placeholders.has(a.replace(/[.:!]+$/, ""))) why = "is a placeholder";
    else if (fileRE.test(a)) why = "is a file name";
    else if (cameraRE.test(a)) why = "is a camera's file name";
    else if (file && (a === file || (stem.length >= 3 && a === stem))) why = "is the image's file name";
    if (why) alt.push({target: [sel(el)], html: tagOf(el), failure_summary: "Fix the following:\n  The text alternative \"" + el.getAttribute("alt").trim().slice(0, 80) + "\" " + why + ", not a description of the image"});
  }
  // 2.4.4: generic link text, judged with its programmatic context.
  const generic = new Set(["click here", "here", "read more", "more", "learn more", "this link", "click this link", "more here", "read more here", "learn more here"]);
  const clean = (s) => norm(s).replace(/[\u2026.:!»›→>\[\]()]+/g, " ").replace(/\s+/g, " ").trim();
  const textOf = (el) => { let t = ""; for (const n of el.childNodes) {
      if (n.nodeType === 3) t += n.textContent;
      else if (n.nodeType === 1) { if (n.localName === "img" || n.getAttribute("role") === "img") t += " " + (n.getAttribute("alt") || n.getAttribute("aria-label") || "") + " ";
        else if (n.getAttribute("aria-hidden") !== "true" && n.localName !== "script" && n.localName !== "style") t += " " + textOf(n) + " "; } }
    return t; };
  const byIds = (ids) => (ids || "").split(/\s+/).filter(Boolean).map(id => document.getElementById(id)).filter(Boolean).map(e => e.textContent).join(" ");
  const nameOf = (a) => clean(a.getAttribute("aria-labelledby") ? byIds(a.getAttribute("aria-labelledby")) : (a.getAttribute("aria-label") || textOf(a)));
  // Words that say nothing of a destination: what is left of a context once they go has to name something.
  const empty = new Set(["a", "an", "the", "and", "or", "of", "to", "for", "in", "on", "at", "by", "with", "is", "are", "be", "it", "its", "this", "that",
    "these", "those", "here", "there", "click", "tap", "press", "read", "more", "learn", "find", "out", "see", "view", "link", "page", "go", "now", "today",
    "our", "your", "you", "we", "us", "don't", "dont", "do", "not", "miss", "new", "latest", "info", "information", "details", "check", "just", "all", "about",
    "get", "it's", "what's", "whats", "hot", "top", "great", "best", "stuff", "things", "something", "news", "updates", "story", "stories", "article", "articles"]);
  const says = (text) => clean(text).split(/[\s,;'"“”‘’–—\/-]+/).filter(w => w.length > 1 && !empty.has(w) && /\p{L}/u.test(w)).length >= 2;
  const headingBefore = (a) => {
    const hs = [...document.querySelectorAll("h1, h2, h3, h4, h5, h6, [role=heading]")].filter(h => h.compareDocumentPosition(a) & Node.DOCUMENT_POSITION_FOLLOWING && !h.contains(a));
    return hs.length ? hs[hs.length - 1].textContent : "";
  };
  const links = [];
  for (const a of document.querySelectorAll("a[href], [role=link]")) {
    if (!shown(a)) continue;
    const name = nameOf(a);
    if (!generic.has(name)) continue;
    const own = a.textContent;
    const parts = [byIds(a.getAttribute("aria-describedby"))];
    const ctx = a.closest("p, li, td, th, dd, dt, figcaption, blockquote, caption");
    if (ctx) parts.push(ctx.textContent.replace(own, " "));
    const cell = a.closest("td");
    if (cell) { const row = cell.parentElement, table = cell.closest("table");
      const col = [...row.children].indexOf(cell);
      const head = table && table.querySelector("thead tr, tr");
      if (head && head !== row && head.children[col]) parts.push(head.children[col].textContent);
      const rh = row.querySelector("th"); if (rh) parts.push(rh.textContent); }
    parts.push(headingBefore(a));
    if (says(parts.join(" "))) continue;
    links.push({target: [sel(a)], html: tagOf(a) + own.trim().slice(0, 80), failure_summary: "Fix the following:\n  The link's text \"" + own.trim().slice(0, 60) + "\" says nothing of where it goes, and its context does not either"});
  }
  return {alt, links};
})()`
