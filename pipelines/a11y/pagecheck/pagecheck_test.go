package pagecheck

import (
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/engine/browser/browsertest"
	"boxd/pipelines/a11y/axe"
)

const head = `<!doctype html><html lang="en"><head><title>Shop</title><meta name="viewport" content="width=device-width"></head><body><main>`

// found runs the checks on html and returns the named rule's elements'
// selectors (none when it passed).
func found(t *testing.T, tab *browser.Tab, rule, html string) []axe.Node {
	t.Helper()
	if err := tab.LoadHTML(head + html + `</main></body></html>`); err != nil {
		t.Fatal(err)
	}
	rs, err := Run(tab)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Rule != rule {
			continue
		}
		if (r.Outcome == axe.Violation) != (len(r.Nodes) > 0) {
			t.Fatalf("%s: outcome %s with %d elements", rule, r.Outcome, len(r.Nodes))
		}
		return r.Nodes
	}
	t.Fatalf("no %s result", rule)
	return nil
}

// TestAltPlaceholder: alt text that is a file name, a camera's file
// name, a placeholder or the image's own file name is a 1.1.1 violation
// on that image; alt text that describes, alt="" and an image named by
// aria-label are not.
func TestAltPlaceholder(t *testing.T) {
	tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
	for _, c := range []struct {
		name, html string
		bad        bool
	}{
		{"file name", `<img id="x" src="/p/1.jpg" alt="IMG_2041.jpg">`, true},
		{"camera name", `<img id="x" src="/p/1.jpg" alt="DSC00012">`, true},
		{"photo.png", `<img id="x" src="/p/1.jpg" alt="photo.png">`, true},
		{"image", `<img id="x" src="/p/1.jpg" alt="image">`, true},
		{"Picture.", `<img id="x" src="/p/1.jpg" alt="Picture.">`, true},
		{"product image", `<img id="x" src="/p/1.jpg" alt="Product image">`, true},
		{"banner", `<img id="x" src="/b.jpg" alt="banner">`, true},
		{"untitled", `<img id="x" src="/b.jpg" alt="untitled">`, true},
		{"src's stem", `<img id="x" src="/img/red-sneaker-left.webp?w=300" alt="red-sneaker-left">`, true},
		{"image button", `<input id="x" type="image" src="/go.png" alt="go.png">`, true},
		{"describes", `<img id="x" src="/p/IMG_2041.jpg" alt="Red canvas sneaker, side view">`, false},
		{"names its photo", `<img id="x" src="/p/1.jpg" alt="Photo of the Trailblazer boot in olive">`, false},
		{"decoration", `<img id="x" src="/p/divider.png" alt="">`, false},
		{"aria-label", `<img id="x" src="/p/1.jpg" alt="image" aria-label="Olive hiking boot">`, false},
		{"hidden", `<div hidden><img id="x" src="/p/1.jpg" alt="image"></div>`, false},
	} {
		nodes := found(t, tab, RuleAltPlaceholder, c.html)
		switch {
		case c.bad && (len(nodes) != 1 || nodes[0].Target[0] != "#x" || !strings.Contains(nodes[0].Summary, "not a description")):
			t.Errorf("%s: %+v, want #x", c.name, nodes)
		case !c.bad && len(nodes) > 0:
			t.Errorf("%s: false finding %+v", c.name, nodes)
		}
	}
}

// TestLinkPurpose: a generic link text ("Read more", "click here") whose
// context (its paragraph, list item, table cell and column header,
// aria-describedby, the heading before it) names nothing is a 2.4.4
// violation; the same text in a sentence that names the article, with a
// hidden completion, an aria-label, or under a heading that names it is
// not, and only the generic texts are judged.
func TestLinkPurpose(t *testing.T) {
	tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
	for _, c := range []struct {
		name, html string
		bad        bool
	}{
		{"generic heading", `<section><h2>Don't miss out</h2><div><a id="x" href="/a/1">Read more</a></div></section>`, true},
		{"click here alone", `<h2>News</h2><p><a id="x" href="/x">Click here</a></p>`, true},
		{"here in a thin sentence", `<h2>Latest</h2><p>See more <a id="x" href="/x">here</a>.</p>`, true},
		{"arrowed", `<h2>Hot deals</h2><ul><li><a id="x" href="/d">Learn more →</a></li></ul>`, true},
		{"generic aria-label", `<h2>Updates</h2><div><a id="x" href="/x" aria-label="more">…</a></div>`, true},
		{"in a sentence", `<h2>Don't miss out</h2><p>Our guide to choosing trail running shoes for wet winter paths. <a id="x" href="/a/1">Read more</a></p>`, false},
		{"hidden completion", `<h2>Don't miss out</h2><div><a id="x" href="/a/1">Read more<span style="position:absolute;clip:rect(0 0 0 0);width:1px;height:1px;overflow:hidden"> about waterproof hiking boots</span></a></div>`, false},
		{"aria-label", `<h2>Don't miss out</h2><div><a id="x" href="/a/1" aria-label="Read more about waterproof hiking boots">Read more</a></div>`, false},
		{"describedby", `<h2>Don't miss out</h2><div><span id="d">Winter boot sale</span><a id="x" href="/a/1" aria-describedby="d">Learn more</a></div>`, false},
		{"heading names it", `<article><h3>Summer sandals: 30% off leather slides</h3><div><a id="x" href="/s">Read more</a></div></article>`, false},
		{"table cell header", `<table><tr><th>Product</th><th>Care guide</th></tr><tr><th>Suede chelsea boot</th><td><a id="x" href="/c/1">here</a></td></tr></table>`, false},
		{"not generic", `<h2>Don't miss out</h2><div><a id="x" href="/sale">Shop the winter sale</a></div>`, false},
	} {
		nodes := found(t, tab, RuleLinkPurpose, c.html)
		switch {
		case c.bad && (len(nodes) != 1 || nodes[0].Target[0] != "#x"):
			t.Errorf("%s: %+v, want #x", c.name, nodes)
		case !c.bad && len(nodes) > 0:
			t.Errorf("%s: false finding %+v", c.name, nodes)
		}
	}
}

// TestReflow: laid out 320 px wide, a results list with min-width:
// 1100px makes the page scroll sideways and is named (not html or body,
// not its items), as is a fixed-width block and a grid whose third
// column is pushed out (the grid, not the column); a list that wraps, a wide data table in its own
// scrolling container, a wide data table or code block on its own
// (exempt) are not findings; the tab is back at its width afterwards.
func TestReflow(t *testing.T) {
	tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline, Width: 1280, Height: 900})
	items := strings.Repeat(`<li style="flex:0 0 200px">Trail shoe <button>Add to cart</button></li>`, 5)
	wide := `<table><tr>` + strings.Repeat(`<th style="min-width:200px">Size chart column</th>`, 6) + `</tr></table>`
	for _, c := range []struct {
		name, html string
		want       string
	}{
		{"min-width list", `<h1>Results</h1><ul id="results" style="display:flex;min-width:1100px;list-style:none">` + items + `</ul>`, "#results"},
		{"fixed width div", `<div style="width:900px" id="wrap"><p>Free delivery on orders over £50.</p></div>`, "#wrap"},
		{"pushed-out column", `<div id="grid" style="display:grid;grid-template-columns:repeat(3,minmax(120px,1fr));gap:24px"><p>Ridge runner</p><p>Mud master</p><p>Trail lite</p></div>`, "#grid"},
		{"collapsing grid", `<div id="grid" style="display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:24px"><p>Ridge runner</p><p>Mud master</p><p>Trail lite</p></div>`, ""},
		{"wrapping list", `<h1>Results</h1><ul id="results" style="display:flex;flex-wrap:wrap;list-style:none;padding:0">` + strings.ReplaceAll(items, "flex:0 0 200px", "flex:0 1 200px") + `</ul>`, ""},
		{"table in a scroller", `<div style="overflow-x:auto;max-width:100%">` + wide + `</div>`, ""},
		{"data table", wide, ""},
		{"code", `<pre>` + strings.Repeat("x", 300) + `</pre>`, ""},
	} {
		if err := tab.LoadHTML(head + c.html + `</main></body></html>`); err != nil {
			t.Fatal(err)
		}
		// The other checks first, as an audit runs them, in the same document.
		if _, err := Run(tab); err != nil {
			t.Fatal(err)
		}
		r, err := Reflow(tab, Viewport{Width: 1280, Height: 900})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range r.Nodes {
			got = append(got, n.Target[0])
		}
		switch {
		case c.want == "" && r.Outcome != axe.Passed:
			t.Errorf("%s: false finding %+v", c.name, r.Nodes)
		case c.want != "" && (r.Outcome != axe.Violation || !slices.Equal(got, []string{c.want}) || !slices.Equal(r.WCAG, []string{"1.4.10"})):
			t.Errorf("%s: %s %v %v, want %s on 1.4.10", c.name, r.Outcome, got, r.WCAG, c.want)
		}
		w, err := chromedp.Run(tab.Context(), chromedp.Evaluate[int](`window.innerWidth`))
		if err != nil || w != 1280 {
			t.Fatalf("%s: the tab is %d px wide after the check (%v)", c.name, w, err)
		}
	}
}
