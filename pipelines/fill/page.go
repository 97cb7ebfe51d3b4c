package fill

import (
	"context"
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/pipelines/fill/rules"
)

// Option is one choice of a select (or a radio group).
type Option struct {
	Value string `json:"value"`
	Text  string `json:"text"`
}

// Field is one field of the form as the page shows it.
type Field struct {
	FID      string `json:"fid"`
	Selector string `json:"selector"`
	Tag      string `json:"tag"`
	Type     string `json:"type"`
	Name     string `json:"name"`
	ID       string `json:"id"`
	// Autocomplete is the field's autocomplete tokens (a form's own
	// statement of what it asks for).
	Autocomplete string `json:"autocomplete"`
	// Label is what the field is called, from (LabelFrom) its label
	// element, aria-labelledby, aria-label, placeholder, title, or the
	// text just before it.
	Label     string   `json:"label"`
	LabelFrom string   `json:"label_from"`
	Options   []Option `json:"options,omitempty"`
	Required  bool     `json:"required"`
	// Secret names the secret it asks for ("" for none); Kind is what it
	// asks for (Kinds).
	Secret string `json:"secret,omitempty"`
	Kind   string `json:"kind"`
}

// Segment is a piece of the page's text and where it was.
type Segment struct {
	Text     string `json:"text"`
	Where    string `json:"where"` // rules.InVisibleText, rules.InHiddenText, rules.InAttribute, rules.InComment
	Selector string `json:"selector"`
	Why      string `json:"why,omitempty"` // why it is hidden
}

// Flag is page text aimed at an AI agent: withheld from the model, and
// Submit stays locked until the person acknowledges it by number.
type Flag struct {
	N        int    `json:"n"`
	Where    string `json:"where"`
	Selector string `json:"selector"`
	Text     string `json:"text"`
	Why      string `json:"why"`
}

// scanJS lists the form's fields and the page's text pieces.
const scanJS = `(() => {
  const sel = ` + browser.SelectorJS + `;
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim();
  const byIds = (v) => clean((v || "").split(/\s+/).filter(Boolean).map(id => { const e = document.getElementById(id); return e ? e.textContent : ""; }).join(" "));
  // Why an element's text cannot be seen ("" when it can).
  const hiddenWhy = (el) => {
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (e.hidden || cs.display === "none") return "not displayed";
      if (cs.visibility === "hidden" || cs.visibility === "collapse") return "visibility hidden";
      if (parseFloat(cs.opacity) === 0) return "transparent";
      if (e.getAttribute("aria-hidden") === "true" && e === el) return "";
      if ((cs.overflow === "hidden" || cs.clip !== "auto" || cs.clipPath !== "none") && (e.offsetWidth <= 1 || e.offsetHeight <= 1)) return "zero size";
    }
    const cs = getComputedStyle(el);
    if (parseFloat(cs.fontSize) < 3) return "tiny text";
    const r = el.getBoundingClientRect();
    if (r.right < 0 || r.bottom < 0 || r.left > 20000 || r.top > 50000) return "off screen";
    if (cs.color === cs.backgroundColor && cs.color !== "rgba(0, 0, 0, 0)") return "same colour as its background";
    let bg = "rgba(0, 0, 0, 0)";
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) { const b = getComputedStyle(e).backgroundColor; if (b !== "rgba(0, 0, 0, 0)") { bg = b; break; } }
    if (bg === "rgba(0, 0, 0, 0)") bg = "rgb(255, 255, 255)";
    if (cs.color === bg) return "same colour as its background";
    return "";
  };
  const fields = [];
  let n = 0;
  for (const f of document.querySelectorAll("input, select, textarea")) {
    const type = f.tagName === "INPUT" ? (f.type || "text") : f.tagName.toLowerCase();
    if (["hidden", "submit", "button", "reset", "image", "file"].includes(type)) continue;
    let label = "", from = "";
    const tries = [
      ["label", () => f.labels && f.labels.length ? clean([...f.labels].map(l => { const c = l.cloneNode(true); c.querySelectorAll("select, textarea, input, button").forEach(e => e.remove()); return c.textContent; }).join(" ")) : ""],
      ["aria-labelledby", () => byIds(f.getAttribute("aria-labelledby"))],
      ["aria-label", () => clean(f.getAttribute("aria-label"))],
      ["placeholder", () => clean(f.getAttribute("placeholder"))],
      ["title", () => clean(f.getAttribute("title"))],
      ["text before", () => { let p = f.previousSibling; let t = ""; while (p && !t) { t = clean(p.textContent); p = p.previousSibling; } return t.slice(-80); }],
    ];
    for (const [k, fn] of tries) { label = fn(); if (label) { from = k; break; } }
    const options = f.tagName === "SELECT" ? [...f.options].map(o => ({value: o.value, text: clean(o.textContent)})) : [];
    fields.push({fid: "f" + (++n), selector: sel(f), tag: f.tagName.toLowerCase(), type, name: f.name || "", id: f.id || "",
      autocomplete: clean(f.getAttribute("autocomplete")), label, label_from: from, options, required: f.required || f.getAttribute("aria-required") === "true"});
  }
  const segments = [];
  const walk = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_COMMENT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    const text = clean(node.textContent);
    if (!text) continue;
    const el = node.parentElement;
    if (node.nodeType === Node.COMMENT_NODE) { segments.push({text, where: "comment", selector: el ? sel(el) : ""}); continue; }
    if (!el || ["SCRIPT", "STYLE", "TEMPLATE"].includes(el.tagName)) continue;
    if (el.closest("head") && el.tagName !== "TITLE") continue;
    const why = el.tagName === "TITLE" ? "" : hiddenWhy(el);
    segments.push({text, where: why ? "hidden text" : "visible text", selector: sel(el), why});
  }
  for (const el of document.querySelectorAll("*")) {
    for (const a of el.attributes) {
      if (!(a.name.startsWith("aria-") || a.name.startsWith("data-") || ["alt", "title", "placeholder", "content", "label"].includes(a.name) || (a.name === "value" && el.type === "hidden"))) continue;
      if (["aria-labelledby", "aria-describedby", "aria-controls", "aria-hidden", "aria-required", "aria-invalid", "aria-live", "aria-expanded", "aria-haspopup"].includes(a.name)) continue;
      const text = clean(a.value);
      if (text.length > 3) segments.push({text, where: "attribute", selector: sel(el) + "[" + a.name + "]"});
    }
  }
  return {fields, segments};
})()`

// Scan reads the tab's form: its fields (each given its kind and, when it
// asks for one, its secret) and its text, from which Flags picks what is
// aimed at AI agents.
func Scan(ctx context.Context, tab *browser.Tab) ([]Field, []Segment, error) {
	got, err := chromedp.Run(tab.Context(), chromedp.Evaluate[struct {
		Fields   []Field   `json:"fields"`
		Segments []Segment `json:"segments"`
	}](scanJS))
	if err != nil {
		return nil, nil, fmt.Errorf("fill: read the form: %w", err)
	}
	for i := range got.Fields {
		f := &got.Fields[i]
		f.Secret = rules.FieldSecret(f.Type, f.Label, f.Name, f.ID, f.Autocomplete)
		f.Kind = Kind(*f)
	}
	return got.Fields, got.Segments, ctx.Err()
}

// Flags are the segments aimed at AI agents, numbered from 1 (the person
// acknowledges them by number).
func Flags(segs []Segment) []Flag {
	var out []Flag
	for _, s := range segs {
		ok, why := rules.AimedAtAgents(s.Text, s.Where)
		if !ok {
			continue
		}
		text := s.Text
		if r := []rune(text); len(r) > 200 {
			text = string(r[:200]) + "…"
		}
		if s.Where == rules.InHiddenText {
			why += " (hidden: " + hiddenReason(s) + ")"
		}
		out = append(out, Flag{N: len(out) + 1, Where: s.Where, Selector: s.Selector, Text: text, Why: why})
	}
	return out
}

func hiddenReason(s Segment) string { return strings.TrimSpace(s.Why) }
