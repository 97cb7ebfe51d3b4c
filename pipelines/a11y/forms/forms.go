// Package forms is the accessibility audit's form pass: every form's
// fields checked for labels and marked requirements, then the form
// submitted empty, its submission held in the browser (never sent), to
// see whether its errors are announced, tied to their fields, and say
// what is wrong.
package forms

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
)

// Field is one field of a form as the pass found it.
type Field struct {
	Selector string `json:"selector"`
	Type     string `json:"type"`
	Name     string `json:"name"`
	// Label is the field's accessible label ("" when it has none: no
	// label element, aria-label, aria-labelledby or title).
	Label string `json:"label"`
	// Required: required or aria-required; RequiredMarked: the label (or
	// what it points to) says so to a reader ("*", "required").
	Required       bool `json:"required"`
	RequiredMarked bool `json:"required_marked"`
	// After the empty submission: Invalid (aria-invalid or :invalid),
	// Error (its message: the text aria-describedby or aria-errormessage
	// name, or the browser's own validation message), ErrorTied (the
	// message is tied to the field by those attributes, not just near it).
	Invalid   bool   `json:"invalid"`
	Error     string `json:"error"`
	ErrorTied bool   `json:"error_tied"`
}

// Form is one form.
type Form struct {
	Selector string  `json:"selector"`
	Fields   []Field `json:"fields"`
	// Announced: after the empty submission, a live region (role alert or
	// status, aria-live) holds text, or focus moved to an error.
	Announced bool `json:"announced"`
	// NativeBlocked: the browser's own validation stopped the
	// submission (required fields without novalidate).
	NativeBlocked bool `json:"native_blocked"`
	// Sent: the empty form tried to leave (a request the browser held),
	// so nothing stopped an empty submission.
	Sent bool `json:"sent"`
}

// scan reads the forms and their fields; submit submits one form empty
// and reads what it shows.
const scan = `(() => {
  const sel = ` + browser.SelectorJS + `;
  const text = (ids) => (ids || "").split(/\s+/).filter(Boolean).map(id => { const e = document.getElementById(id); return e ? e.textContent.trim() : ""; }).filter(Boolean).join(" ");
  const label = (f) => { if (f.getAttribute("aria-labelledby")) return text(f.getAttribute("aria-labelledby"));
    if (f.getAttribute("aria-label")) return f.getAttribute("aria-label").trim();
    if (f.labels && f.labels.length) return [...f.labels].map(l => l.textContent.trim()).join(" ");
    return (f.getAttribute("title") || "").trim(); };
  return [...document.forms].map(form => ({selector: sel(form), fields: [...form.elements].filter(f => !["submit","button","reset","hidden","fieldset"].includes(f.type) && f.tagName !== "FIELDSET" && f.tagName !== "BUTTON").map(f => {
    const l = label(f), req = f.required || f.getAttribute("aria-required") === "true";
    return {selector: sel(f), type: f.type || f.tagName.toLowerCase(), name: f.name || "", label: l, required: req,
      required_marked: req && /\*|required|mandatory/i.test(l + " " + text(f.getAttribute("aria-describedby")))};
  })}));
})()`

const submit = `(async (formSel) => {
  const form = document.querySelector(formSel);
  const live = () => [...document.querySelectorAll('[role=alert],[role=status],[aria-live]:not([aria-live=off])')].map(e => e.textContent.trim()).join(" ");
  const before = live();
  for (const f of form.elements) if ("value" in f && !["submit","button","reset","hidden","checkbox","radio"].includes(f.type)) f.value = "";
  const nativeOK = form.noValidate || form.checkValidity();
  // Held in the page: a submission no handler of the page stopped is
  // noted and stopped here, after the page's own handlers (the window
  // hears the event last), so it never navigates.
  let sent = false;
  const hold = (e) => { if (e.target === form) { sent = !e.defaultPrevented; e.preventDefault(); } };
  window.addEventListener("submit", hold);
  const btn = form.querySelector('[type=submit],button:not([type])');
  if (btn) btn.click(); else form.requestSubmit();
  await new Promise(r => setTimeout(r, 300));
  window.removeEventListener("submit", hold);
  const text = (ids) => (ids || "").split(/\s+/).filter(Boolean).map(id => { const e = document.getElementById(id); return e ? e.textContent.trim() : ""; }).filter(Boolean).join(" ");
  const after = live();
  const a = document.activeElement;
  return {sent, native_blocked: !nativeOK, announced: (after !== before && after !== "") || !!(a && a !== document.body && (a.getAttribute("role") === "alert" || a.getAttribute("aria-invalid") === "true" || /error/i.test(a.className || ""))),
    fields: [...form.elements].filter(f => !["submit","button","reset","hidden","fieldset"].includes(f.type) && f.tagName !== "FIELDSET" && f.tagName !== "BUTTON").map(f => { const tied = text(f.getAttribute("aria-describedby")) + " " + text(f.getAttribute("aria-errormessage"));
      const invalid = f.getAttribute("aria-invalid") === "true" || (f.matches && f.matches(":invalid"));
      return {invalid, error: (tied.trim() || f.validationMessage || "").trim(), error_tied: invalid && tied.trim() !== ""}; })};
})`

// Pass checks every form on the tab's page and submits each empty, its
// submission held twice: in the page (a submission no handler stopped is
// stopped after them, so the page stays), and in the browser (every
// request refused while the form is tried, as a script's own fetch).
func Pass(ctx context.Context, tab *browser.Tab) ([]Form, error) {
	c := tab.Context()
	forms, err := chromedp.Run(c, chromedp.Evaluate[[]Form](scan))
	if err != nil {
		return nil, fmt.Errorf("forms: %w", err)
	}
	for i := range forms {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f := &forms[i]
		tab.Hold()
		before := len(tab.Refused())
		type fieldAfter struct {
			Invalid   bool   `json:"invalid"`
			Error     string `json:"error"`
			ErrorTied bool   `json:"error_tied"`
		}
		after, err := chromedp.Run(c, chromedp.Evaluate[struct {
			Sent          bool         `json:"sent"`
			NativeBlocked bool         `json:"native_blocked"`
			Announced     bool         `json:"announced"`
			Fields        []fieldAfter `json:"fields"`
		}](submit+fmt.Sprintf("(%q)", f.Selector), chromedp.EvalAwaitPromise))
		// A submission that left navigates: give the held request a moment.
		time.Sleep(100 * time.Millisecond)
		for _, r := range tab.Refused()[before:] {
			f.Sent = f.Sent || r.Sends()
		}
		tab.Release()
		if err != nil {
			if f.Sent {
				continue // the page went away with the held submission
			}
			return nil, fmt.Errorf("forms: submit %s: %w", f.Selector, err)
		}
		f.Sent = f.Sent || after.Sent
		f.NativeBlocked, f.Announced = after.NativeBlocked, after.Announced
		// Both scripts list the same fields in the same order.
		for j := range f.Fields {
			if j < len(after.Fields) {
				f.Fields[j].Invalid, f.Fields[j].Error, f.Fields[j].ErrorTied = after.Fields[j].Invalid, after.Fields[j].Error, after.Fields[j].ErrorTied
			}
		}
	}
	return forms, nil
}
