// Package findings turns what an accessibility audit's passes found (the
// rule engine's results, the keyboard pass, the form pass) into the
// contract's findings: a category, a priority from P1 to P4 ranked by how
// much the problem blocks a purchase, WCAG 2.2 criteria with their names,
// levels and links, the element, and a fix (how, and code). The same
// problem found by two passes is one finding; what the rule engine could
// not decide, and best practices no criterion requires, are advisories.
package findings

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"boxd/pipelines/a11y/axe"
	"boxd/pipelines/a11y/contrast"
	"boxd/pipelines/a11y/forms"
	"boxd/pipelines/a11y/judge"
	"boxd/pipelines/a11y/keyboard"
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
	case "color-contrast":
		return Fix{How: "Raise the contrast of the text with its background to at least 4.5:1 (3:1 for large text)." + " " + n.Summary, Code: `color: #595959; /* on white: 7:1 */`}
	}
	return Fix{}
}

// snippet is the element's HTML, cut short.
func snippet(html string) string {
	if len(html) > 240 {
		return html[:240] + "…"
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
		out = append(out, Finding{Category: CatKeyboard, Priority: pr, Title: fmt.Sprintf("%q cannot be reached with the keyboard", e.Name),
			Detail: "Tab never reaches this " + e.Tag + ", so a keyboard or switch user cannot use it.", Source: SourceKeyboard,
			WCAG: named([]string{"2.1.1"}), Page: page, Element: Element{Selector: e.Selector, Snippet: "<" + e.Tag + ">" + e.Name},
			Fix: Fix{How: "Use a real button or link, or give the element tabindex=\"0\" and handle Enter and Space.", Code: `<button type="button">` + e.Name + `</button>`}})
	}
	if t := k.Trap; t != nil {
		detail := fmt.Sprintf("Tab does not move focus on from this element, so a keyboard user cannot reach anything after it (%d controls).", len(k.BeyondTrap))
		if len(k.TrapCycle) > 1 {
			detail = fmt.Sprintf("Tab from this element sends focus back to %s, round %d elements that Escape does not leave, so a keyboard user cannot reach anything after them (%d controls).", k.TrapCycle[0], len(k.TrapCycle), len(k.BeyondTrap))
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
		out = append(out, Finding{Category: CatFocus, Priority: pr, Title: fmt.Sprintf("Focus on %q cannot be seen", s.Name),
			Detail: fmt.Sprintf("The element looks the same focused and not (%.1f%% of its pixels change).", 100*s.Change), Source: SourceKeyboard,
			WCAG: named([]string{"2.4.7"}), Page: page, Element: Element{Selector: s.Selector, Snippet: "<" + s.Tag + ">" + s.Name},
			Fix: Fix{How: "Show focus: do not remove the outline, or draw a clear one of your own.", Code: `:focus-visible { outline: 3px solid #1a5fd0; outline-offset: 2px; }`}})
	}
	return out
}

// formFindings are the form pass's problems.
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
		for _, f := range form.Fields {
			el := Element{Selector: f.Selector, Snippet: fmt.Sprintf(`<input name=%q type=%q>`, f.Name, f.Type)}
			if f.Label == "" {
				out = append(out, Finding{Category: CatForms, Priority: pr("P1", "P2"), Title: fmt.Sprintf("The %q field has no label", f.Name),
					Detail: "A screen reader announces the field without saying what to enter (a placeholder is not a label).", Source: SourceForms,
					WCAG: named([]string{"1.3.1", "3.3.2", "4.1.2"}), Page: page, Element: el,
					Fix: Fix{How: "Give the field a visible label tied to it.", Code: fmt.Sprintf(`<label for="%s">…</label>`, f.Name)}})
			}
			if f.Required && !f.RequiredMarked {
				out = append(out, Finding{Category: CatForms, Priority: pr("P2", "P3"), Title: fmt.Sprintf("The %q field is required but does not say so", f.Name),
					Detail: "The field must be filled, and its label does not tell the reader.", Source: SourceForms,
					WCAG: named([]string{"3.3.2"}), Page: page, Element: el,
					Fix: Fix{How: "Say \"required\" in the label (an asterisk explained once is also fine).", Code: `<label for="email">Email (required)</label>`}})
			}
			if f.Invalid && !f.ErrorTied {
				out = append(out, Finding{Category: CatForms, Priority: pr("P2", "P3"), Title: fmt.Sprintf("The error on %q is not tied to the field", f.Name),
					Detail: "After an empty submission the field is invalid, but no message is tied to it, so a screen reader user hears no reason.", Source: SourceForms,
					WCAG: named([]string{"3.3.1"}), Page: page, Element: el,
					Fix: Fix{How: "Tie the message to the field and mark it invalid.", Code: `<input id="email" aria-invalid="true" aria-describedby="email-err"> <p id="email-err">Enter an email address, like name@example.com</p>`}})
			}
		}
		switch {
		case form.Sent:
			out = append(out, Finding{Category: CatForms, Priority: pr("P2", "P4"), Title: "The form can be sent empty",
				Detail: "Submitted with every field empty, the form tried to send (the audit held it): nothing tells the person what is missing.", Source: SourceForms,
				WCAG: named([]string{"3.3.1", "3.3.3"}), Page: page, Element: Element{Selector: form.Selector, Snippet: "<form>"},
				Fix: Fix{How: "Check the fields before sending and say which are missing and why."}})
		case !form.Announced && !form.NativeBlocked && anyInvalid(form):
			out = append(out, Finding{Category: CatForms, Priority: pr("P2", "P3"), Title: "The form's errors are not announced",
				Detail: "After an empty submission the errors appear, but nothing announces them to a screen reader and focus does not move to them.", Source: SourceForms,
				WCAG: named([]string{"4.1.3"}), Page: page, Element: Element{Selector: form.Selector, Snippet: "<form>"},
				Fix: Fix{How: "Put an error summary in a live region, or move focus to it.", Code: `<div role="alert">There is 1 error: enter an email address</div>`}})
		}
	}
	return out
}

func anyInvalid(f forms.Form) bool {
	for _, x := range f.Fields {
		if x.Invalid {
			return true
		}
	}
	return false
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
