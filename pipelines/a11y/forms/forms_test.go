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
	tab := browsertest.Tab(t, browser.Policy{Network: browser.ReadOnly, Origins: []string{srv.URL}})
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
