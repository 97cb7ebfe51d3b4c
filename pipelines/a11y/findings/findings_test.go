package findings

import (
	"strings"
	"testing"

	"boxd/pipelines/a11y/axe"
	"boxd/pipelines/a11y/forms"
	"boxd/pipelines/a11y/judge"
	"boxd/pipelines/a11y/keyboard"
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
		}, Sent: false, Announced: false}},
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
		`The error on "zip" is not tied to the field`:       "P2",
		"The form's errors are not announced":               "P2",
	}
	for title, pr := range want {
		if f, ok := by[title]; !ok || f.Priority != pr {
			t.Errorf("%s: %+v, want %s", title, by[title], pr)
		}
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
