// Package form is the form filler's hands on the page: it reads a form
// loaded in a browser tab (its fields, each with its kind and the secret
// it asks for, and its text, from which it flags what is aimed at AI
// agents), and types values into it with every request held. It decides
// nothing: package fill decides what is typed.
package form

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/internal/problem"
	"boxd/pipelines/fill/rules"
	"boxd/pipelines/fill/rules/inject"
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
	// LabelFlagged: the label is (in) page text that Flags flags (a
	// label hidden from the person that instructs an agent).
	LabelFlagged bool `json:"-"`
}

// Segment is a piece of the page's text and where it was.
type Segment struct {
	Text     string `json:"text"`
	Where    string `json:"where"` // inject.InVisibleText, inject.InHiddenText, inject.InAttribute, inject.InComment
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
  // Why a text node cannot be seen ("" when it can): not displayed,
  // visibility hidden, transparent (the element or an ancestor, or the
  // text's colour), clipped to nothing, in a closed details element,
  // not rendered, zero size, tiny text, off screen (the text itself:
  // text-indent and transforms count), or the colour of its background
  // (or nearly). A select's options are seen when it opens.
  const rgba = (c) => { const m = (c || "").match(/rgba?\(([^)]+)\)/); if (!m) return null; const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(parseFloat); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const hiddenWhy = (node) => {
    const el = node.parentElement;
    if (el.closest("select, option, optgroup, datalist")) return "";
    const closed = el.closest("details:not([open])");
    if (closed && !el.closest("summary")) return "in a closed details element";
    let opacity = 1;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (e.hidden || cs.display === "none") return "not displayed";
      if (cs.visibility === "hidden" || cs.visibility === "collapse") return "visibility hidden";
      opacity *= parseFloat(cs.opacity);
      if (opacity < 0.1) return "transparent";
      if ((cs.overflow === "hidden" || cs.overflowX === "hidden" || cs.overflowY === "hidden" || cs.clip !== "auto" || cs.clipPath !== "none") && (e.offsetWidth <= 1 || e.offsetHeight <= 1)) return "zero size";
      if (/inset\(\s*(4[5-9]|[5-9]\d|\d{3})%|circle\(\s*0/.test(cs.clipPath) || /rect\(\s*0(px)?[ ,]+0(px)?[ ,]+0(px)?[ ,]+0(px)?\s*\)/.test(cs.clip)) return "clipped to nothing";
    }
    if (el.checkVisibility && !el.checkVisibility()) return "not rendered";
    const cs = getComputedStyle(el);
    if (parseFloat(cs.fontSize) < 3) return "tiny text";
    const range = document.createRange();
    range.selectNodeContents(node);
    const r = range.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return "zero size";
    if (r.right < 0 || r.bottom < 0 || r.left > 20000 || r.top > 50000) return "off screen";
    const fg = rgba(cs.color);
    if (fg && fg.a < 0.1) return "transparent text";
    let bg = null;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) { const b = rgba(getComputedStyle(e).backgroundColor); if (b && b.a > 0) { bg = b; break; } }
    if (!bg) bg = {r: 255, g: 255, b: 255, a: 1};
    if (fg && Math.max(Math.abs(fg.r - bg.r), Math.abs(fg.g - bg.g), Math.abs(fg.b - bg.b)) <= 16) return "same colour as its background";
    return "";
  };
  // blockOf is the box a text runs in: its nearest ancestor that is not
  // inline (or not displayed): text split over inline elements
  // ("<b>AI agents:</b> choose ...") reads as one segment.
  const blockOf = (el) => {
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const d = getComputedStyle(e).display;
      if (!(d.startsWith("inline") || d === "contents")) return e;
    }
    return document.documentElement;
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
  // Text nodes in one block, at one place, run together until a field,
  // a label, a line break or another block starts.
  let cur = null;
  const flush = () => { if (cur) { segments.push({text: clean(cur.parts.join(" ")), where: cur.where, selector: sel(cur.el), why: cur.why}); cur = null; } };
  const breaks = new Set(["INPUT", "SELECT", "TEXTAREA", "BUTTON", "BR", "HR", "IMG", "LABEL", "OPTION", "LI", "TD", "TH", "TR", "SCRIPT", "STYLE", "TEMPLATE"]);
  const walk = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT | NodeFilter.SHOW_COMMENT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    if (node.nodeType === Node.ELEMENT_NODE) { if (breaks.has(node.tagName)) flush(); continue; }
    const text = clean(node.textContent);
    if (!text) continue;
    const el = node.parentElement;
    if (node.nodeType === Node.COMMENT_NODE) { flush(); segments.push({text, where: "comment", selector: el ? sel(el) : ""}); continue; }
    if (!el || ["SCRIPT", "STYLE", "TEMPLATE"].includes(el.tagName)) continue;
    if (el.closest("head") && el.tagName !== "TITLE") continue;
    if (el.tagName === "TITLE") { flush(); segments.push({text, where: "visible text", selector: sel(el), why: ""}); continue; }
    const why = hiddenWhy(node);
    const where = why ? "hidden text" : "visible text";
    const block = blockOf(el);
    if (cur && cur.block === block && cur.where === where && cur.why === why) { cur.parts.push(text); continue; }
    flush();
    cur = {block, where, why, el, parts: [text]};
  }
  flush();
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

// Bounds of a form the filler reads, which bound the run's signed record
// (one entry per field and per flag): its inputs, selects and textareas
// (a form of 13,000 inputs failed its scan with 500), the texts aimed at
// AI agents it flags (each one the person must acknowledge), a select's
// options, the bytes of what names a field (its name, id, autocomplete,
// selector, an option's value: typed and signed as they are, so a form
// over them is refused, 413), and the characters of a label, an option's
// text and a flag's selector (shown and signed: cut, ending in "…").
const (
	MaxFields     = 500
	MaxFlags      = 100
	MaxOptions    = 1000
	MaxAttrBytes  = 1000
	MaxLabelRunes = 200
)

// Scan reads the tab's form: its fields (each given its kind and, when it
// asks for one, its secret) and its text, from which Flags picks what is
// aimed at AI agents. A form over MaxFields controls is refused (413)
// before it is read, one over MaxFlags texts aimed at agents (422) after.
func Scan(ctx context.Context, tab *browser.Tab) ([]Field, []Segment, error) {
	n, err := chromedp.Run(tab.Context(), chromedp.Evaluate[int](`document.querySelectorAll("input, select, textarea").length`))
	if err != nil {
		return nil, nil, fmt.Errorf("fill: count the form's fields: %w", err)
	}
	if n > MaxFields {
		return nil, nil, problem.New(problem.TooLarge, "the form has %d inputs, selects and textareas; at most %d are read per form: split the form", n, MaxFields)
	}
	got, err := chromedp.Run(tab.Context(), chromedp.Evaluate[struct {
		Fields   []Field   `json:"fields"`
		Segments []Segment `json:"segments"`
	}](scanJS))
	if err != nil {
		return nil, nil, fmt.Errorf("fill: read the form: %w", err)
	}
	flags := Flags(got.Segments)
	if len(flags) > MaxFlags {
		return nil, nil, problem.New(problem.Unprocessable, "the page has %d texts aimed at AI agents; at most %d are listed per form for a person to acknowledge, and a page with more is refused", len(flags), MaxFlags)
	}
	if err := fieldsWithinBounds(got.Fields); err != nil {
		return nil, nil, err
	}
	for i := range got.Fields {
		f := &got.Fields[i]
		f.Secret = rules.FieldSecret(f.Type, f.Label, f.Name, f.ID, f.Autocomplete)
		f.Kind = Kind(*f)
		for _, fl := range flags {
			if t := strings.TrimSuffix(fl.Text, "…"); t != "" && strings.Contains(f.Label, t) {
				f.LabelFlagged = true
			}
		}
		f.Label = cutRunes(f.Label, MaxLabelRunes)
		for k := range f.Options {
			f.Options[k].Text = cutRunes(f.Options[k].Text, MaxLabelRunes)
		}
	}
	return got.Fields, got.Segments, ctx.Err()
}

// fieldsWithinBounds refuses (413) a form with a field named by more than
// MaxAttrBytes, or a select of more than MaxOptions options.
func fieldsWithinBounds(fields []Field) error {
	for _, f := range fields {
		if len(f.Options) > MaxOptions {
			return problem.New(problem.TooLarge, "field %s has %d options; at most %d are read per field", f.FID, len(f.Options), MaxOptions)
		}
		attrs := []struct{ what, v string }{{"name", f.Name}, {"id", f.ID}, {"autocomplete", f.Autocomplete}, {"selector", f.Selector}}
		for _, o := range f.Options {
			attrs = append(attrs, struct{ what, v string }{"option value", o.Value})
		}
		for _, a := range attrs {
			if len(a.v) > MaxAttrBytes {
				return problem.New(problem.TooLarge, "field %s's %s is %d bytes; at most %d are read", f.FID, a.what, len(a.v), MaxAttrBytes)
			}
		}
	}
	return nil
}

// cutRunes is s cut to max characters, the last "…" when it was cut.
func cutRunes(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// Flags are the segments aimed at AI agents, numbered from 1 (the person
// acknowledges them by number).
func Flags(segs []Segment) []Flag {
	var out []Flag
	for _, s := range segs {
		ok, why := inject.AimedAtAgents(s.Text, s.Where)
		if !ok {
			continue
		}
		text := s.Text
		if r := []rune(text); len(r) > 200 {
			text = string(r[:200]) + "…"
		}
		s.Selector = cutRunes(s.Selector, MaxLabelRunes)
		if s.Where == inject.InHiddenText {
			why += " (hidden: " + hiddenReason(s) + ")"
		}
		out = append(out, Flag{N: len(out) + 1, Where: s.Where, Selector: s.Selector, Text: text, Why: why})
	}
	return out
}

func hiddenReason(s Segment) string { return strings.TrimSpace(s.Why) }
