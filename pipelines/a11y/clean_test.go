package a11y

import (
	"context"
	"testing"
)

// cleanPatterns are pages written to pass, with the patterns an audit
// gets wrong: a carousel with a pause button, a skip link to main with
// tabindex="-1", a titled frame, custom checkboxes and radio buttons
// (native inputs hidden from sight, rings on their stand-ins), a
// checkout whose script shows a summary that takes focus and errors
// tied to their fields, a coupon form with its own tied error, a closed
// terms dialog with a method="dialog" form, a banner animated once, a
// search box that ignores an empty query, breadcrumbs of small links in
// text, a long page; a home page with an announcement ticker that can be
// closed, a sticky header with a menu button, product cards and a
// newsletter dialog (its product grid collapses to one column at 320 px);
// a sign-in form with a live error summary and a
// show-password toggle.
var cleanPatterns = map[string]string{
	"product": `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Wool socks – Shop</title><style>
body{font:16px/1.5 sans-serif;margin:24px;color:#222} a{color:#1a4fa0}
:focus-visible{outline:3px solid #1a5fd0;outline-offset:2px}
.slide{display:none} .slide.on{display:block}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.box{display:inline-block;width:20px;height:20px;border:2px solid #333;margin-right:8px;vertical-align:middle}
.sr:focus-visible + label .box{outline:3px solid #1a5fd0;outline-offset:2px}
.sr:checked + label .box{background:#1a5fd0}
button{min-height:44px;min-width:44px;padding:8px 16px;font-size:16px}
@keyframes in{from{opacity:0;transform:translateY(10px)}to{opacity:1;transform:none}} .banner{animation:in 1s ease-out 1}
.gap{height:400px}
</style></head><body>
<a href="#main">Skip to content</a>
<header><nav aria-label="Breadcrumb"><p>You are in <a href="/">Home</a> / <a href="/socks">Socks</a> / Wool socks</p></nav>
<form role="search" action="/search" onsubmit="if (!this.q.value.trim()) event.preventDefault();"><label for="q">Search the shop</label> <input id="q" name="q" type="search"> <button>Search</button></form></header>
<main id="main" tabindex="-1"><h1>Wool socks</h1>
<p class="banner">Free returns for 30 days</p>
<section id="offers" class="carousel" aria-roledescription="carousel" aria-label="Offers">
<button type="button" id="pause" aria-label="Pause offers" onclick="clearInterval(window.rot); this.setAttribute('aria-pressed', 'true')">Pause</button>
<p class="slide on">Three pairs for the price of two</p><p class="slide">Gift wrap is free</p></section>
<iframe title="How our socks are made" srcdoc="<p>Video unavailable offline</p>" width="320" height="80"></iframe>
<form id="buy" novalidate onsubmit="event.preventDefault(); const q = document.getElementById('qty');
  if (!q.value) { q.setAttribute('aria-invalid', 'true'); document.getElementById('qty-err').textContent = 'Enter how many pairs you want, from 1 to 10'; q.focus(); }">
<fieldset><legend>Size (required)</legend>
<input type="radio" class="sr" name="size" id="s-m" value="m" checked><label for="s-m"><span class="box"></span>Medium</label>
<input type="radio" class="sr" name="size" id="s-l" value="l"><label for="s-l"><span class="box"></span>Large</label></fieldset>
<p><label for="qty">Quantity (required)</label> <input id="qty" name="qty" type="number" min="1" max="10" value="1" aria-describedby="qty-err"> <span id="qty-err"></span></p>
<p><input type="checkbox" class="sr" id="gift" name="gift"><label for="gift"><span class="box"></span>Gift wrap this order</label></p>
<button>Add to cart</button></form>
<details><summary>Care instructions</summary><p>Wash at 30 degrees.</p></details>
<div class="gap"></div><h2>Reviews</h2><p>4.5 out of 5 from 120 reviews.</p><a href="/reviews">Read all reviews</a>
<div class="gap"></div><a href="#main">Back to top</a>
</main>
<script>let i = 0; window.rot = setInterval(() => { const s = document.querySelectorAll('#offers .slide'); s[i].classList.remove('on'); i = (i + 1) % s.length; s[i].classList.add('on'); }, 1500);</script>
</body></html>`,
	"checkout": `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Checkout – Shop</title><style>
body{font:16px/1.5 sans-serif;margin:24px;color:#222} a{color:#1a4fa0}
:focus-visible{outline:3px solid #1a5fd0;outline-offset:2px}
input{border:1px solid #555;padding:6px;font-size:16px} input[aria-invalid=true]{border:2px solid #b00020}
.err{color:#b00020} button{min-height:44px;padding:8px 16px;font-size:16px}
</style></head><body>
<main><h1>Checkout</h1>
<div id="summary" tabindex="-1"></div>
<form id="pay" novalidate onsubmit="event.preventDefault(); check();">
<p>All fields are required.</p>
<p><label for="name">Full name</label><br><input id="name" name="name" autocomplete="name" aria-describedby="name-err"><br><span id="name-err" class="err"></span></p>
<p><label for="card">Card number</label><br><input id="card" name="card" autocomplete="cc-number" inputmode="numeric" aria-describedby="card-hint card-err"><br>
<span id="card-hint">16 digits, no spaces</span><br><span id="card-err" class="err"></span></p>
<p><input type="checkbox" id="terms" name="terms" aria-describedby="terms-err"> <label for="terms">I accept the <a href="/terms">terms of sale</a></label><br><span id="terms-err" class="err"></span></p>
<button>Place order</button></form>
<form id="coupon" novalidate onsubmit="event.preventDefault(); const c = document.getElementById('code');
  if (!c.value) { c.setAttribute('aria-invalid', 'true'); document.getElementById('code-err').textContent = 'Enter a coupon code, like SAVE10'; }">
<p><label for="code">Coupon code (optional)</label> <input id="code" name="code" aria-describedby="code-err"> <button>Apply coupon</button></p>
<p id="code-err" class="err" role="status"></p></form>
<dialog id="terms-dialog"><form method="dialog"><p>Terms of sale.</p><label for="ack">Note</label> <input id="ack" name="ack"><button>Close</button></form></dialog>
</main>
<script>
function check() {
  const errs = [];
  const need = [['name', 'Enter your full name'], ['card', 'Enter your 16-digit card number']];
  for (const [id, msg] of need) { const f = document.getElementById(id); const e = document.getElementById(id + '-err');
    if (!f.value.trim()) { f.setAttribute('aria-invalid', 'true'); e.textContent = msg; errs.push([id, msg]); } else { f.removeAttribute('aria-invalid'); e.textContent = ''; } }
  const t = document.getElementById('terms');
  if (!t.checked) { t.setAttribute('aria-invalid', 'true'); document.getElementById('terms-err').textContent = 'Accept the terms of sale to place your order'; errs.push(['terms', 'Accept the terms of sale']); }
  const s = document.getElementById('summary');
  s.innerHTML = errs.length ? '<h2>There is a problem</h2><ul>' + errs.map(([id, m]) => '<li><a href="#' + id + '">' + m + '</a></li>').join('') + '</ul>' : '';
  if (errs.length) s.focus();
}
</script></body></html>`,
	"home": `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Trail Shoes – Home</title><style>
body{font:16px/1.5 sans-serif;margin:0;color:#222} a{color:#1a4fa0} main,footer{padding:0 24px}
:focus-visible{outline:3px solid #1a5fd0;outline-offset:2px}
header{position:sticky;top:0;background:#fff;padding:8px 24px;border-bottom:1px solid #ccc}
button{min-height:44px;min-width:44px;padding:8px 12px;font-size:16px}
.bar{background:#eef;padding:4px 24px} .bar span{display:inline-block;animation:slide 10s linear infinite}
@keyframes slide{from{transform:translateX(0)}to{transform:translateX(-30px)}}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:24px} .card{border:1px solid #ccc;padding:12px}
footer ul{list-style:none;padding:0} footer li{margin:8px 0}
[hidden]{display:none}
</style></head><body>
<div class="bar" role="region" aria-label="Announcement"><span>Members get free shipping this week</span> <button type="button" aria-label="Close announcement" onclick="this.parentElement.hidden = true">Close</button></div>
<header><a href="#main">Skip to content</a> <button type="button" aria-expanded="false" aria-controls="menu" onclick="const m = document.getElementById('menu'); m.hidden = !m.hidden; this.setAttribute('aria-expanded', String(!m.hidden))">Menu</button>
<nav id="menu" hidden aria-label="Main"><a href="/men">Men</a> <a href="/women">Women</a></nav>
<a href="/cart" aria-label="Cart, 2 items">Cart (2)</a></header>
<main id="main" tabindex="-1"><h1>Trail shoes for every season</h1>
<p>Sale ends in <span id="clock" role="timer" aria-live="off">2 days</span>.</p>
<div class="grid">
<div class="card"><h2>Ridge runner</h2><p>$120</p><button type="button">Add Ridge runner to cart</button></div>
<div class="card"><h2>Mud master</h2><p>$110</p><button type="button">Add Mud master to cart</button></div>
<div class="card"><h2>Trail lite</h2><p>$95</p><button type="button">Add Trail lite to cart</button></div></div>
<button type="button" aria-haspopup="dialog" id="open-news" onclick="const d = document.getElementById('news'); d.showModal();">Get our newsletter</button>
<dialog id="news" aria-labelledby="news-h"><h2 id="news-h">Newsletter</h2>
<form id="news-form" novalidate onsubmit="event.preventDefault(); const e = document.getElementById('ne'); if (!e.value) { e.setAttribute('aria-invalid', 'true'); document.getElementById('ne-err').textContent = 'Enter an email address, like name@example.com'; e.focus(); }">
<label for="ne">Email address</label> <input id="ne" name="email" type="email" aria-describedby="ne-err"> <span id="ne-err"></span>
<button>Subscribe</button></form>
<button type="button" onclick="this.closest('dialog').close(); document.getElementById('open-news').focus();">Close</button></dialog>
</main>
<footer><ul><li><a href="/help">Help</a></li><li><a href="/returns">Returns</a></li><li><a href="/contact">Contact us</a></li></ul></footer>
</body></html>`,
	"signin": `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in – Shop</title><style>
body{font:16px/1.5 sans-serif;margin:24px;color:#222} a{color:#1a4fa0}
:focus-visible{outline:3px solid #1a5fd0;outline-offset:2px}
input{border:1px solid #555;padding:6px;font-size:16px} button{min-height:44px;padding:8px 16px;font-size:16px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.box{display:inline-block;width:20px;height:20px;border:2px solid #333;margin-right:8px;vertical-align:middle}
.sr:focus-visible + label .box{outline:3px solid #1a5fd0;outline-offset:2px}
.err{color:#b00020}
</style></head><body><main><h1>Sign in</h1>
<div id="problems" role="alert"></div>
<form id="signin" novalidate onsubmit="event.preventDefault(); const bad = [];
  for (const [id, msg] of [['email', 'Enter your email address'], ['password', 'Enter your password']]) { const f = document.getElementById(id);
    if (!f.value) { f.setAttribute('aria-invalid', 'true'); document.getElementById(id + '-err').textContent = msg; bad.push(msg); } }
  document.getElementById('problems').textContent = bad.length ? 'There are ' + bad.length + ' problems: ' + bad.join('; ') : '';">
<p><label for="email">Email address</label><br><input id="email" name="email" type="email" autocomplete="email" aria-describedby="email-err"><br><span id="email-err" class="err"></span></p>
<p><label for="password">Password</label><br><input id="password" name="password" type="password" autocomplete="current-password" aria-describedby="password-err">
<button type="button" aria-pressed="false" onclick="const p = document.getElementById('password'); p.type = p.type === 'password' ? 'text' : 'password'; this.setAttribute('aria-pressed', String(p.type === 'text'))">Show password</button><br>
<span id="password-err" class="err"></span></p>
<p><input type="checkbox" class="sr" id="remember" name="remember"><label for="remember"><span class="box"></span>Keep me signed in</label></p>
<button>Sign in</button> <a href="/forgot">Forgot your password?</a></form></main></body></html>`,
}

// TestCleanPatterns: each page above audits with no finding.
func TestCleanPatterns(t *testing.T) {
	s := service(t)
	yes, no := true, false
	for name, html := range cleanPatterns {
		out, err := s.Audit(context.Background(), Request{HTML: html, Synthetic: &yes, Judge: &no}, &events{}, Caller{})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Findings) != 0 {
			t.Errorf("%s: %d findings:\n%s", name, len(out.Findings), titles(out.Findings))
			for _, f := range out.Findings {
				t.Logf("%s %s: %s", f.Element.Selector, f.Title, f.Detail)
			}
		}
	}
}
