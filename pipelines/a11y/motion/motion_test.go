package motion

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/engine/browser/browsertest"
)

// TestMoving: one page with what keeps moving and what does not. Found:
// a carousel a script's interval advances (no pause control); the same
// with a pause button in it (found, with its pause); an endless CSS
// ticker; an announcement bar's ticker with a close button (found, with
// it: a way to hide it); headlines a timeout chain rewrites (updates); a belt of words
// an animation-frame loop slides. Not found: an animation that ends in two
// seconds, an interval the page clears after two seconds, a notice a
// single timeout shows, a loading spinner, and a hidden carousel.
func TestMoving(t *testing.T) {
	tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
	if err := Prepare(tab); err != nil {
		t.Fatal(err)
	}
	if err := tab.LoadHTML(`<!doctype html><html lang="en"><head><style>
.slide{display:none;height:40px} .slide.on{display:block}
@keyframes scroll{from{transform:translateX(0)}to{transform:translateX(-50%)}}
@keyframes spin{to{transform:rotate(360deg)}}
#ticker span,#bar span{display:inline-block;animation:scroll 8s linear infinite}
#brief{animation:scroll 1s linear 2}
.spinner{width:24px;height:24px;border:3px solid #999;animation:spin 1s linear infinite}
</style></head><body>
<div id="hero" class="carousel"><div class="slide on">Summer sale</div><div class="slide">New boots</div><a href="/sale">Shop the sale</a></div>
<div id="promo" class="carousel"><div class="slide on">Free returns</div><div class="slide">Gift cards</div><button type="button" id="pause">Pause slideshow</button></div>
<div id="ticker"><span>Free shipping over $50 — New arrivals every week</span></div>
<div id="bar" class="ticker-bar"><span>Members save 10% today</span> <button type="button" id="close" aria-label="Close announcement">x</button></div>
<p id="headline">First headline</p>
<div id="banner" style="overflow:hidden;height:30px"><div id="belt">Trail shoes · Road shoes · Socks</div></div>
<p id="brief">Sliding in once</p>
<div id="notice" hidden>Welcome back</div>
<div class="spinner" aria-label="Loading"></div>
<div id="off" class="carousel" style="display:none"><div class="slide on">A</div><div class="slide">B</div></div>
<div id="stopper"><span class="slide on">One</span><span class="slide">Two</span></div>
<script>
function rotate(id, ms) {
  let i = 0;
  return setInterval(() => { const s = document.querySelectorAll('#' + id + ' .slide'); s[i].classList.remove('on'); i = (i + 1) % s.length; s[i].classList.add('on'); }, ms);
}
rotate('hero', 1500); rotate('promo', 1500); rotate('off', 1500);
const st = rotate('stopper', 700); setTimeout(() => clearInterval(st), 2000);
const heads = ['First headline', 'Second headline', 'Third headline']; let h = 0;
function next() { h = (h + 1) % heads.length; document.getElementById('headline').firstChild.nodeValue = heads[h]; setTimeout(next, 1200); }
setTimeout(next, 1200);
setTimeout(() => { document.getElementById('notice').hidden = false; }, 1000);
let x = 0; function slide() { x = (x + 1) % 300; document.getElementById('belt').style.transform = 'translateX(' + (-x) + 'px)'; requestAnimationFrame(slide); }
requestAnimationFrame(slide);
</script></body></html>`); err != nil {
		t.Fatal(err)
	}
	got, err := Check(context.Background(), tab)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Moving{}
	var all []string
	for _, m := range got {
		by[m.Selector] = m
		all = append(all, m.Selector+" "+m.Source+" "+m.What)
	}
	want := map[string]string{"#hero": "timer moves", "#promo": "timer moves", "#ticker": "animation moves", "#headline": "timer updates", "#belt": "frames moves", "#bar": "animation moves"}
	for sel, w := range want {
		m, ok := by[sel]
		if !ok || m.Source+" "+m.What != w {
			t.Errorf("%s: %+v, want %s", sel, m, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("found %d: %s", len(got), strings.Join(all, "; "))
	}
	if by["#hero"].Pause != "" || by["#promo"].Pause != "#pause" || by["#promo"].PauseName != "Pause slideshow" || !by["#ticker"].Endless || by["#ticker"].Pause != "" || by["#bar"].Pause != "#close" {
		t.Errorf("pause controls: hero %+v, promo %+v, ticker %+v", by["#hero"], by["#promo"], by["#ticker"])
	}
	if c := by["#hero"].Controls; len(c) != 1 || c[0] != "Shop the sale" {
		t.Errorf("hero's controls %v", c)
	}
}

// TestPageWidePause: a control that pauses all motion answers every
// moving part (a blinking notice); a timer the audit's own script sets
// is not the page's; a page loaded without the hook is not checked.
func TestPageWidePause(t *testing.T) {
	tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
	if err := Prepare(tab); err != nil {
		t.Fatal(err)
	}
	if err := tab.LoadHTML(`<!doctype html><html lang="en"><head><style>@keyframes b{50%{opacity:0}} #sale{animation:b 1s step-end infinite}</style></head><body>
<button type="button" id="still" aria-pressed="false">Stop all animations</button><p id="sale">Sale now on</p><p id="ours">Audit</p></body></html>`); err != nil {
		t.Fatal(err)
	}
	// The audit's own scripts (evaluated, not the page's) are not watched.
	if _, err := chromedp.Run(tab.Context(), chromedp.Evaluate[bool](`setInterval(() => document.getElementById("ours").classList.toggle("x"), 200), true`)); err != nil {
		t.Fatal(err)
	}
	got, err := Check(context.Background(), tab)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Selector != "#sale" || got[0].What != "blinks" || got[0].Pause != "#still" {
		t.Errorf("got %+v", got)
	}
	bare := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
	if err := bare.LoadHTML(`<!doctype html><p>Nothing watched</p>`); err != nil {
		t.Fatal(err)
	}
	if got, err := Check(context.Background(), bare); err != nil || got != nil {
		t.Errorf("without the hook: %+v, %v", got, err)
	}
}
