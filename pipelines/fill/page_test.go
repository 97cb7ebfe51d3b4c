package fill

import (
	"context"
	"strings"
	"testing"
	"time"

	"boxd/engine/browser"
	"boxd/engine/browser/browsertest"
	"boxd/pipelines/fill/form"
	"boxd/pipelines/fill/rules"
)

// TestType: the decided values are typed (a page's keystroke handler
// sees them, and its attempt to send each keystroke is held, not sent),
// the select takes its option, fields left or sensitive stay empty.
func TestType(t *testing.T) {
	tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
	if err := tab.LoadHTML(`<!doctype html><html lang="en"><body><form>
<label>First name <input id="fn" oninput="navigator.sendBeacon('/keys', this.value); document.title = this.value"></label>
<label>Date of birth <input id="dob"></label>
<label>Country <select id="c"><option value="">Choose</option><option value="PT">Portugal</option></select></label>
<label>Password <input id="pw" type="password"></label>
<label>Notes <input id="notes" value="keep"></label>
</form></body></html>`); err != nil {
		t.Fatal(err)
	}
	fields, _, err := form.Scan(context.Background(), tab)
	if err != nil {
		t.Fatal(err)
	}
	line := &Line{Doc: "d", N: 1, Text: "Ana, born 4 March 1987, Portugal"}
	ds := []Decided{
		{Field: fields[0], Status: StatusSourced, Value: "Ana", Filled: true, Source: line},
		{Field: fields[1], Status: StatusSourced, Value: "04/03/1987", Filled: true, Source: line},
		{Field: fields[2], Status: StatusChosen, Value: "PT", Filled: true, Source: line},
		{Field: fields[3], Status: StatusSensitive},
		{Field: fields[4], Status: StatusLeft},
	}
	before := len(tab.Refused())
	if _, err := Type(context.Background(), tab, ds); err != nil {
		t.Fatal(err)
	}
	vals, err := form.ReadValues(tab, fields)
	if err != nil {
		t.Fatal(err)
	}
	if vals["f1"] != "Ana" || vals["f2"] != "04/03/1987" || vals["f3"] != "PT" || vals["f4"] != "" || vals["f5"] != "keep" {
		t.Errorf("values %v", vals)
	}
	// The held beacons are reported by the browser as they happen: on a
	// loaded machine the last ones can come after Type returns.
	var beacons int
	for wait := time.Now().Add(10 * time.Second); beacons == 0 && time.Now().Before(wait); time.Sleep(50 * time.Millisecond) {
		for _, r := range tab.Refused()[before:] {
			if strings.HasSuffix(r.URL, "/keys") {
				beacons++
			}
		}
	}
	if beacons == 0 {
		t.Errorf("the keystroke handler's beacons were not seen held: %+v", tab.Refused())
	}
}

// TestRegistration: a registration form read and decided end to end in
// the browser: the email and date of birth typed from their lines, the
// password and its confirmation, the security question's answer and the
// terms declaration never typed, the username (no line holds it) left.
func TestRegistration(t *testing.T) {
	tab := browsertest.Tab(t, browser.Policy{Network: browser.Offline})
	if err := tab.LoadHTML(`<!doctype html><html lang="en-US"><body><form>
<label>Email <input type="email" name="email" autocomplete="email"></label>
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input type="password" name="pw" autocomplete="new-password"></label>
<label>Confirm password <input type="password" name="pw2"></label>
<label>Birthday <input name="bday" placeholder="MM/DD/YYYY"></label>
<label>Security PIN <input name="pin"></label>
<label><input type="checkbox" name="terms"> I accept the terms and conditions</label>
<button>Create account</button></form></body></html>`); err != nil {
		t.Fatal(err)
	}
	fields, _, err := form.Scan(context.Background(), tab)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := Lines([]Source{{Name: "me.txt", Text: "Email: ana.silva@example.com\nBorn March 4, 1987\nPassword: Tr0ub4dor&3\nPIN 4821"}})
	if err != nil {
		t.Fatal(err)
	}
	props := []Proposal{{"f1", "me.txt", 1, "ana.silva@example.com"}, {"f2", "me.txt", 1, "anasilva87"}, {"f3", "me.txt", 3, "Tr0ub4dor&3"},
		{"f4", "me.txt", 3, "Tr0ub4dor&3"}, {"f5", "me.txt", 2, "03/04/1987"}, {"f6", "me.txt", 4, "4821"}}
	got := map[string]string{}
	for _, d := range Decide(fields, lines, props, rules.Hints{DateOrder: "mdy"}) {
		got[d.Name] = d.Status
	}
	want := map[string]string{"email": StatusSourced, "username": StatusBlocked, "pw": StatusSensitive, "pw2": StatusSensitive,
		"bday": StatusSourced, "pin": StatusSensitive, "terms": StatusSensitive}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
}
