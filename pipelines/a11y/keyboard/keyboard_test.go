package keyboard

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"boxd/engine/browser"
	"boxd/engine/browser/browsertest"
)

func openPage(t *testing.T, html string) *browser.Tab {
	t.Helper()
	tb := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
	if err := tb.LoadHTML(html); err != nil {
		t.Fatal(err)
	}
	return tb
}

func names(es []Element) string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return strings.Join(out, ",")
}

// TestTabOrderAndReach: Tab walks the links, buttons and fields in order,
// each with its focus showing; a div with a click handler and a button
// taken out of the order (tabindex -1), both visible, are unreachable.
func TestTabOrderAndReach(t *testing.T) {
	tb := openPage(t, `<!doctype html><html lang="en"><body>
<a href="#main">Skip to content</a>
<button>Search</button>
<input aria-label="Email">
<div role="button" onclick="buy()">Add to cart</div>
<button tabindex="-1">Checkout</button>
<a href="/help">Help</a></body></html>`)
	res, err := Pass(context.Background(), tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	var stops []string
	for _, s := range res.Stops {
		stops = append(stops, s.Name)
		if !s.FocusVisible {
			t.Errorf("%s: focus not visible (change %.3f)", s.Name, s.Change)
		}
	}
	if got := strings.Join(stops, ","); got != "Skip to content,Search,Email,Help" {
		t.Errorf("tab stops %s", got)
	}
	if got := names(res.Unreachable); got != "Add to cart,Checkout" {
		t.Errorf("unreachable %s", got)
	}
	if !res.BackwardMatches || len(res.Backward) != 4 {
		t.Errorf("Shift+Tab %v (matches %v)", res.Backward, res.BackwardMatches)
	}
	if res.Trap != nil {
		t.Errorf("trap %+v", res.Trap)
	}
}

// TestInvisibleFocus: a button whose focus style is removed (outline: none)
// is reached but its focus does not show; its neighbour's does; a third
// without an outline whose focus lights a marker far from it (a status
// line at the top of the page) shows its focus elsewhere.
func TestInvisibleFocus(t *testing.T) {
	tb := openPage(t, `<!doctype html><html lang="en"><head><style>#quiet:focus,#far:focus{outline:none}
#marker{width:200px;height:20px} body:has(#far:focus) #marker{background:#000}</style></head><body>
<div id="marker"></div><div style="height:300px"></div>
<button>Loud</button> <button id="quiet">Quiet</button> <button id="far">Far</button></body></html>`)
	res, err := Pass(context.Background(), tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stops) != 3 || !res.Stops[0].FocusVisible || res.Stops[1].FocusVisible || res.Stops[1].ChangedElsewhere != 0 ||
		!res.Stops[2].FocusVisible || res.Stops[2].ChangedElsewhere < 200*20 {
		t.Errorf("stops %+v", res.Stops)
	}
}

// TestTrap: a field that takes Tab back to itself traps the keyboard;
// the pass stops there and names it (by its label), and the button after
// it is beyond the trap, not counted unreachable.
func TestTrap(t *testing.T) {
	tb := openPage(t, `<!doctype html><html lang="en"><body>
<button>Before</button>
<input id="code" aria-label="Code" onkeydown="if (event.key === 'Tab') { event.preventDefault(); this.focus(); }">
<button>After</button></body></html>`)
	res, err := Pass(context.Background(), tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Trap == nil || res.Trap.Name != "Code" {
		t.Fatalf("trap %+v; stops %+v", res.Trap, res.Stops)
	}
	if got, beyond := names(res.Unreachable), names(res.BeyondTrap); got != "" || beyond != "After" {
		t.Errorf("unreachable %q, beyond the trap %q", got, beyond)
	}
}

// TestSkipLinksAndKeys: a skip link whose target exists moves focus past
// the navigation; one whose target is missing does not. A div made a
// button that answers clicks only does not work with Enter or Space; one
// that handles the keys does; a scrollable region and editable text in
// the tab order are not asked to.
func TestSkipLinksAndKeys(t *testing.T) {
	tb := openPage(t, `<!doctype html><html lang="en"><body>
<a href="#main">Skip to content</a>
<nav><a href="/a">Shoes</a> <a href="/b">Socks</a></nav>
<main id="main"><a href="/c">First product</a>
<div role="button" tabindex="0" onclick="window.x=1">Click only</div>
<div role="button" tabindex="0" onclick="window.y=1" onkeydown="if (event.key === 'Enter' || event.key === ' ') this.click()">Keys too</div>
<div tabindex="0" role="region" aria-label="Size chart" style="height:60px;overflow:auto"><p style="height:200px">Sizes</p></div>
<div tabindex="0" contenteditable="true" aria-label="Gift message">Happy birthday</div>
</main></body></html>`)
	res, err := Pass(context.Background(), tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.SkipLinks) != 1 || !res.SkipLinks[0].Works || res.SkipLinks[0].Target != "#main" {
		t.Errorf("skip links %+v", res.SkipLinks)
	}
	keys := map[string]bool{}
	for _, s := range res.Stops {
		if s.KeysWork != nil {
			keys[s.Name] = *s.KeysWork
		}
	}
	if len(keys) != 2 || keys["Click only"] || !keys["Keys too"] {
		t.Errorf("keys %v", keys)
	}
	broken := openPage(t, `<!doctype html><html lang="en"><body><a href="#content">Skip to content</a>
<nav><a href="/a">Shoes</a></nav><main><a href="/c">First product</a></main></body></html>`)
	res, err = Pass(context.Background(), broken, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.SkipLinks) != 1 || res.SkipLinks[0].Works {
		t.Errorf("a skip link to nowhere: %+v", res.SkipLinks)
	}
	// A first link that does not say "skip" is a skip link only when it
	// leads to the main content: a logo's "#home" (nothing there) and a
	// "#top" around the whole page are not; "Zum Inhalt" and a first link
	// to <main> are.
	for _, c := range []struct {
		first string
		want  int
	}{
		{`<a href="#home">Harbor &amp; Pine</a>`, 0},
		{`<a href="#top">Brand</a>`, 0},
		{`<a href="#main">Zum Inhalt</a>`, 1},
		{`<a href="#main">Shop</a>`, 1},
	} {
		tb := openPage(t, `<!doctype html><html lang="en"><body><div id="top"><header>`+c.first+`<nav><a href="/a">Shoes</a></nav></header>
<main id="main" tabindex="-1"><h1>Shoes</h1><a href="/c">First product</a></main></div></body></html>`)
		res, err := Pass(context.Background(), tb, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.SkipLinks) != c.want || c.want == 1 && !res.SkipLinks[0].Works {
			t.Errorf("%s: skip links %+v", c.first, res.SkipLinks)
		}
	}
}

// TestBackward: a field whose script sends Shift+Tab elsewhere makes the
// way back differ from the way forward.
func TestBackward(t *testing.T) {
	tb := openPage(t, `<!doctype html><html lang="en"><body>
<button id="a">One</button> <button id="b">Two</button>
<input id="c" aria-label="Three" onkeydown="if (event.key === 'Tab' && event.shiftKey) { event.preventDefault(); document.getElementById('a').focus(); }">
<button id="d">Four</button></body></html>`)
	res, err := Pass(context.Background(), tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.BackwardMatches || len(res.Stops) != 4 {
		t.Errorf("stops %d, backward %v (matches %v)", len(res.Stops), res.Backward, res.BackwardMatches)
	}
}

// TestDialogs: a dialog button whose dialog takes focus, closes on Escape
// and gives focus back; one whose dialog does none of that; a button
// that declares nothing but opens a dialog (found by pressing it, listed
// as undeclared); a button that opens nothing (not listed).
func TestDialogs(t *testing.T) {
	tb := openPage(t, `<!doctype html><html lang="en"><body>
<button id="reviews" type="button" onclick="const d = document.getElementById('rd'); d.hidden = false; d.querySelector('button').focus();">Reviews</button>
<div id="rd" role="dialog" aria-label="Reviews" hidden onkeydown="if (event.key === 'Escape') { this.hidden = true; document.getElementById('reviews').focus(); }"><button>Close reviews</button></div>
<button id="like" type="button" onclick="this.textContent = 'Liked'">Like</button>
<button id="good" aria-haspopup="dialog" onclick="const d = document.getElementById('gd'); d.hidden = false; d.querySelector('button').focus();">Size guide</button>
<div id="gd" role="dialog" aria-label="Size guide" hidden onkeydown="if (event.key === 'Escape') { this.hidden = true; document.getElementById('good').focus(); }"><button>Close</button></div>
<button id="bad" aria-controls="bd" onclick="document.getElementById('bd').hidden = false;">Shipping</button>
<div id="bd" role="dialog" aria-label="Shipping" hidden><p>Free over $50</p><button onclick="this.parentElement.hidden = true">Close</button></div>
</body></html>`)
	res, err := Pass(context.Background(), tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Dialogs) != 3 {
		t.Fatalf("dialogs %+v", res.Dialogs)
	}
	reviews, good, bad := res.Dialogs[0], res.Dialogs[1], res.Dialogs[2]
	if reviews.Opener.Name != "Reviews" || reviews.Declared || !reviews.Opened || !reviews.TookFocus || !reviews.EscapeClosed || !reviews.FocusReturned || !good.Declared || !bad.Declared {
		t.Errorf("the undeclared dialog %+v (good declared %v, bad %v)", reviews, good.Declared, bad.Declared)
	}
	if !good.Opened || !good.TookFocus || !good.EscapeClosed || !good.FocusReturned {
		t.Errorf("the good dialog %+v", good)
	}
	if !bad.Opened || bad.TookFocus || bad.EscapeClosed {
		t.Errorf("the bad dialog %+v", bad)
	}
}

// TestTrapCycle: a group whose last field sends Tab back to its first
// traps focus among the two (the trap named at the last, the cycle
// listed, the button after them beyond the trap); the same group that
// Escape leaves (as a modal dialog should) is no trap, and the walk goes
// on from where Escape put focus.
func TestTrapCycle(t *testing.T) {
	group := func(escape string) string {
		return `<!doctype html><html lang="en"><body>
<button>Before</button>
<div id="box"><input id="a" aria-label="Street"><input id="b" aria-label="City"
  onkeydown="if (event.key === 'Tab' && !event.shiftKey) { event.preventDefault(); document.getElementById('a').focus(); }"></div>
<button id="after">After</button>
<script>document.getElementById('box').addEventListener('keydown', (e) => { if (e.key === 'Escape') { ` + escape + ` } });</script>
</body></html>`
	}
	res, err := Pass(context.Background(), openPage(t, group("")), 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Trap == nil || res.Trap.Name != "City" || strings.Join(res.TrapCycle, ",") != "#a,#b" || names(res.BeyondTrap) != "After" || names(res.Unreachable) != "" {
		t.Fatalf("trap %+v cycle %v beyond %q unreachable %q", res.Trap, res.TrapCycle, names(res.BeyondTrap), names(res.Unreachable))
	}
	res, err = Pass(context.Background(), openPage(t, group("document.getElementById('after').focus();")), 0)
	if err != nil {
		t.Fatal(err)
	}
	var stops []string
	for _, st := range res.Stops {
		stops = append(stops, st.Name)
	}
	if res.Trap != nil || len(res.TrapCycle) != 0 || strings.Join(stops, ",") != "Before,Street,City,After" || names(res.Unreachable) != "" {
		t.Errorf("a group Escape leaves: trap %+v %v, stops %v, unreachable %q", res.Trap, res.TrapCycle, stops, names(res.Unreachable))
	}
}

// TestFocusAfterScroll: on a page several screens long, every control
// but one shows the browser's focus ring; Tab scrolls the page to each,
// and each is measured where it is in the viewport then: only the one
// whose outline is removed does not show focus.
func TestFocusAfterScroll(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><style>.gap{height:260px} #quiet:focus{outline:none}</style></head><body>`)
	for i := range 14 {
		id := ""
		if i == 11 {
			id = ` id="quiet"`
		}
		fmt.Fprintf(&b, `<div class="gap"></div><button%s>Item %d</button>`, id, i)
	}
	b.WriteString(`</body></html>`)
	res, err := Pass(context.Background(), openPage(t, b.String()), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stops) != 14 {
		t.Fatalf("%d stops", len(res.Stops))
	}
	var hidden []string
	for _, s := range res.Stops {
		if !s.FocusVisible {
			hidden = append(hidden, s.Name)
		}
	}
	if got := strings.Join(hidden, ","); got != "Item 11" {
		t.Errorf("focus not seen on %q; want only Item 11 (stops %+v)", got, res.Stops)
	}
}

// TestNotControls: a skip link's target (main with tabindex="-1") and a
// frame are not controls: neither is listed unreachable nor walked as a
// stop; Tab goes on through the frame to the button after it, and
// Shift+Tab back through it.
func TestNotControls(t *testing.T) {
	tb := openPage(t, `<!doctype html><html lang="en"><body>
<a href="#main">Skip to content</a>
<main id="main" tabindex="-1"><h1 tabindex="-1">Shoes</h1>
<iframe title="Map" srcdoc="<button>Zoom in</button> <button>Zoom out</button>" width="300" height="80"></iframe>
<button>After the map</button></main></body></html>`)
	res, err := Pass(context.Background(), tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	var stops []string
	for _, s := range res.Stops {
		stops = append(stops, s.Tag+":"+s.Name)
	}
	if got := strings.Join(stops, ","); got != "a:Skip to content,button:After the map" || len(res.Unreachable) != 0 || res.Trap != nil || !res.BackwardMatches {
		t.Errorf("stops %s, unreachable %+v, trap %+v, Shift+Tab %v", got, res.Unreachable, res.Trap, res.Backward)
	}
}

// TestTrapCutsOff: a dialog at the end of the page that has focus when
// the page loads and keeps it (Tab goes round its two buttons, Escape
// does nothing) cuts off the
// page's controls before it: they are beyond the trap, not unreachable;
// a div with a click handler (never in the tab order) is unreachable
// still.
func TestTrapCutsOff(t *testing.T) {
	tb := openPage(t, `<!doctype html><html lang="en"><body>
<div onclick="buy()">Buy now</div>
<a href="/a">Shoes</a> <a href="/b">Socks</a> <button>Add to cart</button>
<div role="dialog" aria-label="Cookies"><button id="ok">Accept</button><button id="no"
  onkeydown="if (event.key === 'Tab' && !event.shiftKey) { event.preventDefault(); document.getElementById('ok').focus(); }">Reject</button></div>
<script>document.getElementById('ok').focus();</script></body></html>`)
	res, err := Pass(context.Background(), tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Trap == nil || (res.Trap.Name != "Reject" && res.Trap.Name != "Accept") || len(res.TrapCycle) != 2 {
		t.Fatalf("trap %+v, stops %+v", res.Trap, res.Stops)
	}
	if got, beyond := names(res.Unreachable), names(res.BeyondTrap); got != "Buy now" || beyond != "Shoes,Socks,Add to cart" {
		t.Errorf("unreachable %q, beyond the trap %q", got, beyond)
	}
}

// TestCheckboxStandIn: a native checkbox hidden from sight but focusable,
// whose label draws the box a user sees, is judged by its stand-in: the
// one whose stand-in shows a ring on focus shows focus, the one whose
// stand-in does not, does not; a checkbox hidden outright (display:
// none) behind its label cannot be reached, and is named by its label;
// one whose label holds a control of its own (role checkbox, in the tab
// order) is that control's business.
func TestCheckboxStandIn(t *testing.T) {
	tb := openPage(t, `<!doctype html><html lang="en"><head><style>
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.box{display:inline-block;width:18px;height:18px;border:2px solid #333;margin-right:6px;vertical-align:middle}
#ring:focus-visible + label .box{outline:3px solid #1a5fd0;outline-offset:2px}
#gone{display:none}</style></head><body>
<p><input type="checkbox" id="ring" class="sr"><label for="ring"><span class="box"></span>Gift wrap</label></p>
<p><input type="checkbox" id="flat" class="sr"><label for="flat"><span class="box"></span>Save my details for next time</label></p>
<p><input type="checkbox" id="gone"><label for="gone"><span class="box"></span>I agree to the terms</label></p>
<p><input type="checkbox" id="aria" style="display:none"><label for="aria"><span class="box" role="checkbox" tabindex="0" aria-checked="false"
  onkeydown="if (event.key === ' ') this.click()"></span>Send me offers</label></p>
</body></html>`)
	res, err := Pass(context.Background(), tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stops) != 3 || res.Stops[2].Role != "checkbox" {
		t.Fatalf("stops %+v", res.Stops)
	}
	ring, flat := res.Stops[0], res.Stops[1]
	if ring.StandIn == "" || !ring.FocusVisible || flat.StandIn == "" || flat.FocusVisible {
		t.Errorf("ring %+v\nflat %+v", ring, flat)
	}
	if len(res.Unreachable) != 1 || res.Unreachable[0].Name != "I agree to the terms" || res.Unreachable[0].StandIn == "" {
		t.Errorf("unreachable %+v", res.Unreachable)
	}
}

// TestRadioGroup: Tab stops on one button of a radio group (the checked
// one) and the arrow keys move among them: the others are reached, not
// unreachable.
func TestRadioGroup(t *testing.T) {
	res, err := Pass(context.Background(), openPage(t, `<!doctype html><html lang="en"><body><form><fieldset><legend>Size</legend>
<label><input type="radio" name="size" value="s"> Small</label> <label><input type="radio" name="size" value="m" checked> Medium</label>
<label><input type="radio" name="size" value="l"> Large</label></fieldset><button>Add to cart</button></form></body></html>`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stops) != 2 || res.Stops[0].Name != "Medium" || len(res.Unreachable) != 0 {
		t.Errorf("stops %+v, unreachable %+v", res.Stops, res.Unreachable)
	}
}
