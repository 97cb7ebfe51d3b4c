package field

// The after-stop report lane, the report's Markdown and done.summary.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"boxd/pipelines/cite"
	"boxd/pipelines/live"
	"boxd/pipelines/schema"
)

// --- report -------------------------------------------------------------

// FieldReport is the field report object (contract section 2).
type FieldReport struct {
	Title            string             `json:"title"`
	InspectionType   string             `json:"inspection_type"`
	Summary          string             `json:"summary"`
	OverallCondition string             `json:"overall_condition"`
	Issues           []FieldIssue       `json:"issues"`
	Measurements     []FieldMeasurement `json:"measurements"`
	PassedChecks     []FieldPassedCheck `json:"passed_checks"`
	CodeReferences   []CodeReference    `json:"code_references"`
	SiteDetails      []SiteDetail       `json:"site_details"`
	Checklist        []ChecklistItem    `json:"checklist"`
	Recommendations  []string           `json:"recommendations"`
	FollowUp         []string           `json:"follow_up"`
}

// Overall conditions, best first. notAssessed is only used when the report
// lane did not run.
var conditions = []string{"good", "fair", "poor", "unsafe"}

const notAssessed = "not assessed"

// The most characters of a code reference's and a site detail's quote.
const (
	codeQuoteChars = 70
	siteQuoteChars = 50
)

// reportAnswer is the report lane's model answer: the parts of the report
// the lanes do not hold.
type reportAnswer struct {
	Summary          string   `json:"summary"`
	OverallCondition string   `json:"overall_condition"`
	CodeReferences   []string `json:"code_references"`
	SiteDetails      []string `json:"site_details"`
	Recommendations  []string `json:"recommendations"`
	FollowUp         []string `json:"follow_up"`
}

func reportLane() *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(
		schema.Prop("summary", schema.Text(240)),
		schema.Prop("overall_condition", schema.Enum(conditions...)),
		schema.Prop("code_references", schema.Array(schema.LabeledCite(24, codeQuoteChars), 2)),
		schema.Prop("site_details", schema.Array(schema.LabeledCite(16, siteQuoteChars), 3)),
		schema.Prop("recommendations", schema.Array(schema.Text(80), 2)),
		schema.Prop("follow_up", schema.Array(schema.Text(70), 1)),
	))
	return &live.LaneSpec{
		ID: "report", Title: "Report", Schema: sch, MaxTokens: maxTok,
		Prompt: fieldPrompt("the inspection is over; write the parts of the report the findings below do not hold. "+
			"summary: two or three short sentences (at most 40 words) on what was inspected, the main problems and the overall condition. "+
			"overall_condition: good, fair, poor or unsafe, as the inspector states it if they do. code_references: "+
			"each code or standard section the speaker cites, as a cite with the code before a colon, such as "+
			"[7] NEC 210.8: section 210.8 requires it. site_details: the address, the people present, the structure "+
			"or system and its age or rating, as a cite with a short label before a colon, such as [1] address: 12 "+
			"Elm Street. recommendations: the repairs to make, with their timing when stated. follow_up: the next step "+
			"(reinspection, a call, a quote).",
			func(st *live.State) (string, bool) {
				d := buildDraft(st)
				return fmt.Sprintf("Inspection type: %s.\n%s", inspectionTitle(d.checklist.Type), d.findingsText()), true
			}),
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a reportAnswer
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			r := buildReport(st, &a)
			return fieldReportMarkdown(r), r, nil
		},
	}
}

// buildReport assembles the report from the lanes (the draft) and the
// report lane's answer; a nil answer (the lane did not run) leaves summary,
// references, site details, recommendations and follow-up empty and the
// condition not assessed unless the findings set a floor.
func buildReport(st *live.State, a *reportAnswer) FieldReport {
	d := buildDraft(st)
	r := FieldReport{
		InspectionType: d.checklist.Type, Issues: d.issues, Measurements: d.measurements, PassedChecks: d.passed,
		CodeReferences: []CodeReference{}, SiteDetails: []SiteDetail{}, Checklist: d.checklist.Items,
		Recommendations: []string{}, FollowUp: []string{}, OverallCondition: notAssessed,
	}
	if a != nil {
		r.Summary = live.CleanText(a.Summary)
		if slices.Contains(conditions, a.OverallCondition) {
			r.OverallCondition = a.OverallCondition
		}
		for _, s := range a.CodeReferences {
			lines, code, quote, _ := cite.ParseLabeled(s)
			quote = cite.Cut(quote, codeQuoteChars)
			if code == "" && quote == "" {
				continue
			}
			c := citeOf(st, lines, quote)
			r.CodeReferences = append(r.CodeReferences, CodeReference{Code: code, Quote: quote, Lines: c.lines, T: c.t, Verified: c.verified})
		}
		for _, s := range a.SiteDetails {
			lines, label, quote, _ := cite.ParseLabeled(s)
			quote = cite.Cut(quote, siteQuoteChars)
			if label == "" && quote == "" {
				continue
			}
			c := citeOf(st, lines, quote)
			r.SiteDetails = append(r.SiteDetails, SiteDetail{Label: label, Quote: quote, Lines: c.lines, T: c.t, Verified: c.verified})
		}
		r.Recommendations = live.CleanList(a.Recommendations)
		r.FollowUp = live.CleanList(a.FollowUp)
	}
	// The condition is never better than the verified findings allow.
	floor := -1
	for _, it := range r.Issues {
		switch {
		case it.Verified && it.Severity == "critical":
			floor = max(floor, slices.Index(conditions, "poor"))
		case it.Verified && it.Severity == "major":
			floor = max(floor, slices.Index(conditions, "fair"))
		}
	}
	if floor >= 0 && slices.Index(conditions, r.OverallCondition) < floor {
		r.OverallCondition = conditions[floor]
	}
	r.Title = inspectionTitle(d.checklist.Type) + " report"
	for _, sd := range r.SiteDetails {
		if sd.Verified && strings.Contains(strings.ToLower(sd.Label), "address") {
			r.Title += ": " + sd.Quote
			break
		}
	}
	return r
}

// fieldReportMarkdown renders the report.
func fieldReportMarkdown(r FieldReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n**Overall condition:** %s\n\n", r.Title, r.OverallCondition)
	if r.Summary != "" {
		b.WriteString(r.Summary + "\n\n")
	}
	cite := func(quote string, lines []int, verified bool) string {
		return fmt.Sprintf("\"%s\" %s%s", quote, lineRef(lines), verifiedMark(verified))
	}
	section := func(title string, n int, empty string) bool {
		fmt.Fprintf(&b, "## %s\n\n", title)
		if n == 0 {
			b.WriteString("_" + empty + "_\n\n")
			return false
		}
		return true
	}
	if section("Site details", len(r.SiteDetails), "None recorded.") {
		for _, s := range r.SiteDetails {
			fmt.Fprintf(&b, "- %s: %s\n", s.Label, cite(s.Quote, s.Lines, s.Verified))
		}
		b.WriteString("\n")
	}
	if section("Issues", len(r.Issues), "No issues found.") {
		for _, it := range r.Issues {
			fmt.Fprintf(&b, "- **%s** (priority: %s): %s", it.Severity, it.Priority, it.Issue)
			if it.Location != "" {
				fmt.Fprintf(&b, ", %s", it.Location)
			}
			fmt.Fprintf(&b, " — %s\n", cite(it.Quote, it.Lines, it.Verified))
		}
		b.WriteString("\n")
	}
	if section("Measurements", len(r.Measurements), "None recorded.") {
		for _, m := range r.Measurements {
			fmt.Fprintf(&b, "- %s: %s", m.Item, m.Value)
			if m.Spec != "" {
				fmt.Fprintf(&b, " (spec: %s)", m.Spec)
			}
			fmt.Fprintf(&b, ", %s — %s\n", withinSpecMarkdown(m.WithinSpec), cite(m.Quote, m.Lines, m.Verified))
		}
		b.WriteString("\n")
	}
	if section("Passed checks", len(r.PassedChecks), "None recorded.") {
		for _, p := range r.PassedChecks {
			fmt.Fprintf(&b, "- %s — %s\n", p.Item, cite(p.Quote, p.Lines, p.Verified))
		}
		b.WriteString("\n")
	}
	if section("Code references", len(r.CodeReferences), "None cited.") {
		for _, c := range r.CodeReferences {
			fmt.Fprintf(&b, "- %s — %s\n", c.Code, cite(c.Quote, c.Lines, c.Verified))
		}
		b.WriteString("\n")
	}
	if section("Recommendations", len(r.Recommendations), "None.") {
		b.WriteString("- " + strings.Join(r.Recommendations, "\n- ") + "\n\n")
	}
	if section("Follow-up", len(r.FollowUp), "None.") {
		b.WriteString("- " + strings.Join(r.FollowUp, "\n- ") + "\n\n")
	}
	if section("Checklist", len(r.Checklist), "No checklist.") {
		for _, it := range r.Checklist {
			box := "[ ]"
			if it.Covered {
				box = "[x]"
			}
			fmt.Fprintf(&b, "- %s %s", box, it.Item)
			if it.Line != nil {
				fmt.Fprintf(&b, " [line %d]", *it.Line)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// --- summary ------------------------------------------------------------

// fieldSummary is done.summary: report (the report lane's data, or the
// report built from the lanes alone when that lane did not run),
// report_markdown, final_transcript and pass2.
func fieldSummary(st *live.State) map[string]any {
	r, ok := st.Lanes["report"].Data.(FieldReport)
	if !ok {
		r = buildReport(st, nil)
	}
	return map[string]any{
		"report":           r,
		"report_markdown":  fieldReportMarkdown(r),
		"final_transcript": live.LiveFinalTranscript(st),
		"pass2": live.Pass2NotRun("pass 2 (diarization and speaker roles) is the clinical and sales verticals' (contract section 6): " +
			"a field inspection's final_transcript is the live transcript without speakers or roles, and the report cites its line numbers"),
	}
}
