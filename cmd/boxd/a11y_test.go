package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestActReport: boxd a11y act-report over two rules of the ACT test
// cases prints each rule's line and the total; bad arguments are
// configuration errors that say what to fix.
func TestActReport(t *testing.T) {
	data := os.Getenv("BOXD_TEST_DATA")
	if data == "" {
		t.Skip("BOXD_TEST_DATA is not set")
	}
	if _, err := exec.LookPath("chromium"); err != nil && os.Getenv("CI") != "true" {
		t.Skip("no chromium")
	}
	axeDir := filepath.Join("..", "..", "pipelines", "a11y", "axe", "npm", "node_modules", "axe-core")
	dir := filepath.Join(data, "act-rules")
	var out, errb bytes.Buffer
	file := filepath.Join(t.TempDir(), "boxd.json")
	code := run(context.Background(), []string{"a11y", "act-report", dir, "--axe-dir", axeDir, "--rules", "2779a5,b5c3f8,a1b64e", "--tabs", "2", "--out", file}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"2779a5   complete", "b5c3f8   complete", "a1b64e*  complete", "2 approved rules consistent (complete or partial), 0 inconsistent, 0 minimal or untested, of 2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	// The implementation report: the W3C reports' shape, every case.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var im struct {
		Vendor        string         `json:"vendor"`
		ApprovedRules map[string]int `json:"approvedRules"`
		ProposedRules map[string]int `json:"proposedRules"`
		Mapping       []struct {
			RuleID      string  `json:"ruleId"`
			Consistency *string `json:"consistency"`
			Coverage    struct {
				Total int `json:"testCaseTotal"`
			} `json:"coverage"`
			Results []struct {
				URL        string `json:"testCaseUrl"`
				Expected   string `json:"expected"`
				Procedures []struct {
					Outcomes []string `json:"outcomes"`
				} `json:"procedureResults"`
			} `json:"testCaseResults"`
		} `json:"actRuleMapping"`
	}
	if err := json.Unmarshal(raw, &im); err != nil {
		t.Fatal(err)
	}
	if im.Vendor != "boxd" || im.ApprovedRules["complete"] != 2 || im.ProposedRules["complete"] != 1 || len(im.Mapping) != 3 {
		t.Fatalf("report %s", raw)
	}
	for _, m := range im.Mapping {
		if m.Consistency == nil || *m.Consistency != "complete" || len(m.Results) != m.Coverage.Total || m.Coverage.Total == 0 {
			t.Errorf("%s: %+v", m.RuleID, m)
		}
		for _, r := range m.Results {
			if !strings.HasPrefix(r.URL, "https://www.w3.org/WAI/content-assets/wcag-act-rules/testcases/"+m.RuleID+"/") || len(r.Procedures) != 1 || len(r.Procedures[0].Outcomes) != 1 {
				t.Errorf("%s case %+v", m.RuleID, r)
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"a11y", "act-report", dir, "--axe-dir", t.TempDir()}, "axe.min.js"},
		{[]string{"a11y", "act-report", t.TempDir(), "--axe-dir", axeDir}, "testcases.json"},
		{[]string{"a11y", "act-report", dir, "--axe-dir", axeDir, "--rules", "nope"}, "no approved test case of rules nope"},
		{[]string{"a11y", "act-report", dir, "--axe-dir", axeDir, "--tabs", "0"}, "--tabs is 0"},
	} {
		errb.Reset()
		if code := run(context.Background(), c.args, &out, &errb); code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %s; want %q", c.args, code, errb.String(), c.want)
		}
	}
}
