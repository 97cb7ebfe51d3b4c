package keyboard

import (
	"context"
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
// that handles the keys does.
func TestSkipLinksAndKeys(t *testing.T) {
	tb := openPage(t, `<!doctype html><html lang="en"><body>
<a href="#main">Skip to content</a>
<nav><a href="/a">Shoes</a> <a href="/b">Socks</a></nav>
<main id="main"><a href="/c">First product</a>
<div role="button" tabindex="0" onclick="window.x=1">Click only</div>
<div role="button" tabindex="0" onclick="window.y=1" onkeydown="if (event.key === 'Enter' || event.key === ' ') this.click()">Keys too</div>
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
