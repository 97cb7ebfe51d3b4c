package field

// The draft: the findings of every lane merged and checked again, which
// the after-stop lanes and the report build on.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"boxd/pipelines/live"
)

// --- draft --------------------------------------------------------------

// fieldDraft is what the lanes have found, merged and checked against the
// final transcript: the report's findings.
type fieldDraft struct {
	checklist    Checklist
	issues       []FieldIssue
	measurements []FieldMeasurement
	passed       []FieldPassedCheck
	duplicates   int
}

var severityRank = map[string]int{"critical": 0, "major": 1, "minor": 2, "info": 3}

// buildDraft merges the live lanes' findings and the safety sweep's
// additions, drops repeats, verifies every quote again and orders issues
// by severity, then by time.
func buildDraft(st *live.State) fieldDraft {
	d := fieldDraft{checklist: buildChecklist(st), issues: []FieldIssue{}, measurements: []FieldMeasurement{}, passed: []FieldPassedCheck{}}
	sweep := live.LaneOf[SafetySweep](st, "safety_sweep")
	recheck := func(quote string, lines []int) citation { return citeOf(st, slices.Clone(lines), quote) }

	addIssue := func(is FieldIssue) {
		c := recheck(is.Quote, is.Lines)
		is.Lines, is.T, is.Verified = c.lines, c.t, c.verified
		if slices.ContainsFunc(d.issues, func(o FieldIssue) bool {
			return sameFinding(o.Issue, o.Quote, o.Lines, is.Issue, is.Quote, is.Lines)
		}) {
			d.duplicates++
			return
		}
		d.issues = append(d.issues, is)
	}
	addPassed := func(p PassedCheck, source string) {
		c := recheck(p.Quote, p.Lines)
		fp := FieldPassedCheck{PassedCheck: PassedCheck{Item: p.Item, Quote: p.Quote, Lines: c.lines, T: c.t}, Verified: c.verified, Source: source}
		if slices.ContainsFunc(d.passed, func(o FieldPassedCheck) bool {
			return sameFinding(o.Item, o.Quote, o.Lines, fp.Item, fp.Quote, fp.Lines)
		}) {
			d.duplicates++
			return
		}
		d.passed = append(d.passed, fp)
	}
	for _, is := range live.LaneOf[FieldIssues](st, "issues").Items {
		addIssue(is)
	}
	for _, m := range live.LaneOf[FieldMeasurements](st, "measurements").Items {
		c := recheck(m.Quote, m.Lines)
		m.Lines, m.T, m.Verified = c.lines, c.t, c.verified
		if slices.ContainsFunc(d.measurements, func(o FieldMeasurement) bool {
			return sameFinding(o.Item+" "+o.Value, o.Quote, o.Lines, m.Item+" "+m.Value, m.Quote, m.Lines)
		}) {
			d.duplicates++
			continue
		}
		d.measurements = append(d.measurements, m)
	}
	for _, p := range live.LaneOf[PassedChecks](st, "passed_checks").Items {
		addPassed(p, "passed_checks")
	}
	for _, a := range sweep.Additions {
		switch a.Kind {
		case "issue":
			addIssue(newIssue(a.Item, a.Location, a.Severity, citation{quote: a.Quote, lines: a.Lines}, "safety_sweep"))
		case "passed_check":
			addPassed(PassedCheck{Item: a.Item, Quote: a.Quote, Lines: a.Lines}, "safety_sweep")
		}
	}
	slices.SortStableFunc(d.issues, func(a, b FieldIssue) int {
		if c := cmp.Compare(severityRank[a.Severity], severityRank[b.Severity]); c != 0 {
			return c
		}
		return cmp.Compare(firstLine(a.Lines), firstLine(b.Lines))
	})
	return d
}

func firstLine(lines []int) int {
	if len(lines) == 0 {
		return 1 << 30
	}
	return lines[0]
}

// fieldFindingsBytes bounds the findings in a prompt, so that with the
// transcript (live.NumberedTranscript) and the answer it fits an 8,192-token
// context.
const fieldFindingsBytes = 5000

// findingsText renders the draft's findings for a prompt, the first ones
// when they are too many.
func (d fieldDraft) findingsText() string {
	text := d.allFindingsText()
	if len(text) <= fieldFindingsBytes {
		return text
	}
	cut := strings.LastIndexByte(text[:fieldFindingsBytes], '\n')
	return text[:cut+1] + "(more findings are left out: the list is longer than a prompt holds)\n"
}

func (d fieldDraft) allFindingsText() string {
	var b strings.Builder
	mark := func(v bool) string {
		if v {
			return ""
		}
		return " (quote not verified)"
	}
	b.WriteString("Issues recorded:\n")
	for _, it := range d.issues {
		fmt.Fprintf(&b, "- %s %s: %s (%s)%s\n", lineRef(it.Lines), it.Severity, it.Issue, it.Location, mark(it.Verified))
	}
	b.WriteString("Measurements recorded:\n")
	for _, m := range d.measurements {
		spec := m.Spec
		if spec == "" {
			spec = "none stated"
		}
		fmt.Fprintf(&b, "- %s %s: %s, spec: %s, %s%s\n", lineRef(m.Lines), m.Item, m.Value, spec, withinSpecText(m.WithinSpec), mark(m.Verified))
	}
	b.WriteString("Passed checks recorded:\n")
	for _, p := range d.passed {
		fmt.Fprintf(&b, "- %s %s%s\n", lineRef(p.Lines), p.Item, mark(p.Verified))
	}
	return b.String()
}

// findingTexts are the lines the draft's findings cite and the findings'
// texts.
func (d fieldDraft) findingTexts() (lines map[int]bool, texts []string) {
	lines = map[int]bool{}
	add := func(ls []int, text string) {
		for _, n := range ls {
			lines[n] = true
		}
		texts = append(texts, text)
	}
	for _, it := range d.issues {
		add(it.Lines, it.Issue+" "+it.Location+" "+it.Quote)
	}
	for _, m := range d.measurements {
		add(m.Lines, m.Item+" "+m.Quote)
	}
	for _, p := range d.passed {
		add(p.Lines, p.Item+" "+p.Quote)
	}
	return lines, texts
}
