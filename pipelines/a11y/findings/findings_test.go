package findings

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"boxd/pipelines/a11y/axe"
	"boxd/pipelines/a11y/forms"
	"boxd/pipelines/a11y/judge"
	"boxd/pipelines/a11y/keyboard"
	"boxd/pipelines/a11y/motion"
)

var crit = map[string]axe.Criterion{
	"1.1.1": {SC: "1.1.1", Name: "Non-text Content", Level: "A", URL: "https://www.w3.org/TR/WCAG22/#non-text-content"},
	"2.1.1": {SC: "2.1.1", Name: "Keyboard", Level: "A", URL: "https://www.w3.org/TR/WCAG22/#keyboard"},
	"4.1.2": {SC: "4.1.2", Name: "Name, Role, Value", Level: "A", URL: "https://www.w3.org/TR/WCAG22/#name-role-value"},
}

func shop() []Page {
	return []Page{{URL: "https://shop.example/p/1",
		Rules: []axe.Result{
			{Rule: "image-alt", Outcome: axe.Violation, Impact: "critical", Help: "Images must have alternate text", Tags: []string{"cat.text-alternatives", "wcag111"}, WCAG: []string{"1.1.1"},
				Nodes: []axe.Node{{Target: []string{"img.hero"}, HTML: `<img class="hero" src="shoe.jpg">`}}},
			{Rule: "button-name", Outcome: axe.Violation, Impact: "critical", Help: "Buttons must have discernible text", Tags: []string{"cat.name-role-value", "wcag412"}, WCAG: []string{"4.1.2"},
				Nodes: []axe.Node{{Target: []string{"#cart-icon"}, HTML: `<button id="cart-icon" class="add-to-cart"></button>`}}},
			{Rule: "scrollable-region-focusable", Outcome: axe.Violation, Impact: "serious", Help: "Scrollable regions must be reachable", Tags: []string{"cat.keyboard", "wcag211"}, WCAG: []string{"2.1.1"},
				Nodes: []axe.Node{{Target: []string{"#reviews"}, HTML: `<div id="reviews">`}}},
			{Rule: "color-contrast", Outcome: axe.NeedsReview, Impact: "serious", Help: "Elements must meet contrast", Tags: []string{"cat.color", "wcag143"}, WCAG: []string{"1.4.3"},
				Nodes: []axe.Node{{Target: []string{".banner h2"}, HTML: `<h2>Sale</h2>`}}},
			{Rule: "region", Outcome: axe.Violation, Impact: "moderate", Help: "All content should be in landmarks", Tags: []string{"cat.keyboard", "best-practice"},
				Nodes: []axe.Node{{Target: []string{"footer p"}, HTML: `<p>`}}},
			{Rule: "document-title", Outcome: axe.Passed, Tags: []string{"wcag242"}},
		},
		Keyboard: &keyboard.Result{
			Stops: []keyboard.Stop{
				{Element: keyboard.Element{Selector: "#search", Tag: "input", Name: "Search"}, FocusVisible: true, Change: 0.2},
				{Element: keyboard.Element{Selector: "#checkout", Tag: "a", Name: "Checkout"}, FocusVisible: false, Change: 0.001},
				{Element: keyboard.Element{Selector: "#size-m", Tag: "div", Role: "button", Name: "Size M"}, FocusVisible: true, Change: 0.1, KeysWork: new(false)},
			},
			SkipLinks: []keyboard.SkipLink{{Element: keyboard.Element{Selector: "#skip", Tag: "a", Name: "Skip to content"}, Target: "#content", Works: false}},
			Dialogs:   []keyboard.Dialog{{Opener: keyboard.Element{Selector: "#guide", Tag: "button", Name: "Size guide"}, Opened: true, Declared: true}},
			Unreachable: []keyboard.Element{
				{Selector: "#buy", Tag: "div", Role: "button", Name: "Add to cart"},
				{Selector: "#reviews", Tag: "div", Name: "Reviews"},
			},
		},
		Forms: []forms.Form{{Selector: "#pay", Fields: []forms.Field{
			{Selector: "#card", Name: "card", Type: "text", Label: "", Required: true},
			{Selector: "#zip", Name: "zip", Type: "text", Label: "ZIP", Required: true, Invalid: true},
			{Selector: "#note", Name: "note", Type: "text", Label: "Delivery note"},
		}, Sent: false, Announced: false, Changed: true}},
	}}
}

// TestBuild: the shop page's problems become findings ranked by how much
// they block a purchase (the unreachable add-to-cart and the nameless
// cart button P1), each with criteria named from the table, an element
// and a fix; the scrollable region found by the rule engine and the
// keyboard pass is one finding naming both; the contrast the engine
// could not decide and the best practice are advisories.
func TestBuild(t *testing.T) {
	fs, adv := Build(shop(), crit)
	by := map[string]Finding{}
	for _, f := range fs {
		by[f.Title] = f
		if f.Fix.How == "" || f.Page == "" || f.Element.Selector == "" || f.Source == "" {
			t.Errorf("incomplete finding %+v", f)
		}
	}
	want := map[string]string{
		`"Add to cart" cannot be reached with the keyboard`: "P1",
		"Buttons must have discernible text":                "P1",
		"Images must have alternate text":                   "P2",
		`Focus on "Checkout" cannot be seen`:                "P2",
		`The "card" field has no label`:                     "P1",
		`The "card" field is required but does not say so`:  "P2",
		`The error on "zip" is not described in text`:       "P2",
	}
	for title, pr := range want {
		if f, ok := by[title]; !ok || f.Priority != pr {
			t.Errorf("%s: %+v, want %s", title, by[title], pr)
		}
	}
	// The form's only error has no text: there is nothing to announce,
	// and the 3.3.1 finding above is the one to fix (a held-out page
	// had both, the second counted false).
	if f, ok := by["The form's errors are not announced"]; ok {
		t.Errorf("errors with no text reported as not announced: %+v", f)
	}
	if f := by["Buttons must have discernible text"]; f.WCAG[0].Name != "Name, Role, Value" || f.Fix.Code == "" || f.Category != CatNames {
		t.Errorf("button-name %+v", f)
	}
	// One finding for the scrollable region, naming both passes.
	n := 0
	for _, f := range fs {
		if f.Element.Selector == "#reviews" {
			n++
			if len(f.AlsoFound) != 1 {
				t.Errorf("reviews %+v", f)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d findings for #reviews", n)
	}
	for i := 1; i < len(fs); i++ {
		if fs[i].Priority < fs[i-1].Priority {
			t.Errorf("out of priority order at %d: %s after %s", i, fs[i].Priority, fs[i-1].Priority)
		}
	}
	var checks, practices int
	for _, a := range adv {
		switch {
		case strings.HasPrefix(a.Title, "Check: ") && a.Element.Selector == ".banner h2":
			checks++
		case a.Title == "All content should be in landmarks" && len(a.WCAG) == 0:
			practices++
		}
	}
	escape := 0
	for _, a := range adv {
		if a.Title == `The dialog "Size guide" opens does not close with Escape` && a.Source == SourceKeyboard {
			escape++
		}
	}
	if len(adv) != 3 || checks != 1 || practices != 1 || escape != 1 {
		t.Errorf("advisories %+v", adv)
	}
	s := Summarize(fs, adv, 1)
	if s.Findings != len(fs) || s.ByPriority["P1"] != 3 || s.Advisories != 3 || s.Pages != 1 || s.WCAGCriteria[0] != "1.1.1" {
		t.Errorf("summary %+v", s)
	}
}

// TestCleanPage: nothing found, nothing reported.
func TestCleanPage(t *testing.T) {
	fs, adv := Build([]Page{{URL: "x", Rules: []axe.Result{{Rule: "image-alt", Outcome: axe.Passed}}, Keyboard: &keyboard.Result{}}}, crit)
	if len(fs) != 0 || len(adv) != 0 {
		t.Errorf("findings %v advisories %v", fs, adv)
	}
}

func TestSCOrder(t *testing.T) {
	if !scLess("1.4.3", "1.4.12") || scLess("2.1.1", "1.4.12") || !scLess("1.1.1", "1.2.1") {
		t.Error("scLess")
	}
}

// TestJudgeFindings: the vision judge's verdicts: alt text that does not
// describe its image is a 1.1.1 finding (P2 on the way to buy), an image
// marked decorative that holds text a 1.1.1 finding, an image of text a
// 1.4.5 finding at P4; each carries its call's receipt; an image whose
// alt text describes it and holds no text is no finding.
func TestJudgeFindings(t *testing.T) {
	no, yes := false, true
	page := Page{URL: "pasted", Judged: []judge.Verdict{
		{Selector: "#a", Alt: "image", Describes: &no, Snippet: `<img id="a" alt="image">`, Receipt: "r1"},
		{Selector: "#b", Alt: "Add to cart", Describes: &no, Snippet: `<input type="image" id="b" alt="Add to cart">`, Receipt: "r2"},
		{Selector: "#c", Decorative: true, HasText: true, Text: "50% off", Snippet: `<img id="c" alt="">`, Receipt: "r3"},
		{Selector: "#d", Alt: "Summer sale: 50% off", Describes: &yes, HasText: true, Text: "Summer sale 50% off", Snippet: `<img id="d">`, Receipt: "r4"},
		{Selector: "#e", Alt: "Red shoe", Describes: &yes, Snippet: `<img id="e">`, Receipt: "r5"},
	}}
	fs, _ := Build([]Page{page}, crit)
	got := map[string]string{}
	for _, f := range fs {
		if f.Source != SourceModel || f.Receipt == "" || len(f.WCAG) != 1 {
			t.Errorf("finding %+v", f)
			continue
		}
		got[f.Element.Selector] = f.Priority + " " + f.WCAG[0].SC
	}
	want := map[string]string{"#a": "P3 1.1.1", "#b": "P2 1.1.1", "#c": "P3 1.1.1", "#d": "P4 1.4.5"}
	if len(got) != len(want) {
		t.Errorf("findings %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// TestUndeclaredDialog: a dialog found by pressing a button that does not
// declare it is an advisory that says how to declare it.
func TestUndeclaredDialog(t *testing.T) {
	k := &keyboard.Result{Dialogs: []keyboard.Dialog{{Opener: keyboard.Element{Selector: "#rev", Tag: "button", Name: "Reviews"}, Opened: true, TookFocus: true, EscapeClosed: true, FocusReturned: true}}}
	fs, adv := Build([]Page{{URL: "pasted", Keyboard: k}}, crit)
	if len(fs) != 0 || len(adv) != 1 || adv[0].Title != `"Reviews" opens a dialog without saying so` || !strings.Contains(adv[0].Fix.Code, `aria-haspopup="dialog"`) {
		t.Errorf("findings %+v advisories %+v", fs, adv)
	}
}

// TestScriptedFormFindings: what the page's own script showed when each
// form was sent empty: a field flagged only by colour (3.3.1 and 1.4.1),
// one marked invalid with no text, and both, flagged by the script
// though the markup does not require them, unmarked as required (3.3.2);
// a form that stops the submission and shows nothing (3.3.1), unless it
// is a search (which may also be sent empty); a message that names no
// field (3.3.1); a form whose words say every field is required marks
// them all; the one field of a form, the two of a sign-in that are both
// required, and a field labelled optional need not say they are
// required; fields outside a form are judged as one.
func TestScriptedFormFindings(t *testing.T) {
	pg := Page{URL: "pasted", Forms: []forms.Form{
		{Selector: "#address", Changed: true, Focus: "field", Fields: []forms.Field{
			{Selector: "#street", Name: "street", Label: "Street", LookChanged: true},
			{Selector: "#city", Name: "city", Label: "City", Invalid: true},
			{Selector: "#zip", Name: "zip", Label: "ZIP", Error: "Enter a ZIP code", ErrorNear: true},
			{Selector: "#note", Name: "note", Label: "Note"},
		}},
		{Selector: "#coupon", Fields: []forms.Field{{Selector: "#code", Name: "code", Label: "Coupon code"}}},
		{Selector: "#find", Search: true, Fields: []forms.Field{{Selector: "#q", Name: "q", Label: "Search"}}},
		{Selector: "#site-search", Search: true, Sent: true, Fields: []forms.Field{{Selector: "#sq", Name: "sq", Label: "Search the shop"}}},
		{Selector: "#contact", Changed: true, Announced: true, Messages: []forms.Message{{Text: "Something went wrong", Field: -1}},
			Fields: []forms.Field{{Selector: "#a", Name: "a", Label: "Name"}, {Selector: "#b", Name: "b", Label: "Phone"}}},
		{Selector: "#all", Changed: true, Announced: true, AllRequired: true, Fields: []forms.Field{{Selector: "#m", Name: "m", Label: "Email", Invalid: true, Error: "Enter an email", ErrorTied: true},
			{Selector: "#p", Name: "p", Label: "Phone", Invalid: true, Error: "Enter a phone number", ErrorTied: true}}},
		{Selector: "#one", Changed: true, Announced: true, Fields: []forms.Field{{Selector: "#c", Name: "c", Label: "Coupon", Invalid: true, Error: "Enter a code", ErrorTied: true, Required: true}}},
		{Selector: "#opt", Changed: true, Announced: true, Fields: []forms.Field{{Selector: "#o1", Name: "o1", Label: "Note (optional)", Invalid: true, Error: "Too short", ErrorTied: true},
			{Selector: "#o2", Name: "o2", Label: "Email *", RequiredMarked: true}, {Selector: "#o3", Name: "o3", Label: "Phone"}}},
		{Selector: "#signin", Changed: true, Announced: true, Fields: []forms.Field{{Selector: "#u", Name: "u", Label: "Email", Invalid: true, Error: "Enter your email", ErrorTied: true},
			{Selector: "#pw", Name: "pw", Label: "Password", Invalid: true, Error: "Enter your password", ErrorTied: true},
			{Selector: "#keep", Name: "keep", Type: "checkbox", Label: "Keep me signed in"}}},
		{Selector: "#news", Orphan: true, Sent: true, Fields: []forms.Field{{Selector: "#nl", Name: "nl", Label: "Email"}}},
	}}
	fs, _ := Build([]Page{pg}, map[string]axe.Criterion{})
	got := map[string]string{}
	for _, f := range fs {
		var scs []string
		for _, c := range f.WCAG {
			scs = append(scs, c.SC)
		}
		got[f.Element.Selector+" "+f.Title] = f.Priority + " " + strings.Join(scs, ",")
	}
	want := map[string]string{
		`#street The error on "street" is shown only by colour`:       "P3 3.3.1,1.4.1",
		`#street The "street" field is required but does not say so`:  "P3 3.3.2",
		`#city The error on "city" is not described in text`:          "P3 3.3.1",
		`#city The "city" field is required but does not say so`:      "P3 3.3.2",
		`#zip The "zip" field is required but does not say so`:        "P3 3.3.2",
		`#address The form's errors are not announced`:                "P3 4.1.3",
		`#coupon Sending the form empty shows no error`:               "P3 3.3.1",
		`#contact The form's error does not say which field is wrong`: "P3 3.3.1",
		`#news The fields can be sent empty`:                          "P4 3.3.1,3.3.3",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("findings:\n%v", got)
	}
}

// TestTrapOnce: a trap is one finding that lists the controls it cuts
// off (the first ten by name, then how many more); they are no
// "cannot be reached" findings of their own. A checkbox hidden outright
// behind its label is unreachable (2.1.1, 4.1.2); one hidden from sight
// whose stand-in shows no focus is a 2.4.7 finding that says so.
func TestTrapOnce(t *testing.T) {
	var beyond []keyboard.Element
	for i := range 12 {
		beyond = append(beyond, keyboard.Element{Selector: fmt.Sprintf("#c%d", i), Tag: "a", Name: fmt.Sprintf("Link %d", i), Tabbable: true})
	}
	k := &keyboard.Result{
		Stops: []keyboard.Stop{{Element: keyboard.Element{Selector: "#gift", Tag: "input", Type: "checkbox", Name: "Gift wrap", StandIn: "label:nth-of-type(1)"}, Change: 0.001}},
		Trap:  &keyboard.Element{Selector: "#code", Tag: "input", Name: "Code"}, TrapCycle: []string{"#gift", "#code"}, BeyondTrap: beyond,
		Unreachable: []keyboard.Element{{Selector: "#terms", Tag: "input", Type: "checkbox", Name: "I agree to the terms", StandIn: "label:nth-of-type(2)"}},
	}
	fs, _ := Build([]Page{{URL: "pasted", Keyboard: k}}, crit)
	var traps, reach int
	for _, f := range fs {
		switch {
		case strings.HasPrefix(f.Title, "The keyboard is trapped"):
			traps++
			if !strings.Contains(f.Detail, `12 controls: "Link 0", "Link 1"`) || !strings.Contains(f.Detail, `"Link 9" and 2 more`) || f.Priority != "P1" {
				t.Errorf("trap %+v", f)
			}
		case strings.Contains(f.Title, "cannot be reached"):
			reach++
			if f.Title != `The checkbox "I agree to the terms" cannot be reached with the keyboard` || len(f.WCAG) != 2 || f.WCAG[1].SC != "4.1.2" {
				t.Errorf("unreachable %+v", f)
			}
		case strings.HasPrefix(f.Title, "Focus on"):
			if !strings.Contains(f.Detail, "stands in") || f.WCAG[0].SC != "2.4.7" {
				t.Errorf("stand-in focus %+v", f)
			}
		}
	}
	if traps != 1 || reach != 1 {
		t.Errorf("%d trap findings, %d unreachable:\n%+v", traps, reach, fs)
	}
}

// TestMotionAndTargetSize: a carousel holding an add-to-cart that moves
// with no pause control is a 2.2.2 finding at P2, a ticker at P3; one
// with a pause control is none. A small add-to-cart (target-size) is P2
// and a small share button P3, whatever the engine's impact.
func TestMotionAndTargetSize(t *testing.T) {
	pg := Page{URL: "pasted",
		Motion: []motion.Moving{
			{Selector: "#hero", Tag: "div", Name: "Summer sale", Source: "timer", What: "moves", Changes: 4, Controls: []string{"Add to cart"}},
			{Selector: "#ticker", Tag: "div", Name: "Free shipping", Source: "animation", What: "moves", Endless: true, Controls: []string{}},
			{Selector: "#promo", Tag: "div", Name: "Gift cards", Source: "timer", What: "moves", Pause: "#pause", PauseName: "Pause"},
		},
		Rules: []axe.Result{{Rule: "target-size", Outcome: axe.Violation, Impact: "serious", Help: "All touch targets must be 24px large, or leave sufficient space",
			Tags: []string{"cat.sensory-and-visual-cues", "wcag22aa", "wcag258"}, WCAG: []string{"2.5.8"},
			Nodes: []axe.Node{{Target: []string{"#add"}, HTML: `<button id="add" aria-label="Add to cart">+</button>`}, {Target: []string{"#share"}, HTML: `<button id="share">s</button>`}}}},
	}
	fs, _ := Build([]Page{pg}, crit)
	got := map[string]string{}
	for _, f := range fs {
		got[f.Element.Selector] = f.Priority + " " + f.WCAG[0].SC
		if f.Element.Selector == "#ticker" && !strings.Contains(f.Detail, "without end") {
			t.Errorf("ticker %+v", f)
		}
	}
	want := map[string]string{"#hero": "P2 2.2.2", "#ticker": "P3 2.2.2", "#add": "P2 2.5.8", "#share": "P3 2.5.8"}
	if len(got) != len(want) {
		t.Errorf("findings %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// TestOwnRulePriorities: boxd's own rules and the tabindex rule tied to
// 2.4.3 are findings with their criteria and a fix, P3, or P2 when the
// element is on the way to buy (a "click here" to the checkout), not
// the P1 their "serious" impact would give there; the alt text
// placeholder on a purchase control stays P1; the tabindex rule without
// a criterion stays a P4 advisory.
func TestOwnRulePriorities(t *testing.T) {
	rule := func(id string, wcag []string, html string) axe.Result {
		return axe.Result{Rule: id, Outcome: axe.Violation, Impact: "serious", Help: id, WCAG: wcag, Nodes: []axe.Node{{Target: []string{"#x"}, HTML: html}}}
	}
	for _, c := range []struct {
		r        axe.Result
		want     string
		advisory bool
	}{
		{rule("boxd-link-purpose", []string{"2.4.4"}, `<a href="/blog/7">Read more`), "P3", false},
		{rule("boxd-link-purpose", []string{"2.4.4"}, `<a href="/checkout">click here`), "P2", false},
		{rule("boxd-reflow", []string{"1.4.10"}, `<ul class="results">`), "P3", false},
		{rule("tabindex", []string{"2.4.3"}, `<button tabindex="3">Add to cart</button>`), "P2", false},
		{rule("tabindex", nil, `<button tabindex="1">Skip</button>`), "P4", true},
		{rule("boxd-alt-placeholder", []string{"1.1.1"}, `<img src="a.jpg" alt="image">`), "P3", false},
		{rule("boxd-alt-placeholder", []string{"1.1.1"}, `<input type="image" alt="checkout.png" src="checkout.png">`), "P1", false},
	} {
		fs, adv := Build([]Page{{URL: "p", Rules: []axe.Result{c.r}}}, crit)
		got := fs
		if c.advisory {
			got = adv
		}
		if len(got) != 1 || got[0].Priority != c.want || got[0].Fix.How == "" || got[0].Source != SourceRules || len(got[0].WCAG) != len(c.r.WCAG) {
			t.Errorf("%s %s: findings %+v advisories %+v, want one %s", c.r.Rule, c.r.Nodes[0].HTML, fs, adv, c.want)
		}
	}
}

// TestSnippetKeepsWholeCharacters: a node's HTML cut for a finding never
// ends in half a character (239 ASCII bytes then "é" crossed byte 240).
func TestSnippetKeepsWholeCharacters(t *testing.T) {
	for _, html := range []string{strings.Repeat("a", 239) + "éééé", strings.Repeat("日", 100), strings.Repeat("a", 240)} {
		got := snippet(html)
		if !utf8.ValidString(got) || !strings.HasPrefix(html, strings.TrimSuffix(got, "…")) || len(got) > 240+len("…") {
			t.Errorf("snippet of %d bytes: %q", len(html), got)
		}
	}
}
