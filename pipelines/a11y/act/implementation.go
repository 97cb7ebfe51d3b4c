package act

import (
	"strings"
	"time"
)

// TestCaseBase is where the W3C publishes the test cases; reports name
// each case by its URL there.
const TestCaseBase = "https://www.w3.org/WAI/content-assets/wcag-act-rules/"

// Implementation is the ACT implementation-report shape the W3C's reports
// use (the test data's act-rules/implementations/*.json).
type Implementation struct {
	Vendor        string         `json:"vendor"`
	Name          string         `json:"name"`
	Version       string         `json:"version"`
	LastModified  string         `json:"lastModified"`
	ApprovedRules map[string]int `json:"approvedRules"`
	ProposedRules map[string]int `json:"proposedRules"`
	Mapping       []RuleMapping  `json:"actRuleMapping"`
}

// RuleMapping is one rule's entry.
type RuleMapping struct {
	RuleID         string        `json:"ruleId"`
	RuleName       string        `json:"ruleName"`
	RuleApproved   bool          `json:"ruleApproved"`
	ProcedureNames []string      `json:"procedureNames"`
	Consistency    *string       `json:"consistency"`
	Coverage       *Coverage     `json:"coverage"`
	Results        []CaseMapping `json:"testCaseResults"`
}

// Coverage counts a rule's cases by what the procedure said.
type Coverage struct {
	Covered  int `json:"covered"`
	Untested int `json:"untested"`
	CantTell int `json:"cantTell"`
	Total    int `json:"testCaseTotal"`
}

// CaseMapping is one test case's outcome.
type CaseMapping struct {
	ID         string            `json:"testcaseId"`
	Name       string            `json:"testCaseName"`
	URL        string            `json:"testCaseUrl"`
	Approved   bool              `json:"testCaseApproved"`
	Expected   string            `json:"expected"`
	Procedures []ProcedureResult `json:"procedureResults"`
}

// ProcedureResult is what a procedure reported for a case.
type ProcedureResult struct {
	Name     string   `json:"procedureName"`
	Outcomes []string `json:"outcomes"`
}

// AsImplementation writes rep in the implementation-report shape, as
// version of boxd at now.
func AsImplementation(rep *Report, version string, now time.Time) Implementation {
	im := Implementation{Vendor: "boxd", Name: "boxd accessibility audit (" + rep.RuleEngine + ", keyboard pass)", Version: version,
		LastModified: now.UTC().Format("2 January 2006"), ApprovedRules: map[string]int{}, ProposedRules: map[string]int{}, Mapping: []RuleMapping{}}
	for _, r := range rep.Rules {
		tally := im.ProposedRules
		if r.Approved {
			tally = im.ApprovedRules
		}
		m := RuleMapping{RuleID: r.ID, RuleName: r.Name, RuleApproved: r.Approved, ProcedureNames: []string{}, Results: []CaseMapping{}}
		switch r.Consistency {
		case Complete, Partial, Minimal:
			c := r.Consistency
			m.Consistency = &c
			tally[c]++
		case Inconsistent:
			tally["inconsistent"]++
		default:
			tally["untested"]++
		}
		if r.Procedure == "" {
			im.Mapping = append(im.Mapping, m)
			continue
		}
		name := procedureName(r.ID)
		m.ProcedureNames = []string{name}
		cov := &Coverage{Total: r.Cases}
		for _, x := range r.Results {
			switch x.Outcome {
			case Untested:
				cov.Untested++
			case CantTell:
				cov.CantTell++
			default:
				cov.Covered++
			}
			m.Results = append(m.Results, CaseMapping{ID: x.ID, Name: x.Title, URL: TestCaseBase + x.Path, Approved: x.Approved, Expected: x.Expected,
				Procedures: []ProcedureResult{{Name: name, Outcomes: []string{x.Outcome}}}})
		}
		m.Coverage = cov
		im.Mapping = append(im.Mapping, m)
	}
	return im
}

// procedureName names a rule's procedure in the report: the axe-core
// rules and boxd's passes it runs, joined.
func procedureName(id string) string {
	p := procedureFor(id)
	parts := append([]string(nil), p.Axe...)
	if p.Own != nil {
		parts = append(parts, "boxd-"+strings.ReplaceAll(strings.Fields(p.OwnName)[0], " ", "-")+"-"+id)
	}
	return strings.Join(parts, "+")
}
