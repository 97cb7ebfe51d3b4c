package families_test

import (
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"boxd/internal/families"
	"boxd/pipelines/live/verticals"
)

// The demo-session verticals of contract document 1 section 1 (and the
// site-check verticals of document 3), in the order messages list them:
// every one must stay accepted.
var contractIDs = []string{
	"clinical", "sales", "field", "translate",
	"code", "studio",
	"auditor", "walkthrough-to-quote", "expert-to-sop", "storefront-accessibility-pass",
	"fill-and-stop", "oral-assessment", "virtual-staging", "migration-check",
	"geo-audit", "review-reply",
}

func TestVerticalIDs(t *testing.T) {
	ids := families.IDs()
	if !slices.Equal(ids, contractIDs) {
		t.Errorf("ids %v\nwant %v", ids, contractIDs)
	}
	seen := map[string]bool{}
	for _, f := range families.All() {
		if f.ID == "" || seen[f.ID] {
			t.Errorf("id %q empty or repeated", f.ID)
		}
		seen[f.ID] = true
		if f.Live != (f.Kind == families.KindLive) {
			t.Errorf("%s: live %v but kind %s", f.ID, f.Live, f.Kind)
		}
		if len(f.LiveParams) > 0 && !f.Live {
			t.Errorf("%s: live parameters %v without live audio", f.ID, f.LiveParams)
		}
		if g, ok := families.Lookup(f.ID); !ok || g.ID != f.ID || !families.Known(f.ID) {
			t.Errorf("Lookup(%s): %+v %v", f.ID, g, ok)
		}
	}
	if _, ok := families.Lookup("nope"); ok || families.Known("") || families.IsLive("nope") {
		t.Error("an unknown id is known")
	}
	// All and Lookup hand out copies.
	all := families.All()
	all[3].LiveParams[0] = "x"
	if !families.AcceptsLiveParam("translate", "lang") {
		t.Error("All shares the table")
	}
}

func TestVerticalLiveParams(t *testing.T) {
	for _, tc := range []struct {
		id, param string
		ok        bool
	}{
		{"translate", "lang", true}, {"translate", "target", true}, {"translate", "rubric", false},
		{"clinical", "lang", false}, {"sales", "target", false}, {"nope", "lang", false},
	} {
		if got := families.AcceptsLiveParam(tc.id, tc.param); got != tc.ok {
			t.Errorf("%s %s: %v", tc.id, tc.param, got)
		}
	}
	if got := families.WithLiveParam("lang"); !slices.Equal(got, []string{"translate"}) {
		t.Errorf("lang: %v", got)
	}
}

// TestLiveVerticals: the live ids are exactly the live verticals the box
// builds (pipelines/live/verticals).
func TestLiveVerticals(t *testing.T) {
	want := families.LiveIDs()
	if !slices.Equal(want, []string{"clinical", "sales", "field", "translate"}) {
		t.Errorf("live ids %v", want)
	}
	for _, id := range want {
		if !families.IsLive(id) {
			t.Errorf("%s is not live", id)
		}
	}
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		dir = t.TempDir() // no code tables: clinical is missing, with an error that says so
	}
	vs, err := verticals.Build(dir)
	var got []string
	for id, v := range vs {
		if v.ID != id {
			t.Errorf("vertical %s has id %s", id, v.ID)
		}
		got = append(got, id)
	}
	if err != nil {
		if vs["clinical"] != nil || !strings.Contains(err.Error(), "clinical") {
			t.Fatal(err)
		}
		t.Logf("without the code tables (BOXD_TEST_DATA): %v", err)
		got = append(got, "clinical")
	}
	sort.Strings(got)
	sorted := slices.Clone(want)
	sort.Strings(sorted)
	if !slices.Equal(got, sorted) {
		t.Errorf("verticals.Build builds %v; families live ids %v", got, sorted)
	}
}

// TestChoicesNameThePendingApart: the ids a message offers are the served
// families; the contract's families with no routes in this build are
// named apart as not served yet.
func TestChoicesNameThePendingApart(t *testing.T) {
	served := families.ServedIDs()
	c := families.Choices()
	for _, id := range []string{"walkthrough-to-quote", "expert-to-sop", "virtual-staging"} {
		if slices.Contains(served, id) {
			t.Errorf("%s is offered as served", id)
		}
	}
	head, tail, ok := strings.Cut(c, " (the contract's ")
	if !ok || head != strings.Join(served, ", ") || !strings.Contains(tail, "walkthrough-to-quote") || strings.Contains(tail, "auditor") || strings.Contains(tail, "migration-check") || strings.Contains(tail, "oral-assessment") || !strings.Contains(tail, "serves none of their routes yet") {
		t.Errorf("choices: %s", c)
	}
	if !slices.Contains(served, "clinical") || !slices.Contains(served, "storefront-accessibility-pass") || !slices.Contains(served, "review-reply") || !slices.Contains(served, "auditor") || !slices.Contains(served, "migration-check") {
		t.Errorf("served: %v", served)
	}
}
