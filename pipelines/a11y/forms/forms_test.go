package forms

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
	"boxd/engine/browser/browsertest"
	"boxd/pipelines/a11y/motion"
)

// TestFormPass: on a page served from the audited origin (GET allowed),
// three forms submitted empty: one whose script shows errors in an alert,
// tied to the fields by aria-describedby with aria-invalid; one the
// browser's own validation stops (required fields); one with nothing to
// stop it, whose submission (a GET to the audited origin, which a
// read-only page could send) is held and never reaches the server. Labels
// and marked requirements are read.
func TestFormPass(t *testing.T) {
	var hits atomic.Int64
	page := `<!doctype html><html lang="en"><body>
<form id="signup" novalidate onsubmit="event.preventDefault();
  const e = document.getElementById('email'); e.setAttribute('aria-invalid','true');
  document.getElementById('email-err').textContent = 'Enter an email address, like name@example.com';
  document.getElementById('summary').textContent = 'There is 1 error';">
  <div role="alert" id="summary"></div>
  <label for="email">Email (required)</label><input id="email" name="email" required aria-describedby="email-err">
  <span id="email-err"></span>
  <input name="promo" placeholder="Promo code">
  <button>Sign up</button>
</form>
<form id="native"><label>Name * <input name="name" required></label><button>Send</button></form>
<form id="search" action="/results" method="get"><input name="q" aria-label="Search"><button>Go</button></form>
</body></html>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Anything but the page counts, except /favicon.ico: chromium
		// may ask for it, a GET the read-only policy lets through.
		if r.URL.Path != "/" && r.URL.Path != "/favicon.ico" {
			hits.Add(1)
			t.Logf("reached the server: %s %s", r.Method, r.URL)
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()
	tab := browsertest.Tab(t, browser.Policy{Network: browser.ReadOnly, Origins: []string{srv.URL}, Fetch: browser.ClientFetcher{}})
	if err := tab.Do(chromedp.Navigate(srv.URL + "/")); err != nil {
		t.Fatal(err)
	}
	forms, err := Pass(context.Background(), tab)
	if err != nil {
		t.Fatal(err)
	}
	if len(forms) != 3 {
		t.Fatalf("%d forms: %+v", len(forms), forms)
	}
	signup, native, search := forms[0], forms[1], forms[2]
	email, promo := signup.Fields[0], signup.Fields[1]
	if !signup.Announced || signup.Sent || signup.NativeBlocked {
		t.Errorf("signup %+v", signup)
	}
	if email.Label != "Email (required)" || !email.Required || !email.RequiredMarked || !email.Invalid || !email.ErrorTied || email.Error != "Enter an email address, like name@example.com" {
		t.Errorf("email %+v", email)
	}
	if promo.Label != "" || promo.Invalid {
		t.Errorf("promo (no label; a placeholder is none) %+v", promo)
	}
	if !native.NativeBlocked || native.Sent || !native.Fields[0].RequiredMarked || native.Fields[0].Label != "Name *" || native.Fields[0].Error == "" || native.Fields[0].ErrorTied {
		t.Errorf("native %+v", native)
	}
	if !search.Sent || search.Announced || search.Fields[0].Label != "Search" {
		t.Errorf("search %+v", search)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d submissions reached the server", n)
	}
}

// TestScriptErrors: forms without required attributes, checked by the
// page's own script (preventDefault, then its own errors), are judged by
// what changed on the page: a form that only turns a border red (colour,
// no text); one that shows a message naming no field; one that writes an
// error next to a field (near it, not tied) and a summary naming the
// other; one that does nothing; one that focuses its field, marked
// invalid with a tied message. A closed dialog's method="dialog" form is
// not tried; fields outside any form with a button of their own are,
// by their button, and a form whose submission a script fetch would
// send is held.
func TestScriptErrors(t *testing.T) {
	tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
	if err := tab.LoadHTML(`<!doctype html><html lang="en"><head><style>.bad{border:2px solid #d00}</style></head><body>
<form id="colour" onsubmit="event.preventDefault(); document.getElementById('c-name').classList.add('bad');">
  <label for="c-name">Name</label> <input id="c-name" name="name"> <button>Save</button></form>
<form id="generic" onsubmit="event.preventDefault(); document.getElementById('g-msg').textContent = 'Something went wrong, please try again';">
  <p id="g-msg"></p><div><label for="g-a">Street</label> <input id="g-a" name="street"></div>
  <div><label for="g-b">City</label> <input id="g-b" name="city"></div><button>Save</button></form>
<form id="near" onsubmit="event.preventDefault(); document.getElementById('n-err').textContent = 'Enter your full name';
  document.getElementById('n-sum').textContent = 'Email address is missing';">
  <p id="n-sum"></p><div><label for="n-name">Full name</label> <input id="n-name" name="fullname"> <span id="n-err"></span></div>
  <div><label for="n-mail">Email address</label> <input id="n-mail" name="mail"></div><button>Send</button></form>
<form id="silent" onsubmit="event.preventDefault()"><label for="s-q">Gift card number</label> <input id="s-q" name="giftcard"><button>Check</button></form>
<form id="focus" onsubmit="event.preventDefault(); const f = document.getElementById('f-mail'); f.setAttribute('aria-invalid', 'true');
  document.getElementById('f-err').textContent = 'Enter an email address'; f.focus();">
  <label for="f-mail">Email (required)</label> <input id="f-mail" name="email" aria-describedby="f-err"> <span id="f-err"></span><button>Join</button></form>
<form id="fetches" onsubmit="event.preventDefault(); fetch('/api/subscribe', {method: 'POST'}).catch(() => {});"><label for="x-mail">Email</label> <input id="x-mail" name="email"><button>Go</button></form>
<dialog id="d"><form method="dialog"><label for="d-x">Note</label> <input id="d-x" name="note"><button>Close</button></form></dialog>
<div id="newsletter"><label for="nl">Your email</label> <input id="nl" name="nl"> <span id="nl-err"></span>
  <button type="button" onclick="document.getElementById('nl-err').textContent = 'Enter an email address to subscribe'">Subscribe</button></div>
</body></html>`); err != nil {
		t.Fatal(err)
	}
	got, err := Pass(context.Background(), tab)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Form{}
	for _, f := range got {
		by[f.Selector] = f
	}
	if len(got) != 7 || by["#d"].Selector != "" {
		t.Fatalf("%d forms: %+v", len(got), got)
	}
	if c := by["#colour"]; !c.Changed || c.Sent || !c.Fields[0].LookChanged || c.Fields[0].Error != "" || c.Fields[0].Invalid || c.Announced {
		t.Errorf("colour %+v", c)
	}
	if g := by["#generic"]; !g.Changed || len(g.Messages) != 1 || g.Messages[0].Field != -1 || g.Fields[0].Flagged() || g.Fields[1].Flagged() {
		t.Errorf("generic %+v", g)
	}
	n := by["#near"]
	if name, mail := n.Fields[0], n.Fields[1]; !n.Changed || name.Error != "Enter your full name" || !name.ErrorNear || name.ErrorTied ||
		mail.Error != "Email address is missing" || !mail.ErrorNamed || mail.ErrorNear || n.Announced {
		t.Errorf("near %+v", n)
	}
	if s := by["#silent"]; s.Changed || s.Sent || s.Fields[0].Flagged() || s.Search {
		t.Errorf("silent %+v", s)
	}
	if f := by["#focus"]; !f.Announced || f.Focus != "field" || !f.Fields[0].ErrorTied || !f.Fields[0].Invalid || f.Fields[0].Error != "Enter an email address" {
		t.Errorf("focus %+v", f)
	}
	if x := by["#fetches"]; !x.Sent {
		t.Errorf("fetches %+v", x)
	}
	nl := by["#newsletter"]
	if !nl.Orphan || nl.Button == "" || len(nl.Fields) != 1 || nl.Fields[0].Label != "Your email" || nl.Fields[0].Error != "Enter an email address to subscribe" || !nl.Fields[0].ErrorNear || nl.Sent {
		t.Errorf("newsletter %+v", nl)
	}
}

// TestRestlessText: text the page changes by itself (a ticker right
// above a form, rewritten every 100 ms by a timer the motion check saw)
// is not the form's error: the form that shows nothing when sent empty
// is still judged to show nothing.
func TestRestlessText(t *testing.T) {
	tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
	if err := motion.Prepare(tab); err != nil {
		t.Fatal(err)
	}
	if err := tab.LoadHTML(`<!doctype html><html lang="en"><body>
<p id="ticker">Offer 0</p>
<form id="coupon" onsubmit="event.preventDefault()"><label for="c">Coupon code</label> <input id="c" name="coupon"><button>Apply</button></form>
<script>let n = 0; setInterval(() => { document.getElementById('ticker').textContent = 'Offer ' + (++n); }, 100);</script>
</body></html>`); err != nil {
		t.Fatal(err)
	}
	if _, err := motion.Check(context.Background(), tab); err != nil {
		t.Fatal(err)
	}
	got, err := Pass(context.Background(), tab)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Changed || len(got[0].Messages) != 0 || got[0].Fields[0].Error != "" {
		t.Errorf("coupon %+v", got)
	}
}
