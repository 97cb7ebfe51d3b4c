package field

// The live lanes: checklist, issues, measurements and passed_checks.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"boxd/pipelines/cite"
	"boxd/pipelines/live"
	"boxd/pipelines/schema"
)

// --- checklist ----------------------------------------------------------

func checklistLane() *live.LaneSpec {
	return &live.LaneSpec{
		ID: "checklist", Title: "Checklist", Local: true,
		Finish: func(st *live.State, _ int, _ json.RawMessage) (string, any, error) {
			c := buildChecklist(st)
			return checklistMarkdown(c), c, nil
		},
	}
}

// --- issues -------------------------------------------------------------

func issueLines(items []FieldIssue) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = fmt.Sprintf("%s %s: %s (%s)", lineRef(it.Lines), it.Severity, it.Issue, it.Location)
	}
	return out
}

func issuesLane() *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(schema.Prop("issues", schema.Array(schema.Object(
		schema.Prop("issue", schema.Text(70)),
		schema.Prop("location", schema.Text(40)),
		schema.Prop("severity", schema.Enum(severities...)),
		schema.Prop("cite", schema.Cite(fieldQuoteChars)),
	), fieldPerRun))))
	return &live.LaneSpec{
		ID: "issues", Title: "Issues", Schema: sch, MaxTokens: maxTok,
		Prompt: fieldPrompt("list problems the inspector found (defects, damage, hazards, code violations) that "+
			"are not among the issues already recorded below, at most two, the most serious first: issue (what is "+
			"wrong, in a few words), location (where), severity (the one the inspector states; otherwise critical "+
			"for an immediate hazard to people or property, major for a defect that needs repair soon or causes "+
			"damage, minor for a small defect or maintenance, info for a note) and cite.",
			func(st *live.State) (string, bool) {
				return recordedList("Issues already recorded", issueLines(live.LaneOf[FieldIssues](st, "issues").Items))
			}),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Issues []struct {
					Issue    string `json:"issue"`
					Location string `json:"location"`
					Severity string `json:"severity"`
					Cite     string `json:"cite"`
				} `json:"issues"`
			}
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			items := slices.Clone(live.LaneOf[FieldIssues](st, "issues").Items)
			for _, x := range a.Issues {
				c := readCite(st, x.Cite, fieldQuoteChars)
				is := newIssue(x.Issue, x.Location, x.Severity, c, "issues")
				if is.Issue == "" || len(items) >= fieldMaxItems || slices.ContainsFunc(items, func(o FieldIssue) bool {
					return sameFinding(o.Issue, o.Quote, o.Lines, is.Issue, is.Quote, is.Lines)
				}) {
					continue
				}
				items = append(items, is)
			}
			if items == nil {
				items = []FieldIssue{}
			}
			return issuesMarkdown(items), FieldIssues{Items: items}, nil
		},
	}
}

func newIssue(issue, location, severity string, c citation, source string) FieldIssue {
	if !slices.Contains(severities, severity) {
		severity = "info"
	}
	return FieldIssue{Issue: live.CleanText(issue), Location: live.CleanText(location), Severity: severity, Priority: priorities[severity],
		Quote: c.quote, Lines: c.lines, T: c.t, Verified: c.verified, Source: source}
}

func issuesMarkdown(items []FieldIssue) string {
	if len(items) == 0 {
		return "_No issues yet._\n"
	}
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "- **%s** (%s): %s", it.Severity, it.Priority, it.Issue)
		if it.Location != "" {
			fmt.Fprintf(&b, ", %s", it.Location)
		}
		fmt.Fprintf(&b, " — \"%s\" %s%s\n", it.Quote, lineRef(it.Lines), verifiedMark(it.Verified))
	}
	return b.String()
}

// --- measurements -------------------------------------------------------

var withinSpecAnswers = []string{"yes", "no", "unknown"}

func measurementLines(items []FieldMeasurement) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = fmt.Sprintf("%s %s: %s", lineRef(it.Lines), it.Item, it.Value)
	}
	return out
}

func measurementsLane() *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(schema.Prop("measurements", schema.Array(schema.Object(
		schema.Prop("item", schema.Text(40)),
		schema.Prop("value", schema.Text(30)),
		schema.Prop("spec", schema.Text(40)),
		schema.Prop("within_spec", schema.Enum(withinSpecAnswers...)),
		schema.Prop("cite", schema.Cite(fieldQuoteChars)),
	), fieldPerRun))))
	return &live.LaneSpec{
		ID: "measurements", Title: "Measurements", Schema: sch, MaxTokens: maxTok,
		Prompt: fieldPrompt("list measurements and readings the inspector stated that are not among those already "+
			"recorded below, at most two: item (what was measured), value (the reading as stated, with its unit), spec "+
			"(the requirement or limit the speaker stated, empty when none was stated), within_spec (yes or no as the "+
			"speaker judged it or as the stated spec shows; unknown when no spec was stated) and cite.",
			func(st *live.State) (string, bool) {
				return recordedList("Measurements already recorded", measurementLines(live.LaneOf[FieldMeasurements](st, "measurements").Items))
			}),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Measurements []struct {
					Item       string `json:"item"`
					Value      string `json:"value"`
					Spec       string `json:"spec"`
					WithinSpec string `json:"within_spec"`
					Cite       string `json:"cite"`
				} `json:"measurements"`
			}
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			items := slices.Clone(live.LaneOf[FieldMeasurements](st, "measurements").Items)
			for _, x := range a.Measurements {
				c := readCite(st, x.Cite, fieldQuoteChars)
				m := FieldMeasurement{Item: live.CleanText(x.Item), Value: live.CleanText(x.Value), Spec: live.CleanText(x.Spec),
					Quote: c.quote, Lines: c.lines, T: c.t, Verified: c.verified, Source: "measurements"}
				if x.WithinSpec == "yes" || x.WithinSpec == "no" {
					w := x.WithinSpec == "yes"
					m.WithinSpec = &w
				}
				if m.Item == "" || len(items) >= fieldMaxItems || slices.ContainsFunc(items, func(o FieldMeasurement) bool {
					return sameFinding(o.Item+" "+o.Value, o.Quote, o.Lines, m.Item+" "+m.Value, m.Quote, m.Lines)
				}) {
					continue
				}
				items = append(items, m)
			}
			if items == nil {
				items = []FieldMeasurement{}
			}
			return measurementsMarkdown(items), FieldMeasurements{Items: items}, nil
		},
	}
}

func withinSpecText(w *bool) string {
	switch {
	case w == nil:
		return "spec not stated"
	case *w:
		return "within spec"
	}
	return "out of spec"
}

// withinSpecMarkdown is withinSpecText, out of spec in bold.
func withinSpecMarkdown(w *bool) string {
	if w != nil && !*w {
		return "**out of spec**"
	}
	return withinSpecText(w)
}

func measurementsMarkdown(items []FieldMeasurement) string {
	if len(items) == 0 {
		return "_No measurements yet._\n"
	}
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "- %s: %s", it.Item, it.Value)
		if it.Spec != "" {
			fmt.Fprintf(&b, " (spec: %s)", it.Spec)
		}
		fmt.Fprintf(&b, ", %s — \"%s\" %s%s\n", withinSpecMarkdown(it.WithinSpec), it.Quote, lineRef(it.Lines), verifiedMark(it.Verified))
	}
	return b.String()
}

// --- passed checks ------------------------------------------------------

func passedLines(items []PassedCheck) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = lineRef(it.Lines) + " " + it.Item
	}
	return out
}

func passedChecksLane() *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(schema.Prop("passed", schema.Array(schema.Object(
		schema.Prop("item", schema.Text(60)),
		schema.Prop("cite", schema.Cite(fieldQuoteChars)),
	), 3))))
	return &live.LaneSpec{
		ID: "passed_checks", Title: "Passed checks", Schema: sch, MaxTokens: maxTok,
		Prompt: fieldPrompt("list checks the inspector said pass or are in good condition that are not among the "+
			"passed checks already recorded below, at most three: item (what passed, in a few words) and cite.",
			func(st *live.State) (string, bool) {
				return recordedList("Passed checks already recorded", passedLines(live.LaneOf[PassedChecks](st, "passed_checks").Items))
			}),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Passed []struct {
					Item string `json:"item"`
					Cite string `json:"cite"`
				} `json:"passed"`
			}
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			items := slices.Clone(live.LaneOf[PassedChecks](st, "passed_checks").Items)
			for _, x := range a.Passed {
				c := readCite(st, x.Cite, fieldQuoteChars)
				p := PassedCheck{Item: live.CleanText(x.Item), Quote: c.quote, Lines: c.lines, T: c.t}
				if p.Item == "" || len(items) >= fieldMaxItems || slices.ContainsFunc(items, func(o PassedCheck) bool {
					return sameFinding(o.Item, o.Quote, o.Lines, p.Item, p.Quote, p.Lines)
				}) {
					continue
				}
				items = append(items, p)
			}
			if items == nil {
				items = []PassedCheck{}
			}
			return passedMarkdown(st, items), PassedChecks{Items: items}, nil
		},
	}
}

func passedMarkdown(st *live.State, items []PassedCheck) string {
	if len(items) == 0 {
		return "_No passed checks yet._\n"
	}
	var b strings.Builder
	ls := st.CiteLines()
	for _, it := range items {
		fmt.Fprintf(&b, "- %s — \"%s\" %s%s\n", it.Item, it.Quote, lineRef(it.Lines), verifiedMark(cite.Verify(ls, it.Quote, it.Lines)))
	}
	return b.String()
}
