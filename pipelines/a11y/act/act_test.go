package act

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"boxd/engine/browser"
	"boxd/pipelines/a11y/axe"
)

func rs(pairs ...string) []Result {
	var out []Result
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, Result{Case: Case{Expected: pairs[i]}, Outcome: pairs[i+1]})
	}
	return out
}

// TestConsistency grades outcomes as the ACT implementation reports do.
func TestConsistency(t *testing.T) {
	for _, c := range []struct {
		name string
		rs   []Result
		want string
	}{
		{"all right", rs(Passed, Passed, Failed, Failed, Inapplicable, Inapplicable), Complete},
		{"passed read as inapplicable", rs(Passed, Inapplicable, Failed, Failed, Inapplicable, Passed), Complete},
		{"a false positive", rs(Passed, Failed, Failed, Failed), Inconsistent},
		{"failing an inapplicable case", rs(Inapplicable, Failed, Failed, Failed), Inconsistent},
		{"a missed failure", rs(Failed, Failed, Failed, Passed, Passed, Passed), Partial},
		{"cantTell on a failure", rs(Failed, Failed, Failed, CantTell), Complete},
		{"an untested case", rs(Failed, Failed, Passed, Untested), Partial},
		{"no failure found", rs(Failed, Passed, Passed, Passed), Inconsistent},
		{"only cantTell", rs(Failed, CantTell, Inapplicable, Inapplicable), Minimal},
		{"nothing tested", rs(Failed, Untested, Passed, Untested), NotTested},
	} {
		if got := Consistency(c.rs); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestLoad: the approved test cases of the project's data, with their
// files; a folder without the index is an error that names it.
func TestLoad(t *testing.T) {
	dir := dataDir(t)
	cases, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]bool{}
	approved := 0
	for _, c := range cases {
		if c.RuleApproved {
			rules[c.RuleID] = true
			approved++
		} else if c.RuleID != "a1b64e" {
			t.Errorf("a proposed rule boxd does not check: %s", c.RuleID)
		}
	}
	if approved != 558 || len(rules) != 37 || len(cases) == approved {
		t.Errorf("%d approved cases of %d rules, %d in all; the data has 558 of 37 approved rules, and boxd checks a1b64e's too", approved, len(rules), len(cases))
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "testcases.json") {
		t.Errorf("empty folder: %v", err)
	}
}

func dataDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("BOXD_TEST_DATA")
	if d == "" {
		t.Skip("BOXD_TEST_DATA is not set")
	}
	return filepath.Join(d, "act-rules")
}

// TestReport runs every approved rule's test cases in chromium and holds
// the audit to its mark: at least 34 of the 37 rules consistent and none
// inconsistent (axe-core alone, in its own published report: 26 and 5).
// The per-rule table is logged.
func TestReport(t *testing.T) {
	dir := dataDir(t)
	pool, err := browser.NewPool(browser.Options{Slots: 4, TabTimeout: 30 * time.Minute})
	if errors.Is(err, browser.ErrNoBrowser) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	e, err := axe.Load(filepath.Join("..", "axe", "npm", "node_modules", "axe-core"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	cases, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := (&Runner{Pool: pool, Axe: e, Dir: dir, Tabs: 4}).Run(context.Background(), cases, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rules {
		t.Logf("%s %-12s cases %2d correct %2d false+ %d false- %d cantTell %d untested %2d  %s", r.ID, r.Consistency, r.Cases, r.Correct, r.FalsePos, r.FalseNeg, r.CantTell, r.Untested, r.Procedure)
		if r.Consistency == Inconsistent {
			for _, x := range r.Results {
				if !x.Correct && x.Outcome != CantTell && x.Outcome != Untested {
					t.Errorf("%s %s (%s): expected %s, got %s %s", r.ID, x.Title, x.Path, x.Expected, x.Outcome, x.Note)
				}
			}
		}
	}
	if rep.Consistent < 34 || rep.Inconsistent != 0 {
		t.Errorf("%d rules consistent, %d inconsistent; want at least 34 and none", rep.Consistent, rep.Inconsistent)
	}
	// The keyboard pass's two rules: visible focus (approved) and traps
	// (proposed) are both consistent.
	for _, r := range rep.Rules {
		if (r.ID == "oj04fd" || r.ID == "a1b64e") && r.Consistency != Complete && r.Consistency != Partial {
			t.Errorf("%s (%s): %s", r.ID, r.Name, r.Consistency)
		}
	}
}
