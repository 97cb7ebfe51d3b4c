package field

// The after-stop safety_sweep and report_check lanes.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"boxd/pipelines/cite"
	"boxd/pipelines/live"
	"boxd/pipelines/schema"
)

// --- safety sweep -------------------------------------------------------

// SweepItem is a checklist item the sweep lists: discussed at Lines but
// with no finding recorded (omitted), or never discussed (not_covered).
type SweepItem struct {
	ID     string `json:"id"`
	Item   string `json:"item"`
	Safety bool   `json:"safety"`
	Lines  []int  `json:"lines"`
}

// SweepAddition is a finding the sweep added to the report.
type SweepAddition struct {
	Kind      string   `json:"kind"` // issue or passed_check
	Item      string   `json:"item"`
	Location  string   `json:"location"`
	Severity  string   `json:"severity"` // info for a passed check
	Checklist string   `json:"checklist"`
	Quote     string   `json:"quote"`
	Lines     []int    `json:"lines"`
	T         *float64 `json:"t"`
	Verified  bool     `json:"verified"`
}

// SafetySweep is the safety_sweep lane's data.
type SafetySweep struct {
	Type       string          `json:"type"`
	Omitted    []SweepItem     `json:"omitted"`
	NotCovered []SweepItem     `json:"not_covered"`
	Additions  []SweepAddition `json:"additions"`
	Duplicates int             `json:"duplicates"` // additions dropped as already recorded
}

// sweepGaps compares the checklist with the draft's findings: items the
// transcript discusses that no finding cites or names (omitted), and items
// it never discusses (not covered), safety items first.
func sweepGaps(st *live.State, d fieldDraft) (omitted, notCovered []SweepItem) {
	omitted, notCovered = []SweepItem{}, []SweepItem{}
	cited, texts := d.findingTexts()
	for _, it := range d.checklist.Items {
		si := SweepItem{ID: it.ID, Item: it.Item, Safety: it.Safety, Lines: itemLines(st, d.checklist.Type, it.ID)}
		if !it.Covered {
			notCovered = append(notCovered, si)
			continue
		}
		found := slices.ContainsFunc(si.Lines, func(n int) bool { return cited[n] }) ||
			slices.ContainsFunc(texts, func(t string) bool { return checklistItemFor(d.checklist.Type, t) == it.ID })
		if !found {
			omitted = append(omitted, si)
		}
	}
	bySafety := func(a, b SweepItem) int {
		if a.Safety == b.Safety {
			return 0
		}
		if a.Safety {
			return -1
		}
		return 1
	}
	slices.SortStableFunc(omitted, bySafety)
	slices.SortStableFunc(notCovered, bySafety)
	return omitted, notCovered
}

func sweepItemLines(items []SweepItem) string {
	if len(items) == 0 {
		return "none\n"
	}
	var b strings.Builder
	b.WriteString("\n")
	for _, it := range items {
		fmt.Fprintf(&b, "- %s", it.Item)
		if it.Safety {
			b.WriteString(" (safety)")
		}
		if len(it.Lines) > 0 {
			fmt.Fprintf(&b, ", discussed at lines %s", lineRef(it.Lines))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func safetySweepLane() *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(schema.Prop("additions", schema.Array(schema.Object(
		schema.Prop("kind", schema.Enum("issue", "passed_check")),
		schema.Prop("item", schema.Text(60)),
		schema.Prop("location", schema.Text(30)),
		schema.Prop("severity", schema.Enum(severities...)),
		schema.Prop("cite", schema.Cite(fieldQuoteChars)),
	), fieldPerRun))))
	return &live.LaneSpec{
		ID: "safety_sweep", Title: "Safety sweep", Schema: sch, MaxTokens: maxTok,
		Prompt: fieldPrompt("the inspection is over. Compare the transcript with the inspection checklist and "+
			"the findings recorded below, and add the findings the transcript states but the records omit, "+
			"above all for the checklist items discussed without a recorded finding and for safety items: at most "+
			"two, safety first. kind is issue for a problem or passed_check for something that passed; item (what, "+
			"in a few words), location (where), severity (for an issue as the inspector states it, else critical, "+
			"major, minor or info; info for a passed check) and cite. An empty list when nothing is omitted.",
			func(st *live.State) (string, bool) {
				d := buildDraft(st)
				omitted, notCovered := sweepGaps(st, d)
				return fmt.Sprintf("Inspection type: %s.\nChecklist items discussed without a recorded finding: %s"+
					"Checklist items not discussed: %s%s", inspectionTitle(d.checklist.Type),
					sweepItemLines(omitted), sweepItemLines(notCovered), d.findingsText()), true
			}),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Additions []struct {
					Kind     string `json:"kind"`
					Item     string `json:"item"`
					Location string `json:"location"`
					Severity string `json:"severity"`
					Cite     string `json:"cite"`
				} `json:"additions"`
			}
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			d := buildDraft(st)
			omitted, notCovered := sweepGaps(st, d)
			sw := SafetySweep{Type: d.checklist.Type, Omitted: omitted, NotCovered: notCovered, Additions: []SweepAddition{}}
			for _, x := range a.Additions {
				c := readCite(st, x.Cite, fieldQuoteChars)
				ad := SweepAddition{Kind: x.Kind, Item: live.CleanText(x.Item), Location: live.CleanText(x.Location), Severity: x.Severity,
					Quote: c.quote, Lines: c.lines, T: c.t, Verified: c.verified}
				if ad.Kind != "passed_check" {
					ad.Kind = "issue"
				}
				if ad.Kind == "passed_check" || !slices.Contains(severities, ad.Severity) {
					ad.Severity = "info"
				}
				ad.Checklist = checklistItemFor(d.checklist.Type, ad.Item+" "+ad.Location+" "+ad.Quote)
				if ad.Item == "" {
					continue
				}
				dup := slices.ContainsFunc(sw.Additions, func(o SweepAddition) bool {
					return sameFinding(o.Item, o.Quote, o.Lines, ad.Item, ad.Quote, ad.Lines)
				})
				switch ad.Kind {
				case "issue":
					dup = dup || slices.ContainsFunc(d.issues, func(o FieldIssue) bool {
						return sameFinding(o.Issue, o.Quote, o.Lines, ad.Item, ad.Quote, ad.Lines)
					})
				default:
					dup = dup || slices.ContainsFunc(d.passed, func(o FieldPassedCheck) bool {
						return sameFinding(o.Item, o.Quote, o.Lines, ad.Item, ad.Quote, ad.Lines)
					})
				}
				if dup {
					sw.Duplicates++
					continue
				}
				sw.Additions = append(sw.Additions, ad)
			}
			return sweepMarkdown(sw), sw, nil
		},
	}
}

func sweepMarkdown(sw SafetySweep) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n", inspectionTitle(sw.Type))
	b.WriteString("Added to the report:\n")
	if len(sw.Additions) == 0 {
		b.WriteString("- _nothing_\n")
	}
	for _, a := range sw.Additions {
		kind := a.Severity + " issue"
		if a.Kind == "passed_check" {
			kind = "passed check"
		}
		fmt.Fprintf(&b, "- %s: %s — \"%s\" %s%s\n", kind, a.Item, a.Quote, lineRef(a.Lines), verifiedMark(a.Verified))
	}
	if len(sw.Omitted) > 0 {
		b.WriteString("\nDiscussed without a recorded finding:\n")
		for _, it := range sw.Omitted {
			fmt.Fprintf(&b, "- %s %s\n", it.Item, lineRef(it.Lines))
		}
	}
	var safety []string
	for _, it := range sw.NotCovered {
		if it.Safety {
			safety = append(safety, it.Item)
		}
	}
	if len(safety) > 0 {
		b.WriteString("\nSafety items not discussed:\n- " + strings.Join(safety, "\n- ") + "\n")
	}
	return b.String()
}

// --- report check -------------------------------------------------------

// CheckProblem is a finding whose quote is not verified, and why.
type CheckProblem struct {
	Section string `json:"section"` // issues, measurements, passed_checks
	Item    string `json:"item"`
	Quote   string `json:"quote"`
	Lines   []int  `json:"lines"`
	Reason  string `json:"reason"`
}

// ReportCheck is the report_check lane's data.
type ReportCheck struct {
	Checked          int            `json:"checked"`
	Verified         int            `json:"verified"`
	Problems         []CheckProblem `json:"problems"`
	Duplicates       int            `json:"duplicates"`
	Severities       map[string]int `json:"severities"`
	ChecklistCovered int            `json:"checklist_covered"`
	ChecklistTotal   int            `json:"checklist_total"`
	SafetyNotCovered []string       `json:"safety_not_covered"`
}

func buildReportCheck(st *live.State, d fieldDraft) ReportCheck {
	rc := ReportCheck{Problems: []CheckProblem{}, Duplicates: d.duplicates, Severities: map[string]int{},
		ChecklistCovered: d.checklist.Covered, ChecklistTotal: d.checklist.Total, SafetyNotCovered: []string{}}
	for _, s := range severities {
		rc.Severities[s] = 0
	}
	ls := st.CiteLines()
	check := func(section, item, quote string, lines []int) {
		rc.Checked++
		if why := cite.Problem(ls, quote, lines); why != "" {
			rc.Problems = append(rc.Problems, CheckProblem{Section: section, Item: item, Quote: quote, Lines: lines, Reason: why})
			return
		}
		rc.Verified++
	}
	for _, it := range d.issues {
		rc.Severities[it.Severity]++
		check("issues", it.Issue, it.Quote, it.Lines)
	}
	for _, m := range d.measurements {
		check("measurements", m.Item, m.Quote, m.Lines)
	}
	for _, p := range d.passed {
		check("passed_checks", p.Item, p.Quote, p.Lines)
	}
	for _, it := range d.checklist.Items {
		if it.Safety && !it.Covered {
			rc.SafetyNotCovered = append(rc.SafetyNotCovered, it.Item)
		}
	}
	return rc
}

func reportCheckLane() *live.LaneSpec {
	return &live.LaneSpec{
		ID: "report_check", Title: "Report check", Local: true,
		Finish: func(st *live.State, _ int, _ json.RawMessage) (string, any, error) {
			rc := buildReportCheck(st, buildDraft(st))
			var b strings.Builder
			fmt.Fprintf(&b, "%d of %d quotes verified against their cited lines.\n", rc.Verified, rc.Checked)
			for _, p := range rc.Problems {
				fmt.Fprintf(&b, "- %s: %s — \"%s\" %s: %s\n", p.Section, p.Item, p.Quote, lineRef(p.Lines), p.Reason)
			}
			fmt.Fprintf(&b, "\nChecklist: %d of %d items covered.\n", rc.ChecklistCovered, rc.ChecklistTotal)
			if len(rc.SafetyNotCovered) > 0 {
				b.WriteString("Safety items not covered: " + strings.Join(rc.SafetyNotCovered, "; ") + ".\n")
			}
			return b.String(), rc, nil
		},
	}
}
