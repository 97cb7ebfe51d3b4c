// Package field is the field-inspection live vertical (contract document
// 1, sections 2 and 6). Live lanes: checklist (computed without a model:
// the inspection type picked from the transcript, items ticked at the line
// that covered them; checklist.go), issues, measurements and passed_checks
// (each run adds at most a few findings not yet recorded, every one cited
// as "[n] exact words"; lanes.go). After stop, in order: safety_sweep (the
// checklist against the findings; the model adds findings for items
// discussed but not recorded), report_check (every quote checked against
// its cited lines, no model; sweep.go) and report (the field report
// object; report.go). The final artifact, done.summary, holds report,
// report_markdown, final_transcript (the live transcript) and pass2.
// Payload shapes are in docs/decisions.md ("Live lanes: field and
// translate"); how quotes are read and verified is in package cite.
package field

import (
	"strconv"
	"strings"

	"boxd/pipelines/cite"
	"boxd/pipelines/live"
)

// New is the field-inspection vertical.
func New() *live.Vertical {
	return &live.Vertical{
		ID:      "field",
		Live:    []*live.LaneSpec{checklistLane(), issuesLane(), measurementsLane(), passedChecksLane()},
		Final:   []*live.LaneSpec{safetySweepLane(), reportCheckLane(), reportLane()},
		Summary: fieldSummary,
	}
}

const fieldSystem = "You assist a building or electrical inspector during a site inspection. The user message holds " +
	"the live speech-recognition transcript so far, one numbered line per sentence ([n] text); speakers are not " +
	"labelled and words may be misrecognised. Use only what the transcript says and never invent findings. A cite " +
	"is the line number in brackets, a space and the speaker's exact words copied from that line, at most 12 " +
	"words, such as [4] the step flashing is missing ([4,5] when the words run over two lines). Keep every other " +
	"string to a few words. Answer with one JSON object in " +
	"the given schema: plain-ASCII strings on one line each, no double quotation marks, empty lists when there is " +
	"nothing to add.\n\nTask: "

// Severities and the priority each calls for.
var (
	severities = []string{"critical", "major", "minor", "info"}
	priorities = map[string]string{"critical": "immediate", "major": "soon", "minor": "routine", "info": "monitor"}
)

// Answer sizes: a quote, and the findings one live run may add.
const (
	fieldQuoteChars = 100
	fieldPerRun     = 2
	// fieldMaxItems is the most findings a live lane holds; it stops
	// asking once full.
	fieldMaxItems = 24
)

// fieldPrompt is the field lanes' prompt: the task, the numbered
// transcript and what the lane (or the report) already holds; nothing to
// do before the first sentence, or when extra says so by returning ok
// false.
func fieldPrompt(task string, extra func(st *live.State) (string, bool)) func(st *live.State, _ int) (string, string) {
	return func(st *live.State, _ int) (string, string) {
		lines := live.NumberedTranscript(st)
		if lines == "" {
			return "", ""
		}
		user := "Transcript:\n" + lines
		if extra != nil {
			x, ok := extra(st)
			if !ok {
				return "", ""
			}
			if x != "" {
				user += "\n" + x
			}
		}
		return fieldSystem + task, user
	}
}

// --- findings -----------------------------------------------------------

// FieldIssue is an issue (issues lane, safety sweep, report).
type FieldIssue struct {
	Issue    string   `json:"issue"`
	Location string   `json:"location"`
	Severity string   `json:"severity"` // critical, major, minor, info
	Priority string   `json:"priority"` // immediate, soon, routine, monitor (from severity)
	Quote    string   `json:"quote"`
	Lines    []int    `json:"lines"`
	T        *float64 `json:"t"`
	Verified bool     `json:"verified"`
	Source   string   `json:"source"` // the lane that found it: issues or safety_sweep
}

// FieldMeasurement is a measurement and the spec the speaker stated.
type FieldMeasurement struct {
	Item       string   `json:"item"`
	Value      string   `json:"value"`
	Spec       string   `json:"spec"`        // "" when no spec was stated
	WithinSpec *bool    `json:"within_spec"` // null when not stated or unknown
	Quote      string   `json:"quote"`
	Lines      []int    `json:"lines"`
	T          *float64 `json:"t"`
	Verified   bool     `json:"verified"`
	Source     string   `json:"source"`
}

// PassedCheck is one item of the passed_checks lane (its data is exactly
// {items: [{item, quote, lines, t}]}).
type PassedCheck struct {
	Item  string   `json:"item"`
	Quote string   `json:"quote"`
	Lines []int    `json:"lines"`
	T     *float64 `json:"t"`
}

// FieldPassedCheck is a passed check in the report.
type FieldPassedCheck struct {
	PassedCheck
	Verified bool   `json:"verified"`
	Source   string `json:"source"`
}

// CodeReference is a code or standard section the speaker cited.
type CodeReference struct {
	Code     string   `json:"code"`
	Quote    string   `json:"quote"`
	Lines    []int    `json:"lines"`
	T        *float64 `json:"t"`
	Verified bool     `json:"verified"`
}

// SiteDetail is a fact about the site: label (address, owner, structure,
// age, rating...) and the words that state it.
type SiteDetail struct {
	Label    string   `json:"label"`
	Quote    string   `json:"quote"`
	Lines    []int    `json:"lines"`
	T        *float64 `json:"t"`
	Verified bool     `json:"verified"`
}

// FieldIssues, FieldMeasurements and PassedChecks are the live lanes'
// data: {items: [...]}.
type (
	FieldIssues struct {
		Items []FieldIssue `json:"items"`
	}
	FieldMeasurements struct {
		Items []FieldMeasurement `json:"items"`
	}
	PassedChecks struct {
		Items []PassedCheck `json:"items"`
	}
)

// citation is a checked quote: its lines, the t of the first and whether
// it is verbatim in them.
type citation struct {
	quote    string
	lines    []int
	t        *float64
	verified bool
}

func citeOf(st *live.State, lines []int, quote string) citation {
	if lines == nil {
		lines = []int{}
	}
	ls := st.CiteLines()
	return citation{quote: quote, lines: lines, t: cite.FirstT(ls, lines), verified: cite.Verify(ls, quote, lines)}
}

// readCite reads a citation whose words are at most max characters.
func readCite(st *live.State, s string, max int) citation {
	lines, quote, _ := cite.Parse(s)
	return citeOf(st, lines, cite.Cut(quote, max))
}

// sameFinding is true when two findings are one: the same text, or the
// same first cited line with one quote holding the other.
func sameFinding(aText, aQuote string, aLines []int, bText, bQuote string, bLines []int) bool {
	if at, bt := cite.Norm(aText), cite.Norm(bText); at != "" && at == bt {
		return true
	}
	if len(aLines) == 0 || len(bLines) == 0 || aLines[0] != bLines[0] {
		return false
	}
	aq, bq := cite.Norm(cite.Trim(aQuote)), cite.Norm(cite.Trim(bQuote))
	return aq != "" && bq != "" && (strings.Contains(aq, bq) || strings.Contains(bq, aq))
}

func lineRef(lines []int) string {
	if len(lines) == 0 {
		return "[no line]"
	}
	parts := make([]string, len(lines))
	for i, n := range lines {
		parts[i] = strconv.Itoa(n)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// recordedList renders a lane's findings for a prompt, or says there are
// none; ok is false when the lane is full.
func recordedList(title string, items []string) (string, bool) {
	if len(items) >= fieldMaxItems {
		return "", false
	}
	if len(items) == 0 {
		return title + ": none yet.\n", true
	}
	return title + ":\n- " + strings.Join(items, "\n- ") + "\n", true
}

func verifiedMark(v bool) string {
	if v {
		return ""
	}
	return " _(quote not verified)_"
}
