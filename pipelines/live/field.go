package live

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Field is the field-inspection vertical (contract document 1, sections 2
// and 6). Live lanes: checklist (computed without a model: the inspection
// type picked from the transcript, items ticked at the line that covered
// them), issues, measurements and passed_checks (each run adds at most a
// few findings not yet recorded, every one cited as "[n] exact words").
// After stop, in order: safety_sweep (the checklist against the findings;
// the model adds findings for items discussed but not recorded),
// report_check (every quote checked against its cited lines, no model) and
// report (the field report object). done.summary holds report,
// report_markdown, final_transcript (the live transcript) and pass2.
// Payload shapes are in docs/decisions.md ("Live lanes: field and
// translate"); how quotes are verified is in field_check.go.
func Field() *Vertical {
	return &Vertical{
		ID:      "field",
		Live:    []*LaneSpec{checklistLane(), issuesLane(), measurementsLane(), passedChecksLane()},
		Final:   []*LaneSpec{safetySweepLane(), reportCheckLane(), reportLane()},
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

// schCite is a citation: "[n] words" or "[n,m] words", the words at most q
// printable ASCII characters without " or \.
func schCite(q int) schNode {
	return schPattern(`\[[0-9]{1,4}(,[0-9]{1,4})?\] [ !#-\[\]-~]{1,`+strconv.Itoa(q)+`}`, 12+q)
}

// schLabeledCite is "[n] label: words", the label without a colon.
func schLabeledCite(label, q int) schNode {
	return schPattern(`\[[0-9]{1,4}(,[0-9]{1,4})?\] [ !#-9;-\[\]-~]{1,`+strconv.Itoa(label)+`}: [ !#-\[\]-~]{1,`+strconv.Itoa(q)+`}`, 12+label+2+q)
}

// fieldPrompt is the field lanes' prompt: the task, the numbered
// transcript and what the lane (or the report) already holds; nothing to
// do before the first sentence, or when extra says so by returning ok
// false.
func fieldPrompt(task string, extra func(st *State) (string, bool)) func(st *State, _ int) (string, string) {
	return func(st *State, _ int) (string, string) {
		lines := numberedTranscript(st)
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

func citeOf(st *State, lines []int, quote string) citation {
	if lines == nil {
		lines = []int{}
	}
	return citation{quote: quote, lines: lines, t: firstLineT(st, lines), verified: verifyQuote(st, quote, lines)}
}

// readCite reads a citation whose words are at most max characters.
func readCite(st *State, s string, max int) citation {
	lines, quote, _ := parseCite(s)
	return citeOf(st, lines, cutQuote(quote, max))
}

// cutQuote drops the last word of a quote that fills all max characters:
// the grammar stopped it there, maybe inside a word.
func cutQuote(quote string, max int) string {
	if len(quote) < max {
		return quote
	}
	if k := strings.LastIndexByte(quote, ' '); k > 0 {
		return strings.TrimSpace(quote[:k])
	}
	return quote
}

// sameFinding is true when two findings are one: the same text, or the
// same first cited line with one quote holding the other.
func sameFinding(aText, aQuote string, aLines []int, bText, bQuote string, bLines []int) bool {
	if at, bt := normQuote(aText), normQuote(bText); at != "" && at == bt {
		return true
	}
	if len(aLines) == 0 || len(bLines) == 0 || aLines[0] != bLines[0] {
		return false
	}
	aq, bq := normQuote(trimQuote(aQuote)), normQuote(trimQuote(bQuote))
	return aq != "" && bq != "" && (strings.Contains(aq, bq) || strings.Contains(bq, aq))
}

// laneOf is lane id's data as a T, or zero when the lane has no state.
func laneOf[T any](st *State, id string) T {
	var zero T
	lb, ok := st.Lanes[id]
	if !ok {
		return zero
	}
	v, _ := lb.Data.(T)
	return v
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

// --- checklist ----------------------------------------------------------

func checklistLane() *LaneSpec {
	return &LaneSpec{
		ID: "checklist", Title: "Checklist", Local: true,
		Finish: func(st *State, _ int, _ json.RawMessage) (string, any, error) {
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

func issuesLane() *LaneSpec {
	schema, maxTok := laneSchema(schObject(schProp{"issues", schArray(schObject(
		schProp{"issue", schText(70)},
		schProp{"location", schText(40)},
		schProp{"severity", schEnum(severities...)},
		schProp{"cite", schCite(fieldQuoteChars)},
	), fieldPerRun)}))
	return &LaneSpec{
		ID: "issues", Title: "Issues", Schema: schema, MaxTokens: maxTok,
		Prompt: fieldPrompt("list problems the inspector found (defects, damage, hazards, code violations) that "+
			"are not among the issues already recorded below, at most two, the most serious first: issue (what is "+
			"wrong, in a few words), location (where), severity (the one the inspector states; otherwise critical "+
			"for an immediate hazard to people or property, major for a defect that needs repair soon or causes "+
			"damage, minor for a small defect or maintenance, info for a note) and cite.",
			func(st *State) (string, bool) {
				return recordedList("Issues already recorded", issueLines(laneOf[FieldIssues](st, "issues").Items))
			}),
		Finish: func(st *State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Issues []struct {
					Issue    string `json:"issue"`
					Location string `json:"location"`
					Severity string `json:"severity"`
					Cite     string `json:"cite"`
				} `json:"issues"`
			}
			if err := decodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			items := slices.Clone(laneOf[FieldIssues](st, "issues").Items)
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
	return FieldIssue{Issue: cleanText(issue), Location: cleanText(location), Severity: severity, Priority: priorities[severity],
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

func measurementsLane() *LaneSpec {
	schema, maxTok := laneSchema(schObject(schProp{"measurements", schArray(schObject(
		schProp{"item", schText(40)},
		schProp{"value", schText(30)},
		schProp{"spec", schText(40)},
		schProp{"within_spec", schEnum(withinSpecAnswers...)},
		schProp{"cite", schCite(fieldQuoteChars)},
	), fieldPerRun)}))
	return &LaneSpec{
		ID: "measurements", Title: "Measurements", Schema: schema, MaxTokens: maxTok,
		Prompt: fieldPrompt("list measurements and readings the inspector stated that are not among those already "+
			"recorded below, at most two: item (what was measured), value (the reading as stated, with its unit), spec "+
			"(the requirement or limit the speaker stated, empty when none was stated), within_spec (yes or no as the "+
			"speaker judged it or as the stated spec shows; unknown when no spec was stated) and cite.",
			func(st *State) (string, bool) {
				return recordedList("Measurements already recorded", measurementLines(laneOf[FieldMeasurements](st, "measurements").Items))
			}),
		Finish: func(st *State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Measurements []struct {
					Item       string `json:"item"`
					Value      string `json:"value"`
					Spec       string `json:"spec"`
					WithinSpec string `json:"within_spec"`
					Cite       string `json:"cite"`
				} `json:"measurements"`
			}
			if err := decodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			items := slices.Clone(laneOf[FieldMeasurements](st, "measurements").Items)
			for _, x := range a.Measurements {
				c := readCite(st, x.Cite, fieldQuoteChars)
				m := FieldMeasurement{Item: cleanText(x.Item), Value: cleanText(x.Value), Spec: cleanText(x.Spec),
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

func passedChecksLane() *LaneSpec {
	schema, maxTok := laneSchema(schObject(schProp{"passed", schArray(schObject(
		schProp{"item", schText(60)},
		schProp{"cite", schCite(fieldQuoteChars)},
	), 3)}))
	return &LaneSpec{
		ID: "passed_checks", Title: "Passed checks", Schema: schema, MaxTokens: maxTok,
		Prompt: fieldPrompt("list checks the inspector said pass or are in good condition that are not among the "+
			"passed checks already recorded below, at most three: item (what passed, in a few words) and cite.",
			func(st *State) (string, bool) {
				return recordedList("Passed checks already recorded", passedLines(laneOf[PassedChecks](st, "passed_checks").Items))
			}),
		Finish: func(st *State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Passed []struct {
					Item string `json:"item"`
					Cite string `json:"cite"`
				} `json:"passed"`
			}
			if err := decodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			items := slices.Clone(laneOf[PassedChecks](st, "passed_checks").Items)
			for _, x := range a.Passed {
				c := readCite(st, x.Cite, fieldQuoteChars)
				p := PassedCheck{Item: cleanText(x.Item), Quote: c.quote, Lines: c.lines, T: c.t}
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

func passedMarkdown(st *State, items []PassedCheck) string {
	if len(items) == 0 {
		return "_No passed checks yet._\n"
	}
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "- %s — \"%s\" %s%s\n", it.Item, it.Quote, lineRef(it.Lines), verifiedMark(verifyQuote(st, it.Quote, it.Lines)))
	}
	return b.String()
}

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
func buildDraft(st *State) fieldDraft {
	d := fieldDraft{checklist: buildChecklist(st), issues: []FieldIssue{}, measurements: []FieldMeasurement{}, passed: []FieldPassedCheck{}}
	sweep := laneOf[SafetySweep](st, "safety_sweep")
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
	for _, is := range laneOf[FieldIssues](st, "issues").Items {
		addIssue(is)
	}
	for _, m := range laneOf[FieldMeasurements](st, "measurements").Items {
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
	for _, p := range laneOf[PassedChecks](st, "passed_checks").Items {
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
// transcript (numberedTranscript) and the answer it fits an 8,192-token
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
func sweepGaps(st *State, d fieldDraft) (omitted, notCovered []SweepItem) {
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

func safetySweepLane() *LaneSpec {
	schema, maxTok := laneSchema(schObject(schProp{"additions", schArray(schObject(
		schProp{"kind", schEnum("issue", "passed_check")},
		schProp{"item", schText(60)},
		schProp{"location", schText(30)},
		schProp{"severity", schEnum(severities...)},
		schProp{"cite", schCite(fieldQuoteChars)},
	), fieldPerRun)}))
	return &LaneSpec{
		ID: "safety_sweep", Title: "Safety sweep", Schema: schema, MaxTokens: maxTok,
		Prompt: fieldPrompt("the inspection is over. Compare the transcript with the inspection checklist and "+
			"the findings recorded below, and add the findings the transcript states but the records omit, "+
			"above all for the checklist items discussed without a recorded finding and for safety items: at most "+
			"two, safety first. kind is issue for a problem or passed_check for something that passed; item (what, "+
			"in a few words), location (where), severity (for an issue as the inspector states it, else critical, "+
			"major, minor or info; info for a passed check) and cite. An empty list when nothing is omitted.",
			func(st *State) (string, bool) {
				d := buildDraft(st)
				omitted, notCovered := sweepGaps(st, d)
				return fmt.Sprintf("Inspection type: %s.\nChecklist items discussed without a recorded finding: %s"+
					"Checklist items not discussed: %s%s", inspectionTitle(d.checklist.Type),
					sweepItemLines(omitted), sweepItemLines(notCovered), d.findingsText()), true
			}),
		Finish: func(st *State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Additions []struct {
					Kind     string `json:"kind"`
					Item     string `json:"item"`
					Location string `json:"location"`
					Severity string `json:"severity"`
					Cite     string `json:"cite"`
				} `json:"additions"`
			}
			if err := decodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			d := buildDraft(st)
			omitted, notCovered := sweepGaps(st, d)
			sw := SafetySweep{Type: d.checklist.Type, Omitted: omitted, NotCovered: notCovered, Additions: []SweepAddition{}}
			for _, x := range a.Additions {
				c := readCite(st, x.Cite, fieldQuoteChars)
				ad := SweepAddition{Kind: x.Kind, Item: cleanText(x.Item), Location: cleanText(x.Location), Severity: x.Severity,
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

func buildReportCheck(st *State, d fieldDraft) ReportCheck {
	rc := ReportCheck{Problems: []CheckProblem{}, Duplicates: d.duplicates, Severities: map[string]int{},
		ChecklistCovered: d.checklist.Covered, ChecklistTotal: d.checklist.Total, SafetyNotCovered: []string{}}
	for _, s := range severities {
		rc.Severities[s] = 0
	}
	check := func(section, item, quote string, lines []int) {
		rc.Checked++
		if why := quoteProblem(st, quote, lines); why != "" {
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

func reportCheckLane() *LaneSpec {
	return &LaneSpec{
		ID: "report_check", Title: "Report check", Local: true,
		Finish: func(st *State, _ int, _ json.RawMessage) (string, any, error) {
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

func reportLane() *LaneSpec {
	schema, maxTok := laneSchema(schObject(
		schProp{"summary", schText(240)},
		schProp{"overall_condition", schEnum(conditions...)},
		schProp{"code_references", schArray(schLabeledCite(24, codeQuoteChars), 2)},
		schProp{"site_details", schArray(schLabeledCite(16, siteQuoteChars), 3)},
		schProp{"recommendations", schArray(schText(80), 2)},
		schProp{"follow_up", schArray(schText(70), 1)},
	))
	return &LaneSpec{
		ID: "report", Title: "Report", Schema: schema, MaxTokens: maxTok,
		Prompt: fieldPrompt("the inspection is over; write the parts of the report the findings below do not hold. "+
			"summary: two or three short sentences (at most 40 words) on what was inspected, the main problems and the overall condition. "+
			"overall_condition: good, fair, poor or unsafe, as the inspector states it if they do. code_references: "+
			"each code or standard section the speaker cites, as a cite with the code before a colon, such as "+
			"[7] NEC 210.8: section 210.8 requires it. site_details: the address, the people present, the structure "+
			"or system and its age or rating, as a cite with a short label before a colon, such as [1] address: 12 "+
			"Elm Street. recommendations: the repairs to make, with their timing when stated. follow_up: the next step "+
			"(reinspection, a call, a quote).",
			func(st *State) (string, bool) {
				d := buildDraft(st)
				return fmt.Sprintf("Inspection type: %s.\n%s", inspectionTitle(d.checklist.Type), d.findingsText()), true
			}),
		Finish: func(st *State, _ int, answer json.RawMessage) (string, any, error) {
			var a reportAnswer
			if err := decodeAnswer(answer, &a); err != nil {
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
func buildReport(st *State, a *reportAnswer) FieldReport {
	d := buildDraft(st)
	r := FieldReport{
		InspectionType: d.checklist.Type, Issues: d.issues, Measurements: d.measurements, PassedChecks: d.passed,
		CodeReferences: []CodeReference{}, SiteDetails: []SiteDetail{}, Checklist: d.checklist.Items,
		Recommendations: []string{}, FollowUp: []string{}, OverallCondition: notAssessed,
	}
	if a != nil {
		r.Summary = cleanText(a.Summary)
		if slices.Contains(conditions, a.OverallCondition) {
			r.OverallCondition = a.OverallCondition
		}
		for _, s := range a.CodeReferences {
			lines, code, quote, _ := parseLabeledCite(s)
			quote = cutQuote(quote, codeQuoteChars)
			if code == "" && quote == "" {
				continue
			}
			c := citeOf(st, lines, quote)
			r.CodeReferences = append(r.CodeReferences, CodeReference{Code: code, Quote: quote, Lines: c.lines, T: c.t, Verified: c.verified})
		}
		for _, s := range a.SiteDetails {
			lines, label, quote, _ := parseLabeledCite(s)
			quote = cutQuote(quote, siteQuoteChars)
			if label == "" && quote == "" {
				continue
			}
			c := citeOf(st, lines, quote)
			r.SiteDetails = append(r.SiteDetails, SiteDetail{Label: label, Quote: quote, Lines: c.lines, T: c.t, Verified: c.verified})
		}
		r.Recommendations = cleanList(a.Recommendations)
		r.FollowUp = cleanList(a.FollowUp)
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
func fieldSummary(st *State) map[string]any {
	r, ok := st.Lanes["report"].Data.(FieldReport)
	if !ok {
		r = buildReport(st, nil)
	}
	return map[string]any{
		"report":           r,
		"report_markdown":  fieldReportMarkdown(r),
		"final_transcript": liveFinalTranscript(st),
		"pass2": pass2NotRun("pass 2 (diarization and speaker roles) does not run for field inspections on this box: " +
			"final_transcript is the live transcript without speakers or roles, and the report cites its line numbers"),
	}
}
