package form

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
)

// Entry is one field as Type enters it: the value to type, or the
// option to choose (by value); an entry not to fill is passed over.
type Entry struct {
	Field
	Value  string
	Fill   bool // false: the field is not touched
	Choose bool // a select's option, chosen by value
}

// Type enters the values into the page: text by real input events (as a
// person's typing fires the page's handlers), a select's option by value
// with its input and change events. Every request is held while it
// types: a keystroke handler may not send anything. Entries not to fill,
// and fields that ask for a secret, are not touched. It returns the FIDs
// of the fields it typed (or chose) into: a field that is gone or takes
// no focus is not one.
func Type(ctx context.Context, tab *browser.Tab, ds []Entry) (map[string]bool, error) {
	tab.Hold()
	defer tab.Release()
	c := tab.Context()
	typed := map[string]bool{}
	for _, d := range ds {
		if err := ctx.Err(); err != nil {
			return typed, err
		}
		if !d.Fill || d.Secret != "" {
			continue
		}
		sel := fmt.Sprintf("%q", d.Selector)
		if d.Choose {
			ok, err := chromedp.Run(c, chromedp.Evaluate[bool](`((sel, v) => { const el = document.querySelector(sel); if (!el) return false;
  el.value = v; el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); return el.value === v; })(`+sel+`, `+fmt.Sprintf("%q", d.Value)+`)`))
			if err != nil {
				return typed, fmt.Errorf("fill: choose %s: %w", d.FID, err)
			}
			typed[d.FID] = ok
			continue
		}
		ok, err := chromedp.Run(c, chromedp.Evaluate[bool](`((sel) => { const el = document.querySelector(sel); if (!el) return false;
  el.focus(); if ("select" in el) el.select(); el.value = ""; return document.activeElement === el; })(`+sel+`)`))
		if err != nil {
			return typed, fmt.Errorf("fill: focus %s: %w", d.FID, err)
		}
		if !ok {
			continue // gone, or it does not take focus
		}
		if _, err := chromedp.Call(c, input.InsertText, input.InsertTextParams{Text: d.Value}); err != nil {
			return typed, fmt.Errorf("fill: type %s: %w", d.FID, err)
		}
		if _, err := chromedp.Run(c, chromedp.Evaluate[bool](`((sel) => { const el = document.querySelector(sel); el && el.dispatchEvent(new Event("change", {bubbles: true})); el && el.blur(); return true; })(`+sel+`)`)); err != nil {
			return typed, fmt.Errorf("fill: %s: %w", d.FID, err)
		}
		typed[d.FID] = true
	}
	return typed, nil
}

// ReadValues reads the fields' values back from the page, by FID.
func ReadValues(tab *browser.Tab, fields []Field) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range fields {
		v, err := chromedp.Run(tab.Context(), chromedp.Evaluate[string](fmt.Sprintf(`(() => { const el = document.querySelector(%q); return el ? String(el.value) : ""; })()`, f.Selector)))
		if err != nil {
			return nil, fmt.Errorf("fill: read %s: %w", f.FID, err)
		}
		out[f.FID] = v
	}
	return out, nil
}
