package sitecheck

import (
	"testing"

	"boxd/pipelines/sitecheck/replyguard"
)

// TestDraftMustBeReadable: a model's draft that holds U+FFFD (or bytes
// that are not UTF-8) or no letter at all is blocked as unreadable, so the
// job redrafts or falls back to the safe reply; readable drafts are left
// to the guard alone.
func TestDraftMustBeReadable(t *testing.T) {
	req := ReplyRequest{Review: "Lovely staff and a quick visit.", Rating: 5, BusinessName: "Harbor Bakery", BusinessType: "bakery"}
	for _, c := range []struct {
		draft  string
		ok     bool
		phrase string
		start  int
	}{
		{"Thank you for the kind words about our staff!", true, "", 0},
		{"Thank you!", true, "", 0},
		{"\uFFFD", false, "\uFFFD", 0},
		{"Thank you \uFFFD", false, "\uFFFD", 10},
		{"Thanks \xff\xfe", false, "\uFFFD", 7},
		{"... !!", false, "", 0},
		{"", false, "", 0},
	} {
		got := checkDraft(c.draft, req)
		if got.OK != c.ok {
			t.Errorf("%q: ok %v, want %v (%+v)", c.draft, got.OK, c.ok, got.Problems)
			continue
		}
		unreadable := false
		for _, p := range got.Problems {
			if p.Code == CodeUnreadable {
				unreadable = true
				if p.Severity != replyguard.SeverityBlock || p.Phrase != c.phrase || p.Start != c.start || (c.phrase != "" && p.End != c.start+1) {
					t.Errorf("%q: problem %+v, want phrase %q at %d", c.draft, p, c.phrase, c.start)
				}
			}
		}
		if want := !c.ok && c.draft != ""; unreadable != want {
			t.Errorf("%q: unreadable %v, want %v (%+v)", c.draft, unreadable, want, got.Problems)
		}
	}
}
