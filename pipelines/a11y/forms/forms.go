// Package forms is the accessibility audit's form pass: every form's
// fields checked for labels and marked requirements, then the form
// submitted empty, its submission held in the browser (never sent), and
// what changed on the page read: the errors the browser or the page's
// own script showed, whether each says which field is wrong and what is
// wrong in text (or only by colour), whether it is tied to its field,
// and whether it is announced. Fields outside any <form> that have a
// button of their own are tried the same way, by their button.
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
	// Required: required or aria-required. RequiredMarked: the label (or
	// what aria-describedby names) says a field is required ("*",
	// "required", "mandatory"), whether or not the markup requires it.
	Required       bool `json:"required"`
	RequiredMarked bool `json:"required_marked"`
	// After the empty submission: Invalid (aria-invalid, or :invalid
	// where the browser's own validation stopped the form); LookChanged
	// (its border, outline, background or colours, or its label's
	// colours, changed: what a sighted user sees); Error (its message:
	// text tied to it by aria-describedby or aria-errormessage, else new
	// text near it, else a message elsewhere that names it, else the
	// browser's validation message); ErrorTied (the message is tied to
	// it), ErrorNear (new text in the part of the form that holds only
	// this field, not tied), ErrorNamed (only a message elsewhere, a
	// summary, names it).
	Invalid     bool   `json:"invalid"`
	LookChanged bool   `json:"look_changed"`
	Error       string `json:"error"`
	ErrorTied   bool   `json:"error_tied"`
	ErrorNear   bool   `json:"error_near"`
	ErrorNamed  bool   `json:"error_named"`
}

// Flagged says the empty submission marked the field as wrong in some
// way: aria-invalid or :invalid, a changed look, or a message.
func (f Field) Flagged() bool { return f.Invalid || f.LookChanged || f.Error != "" }

// Message is text that appeared or changed after the empty submission.
type Message struct {
	Text string `json:"text"`
	// Field is the index of the field it is tied to or near (-1: none:
	// a summary, or a message about the form).
	Field int  `json:"field"`
	Tied  bool `json:"tied"`
	Live  bool `json:"live"` // in a live region (role alert or status, aria-live)
}

// Form is one form, or one group of fields outside any form with a
// button of their own (Orphan).
type Form struct {
	Selector string  `json:"selector"`
	Fields   []Field `json:"fields"`
	// Orphan: fields outside any <form>; Selector is the element that
	// holds them and their button.
	Orphan bool `json:"orphan,omitempty"`
	// Button is the button the empty submission pressed ("" for a form
	// without one: it was submitted by requestSubmit).
	Button string `json:"button"`
	// Search: a search form (role search, an action about search, or a
	// single search field), where an empty query may rightly do nothing.
	Search bool `json:"search"`
	// AllRequired: the form's own words say every field is required.
	AllRequired bool `json:"all_required"`
	// Announced: after the empty submission, a live region (role alert or
	// status, aria-live) holds new text, or focus moved to a message, or
	// to a field marked invalid or with its error tied to it.
	Announced bool `json:"announced"`
	// NativeBlocked: the browser's own validation stopped the submission
	// (required fields without novalidate).
	NativeBlocked bool `json:"native_blocked"`
	// Sent: the empty form tried to leave (a request the browser held),
	// so nothing stopped an empty submission.
	Sent bool `json:"sent"`
	// Changed: anything changed after the empty submission (a message,
	// a field's state or look, focus, the browser's validation); Focus is
	// where focus went ("field", "message", "other"; "" where it stayed).
	Changed  bool      `json:"changed"`
	Focus    string    `json:"focus"`
	Messages []Message `json:"messages"`
}

// Pass checks every form on the tab's page and submits each empty, its
// submission held twice: in the page (a submission no handler stopped is
// stopped after them, so the page stays), and in the browser (every
// request refused while the form is tried, as a script's own fetch).
func Pass(ctx context.Context, tab *browser.Tab) ([]Form, error) {
	c := tab.Context()
	if _, err := chromedp.Run(c, chromedp.Evaluate[bool](lib)); err != nil {
		return nil, fmt.Errorf("forms: %w", err)
	}
	forms, err := chromedp.Run(c, chromedp.Evaluate[[]Form](scan))
	if err != nil {
		return nil, fmt.Errorf("forms: %w", err)
	}
	out := forms[:0]
	for i := range forms {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f := forms[i]
		tab.Hold()
		before := len(tab.Refused())
		type fieldAfter struct {
			Invalid     bool   `json:"invalid"`
			LookChanged bool   `json:"look_changed"`
			Error       string `json:"error"`
			ErrorTied   bool   `json:"error_tied"`
			ErrorNear   bool   `json:"error_near"`
			ErrorNamed  bool   `json:"error_named"`
		}
		after, err := chromedp.Run(c, chromedp.Evaluate[*struct {
			Sent          bool         `json:"sent"`
			NativeBlocked bool         `json:"native_blocked"`
			Announced     bool         `json:"announced"`
			Changed       bool         `json:"changed"`
			Focus         string       `json:"focus"`
			Messages      []Message    `json:"messages"`
			Fields        []fieldAfter `json:"fields"`
		}](`(async () => { if (!window.__boxdForms) { `+lib+` } return await `+submit+fmt.Sprintf("(%q, %v, %q)", f.Selector, f.Orphan, f.Button)+`; })()`, chromedp.EvalAwaitPromise))
		// A submission that left navigates: give the held request a moment.
		time.Sleep(100 * time.Millisecond)
		for _, r := range tab.Refused()[before:] {
			f.Sent = f.Sent || r.Sends()
		}
		tab.Release()
		if err != nil || after == nil {
			if f.Sent || after == nil && err == nil {
				// The page went away with the held submission, or an
				// earlier form's button took the form off the page.
				if f.Sent {
					out = append(out, f)
				}
				continue
			}
			return nil, fmt.Errorf("forms: submit %s: %w", f.Selector, err)
		}
		f.Sent = f.Sent || after.Sent
		f.NativeBlocked, f.Announced, f.Changed, f.Focus, f.Messages = after.NativeBlocked, after.Announced, after.Changed, after.Focus, after.Messages
		if f.Messages == nil {
			f.Messages = []Message{}
		}
		// Both scripts list the same fields in the same order.
		for j := range f.Fields {
			if j < len(after.Fields) {
				a := after.Fields[j]
				f.Fields[j].Invalid, f.Fields[j].LookChanged, f.Fields[j].Error = a.Invalid, a.LookChanged, a.Error
				f.Fields[j].ErrorTied, f.Fields[j].ErrorNear, f.Fields[j].ErrorNamed = a.ErrorTied, a.ErrorNear, a.ErrorNamed
			}
		}
		out = append(out, f)
	}
	return out, nil
}
