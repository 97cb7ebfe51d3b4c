package field_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"boxd/pipelines/live"
	"boxd/pipelines/live/field"
	"boxd/pipelines/live/livetest"
)

// fldScript is a short roof inspection (line n is fldScript[n-1]).
var fldScript = []livetest.Line{
	{Text: "This is Dana Whitlock, roof inspection at 48 Cedar Row for the owner, Priya Nand.", Start: 0.2, End: 4.5},
	{Text: "It’s an asphalt shingle roof, about twelve years old.", Start: 5.0, End: 8.0},
	{Text: "The step flashing at the chimney is missing, and the decking below it is wet. That's a major issue.", Start: 8.5, End: 14.0},
	{Text: "Code reference for that is section R905.2.8.3.", Start: 14.5, End: 17.0},
	{Text: "I measured moisture in the decking at 24 percent, and the spec is below 19 percent, so it's out of spec.", Start: 17.5, End: 23.0},
	{Text: "The ridge vent is clear and the soffit vents are open, that passes.", Start: 23.5, End: 27.0},
	{Text: "The north gutter is loose at the downspout, a minor issue.", Start: 27.5, End: 31.0},
	{Text: "Overall condition is fair; fix the flashing within a month and I'll reinspect after the repair.", Start: 31.5, End: 36.0},
}

// fldFinish runs lane id's Finish on a hand-written answer and stores the
// result in st as the session would.
func fldFinish(t *testing.T, st *live.State, id, answer string) any {
	t.Helper()
	l := livetest.LaneByID(t, field.New(), id)
	body, data, err := l.Finish(st, -1, json.RawMessage(answer))
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	if body == "" || data == nil {
		t.Fatalf("%s: empty body or data", id)
	}
	st.Lanes[id] = live.LaneBody{Lane: id, Title: l.Title, Body: body, Data: data}
	return data
}

func fldT(t *testing.T, got *float64, want float64) {
	t.Helper()
	if got == nil || *got != want {
		t.Errorf("t = %v, want %v", got, want)
	}
}

// The whole session, in two parts so that each live lane runs at least
// twice: every lane emits, a live lane's later state keeps what the earlier
// one held, the after-stop lanes run in the stated order after the live
// ones, and done.summary holds the report (every cited item with quote,
// lines, t and verified), report_markdown, the live transcript and pass2.
func TestFieldSessionFillsEveryLane(t *testing.T) {
	v := field.New()
	evs := livetest.RunSessionPaused(t, v, "", "", fldScript, fldScript[3].End+0.1)
	counts, first, last := map[string]int{}, map[string]int{}, map[string]int{}
	receipts, modelEvents := 0, 0
	local := map[string]bool{}
	for _, l := range append(append([]*live.LaneSpec{}, v.Live...), v.Final...) {
		local[l.ID] = l.Local
	}
	for k, e := range evs {
		switch b := e.Body.(type) {
		case live.ErrorBody:
			t.Errorf("error event: %s", b.Message)
		case live.ReceiptBody:
			receipts++
		case live.LaneBody:
			if counts[b.Lane] == 0 {
				first[b.Lane] = k
			}
			counts[b.Lane]++
			last[b.Lane] = k
			if !local[b.Lane] {
				modelEvents++
			}
			if b.Title == "" || b.Body == "" || b.Data == nil {
				t.Errorf("lane %s without title, body or data", b.Lane)
			}
		}
	}
	for _, l := range append(append([]*live.LaneSpec{}, v.Live...), v.Final...) {
		if counts[l.ID] == 0 {
			t.Errorf("lane %s never emitted", l.ID)
		}
	}
	for _, l := range v.Live {
		if counts[l.ID] < 2 {
			t.Errorf("live lane %s ran %d times, want at least 2", l.ID, counts[l.ID])
		}
	}
	// Each run adds to what the lane holds: its first items stay first.
	firstItems, lastItems := map[string][]any{}, map[string][]any{}
	for _, e := range evs {
		if b, ok := e.Body.(live.LaneBody); ok && (b.Lane == "issues" || b.Lane == "measurements" || b.Lane == "passed_checks") {
			items := livetest.ClientMap(t, b.Data)["items"].([]any)
			if _, ok := firstItems[b.Lane]; !ok {
				firstItems[b.Lane] = items
			}
			lastItems[b.Lane] = items
		}
	}
	for id, first := range firstItems {
		if len(lastItems[id]) < len(first) || !reflect.DeepEqual(lastItems[id][:len(first)], first) {
			t.Errorf("%s: the last state %v does not keep the first %v", id, lastItems[id], first)
		}
	}
	if receipts != modelEvents {
		t.Errorf("%d receipts for %d model lane events", receipts, modelEvents)
	}
	// After stop, in order: safety_sweep, report_check, report, after every
	// live lane's last event; each runs once.
	liveLast := 0
	for _, l := range v.Live {
		liveLast = max(liveLast, last[l.ID])
	}
	order := []string{"safety_sweep", "report_check", "report"}
	prev := liveLast
	for _, id := range order {
		if counts[id] != 1 || first[id] <= prev {
			t.Errorf("%s: %d events, first at %d, after %d", id, counts[id], first[id], prev)
		}
		prev = first[id]
	}
	done, ok := evs[len(evs)-1].Body.(live.DoneBody)
	if !ok {
		t.Fatalf("last event %s, want done", evs[len(evs)-1].Type)
	}
	sum := livetest.ClientMap(t, done.Summary)
	if got := slices.Sorted(maps.Keys(sum)); !reflect.DeepEqual(got, []string{"final_transcript", "pass2", "report", "report_markdown"}) {
		t.Errorf("summary keys %v", got)
	}
	if md, _ := sum["report_markdown"].(string); !strings.HasPrefix(md, "# Roof inspection report") {
		t.Errorf("report_markdown %q", md)
	}
	if p := sum["pass2"].(map[string]any); p["ran"] != false || p["reason"] == "" {
		t.Errorf("pass2 %v", p)
	}
	lines := sum["final_transcript"].(map[string]any)["lines"].([]any)
	if len(lines) != len(fldScript) || lines[2].(map[string]any)["n"] != 3.0 || lines[2].(map[string]any)["text"] != fldScript[2].Text {
		t.Errorf("final_transcript %v", lines)
	}
	report := sum["report"].(map[string]any)
	for _, k := range []string{"title", "summary", "overall_condition", "issues", "measurements", "passed_checks",
		"code_references", "site_details", "checklist", "recommendations", "follow_up"} {
		if _, ok := report[k]; !ok {
			t.Errorf("report without %s", k)
		}
	}
	if report["inspection_type"] != "roof" || !slices.Contains([]any{"good", "fair", "poor", "unsafe"}, report["overall_condition"]) {
		t.Errorf("type %v, condition %v", report["inspection_type"], report["overall_condition"])
	}
	// Every cited item: verified only when its quote is in its lines (the
	// random model's quotes rarely are; the Finish tests below check the
	// verification), t the start of its first line.
	st := livetest.ScriptState(fldScript)
	for _, sec := range []string{"issues", "measurements", "passed_checks", "code_references", "site_details"} {
		for _, it := range report[sec].([]any) {
			m := it.(map[string]any)
			for _, k := range []string{"quote", "lines", "t", "verified"} {
				if _, ok := m[k]; !ok {
					t.Errorf("%s item without %s: %v", sec, k, m)
				}
			}
			var ls []int
			for _, n := range m["lines"].([]any) {
				ls = append(ls, int(n.(float64)))
			}
			if m["verified"] == true && !fldQuoteIn(st, m["quote"].(string), ls) {
				t.Errorf("%s %v: verified, but the quote is not in its lines", sec, m)
			}
			if len(ls) > 0 && ls[0] >= 1 && ls[0] <= len(fldScript) && m["t"] != fldScript[ls[0]-1].Start {
				t.Errorf("%s %v: t %v, want %v", sec, m, m["t"], fldScript[ls[0]-1].Start)
			}
		}
	}
	// The checklist is the roof's, ticked where the script names its items.
	ticked := map[string]float64{}
	for _, it := range report["checklist"].([]any) {
		m := it.(map[string]any)
		if m["covered"] == true {
			ticked[m["id"].(string)] = m["line"].(float64)
		}
	}
	for id, line := range map[string]float64{"covering": 2, "flashing": 3, "decking": 3, "moisture": 3, "ventilation": 6, "drainage": 7, "chimney": 3} {
		if ticked[id] != line {
			t.Errorf("checklist %s ticked at %v, want line %v", id, ticked[id], line)
		}
	}
	// passed_checks lane data is exactly {items: [{item, quote, lines, t}]}.
	for _, e := range evs {
		if b, ok := e.Body.(live.LaneBody); ok && b.Lane == "passed_checks" {
			d := livetest.ClientMap(t, b.Data)
			if len(d) != 1 || d["items"] == nil {
				t.Fatalf("passed_checks data %v", d)
			}
			for _, it := range d["items"].([]any) {
				if got := slices.Sorted(maps.Keys(it.(map[string]any))); !reflect.DeepEqual(got, []string{"item", "lines", "quote", "t"}) {
					t.Errorf("passed_checks item keys %v", got)
				}
			}
		}
	}
}

// fldQuoteIn is the test's own check of a quote against its lines: the
// lines exist and the quote, lower-cased with its end punctuation trimmed
// and typographic apostrophes made straight, is in their joined text.
func fldQuoteIn(st *live.State, quote string, lines []int) bool {
	norm := func(s string) string {
		return strings.Join(strings.Fields(strings.ToLower(strings.ReplaceAll(s, "’", "'"))), " ")
	}
	q := norm(strings.Trim(quote, " .,;:!?"))
	if q == "" || len(lines) == 0 {
		return false
	}
	var texts []string
	for _, n := range lines {
		s, ok := st.Line(n)
		if !ok {
			return false
		}
		texts = append(texts, s.Text)
	}
	return strings.Contains(norm(strings.Join(texts, " ")), q)
}

// Issues: a true quote is verified with t from its cited line; a quote with
// one word changed, a wrong line, a line that does not exist, a cut word
// are not; typographic apostrophes and case do not matter; a quote may run
// over two cited lines; findings already recorded are not added again.
func TestFieldIssuesVerifyQuotes(t *testing.T) {
	st := livetest.ScriptState(fldScript)
	d := fldFinish(t, st, "issues", `{"issues":[
		{"issue":"Step flashing missing","location":"chimney","severity":"major","cite":"[3] The step flashing at the chimney is missing"},
		{"issue":"Gutter loose","location":"north gutter","severity":"minor","cite":"[7] the north gutter is loose at the downspout,"}]}`).(field.FieldIssues)
	if len(d.Items) != 2 {
		t.Fatalf("items %+v", d.Items)
	}
	a, b := d.Items[0], d.Items[1]
	if !a.Verified || !reflect.DeepEqual(a.Lines, []int{3}) || a.Priority != "soon" || a.Source != "issues" || !b.Verified || b.Priority != "routine" {
		t.Errorf("items %+v", d.Items)
	}
	fldT(t, a.T, 8.5)
	fldT(t, b.T, 27.5)

	cases := []struct {
		name, cite string
		verified   bool
		t          *float64
	}{
		{"one word changed", "[3] The step flashing at the chimney is broken", false, ptr(8.5)},
		{"wrong line", "[4] The step flashing at the chimney is missing", false, ptr(14.5)},
		{"no such line", "[42] The step flashing at the chimney is missing", false, nil},
		{"cut word", "[3] he step flashing at the chimney", false, ptr(8.5)},
		{"typographic apostrophe and case", "[2] IT'S AN ASPHALT SHINGLE ROOF", true, ptr(5.0)},
		{"two lines", "[5,6] so it's out of spec. The ridge vent is clear", true, ptr(17.5)},
		{"two lines, one missing", "[5] so it's out of spec. The ridge vent is clear", false, ptr(17.5)},
		{"not a citation", "The step flashing at the chimney is missing", false, nil},
		// The grammar stops a quote at 100 characters, here inside "spec":
		// the cut word is dropped before the check.
		{"cut at the length limit", "[5] " + fldScript[4].Text[:100], true, ptr(17.5)},
	}
	for _, c := range cases {
		st := livetest.ScriptState(fldScript)
		d := fldFinish(t, st, "issues", `{"issues":[{"issue":"x","location":"y","severity":"critical","cite":`+jsonString(c.cite)+`}]}`).(field.FieldIssues)
		it := d.Items[0]
		if it.Verified != c.verified {
			t.Errorf("%s: verified %v, want %v", c.name, it.Verified, c.verified)
		}
		if c.t == nil && it.T != nil || c.t != nil && (it.T == nil || *it.T != *c.t) {
			t.Errorf("%s: t %v, want %v", c.name, it.T, c.t)
		}
	}

	// A second run keeps the first run's issues and adds only new ones.
	d = fldFinish(t, st, "issues", `{"issues":[
		{"issue":"Flashing missing at chimney","location":"chimney","severity":"major","cite":"[3] step flashing at the chimney is missing"},
		{"issue":"Wet decking","location":"below the chimney","severity":"major","cite":"[3] the decking below it is wet"}]}`).(field.FieldIssues)
	if len(d.Items) != 3 || d.Items[2].Issue != "Wet decking" || !d.Items[2].Verified {
		t.Errorf("after the second run %+v", d.Items)
	}
}

func ptr(f float64) *float64 { return &f }

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestFieldMeasurementsAndPassedChecks(t *testing.T) {
	st := livetest.ScriptState(fldScript)
	m := fldFinish(t, st, "measurements", `{"measurements":[
		{"item":"decking moisture","value":"24 percent","spec":"below 19 percent","within_spec":"no","cite":"[5] I measured moisture in the decking at 24 percent"},
		{"item":"roof age","value":"twelve years","spec":"","within_spec":"unknown","cite":"[2] about twelve years old"}]}`).(field.FieldMeasurements)
	if len(m.Items) != 2 || m.Items[0].WithinSpec == nil || *m.Items[0].WithinSpec || m.Items[1].WithinSpec != nil ||
		!m.Items[0].Verified || !m.Items[1].Verified {
		t.Errorf("measurements %+v", m.Items)
	}
	fldT(t, m.Items[0].T, 17.5)

	p := fldFinish(t, st, "passed_checks", `{"passed":[
		{"item":"attic ventilation","cite":"[6] The ridge vent is clear and the soffit vents are open"},
		{"item":"gutters","cite":"[6] the gutters are clean"}]}`)
	got := livetest.ClientMap(t, p)
	want := map[string]any{"items": []any{
		map[string]any{"item": "attic ventilation", "quote": "The ridge vent is clear and the soffit vents are open", "lines": []any{6.0}, "t": 23.5},
		map[string]any{"item": "gutters", "quote": "the gutters are clean", "lines": []any{6.0}, "t": 23.5},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("passed_checks data %v", got)
	}
}

// The checklist lane picks the inspection type and ticks items at the line
// that covered them.
func TestFieldChecklist(t *testing.T) {
	cases := []struct {
		lines []string
		typ   string
		tick  map[string]int
	}{
		{[]string{"Roof inspection today.", "The shingles are worn.", "Gutters are fine."}, "roof", map[string]int{"covering": 2, "drainage": 3}},
		{[]string{"Panel inspection at the garage.", "The main panel is 200 amps.", "There is no working clearance.", "Breaker 14 is double tapped."},
			"electrical_panel", map[string]int{"service": 2, "clearance": 3, "breakers": 4}},
		{[]string{"We are looking at the boiler room.", "The pressure reading is 30 psi.", "I'll come back next week."}, "generic",
			map[string]int{"measurements": 2, "follow_up": 3}},
	}
	for _, c := range cases {
		var script []livetest.Line
		for i, l := range c.lines {
			script = append(script, livetest.Line{Text: l, Start: float64(i * 3)})
		}
		st := livetest.ScriptState(script)
		ch := fldFinish(t, st, "checklist", "").(field.Checklist)
		if ch.Type != c.typ || ch.Total != len(ch.Items) || ch.Total == 0 {
			t.Errorf("%s: type %s, %d items", c.typ, ch.Type, ch.Total)
		}
		covered := 0
		for _, it := range ch.Items {
			if it.Covered {
				covered++
				if it.Line == nil || it.T == nil || *it.T != float64((*it.Line-1)*3) || it.Matched == "" {
					t.Errorf("%s: %s ticked without its line and t: %+v", c.typ, it.ID, it)
				}
			}
			if want, ok := c.tick[it.ID]; ok && (!it.Covered || *it.Line != want) {
				t.Errorf("%s: %s %+v, want ticked at line %d", c.typ, it.ID, it, want)
			}
		}
		if covered != ch.Covered {
			t.Errorf("%s: covered %d, counted %d", c.typ, ch.Covered, covered)
		}
	}
}

// The sweep lists items discussed without a finding, drops additions the
// lanes hold, and keeps new ones; report_check lists every unverified
// quote and why; the report merges everything, verifies its own
// citations and never rates the condition better than verified issues.
func TestFieldSweepCheckAndReport(t *testing.T) {
	st := livetest.ScriptState(fldScript)
	fldFinish(t, st, "checklist", "")
	fldFinish(t, st, "issues", `{"issues":[
		{"issue":"Step flashing missing","location":"chimney","severity":"major","cite":"[3] The step flashing at the chimney is missing"},
		{"issue":"Shingles cracked","location":"south slope","severity":"minor","cite":"[2] the shingles are cracked"}]}`)
	fldFinish(t, st, "passed_checks", `{"passed":[{"item":"attic ventilation","cite":"[6] The ridge vent is clear"}]}`)
	fldFinish(t, st, "measurements", `{"measurements":[]}`)

	sw := fldFinish(t, st, "safety_sweep", `{"additions":[
		{"kind":"issue","item":"Step flashing missing","location":"chimney","severity":"major","cite":"[3] The step flashing at the chimney is missing"},
		{"kind":"issue","item":"Gutter loose","location":"north gutter","severity":"minor","cite":"[7] The north gutter is loose at the downspout"}]}`).(field.SafetySweep)
	if sw.Type != "roof" || sw.Duplicates != 1 || len(sw.Additions) != 1 || sw.Additions[0].Checklist != "drainage" || !sw.Additions[0].Verified {
		t.Errorf("sweep %+v", sw)
	}
	fldT(t, sw.Additions[0].T, 27.5)
	omitted := map[string]bool{}
	for _, it := range sw.Omitted {
		omitted[it.ID] = true
	}
	if !omitted["drainage"] || omitted["flashing"] || omitted["ventilation"] {
		t.Errorf("omitted %+v", sw.Omitted)
	}

	rc := fldFinish(t, st, "report_check", "").(field.ReportCheck)
	if rc.Checked != 4 || rc.Verified != 3 || len(rc.Problems) != 1 || rc.Problems[0].Item != "Shingles cracked" ||
		rc.Problems[0].Reason != "the quote is not in the cited lines" || rc.Severities["major"] != 1 || rc.Severities["minor"] != 2 {
		t.Errorf("report check %+v", rc)
	}

	r := fldFinish(t, st, "report", `{"summary":"Roof with a missing step flashing.","overall_condition":"good",
		"code_references":["[4] R905.2.8.3: section R905.2.8.3","[4] R905.2.8.4: section R905.2.8.4"],
		"site_details":["[1] address: 48 Cedar Row","[2] owner: Priya Nand","[9] age: twelve years"],
		"recommendations":["Replace the step flashing within a month"],"follow_up":["Reinspect after the repair"]}`).(field.FieldReport)
	if r.Title != "Roof inspection report: 48 Cedar Row" || r.OverallCondition != "fair" || r.InspectionType != "roof" {
		t.Errorf("title %q, condition %q", r.Title, r.OverallCondition)
	}
	if len(r.CodeReferences) != 2 || !r.CodeReferences[0].Verified || r.CodeReferences[0].Code != "R905.2.8.3" || r.CodeReferences[1].Verified {
		t.Errorf("code references %+v", r.CodeReferences)
	}
	fldT(t, r.CodeReferences[0].T, 14.5)
	if len(r.SiteDetails) != 3 || !r.SiteDetails[0].Verified || r.SiteDetails[1].Verified || r.SiteDetails[2].Verified || r.SiteDetails[2].T != nil {
		t.Errorf("site details %+v", r.SiteDetails)
	}
	if len(r.Issues) != 3 || r.Issues[0].Severity != "major" || r.Issues[2].Source != "safety_sweep" || len(r.PassedChecks) != 1 ||
		!r.PassedChecks[0].Verified || len(r.Checklist) == 0 || len(r.Recommendations) != 1 || len(r.FollowUp) != 1 {
		t.Errorf("report %+v", r)
	}
	// done.summary takes the report lane's report.
	sum := field.New().Summary(st)
	if !reflect.DeepEqual(sum["report"], r) || sum["report_markdown"] != st.Lanes["report"].Body {
		t.Errorf("summary report differs from the report lane's")
	}
}

// Without a report lane (it failed), done.summary still holds a report
// built from the lanes.
func TestFieldSummaryWithoutTheReportLane(t *testing.T) {
	st := livetest.ScriptState(fldScript)
	fldFinish(t, st, "issues", `{"issues":[{"issue":"Decking wet","location":"chimney","severity":"critical","cite":"[3] the decking below it is wet"}]}`)
	sum := field.New().Summary(st)
	r := sum["report"].(field.FieldReport)
	if len(r.Issues) != 1 || r.OverallCondition != "poor" || r.Summary != "" || !strings.Contains(sum["report_markdown"].(string), "Decking wet") {
		t.Errorf("fallback report %+v", r)
	}
	if _, err := json.Marshal(sum); err != nil {
		t.Fatal(err)
	}
}
