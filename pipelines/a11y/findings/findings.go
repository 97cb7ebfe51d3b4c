// Package findings turns what an accessibility audit's passes found (the
// rule engine's results, the keyboard pass, the form pass) into the
// contract's findings: a category, a priority from P1 to P4 ranked by how
// much the problem blocks a purchase, WCAG 2.2 criteria with their names,
// levels and links, the element, and a fix (how, and code). The same
// problem found by two passes is one finding; what the rule engine could
// not decide, and best practices no criterion requires, are advisories.
package findings

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"boxd/pipelines/a11y/axe"
	"boxd/pipelines/a11y/contrast"
	"boxd/pipelines/a11y/forms"
	"boxd/pipelines/a11y/judge"
	"boxd/pipelines/a11y/keyboard"
	"boxd/pipelines/a11y/motion"
)

// Sources of a finding (contract 2, section 2).
const (
	SourceRules    = "rule-engine"
	SourceKeyboard = "keyboard pass"
	SourceForms    = "form pass"
	SourceModel    = "model"
)

// Categories (not shown in the contract; docs/decisions.md).
const (
	CatKeyboard  = "keyboard"
	CatFocus     = "focus"
	CatForms     = "forms"
	CatImages    = "images"
	CatNames     = "names and roles"
	CatContrast  = "contrast"
	CatStructure = "structure"
	CatLanguage  = "language"
	CatMedia     = "media"
	CatOther     = "other"
)

// Element is where a finding is.
type Element struct {
	Selector string `json:"selector"`
	Snippet  string `json:"snippet"`
}

// Fix says how to fix a finding, with code where there is a pattern.
type Fix struct {
	How  string `json:"how"`
	Code string `json:"code,omitempty"`
}

// Finding is one accessibility finding.
type Finding struct {
	Category   string          `json:"category"`
	Priority   string          `json:"priority"` // P1 to P4
	Title      string          `json:"title"`
	Detail     string          `json:"detail"`
	Source     string          `json:"source"`
	AlsoFound  []string        `json:"also_found_by,omitempty"` // other passes that found the same
	WCAG       []axe.Criterion `json:"wcag"`
	Page       string          `json:"page"`
	Element    Element         `json:"element"`
	Fix        Fix             `json:"fix"`
	Suggestion string          `json:"suggestion,omitempty"`
	Receipt    string          `json:"receipt,omitempty"` // a model finding's call
}

// Page is one audited page's pass results.
type Page struct {
	URL      string
	Rules    []axe.Result
	Keyboard *keyboard.Result
	Forms    []forms.Form
	// Contrast are the rendered pixels' measurements of the elements the
	// rule engine could not decide, by selector: one under its required
	// ratio is a finding, one over it is settled.
	Contrast map[string]contrast.Measured
	// Judged are the vision judge's verdicts on the page's images.
	Judged []judge.Verdict
	// Motion is what kept moving, blinking or updating past five
	// seconds.
	Motion []motion.Moving
}

// purchaseRE finds the controls and fields of the way to buy.
var purchaseRE = regexp.MustCompile(`(?i)\b(add to (cart|bag|basket)|cart|basket|bag|checkout|check out|buy|purchase|pay|payment|order|place order|card|billing|shipping)\b`)

// onPurchasePath says whether an element is part of buying.
func onPurchasePath(parts ...string) bool {
	return purchaseRE.MatchString(strings.Join(parts, " "))
}

// Build makes the findings and advisories of the pages, each list in
// priority order (then page, then category), with criteria named from
// crit (data_dir's WCAG 2.2 table).
func Build(pages []Page, crit map[string]axe.Criterion) (findings, advisories []Finding) {
	named := func(scs []string) []axe.Criterion {
		out := []axe.Criterion{}
		for _, sc := range scs {
			if c, ok := crit[sc]; ok {
				out = append(out, c)
			} else {
				out = append(out, axe.Criterion{SC: sc})
			}
		}
		return out
	}
	for _, p := range pages {
		var fs []Finding
		for _, r := range p.Rules {
			if r.Outcome != axe.Violation && r.Outcome != axe.NeedsReview {
				continue
			}
			for _, n := range r.Nodes {
				f := fromRule(r, n, p.URL)
				f.WCAG = named(r.WCAG)
				if m, ok := p.Contrast[f.Element.Selector]; ok && r.Outcome == axe.NeedsReview && r.Rule == "color-contrast" {
					if m.Passes() {
						continue // settled by the pixels
					}
					f.Detail = fmt.Sprintf("The rule engine could not decide this (%s); the rendered pixels measure %.2f:1 (%s on %s), under the %.1f:1 required.", f.Detail, m.Ratio, m.FG, m.BG, m.Required)
					fs = append(fs, f)
					continue
				}
				if r.Outcome == axe.NeedsReview || len(r.WCAG) == 0 {
					f.Priority = "P4"
					if r.Outcome == axe.NeedsReview {
						f.Title = "Check: " + f.Title
						f.Detail = "The rule engine could not decide this (" + f.Detail + ")."
					}
					advisories = append(advisories, f)
					continue
				}
				fs = append(fs, f)
			}
		}
		if k := p.Keyboard; k != nil {
			fs = append(fs, keyboardFindings(k, p.URL, named)...)
		}
		fs = append(fs, formFindings(p.Forms, p.URL, named)...)
		fs = append(fs, motionFindings(p.Motion, p.URL, named)...)
		fs = append(fs, judgeFindings(p.Judged, p.URL, named)...)
		// What no criterion requires is advice, from any pass.
		var required []Finding
		for _, f := range fs {
			if len(f.WCAG) == 0 {
				advisories = append(advisories, f)
				continue
			}
			required = append(required, f)
		}
		findings = append(findings, merge(required)...)
	}
	order(findings)
	order(advisories)
	return findings, advisories
}

// fromRule is a rule engine violation on one element.
func fromRule(r axe.Result, n axe.Node, page string) Finding {
	sel := strings.Join(n.Target, " ")
	f := Finding{Category: category(r), Title: r.Help, Detail: strings.TrimSpace(r.Description + " " + n.Summary), Source: SourceRules,
		Page: page, Element: Element{Selector: sel, Snippet: snippet(n.HTML)}, Fix: ruleFix(r, n)}
	purchase := onPurchasePath(n.HTML, sel)
	switch {
	case purchase && (r.Impact == "critical" || r.Impact == "serious"):
		f.Priority = "P1"
	case r.Impact == "critical" || purchase:
		f.Priority = "P2"
	case r.Impact == "serious":
		f.Priority = "P3"
	default:
		f.Priority = "P4"
	}
	if r.Rule == "target-size" {
		// A small target is hard to hit, not impossible: P2 on the way to
		// buy (an add-to-cart a finger misses), P3 elsewhere, whatever
		// the engine's impact.
		f.Priority = "P3"
		if purchase {
			f.Priority = "P2"
		}
	}
	switch r.Rule {
	case "tabindex", "boxd-link-purpose", "boxd-reflow":
		// They mislead or slow, rather than stop: a focus order out of
		// the page's, a link that needs its surroundings read, a page
		// scrolled sideways at 400% zoom. P2 on the way to buy, else P3.
		f.Priority = "P3"
		if purchase {
			f.Priority = "P2"
		}
	}
	if f.Fix.How == "" {
		f.Fix.How = r.Help + " (" + r.HelpURL + ")"
	}
	return f
}

// category is a rule's category from its tags.
func category(r axe.Result) string {
	for _, t := range r.Tags {
		switch t {
		case "cat.color":
			return CatContrast
		case "cat.forms":
			return CatForms
		case "cat.keyboard":
			return CatKeyboard
		case "cat.text-alternatives":
			return CatImages
		case "cat.name-role-value", "cat.aria":
			return CatNames
		case "cat.language":
			return CatLanguage
		case "cat.semantics", "cat.structure", "cat.tables", "cat.parsing":
			return CatStructure
		case "cat.time-and-media":
			return CatMedia
		}
	}
	return CatOther
}

// ruleFix is the fix for the rule engine's most common rules, with code.
func ruleFix(r axe.Result, n axe.Node) Fix {
	switch r.Rule {
	case "image-alt":
		return Fix{How: "Give the image a text alternative that says what it shows (or alt=\"\" when it is decoration).", Code: `<img src="…" alt="Red running shoe, side view">`}
	case "button-name":
		return Fix{How: "Give the button a name a screen reader can say: visible text, or aria-label for an icon.", Code: `<button type="button" aria-label="Add to cart">…</button>`}
	case "link-name":
		return Fix{How: "Give the link text that says where it goes (or aria-label for an icon link).", Code: `<a href="/cart" aria-label="Cart">…</a>`}
	case "label":
		return Fix{How: "Tie a visible label to the field.", Code: `<label for="email">Email</label> <input id="email" name="email">`}
	case "html-has-lang":
		return Fix{How: "Say the page's language on the html element.", Code: `<html lang="en">`}
	case "document-title":
		return Fix{How: "Give the page a title that says what it is.", Code: `<title>Running shoes – Shop</title>`}
	case "target-size":
		return Fix{How: "Make the target at least 24 by 24 CSS pixels (padding counts; 44 is kinder to fingers), or leave room so that a 24 px circle centred on it overlaps no other target.", Code: `.icon-button { min-width: 24px; min-height: 24px; }`}
	case "boxd-alt-placeholder":
		return Fix{How: "Replace the file name or placeholder with a text alternative that says what the image shows (or alt=\"\" when it is decoration).", Code: `<img src="IMG_2041.jpg" alt="Blue canvas sneaker, left side">`}
	case "boxd-link-purpose":
		return Fix{How: "Make the link's text say where it goes, or tie it to text that does (aria-describedby, or the same sentence, list item or table cell).", Code: `<a href="/guides/trail-shoes">Read more<span class="visually-hidden"> about choosing trail shoes</span></a>`}
	case "tabindex":
		return Fix{How: "Remove the positive tabindex (use 0, or none on native controls) and put the elements in the document in the order they should be reached.", Code: `<button type="button">Apply filters</button> <!-- no tabindex="3" -->`}
	case "boxd-reflow":
		return Fix{How: "Let the content fit 320 CSS px wide: drop fixed and minimum widths, let rows wrap, and put only content that needs two dimensions (a data table, a map) in its own scrolling container.", Code: `.results { display: flex; flex-wrap: wrap; min-width: 0; max-width: 100%; }`}
	case "color-contrast":
		return Fix{How: "Raise the contrast of the text with its background to at least 4.5:1 (3:1 for large text)." + " " + n.Summary, Code: `color: #595959; /* on white: 7:1 */`}
	}
	return Fix{}
}

// snippet is the element's HTML, cut short.
func snippet(html string) string {
	if len(html) > 240 {
		cut := 240
		for cut > 0 && !utf8.RuneStart(html[cut]) {
			cut-- // never half a character
		}
		return html[:cut] + "…"
	}
	return html
}

// keyboardFindings are the keyboard pass's problems.
func keyboardFindings(k *keyboard.Result, page string, named func([]string) []axe.Criterion) []Finding {
	var out []Finding
	for _, e := range k.Unreachable {
		pr := "P2"
		if onPurchasePath(e.Name, e.Selector) {
			pr = "P1"
		}
		if e.StandIn != "" {
			out = append(out, Finding{Category: CatKeyboard, Priority: pr, Title: fmt.Sprintf("The %s %q cannot be reached with the keyboard", inputKind(e), e.Name),
				Detail: "The native control is hidden outright (display: none or visibility: hidden) and its label stands in for it: a pointer toggles it through the label, but Tab never reaches it and a screen reader does not know it is there.", Source: SourceKeyboard,
				WCAG: named([]string{"2.1.1", "4.1.2"}), Page: page, Element: Element{Selector: e.Selector, Snippet: "<" + e.Tag + ">" + e.Name},
				Fix: Fix{How: "Hide the native control from sight only (clipped to 1 px, or transparent over its stand-in), so it keeps focus and its role, and show its focus on the stand-in.",
					Code: `.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
input:focus-visible + label .box { outline: 3px solid #1a5fd0; outline-offset: 2px; }`}})
			continue
		}
		out = append(out, Finding{Category: CatKeyboard, Priority: pr, Title: fmt.Sprintf("%q cannot be reached with the keyboard", e.Name),
			Detail: "Tab never reaches this " + e.Tag + ", so a keyboard or switch user cannot use it.", Source: SourceKeyboard,
			WCAG: named([]string{"2.1.1"}), Page: page, Element: Element{Selector: e.Selector, Snippet: "<" + e.Tag + ">" + e.Name},
			Fix: Fix{How: "Use a real button or link, or give the element tabindex=\"0\" and handle Enter and Space.", Code: `<button type="button">` + e.Name + `</button>`}})
	}
	if t := k.Trap; t != nil {
		detail := fmt.Sprintf("Tab does not move focus on from this element, so a keyboard user cannot reach the rest of the page (%s).", cutOff(k.BeyondTrap))
		if len(k.TrapCycle) > 1 {
			detail = fmt.Sprintf("Tab from this element sends focus back to %s, round %d elements that Escape does not leave, so a keyboard user cannot reach the rest of the page (%s).", k.TrapCycle[0], len(k.TrapCycle), cutOff(k.BeyondTrap))
		}
		out = append(out, Finding{Category: CatKeyboard, Priority: "P1", Title: fmt.Sprintf("The keyboard is trapped at %q", t.Name),
			Detail: detail, Source: SourceKeyboard,
			WCAG: named([]string{"2.1.2"}), Page: page, Element: Element{Selector: t.Selector, Snippet: "<" + t.Tag + ">" + t.Name},
			Fix: Fix{How: "Let Tab and Shift+Tab leave the element; do not call preventDefault on Tab or move focus back to it (a modal dialog may keep focus while open, but Escape must close it and give focus back)."}})
	}
	for _, s := range k.Stops {
		if s.KeysWork != nil && !*s.KeysWork {
			pr := "P2"
			if onPurchasePath(s.Name, s.Selector) {
				pr = "P1"
			}
			out = append(out, Finding{Category: CatKeyboard, Priority: pr, Title: fmt.Sprintf("%q does not work with Enter or Space", s.Name),
				Detail: "The keyboard reaches it, but it answers clicks only: Enter and Space do nothing, as they would on a real button.", Source: SourceKeyboard,
				WCAG: named([]string{"2.1.1"}), Page: page, Element: Element{Selector: s.Selector, Snippet: "<" + s.Tag + ">" + s.Name},
				Fix: Fix{How: "Use a real button, which Enter and Space activate, or handle both keys.", Code: `<button type="button">` + s.Name + `</button>`}})
		}
	}
	if len(k.Backward) > 0 && !k.BackwardMatches {
		out = append(out, Finding{Category: CatKeyboard, Priority: "P3", Title: "Shift+Tab does not go back the way Tab came",
			Detail: fmt.Sprintf("From the last stop, Shift+Tab reached %d stops, not the tab order reversed.", len(k.Backward)), Source: SourceKeyboard,
			WCAG: named([]string{"2.4.3"}), Page: page, Element: Element{Selector: k.Backward[len(k.Backward)-1], Snippet: ""},
			Fix: Fix{How: "Do not move focus from key handlers; let the document order set the tab order both ways."}})
	}
	for _, d := range k.Dialogs {
		if !d.Opened {
			continue
		}
		el := Element{Selector: d.Opener.Selector, Snippet: "<" + d.Opener.Tag + ">" + d.Opener.Name}
		if !d.Declared {
			out = append(out, Finding{Category: CatNames, Priority: "P4", Title: fmt.Sprintf("%q opens a dialog without saying so", d.Opener.Name),
				Detail: "Pressed with Enter, the button showed a dialog, but nothing on it tells a screen reader user that it will.", Source: SourceKeyboard,
				WCAG: []axe.Criterion{}, Page: page, Element: el,
				Fix: Fix{How: "Say what the button opens.", Code: `<button type="button" aria-haspopup="dialog" aria-controls="the-dialog-id">` + d.Opener.Name + `</button>`}})
		}
		if !d.TookFocus {
			out = append(out, Finding{Category: CatFocus, Priority: "P2", Title: fmt.Sprintf("The dialog %q opens does not take focus", d.Opener.Name),
				Detail: "Pressed with Enter, the button shows a dialog, but focus stays behind it: a keyboard or screen reader user does not know it opened.", Source: SourceKeyboard,
				WCAG: named([]string{"2.4.3"}), Page: page, Element: el,
				Fix: Fix{How: "Move focus into the dialog when it opens (its first control, or the dialog itself with tabindex=\"-1\"); a <dialog> opened with showModal() does this.", Code: `dialog.showModal();`}})
		}
		if !d.EscapeClosed {
			out = append(out, Finding{Category: CatKeyboard, Priority: "P4", Title: fmt.Sprintf("The dialog %q opens does not close with Escape", d.Opener.Name),
				Detail: "Escape is how keyboard users expect to leave a dialog (WAI-ARIA Authoring Practices); no WCAG criterion requires it.", Source: SourceKeyboard,
				WCAG: []axe.Criterion{}, Page: page, Element: el,
				Fix: Fix{How: "Close the dialog on Escape and return focus to the button that opened it.", Code: `dialog.addEventListener("keydown", e => { if (e.key === "Escape") close(); });`}})
		} else if !d.FocusReturned {
			out = append(out, Finding{Category: CatFocus, Priority: "P3", Title: fmt.Sprintf("Closing the dialog %q opens loses focus", d.Opener.Name),
				Detail: "After Escape closes the dialog, focus does not go back to the button that opened it.", Source: SourceKeyboard,
				WCAG: named([]string{"2.4.3"}), Page: page, Element: el,
				Fix: Fix{How: "Return focus to the opener when the dialog closes.", Code: `opener.focus();`}})
		}
	}
	for _, l := range k.SkipLinks {
		if l.Works {
			continue
		}
		out = append(out, Finding{Category: CatKeyboard, Priority: "P3", Title: fmt.Sprintf("The skip link %q does not skip", l.Name),
			Detail: "Following it, the next Tab lands on what comes after the link, not in " + l.Target + " (missing, or not a place focus can start from).", Source: SourceKeyboard,
			WCAG: named([]string{"2.4.1"}), Page: page, Element: Element{Selector: l.Selector, Snippet: `<a href="` + l.Target + `">` + l.Name + `</a>`},
			Fix: Fix{How: "Point the link at the main content's id, and let that element take focus.", Code: `<main id="main" tabindex="-1">`}})
	}
	for _, s := range k.Stops {
		if s.FocusVisible {
			continue
		}
		pr := "P3"
		if onPurchasePath(s.Name, s.Selector) {
			pr = "P2"
		}
		detail := fmt.Sprintf("The element looks the same focused and not (%.1f%% of its pixels change).", 100*s.Change)
		if s.StandIn != "" {
			detail = fmt.Sprintf("The native control is hidden from sight and its label (%s) stands in for it; the stand-in looks the same with the control focused and not (%.1f%% of its pixels change).", s.StandIn, 100*s.Change)
		}
		out = append(out, Finding{Category: CatFocus, Priority: pr, Title: fmt.Sprintf("Focus on %q cannot be seen", s.Name),
			Detail: detail, Source: SourceKeyboard,
			WCAG: named([]string{"2.4.7"}), Page: page, Element: Element{Selector: s.Selector, Snippet: "<" + s.Tag + ">" + s.Name},
			Fix: Fix{How: "Show focus: do not remove the outline, or draw a clear one of your own.", Code: `:focus-visible { outline: 3px solid #1a5fd0; outline-offset: 2px; }`}})
	}
	return out
}

// optionalRE finds a label that says its field may be left empty.
var optionalRE = regexp.MustCompile(`(?i)\boptional\b`)

// cutOff says which controls a trap cuts off: how many, and the first
// names.
func cutOff(es []keyboard.Element) string {
	if len(es) == 0 {
		return "no other control"
	}
	var names []string
	for _, e := range es[:min(len(es), maxListed)] {
		names = append(names, fmt.Sprintf("%q", cmp.Or(e.Name, e.Selector)))
	}
	more := ""
	if len(es) > maxListed {
		more = fmt.Sprintf(" and %d more", len(es)-maxListed)
	}
	word := "controls"
	if len(es) == 1 {
		word = "control"
	}
	return fmt.Sprintf("%d %s: %s%s", len(es), word, strings.Join(names, ", "), more)
}

// maxListed bounds the controls a trap finding names.
const maxListed = 10

// inputKind names a native input's kind ("checkbox", "radio button").
func inputKind(e keyboard.Element) string {
	if e.Type == "radio" {
		return "radio button"
	}
	return cmp.Or(e.Type, e.Tag)
}

// formFindings are the form pass's problems: from the markup (labels,
// marked requirements) and from what the page showed when each form was
// submitted empty.
func formFindings(fs []forms.Form, page string, named func([]string) []axe.Criterion) []Finding {
	var out []Finding
	for _, form := range fs {
		var fieldNames []string
		for _, f := range form.Fields {
			fieldNames = append(fieldNames, f.Name, f.Label)
		}
		purchase := onPurchasePath(append(fieldNames, form.Selector)...)
		pr := func(p, q string) string {
			if purchase {
				return p
			}
			return q
		}
		formEl := Element{Selector: form.Selector, Snippet: "<form>"}
		what, whose := "form", "form's"
		if form.Orphan {
			formEl.Snippet = "<div> (fields outside a form, with their own button)"
			what, whose = "fields", "fields'"
		}
		// The page's own checks ran (the browser's did not stop it, and
		// it did not leave): what it showed is its error handling.
		scripted := !form.NativeBlocked && !form.Sent
		flagged := false
		nFlagged, textless := 0, 0 // flagged fields; those reported as having no error text
		// Whether saying "required" tells the person anything: not for
		// the one field of a form (a coupon, a newsletter's email, a radio
		// group), nor in a form of two fields that are both required (a
		// sign-in's email and password): the person fills them all. In a
		// longer form, or one that mixes required fields with optional
		// ones, it does.
		// (A checkbox nothing requires, "keep me signed in", is a choice,
		// not a field to fill.)
		distinct, needed := map[string]bool{}, map[string]bool{}
		for _, f := range form.Fields {
			need := f.Required || (scripted && f.Flagged())
			if f.Type == "checkbox" && !need {
				continue
			}
			distinct[cmp.Or(f.Name, f.Selector)] = true
			if need {
				needed[cmp.Or(f.Name, f.Selector)] = true
			}
		}
		several := len(distinct) > 2 || (len(distinct) == 2 && len(needed) < 2)
		for _, f := range form.Fields {
			el := Element{Selector: f.Selector, Snippet: fmt.Sprintf(`<input name=%q type=%q>`, f.Name, f.Type)}
			if f.Label == "" {
				out = append(out, Finding{Category: CatForms, Priority: pr("P1", "P2"), Title: fmt.Sprintf("The %q field has no label", cmp.Or(f.Name, f.Type)),
					Detail: "A screen reader announces the field without saying what to enter (a placeholder is not a label).", Source: SourceForms,
					WCAG: named([]string{"1.3.1", "3.3.2", "4.1.2"}), Page: page, Element: el,
					Fix: Fix{How: "Give the field a visible label tied to it.", Code: fmt.Sprintf(`<label for="%s">…</label>`, cmp.Or(f.Name, "field"))}})
			}
			// Required by the markup, or by the page's script (it flagged
			// the field when the form was sent empty).
			byScript := scripted && f.Flagged() && !f.Required
			if (f.Required || byScript) && !f.RequiredMarked && !form.AllRequired && several && !optionalRE.MatchString(f.Label) {
				detail := "The field must be filled, and its label does not tell the reader."
				if byScript {
					detail = "Sent empty, the form flagged the field, so it must be filled; its label does not say so beforehand."
				}
				out = append(out, Finding{Category: CatForms, Priority: pr("P2", "P3"), Title: fmt.Sprintf("The %q field is required but does not say so", cmp.Or(f.Name, f.Label)),
					Detail: detail, Source: SourceForms,
					WCAG: named([]string{"3.3.2"}), Page: page, Element: el,
					Fix: Fix{How: "Say \"required\" in the label (an asterisk explained once is also fine).", Code: `<label for="email">Email (required)</label>`}})
			}
			if f.Flagged() {
				flagged = true
				nFlagged++
				if scripted && f.Error == "" && (f.LookChanged || f.Invalid) {
					textless++
				}
			}
			switch {
			case scripted && f.Error == "" && f.LookChanged:
				out = append(out, Finding{Category: CatForms, Priority: pr("P2", "P3"), Title: fmt.Sprintf("The error on %q is shown only by colour", cmp.Or(f.Name, f.Label)),
					Detail: "Sent empty, the form changed the field's colours (its border, background or label) but no text says what is wrong: a person who does not see the colour, and a screen reader, get nothing.", Source: SourceForms,
					WCAG: named([]string{"3.3.1", "1.4.1"}), Page: page, Element: el,
					Fix: Fix{How: "Say in text, next to the field and tied to it, what is wrong and how to fix it; keep the colour as an extra.", Code: `<input id="email" aria-invalid="true" aria-describedby="email-err"> <p id="email-err">Enter an email address, like name@example.com</p>`}})
			case scripted && f.Error == "" && f.Invalid:
				out = append(out, Finding{Category: CatForms, Priority: pr("P2", "P3"), Title: fmt.Sprintf("The error on %q is not described in text", cmp.Or(f.Name, f.Label)),
					Detail: "Sent empty, the form marked the field invalid (aria-invalid), but no text says what is wrong with it.", Source: SourceForms,
					WCAG: named([]string{"3.3.1"}), Page: page, Element: el,
					Fix: Fix{How: "Show the error in text next to the field and tie it to the field.", Code: `<input id="email" aria-invalid="true" aria-describedby="email-err"> <p id="email-err">Enter an email address, like name@example.com</p>`}})
			case scripted && f.Error != "" && f.Invalid && !f.ErrorTied:
				out = append(out, Finding{Category: CatForms, Priority: pr("P2", "P3"), Title: fmt.Sprintf("The error on %q is not tied to the field", cmp.Or(f.Name, f.Label)),
					Detail: "After an empty submission the field is invalid, but no message is tied to it, so a screen reader user hears no reason.", Source: SourceForms,
					WCAG: named([]string{"3.3.1"}), Page: page, Element: el,
					Fix: Fix{How: "Tie the message to the field and mark it invalid.", Code: `<input id="email" aria-invalid="true" aria-describedby="email-err"> <p id="email-err">Enter an email address, like name@example.com</p>`}})
			}
		}
		switch {
		case form.Sent && form.Search:
			// An empty search may rightly be sent: no input error.
		case form.Sent:
			out = append(out, Finding{Category: CatForms, Priority: pr("P2", "P4"), Title: fmt.Sprintf("The %s can be sent empty", what),
				Detail: "Submitted with every field empty, it tried to send (the audit held it): nothing tells the person what is missing.", Source: SourceForms,
				WCAG: named([]string{"3.3.1", "3.3.3"}), Page: page, Element: formEl,
				Fix: Fix{How: "Check the fields before sending and say which are missing and why."}})
		case scripted && !form.Changed && !flagged && !form.Search:
			out = append(out, Finding{Category: CatForms, Priority: pr("P2", "P3"), Title: fmt.Sprintf("Sending the %s empty shows no error", what),
				Detail: "Submitted with every field empty, it was stopped (nothing was sent) but nothing on the page changed: no message, no field marked, focus where it was. The person does not learn what is wrong.", Source: SourceForms,
				WCAG: named([]string{"3.3.1"}), Page: page, Element: formEl,
				Fix: Fix{How: "When the form stops a submission, say which fields are wrong and why, next to each field and in a summary that takes focus or is announced.", Code: `<div role="alert">There is 1 error: enter an email address</div>`}})
		case scripted && !flagged && len(form.Messages) > 0:
			out = append(out, Finding{Category: CatForms, Priority: pr("P2", "P3"), Title: fmt.Sprintf("The %s error does not say which field is wrong", whose),
				Detail: fmt.Sprintf("Submitted with every field empty, it showed %q, which names no field, and no field was marked.", form.Messages[0].Text), Source: SourceForms,
				WCAG: named([]string{"3.3.1"}), Page: page, Element: formEl,
				Fix: Fix{How: "Name each field in error, in text next to it and in the summary.", Code: `<p id="email-err">Enter an email address, like name@example.com</p>`}})
		case !form.Announced && !form.NativeBlocked && !form.Sent && flagged && (textless < nFlagged || len(form.Messages) > 0):
			// (Errors shown by colour alone have no text to announce: the
			// 3.3.1 finding above is the one to fix.)
			out = append(out, Finding{Category: CatForms, Priority: pr("P2", "P3"), Title: fmt.Sprintf("The %s errors are not announced", whose),
				Detail: "After an empty submission the errors appear, but nothing announces them to a screen reader and focus does not move to them.", Source: SourceForms,
				WCAG: named([]string{"4.1.3"}), Page: page, Element: formEl,
				Fix: Fix{How: "Put an error summary in a live region, or move focus to it.", Code: `<div role="alert">There is 1 error: enter an email address</div>`}})
		}
	}
	return out
}

// motionFindings are the motion check's: what keeps moving, blinking or
// updating past five seconds with no control to pause or stop it (2.2.2).
// The contract names four sources; the motion check is an automated rule
// run in the page, as the rule engine's marquee and blink rules are for
// the same criterion, so its findings are the rule engine's. P2 when
// what moves holds a control on the way to buy (a product carousel's
// add-to-cart), else P3.
func motionFindings(ms []motion.Moving, page string, named func([]string) []axe.Criterion) []Finding {
	var out []Finding
	for _, m := range ms {
		if m.Pause != "" {
			continue
		}
		pr := "P3"
		if onPurchasePath(m.Controls...) {
			pr = "P2"
		}
		label := m.Name
		if len(label) > 60 {
			label = label[:60] + "…"
		}
		var title, by string
		switch m.What {
		case "blinks":
			title = fmt.Sprintf("Blinking content (%q) cannot be paused or stopped", label)
		case "updates":
			title = fmt.Sprintf("Content that updates itself (%q) cannot be paused or stopped", label)
		default:
			title = fmt.Sprintf("Moving content (%q) cannot be paused or stopped", label)
		}
		switch m.Source {
		case "timer":
			by = fmt.Sprintf("A script on the page changes it every few seconds by itself (%d changes in its first %d seconds) and is still set to go on", m.Changes, int(motion.Window.Seconds()))
		case "frames":
			by = fmt.Sprintf("A script on the page moves it frame by frame by itself (%d changes in its first %d seconds) and is still going", m.Changes, int(motion.Window.Seconds()))
		default:
			by = "A CSS animation runs on it for more than five seconds"
			if m.Endless {
				by = "A CSS animation runs on it without end"
			}
		}
		out = append(out, Finding{Category: CatMedia, Priority: pr, Title: title,
			Detail: by + ", and no control there (or on the page) pauses or stops it: it distracts, and what it holds is hard to read or catch. (Found by boxd's motion check.)", Source: SourceRules,
			WCAG: named([]string{"2.2.2"}), Page: page, Element: Element{Selector: m.Selector, Snippet: "<" + m.Tag + ">" + label},
			Fix: Fix{How: "Add a button that pauses or stops it (and pause it while it has keyboard focus or the pointer is over it), or stop it within five seconds; honour prefers-reduced-motion too.",
				Code: `<button type="button" aria-pressed="false">Pause slideshow</button>
@media (prefers-reduced-motion: reduce) { .ticker { animation: none; } }`}})
	}
	return out
}

// judgeFindings are the vision judge's: alt text that does not describe
// its image (1.1.1), an image marked decorative that holds text (1.1.1),
// an image of text (1.4.5, low priority: logos are exempt and the model
// may be wrong). Each carries its model call's receipt.
func judgeFindings(vs []judge.Verdict, page string, named func([]string) []axe.Criterion) []Finding {
	var out []Finding
	for _, v := range vs {
		el := Element{Selector: v.Selector, Snippet: snippet(v.Snippet)}
		prio := "P3"
		if onPurchasePath(v.Snippet, v.Alt) {
			prio = "P2"
		}
		switch {
		case v.Describes != nil && !*v.Describes:
			out = append(out, Finding{Category: CatImages, Priority: prio, Title: fmt.Sprintf("The text alternative %q does not describe its image", v.Alt),
				Detail: "The vision model looked at the image as the browser drew it and judged that its text alternative does not say what it shows or what it is for.",
				Source: SourceModel, WCAG: named([]string{"1.1.1"}), Page: page, Element: el, Receipt: v.Receipt,
				Fix: Fix{How: "Write a text alternative that says what the image shows, or where it leads when it is a link or a button.", Code: `<img src="…" alt="Red running shoe, side view">`}})
		case v.Decorative && v.HasText:
			out = append(out, Finding{Category: CatImages, Priority: prio, Title: fmt.Sprintf("An image marked as decoration holds text: %q", v.Text),
				Detail: "The image is hidden from screen readers (alt=\"\" or role presentation), but the vision model reads words in it.",
				Source: SourceModel, WCAG: named([]string{"1.1.1"}), Page: page, Element: el, Receipt: v.Receipt,
				Fix: Fix{How: "Give the image a text alternative with its words, or put the words in the page as text.", Code: `<img src="…" alt="` + v.Text + `">`}})
		}
		if !v.Decorative && v.HasText {
			out = append(out, Finding{Category: CatImages, Priority: "P4", Title: fmt.Sprintf("The image holds text: %q", v.Text),
				Detail: "The vision model reads words in the image; text in images cannot be resized, restyled or translated (logos are exempt).",
				Source: SourceModel, WCAG: named([]string{"1.4.5"}), Page: page, Element: el, Receipt: v.Receipt,
				Fix: Fix{How: "Use real text styled with CSS instead of text drawn into the image, unless it is a logo."}})
		}
	}
	return out
}

// merge joins findings of two passes on the same element with a
// criterion in common (one problem found twice): the higher priority's
// finding stays, the other's source is listed as also finding it. Two
// findings of one pass are two problems.
func merge(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		joined := false
		for i := range out {
			o := &out[i]
			if o.Source == f.Source || !sameElement(o.Element, f.Element) || !shareSC(o.WCAG, f.WCAG) {
				continue
			}
			if f.Priority < o.Priority {
				f.AlsoFound = append(o.AlsoFound, o.Source)
				*o = f
			} else if o.Source != f.Source && !slices.Contains(o.AlsoFound, f.Source) {
				o.AlsoFound = append(o.AlsoFound, f.Source)
			}
			joined = true
			break
		}
		if !joined {
			out = append(out, f)
		}
	}
	return out
}

// nameAttrRE is an element's name attribute in its snippet.
var nameAttrRE = regexp.MustCompile(`\bname="([^"]+)"`)

// sameElement says whether two passes' elements are one: the same
// selector, or form fields with the same name (the passes write their
// selectors differently).
func sameElement(a, b Element) bool {
	if a.Selector != "" && a.Selector == b.Selector {
		return true
	}
	ma, mb := nameAttrRE.FindStringSubmatch(a.Snippet), nameAttrRE.FindStringSubmatch(b.Snippet)
	return ma != nil && mb != nil && ma[1] == mb[1] && strings.HasPrefix(a.Snippet, "<input") == strings.HasPrefix(b.Snippet, "<input")
}

func shareSC(a, b []axe.Criterion) bool {
	for _, x := range a {
		for _, y := range b {
			if x.SC == y.SC {
				return true
			}
		}
	}
	return false
}

// order sorts by priority, then page, then category, stable otherwise.
func order(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Priority != fs[j].Priority {
			return fs[i].Priority < fs[j].Priority
		}
		if fs[i].Page != fs[j].Page {
			return fs[i].Page < fs[j].Page
		}
		return fs[i].Category < fs[j].Category
	})
}

// Summary is the audit's summary (contract 2, section 2).
type Summary struct {
	Findings     int            `json:"findings"`
	ByPriority   map[string]int `json:"by_priority"`
	BySource     map[string]int `json:"by_source"`
	Advisories   int            `json:"advisories"`
	WCAGCriteria []string       `json:"wcag_criteria"`
	Pages        int            `json:"pages"`
}

// Summarize counts the findings.
func Summarize(findings, advisories []Finding, pages int) Summary {
	s := Summary{Findings: len(findings), ByPriority: map[string]int{"P1": 0, "P2": 0, "P3": 0, "P4": 0},
		BySource: map[string]int{SourceRules: 0, SourceKeyboard: 0, SourceForms: 0, SourceModel: 0}, Advisories: len(advisories), WCAGCriteria: []string{}, Pages: pages}
	seen := map[string]bool{}
	for _, f := range findings {
		s.ByPriority[f.Priority]++
		s.BySource[f.Source]++
		for _, c := range f.WCAG {
			if !seen[c.SC] {
				seen[c.SC] = true
				s.WCAGCriteria = append(s.WCAGCriteria, c.SC)
			}
		}
	}
	sort.Slice(s.WCAGCriteria, func(i, j int) bool { return scLess(s.WCAGCriteria[i], s.WCAGCriteria[j]) })
	return s
}

// scLess orders success criteria by number: 1.4.3 before 1.4.12.
func scLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if len(pa[i]) != len(pb[i]) {
			return len(pa[i]) < len(pb[i])
		}
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return len(pa) < len(pb)
}
