package axe

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"boxd/engine/browser"
	"boxd/engine/browser/browsertest"
)

func engine(t *testing.T) *Engine {
	t.Helper()
	e, err := Load(filepath.Join("npm", "node_modules", "axe-core"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (make deps installs axe-core)", err)
		}
		t.Skip(err)
	}
	return e
}

func tab(t *testing.T) *browser.Tab {
	t.Helper()
	return browsertest.Tab(t, browser.Policy{Network: browser.Offline})
}

// TestRunFindsPlantedProblems: axe-core, injected into an offline page with
// planted problems, reports each with its WCAG criteria (an image without
// a text alternative, 1.1.1; a button without a name, 4.1.2; no page
// language, 3.1.1; grey text on grey, 1.4.3), and a clean page none of
// them; its version and the script's hash are the pinned package's.
func TestRunFindsPlantedProblems(t *testing.T) {
	e := engine(t)
	if e.Version != "4.14.1" || len(e.SHA256) != 64 {
		t.Fatalf("engine %s %s", e.Version, e.SHA256)
	}
	tb := tab(t)
	page := `<!doctype html><html><head><title>Shop</title></head><body><main>
<h1>Shoes</h1><img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==" width="40" height="40">
<button></button><p style="color:#aaa;background:#bbb">Sale ends soon</p></main></body></html>`
	if err := tb.LoadHTML(page); err != nil {
		t.Fatal(err)
	}
	rs, err := e.Run(tb)
	if err != nil {
		t.Fatal(err)
	}
	violations := map[string][]string{}
	for _, r := range rs {
		if r.Outcome == Violation {
			violations[r.Rule] = r.WCAG
			if len(r.Nodes) == 0 || r.Help == "" || r.HelpURL == "" {
				t.Errorf("%s: %+v", r.Rule, r)
			}
		}
	}
	for rule, sc := range map[string]string{"image-alt": "1.1.1", "button-name": "4.1.2", "html-has-lang": "3.1.1", "color-contrast": "1.4.3"} {
		if !slices.Contains(violations[rule], sc) {
			t.Errorf("%s not reported with %s: %v", rule, sc, violations)
		}
	}
	clean := `<!doctype html><html lang="en"><head><title>Shop</title></head><body><main><h1>Shoes</h1>
<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==" alt="Red running shoe" width="40" height="40">
<button>Add to cart</button><p>Sale ends soon</p></main></body></html>`
	if err := tb.LoadHTML(clean); err != nil {
		t.Fatal(err)
	}
	rs, err = e.Run(tb)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Outcome == Violation {
			t.Errorf("the clean page: %s (%v)", r.Rule, r.Nodes)
		}
	}
}

// TestCriteria: axe-core's tags to success criteria, and data_dir's WCAG
// 2.2 table (86 criteria) giving each its name, level and link.
func TestCriteria(t *testing.T) {
	if got := Criteria([]string{"cat.text-alternatives", "wcag2a", "wcag111", "wcag1412", "wcag21aa", "best-practice"}); !slices.Equal(got, []string{"1.1.1", "1.4.12"}) {
		t.Errorf("criteria %v", got)
	}
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		t.Skip("BOXD_TEST_DATA is not set")
	}
	cs, err := LoadCriteria(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c := cs["1.4.3"]; len(cs) != 86 || c.Name != "Contrast (Minimum)" || c.Level != "AA" || c.URL != "https://www.w3.org/TR/WCAG22/#contrast-minimum" {
		t.Errorf("%d criteria; 1.4.3 %+v", len(cs), c)
	}
}

// TestRefine: the corrections boxd makes to the rule engine's answers.
// The ACT test case 0ssw9k "Inapplicable Example 5" (from the test data),
// whose region scrolls 56 pixels with 30 of padding above and 30 below,
// is not reported (the rule engine alone reports it); a region that
// scrolls further is. An iframe with tabindex=-1 holding a link is
// reported, one holding only text and one made inert are not.
func TestRefine(t *testing.T) {
	e := engine(t)
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		t.Skip("BOXD_TEST_DATA is not set")
	}
	small, err := os.ReadFile(filepath.Join(dir, "act-rules", "testcases", "0ssw9k", "8f9b5bf5fc8345b8e7aa016621fb5dee6c13c8f2.html"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(page string, rules ...string) map[string]Result {
		t.Helper()
		tb := tab(t)
		if err := tb.LoadHTML(page); err != nil {
			t.Fatal(err)
		}
		rs, err := e.RunRules(tb, rules)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Result{}
		for _, r := range rs {
			got[r.Rule] = r
		}
		return got
	}
	targets := func(r Result) (out []string) {
		for _, n := range r.Nodes {
			out = append(out, n.Target[len(n.Target)-1])
		}
		return out
	}
	if r := run(string(small), "scrollable-region-focusable")["scrollable-region-focusable"]; r.Outcome == Violation {
		t.Errorf("a region scrolling less than its padding: %s %v", r.Outcome, targets(r))
	}
	words := strings.Repeat("Web Content Accessibility Guidelines cover a wide range of recommendations for making Web content more accessible. ", 10)
	got := run(`<!doctype html><html lang="en"><head><title>Frames</title></head><body><main>
<section id="big" style="height:100px;width:300px;overflow-y:scroll"><p>`+words+`</p></section>
<iframe id="links" tabindex="-1" title="Links" srcdoc="<a href='/'>Home</a>"></iframe>
<iframe id="words" tabindex="-1" title="Words" srcdoc="<p>Hello</p>"></iframe>
<iframe id="sleeping" tabindex="-1" inert title="Asleep" srcdoc="<a href='/'>Home</a>"></iframe>
</main></body></html>`, "scrollable-region-focusable", "frame-focusable-content", "html-has-lang")
	if r := got["scrollable-region-focusable"]; r.Outcome != Violation || !slices.Equal(targets(r), []string{"#big"}) {
		t.Errorf("scrollable regions %s %v", r.Outcome, targets(r))
	}
	if r := got["frame-focusable-content"]; r.Outcome != Violation || !slices.Equal(targets(r), []string{"#links"}) || !slices.Contains(r.WCAG, "2.1.1") {
		t.Errorf("frames %s %v %v", r.Outcome, targets(r), r.WCAG)
	}
	if r := got["html-has-lang"]; r.Outcome != Passed {
		t.Errorf("html-has-lang on an HTML page: %s", r.Outcome)
	}
}

// TestTargetSize: the rule engine's target-size rule (2.5.8), off in
// axe-core by default, runs: a 16 px add-to-cart button next to another
// small button fails it; a 16 px button with room around it (the
// spacing exception) and a 44 px one pass.
func TestTargetSize(t *testing.T) {
	tb := tab(t)
	if err := tb.LoadHTML(`<!doctype html><html lang="en"><head><title>Shop</title><style>
.s{width:16px;height:16px;padding:0;border:1px solid #333;margin:0;font-size:10px;line-height:1}</style></head><body><main><h1>Socks</h1>
<div><button class="s" id="add" aria-label="Add to cart">+</button><button class="s" id="wish" aria-label="Save">*</button></div>
<p style="margin-top:60px"><button class="s" id="alone" aria-label="Share">s</button></p>
<p style="margin-top:60px"><button id="big" style="width:44px;height:44px">Buy</button></p></main></body></html>`); err != nil {
		t.Fatal(err)
	}
	rs, err := engine(t).Run(tb)
	if err != nil {
		t.Fatal(err)
	}
	var small []string
	for _, r := range rs {
		if r.Rule == "target-size" && r.Outcome == Violation {
			if !slices.Equal(r.WCAG, []string{"2.5.8"}) {
				t.Errorf("target-size criteria %v", r.WCAG)
			}
			for _, n := range r.Nodes {
				small = append(small, strings.Join(n.Target, " "))
			}
		}
	}
	slices.Sort(small)
	if got := strings.Join(small, ","); got != "#add,#wish" {
		t.Errorf("too small: %q", got)
	}
}

// TestPositiveTabindex: a positive tabindex that makes Tab reach an
// element before ones that come first on the page is the tabindex rule
// tied to 2.4.3 (Focus Order) on the elements moved; a positive tabindex
// that leaves the order as the document's (the first control) keeps the
// rule best practice, with no criterion.
func TestPositiveTabindex(t *testing.T) {
	e := engine(t)
	tb := tab(t)
	for _, c := range []struct {
		name, body string
		want       []string // the elements tied to 2.4.3
	}{
		{"moved", `<a href="/a">Home</a> <button>Search</button> <button id="late" tabindex="3">Checkout</button> <button id="first" tabindex="1">Skip</button>`, []string{"#late", "#first"}},
		{"one moved", `<button id="lead" tabindex="1">Skip</button> <a href="/a">Home</a> <button id="late" tabindex="2">Checkout</button> <button>Search</button>`, []string{"#late"}},
		{"document order", `<button id="first" tabindex="1">Skip to results</button> <a href="/a">Home</a> <button>Search</button>`, nil},
	} {
		if err := tb.LoadHTML(`<!doctype html><html lang="en"><head><title>Shop</title></head><body><main>` + c.body + `</main></body></html>`); err != nil {
			t.Fatal(err)
		}
		rs, err := e.RunRules(tb, []string{"tabindex"})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(rs, func(r Result) bool { return r.Rule == "tabindex" })
		if i < 0 {
			t.Fatalf("%s: no tabindex result", c.name)
		}
		r := rs[i]
		var got []string
		if slices.Contains(r.WCAG, "2.4.3") {
			for _, n := range r.Nodes {
				got = append(got, n.Target[len(n.Target)-1])
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %s tied to 2.4.3: %v, want %v (%+v)", c.name, r.Outcome, got, c.want, r.Nodes)
		}
		if c.want == nil && (r.Outcome != Violation || len(r.WCAG) != 0) {
			t.Errorf("%s: %s %v, want a best-practice violation with no criterion", c.name, r.Outcome, r.WCAG)
		}
	}
}
