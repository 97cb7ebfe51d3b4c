package clinical_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"boxd/pipelines/codes"
	"boxd/pipelines/live"
	"boxd/pipelines/live/clinical"
	"boxd/pipelines/live/livetest"
)

var (
	csTablesOnce sync.Once
	csTablesVal  *codes.Tables
	csTablesErr  error
)

// csTables loads the real code tables from $BOXD_TEST_DATA (the Makefile
// sets it to ../shared/data): skipped when absent, a failure under CI=true.
func csTables(t *testing.T) *codes.Tables {
	t.Helper()
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(dir, codes.ICD10CMFile)); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("reference data missing (CI=true; set BOXD_TEST_DATA to the shared data directory): %v", err)
		}
		t.Skipf("reference data not available (set BOXD_TEST_DATA to the shared data directory): %v", err)
	}
	csTablesOnce.Do(func() { csTablesVal, csTablesErr = codes.Load(dir) })
	if csTablesErr != nil {
		t.Fatal(csTablesErr)
	}
	return csTablesVal
}

// clinicalScript is a synthetic visit (no real patient).
var clinicalScript = []livetest.Line{
	{Text: "Good morning, what brings you in today?", Start: 0.3, End: 2.2, Speaker: 0},
	{Text: "I have had burning when I urinate and I am going more often, for about three days.", Start: 2.6, End: 6.8, Speaker: 1},
	{Text: "Any fever or back pain, and are you still taking metformin for your diabetes?", Start: 7.2, End: 10.9, Speaker: 0},
	{Text: "No fever, no back pain, and yes, metformin 500 milligrams twice a day.", Start: 11.3, End: 15.0, Speaker: 1},
	{Text: "Your temperature is 98.6 and the urine dipstick is positive for leukocytes and nitrites.", Start: 15.4, End: 19.6, Speaker: 0},
	{Text: "This looks like a simple bladder infection, so I will prescribe nitrofurantoin 100 milligrams twice daily for five days.", Start: 20.0, End: 25.8, Speaker: 0},
	{Text: "Your A1c is 8.4, so I would like to add semaglutide weekly, which your plan may need to approve, and see you in three months.", Start: 26.2, End: 32.5, Speaker: 0},
}

func TestClinicalSessionFillsEveryLane(t *testing.T) {
	v := clinical.New(csTables(t))
	evs := livetest.RunSession(t, v, "", "", clinicalScript)
	sum := livetest.CheckSession(t, v, clinicalScript, evs)
	for _, k := range []string{"note", "note_sections", "codes", "priorauth", "visit_level", "final_transcript", "final_note", "verifier", "pass2", "pass2_timing"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary has no %s: %v", k, sum)
		}
	}
	if note, _ := sum["note"].(string); !strings.HasPrefix(note, "### CHIEF COMPLAINT\n") || !strings.Contains(note, "### ASSESSMENT AND PLAN\n") {
		t.Errorf("summary.note is not the cited note: %q", note)
	}
	// The claim check covers the note's claims, with the cited lines'
	// text as evidence and the counts of its labels.
	var fn clinical.FinalNote
	var check clinical.ClaimCheck
	for _, e := range evs {
		if b, ok := e.Body.(live.LaneBody); ok && b.Lane == "final_note" {
			fn = b.Data.(clinical.FinalNote)
		} else if ok && b.Lane == "verifier" {
			check = b.Data.(clinical.ClaimCheck)
		}
	}
	csCheckClaims(t, clinicalScript, fn, check)
	tm, _ := sum["pass2_timing"].(map[string]any)
	note, _ := tm["note_s"].(float64)
	ver, _ := tm["verifier_s"].(float64)
	total, _ := tm["total_s"].(float64)
	dia, _ := tm["diarize_s"].(float64)
	roles, _ := tm["roles_s"].(float64)
	if tm["diarize_s"] == nil || tm["roles_s"] == nil || tm["note_s"] == nil || tm["verifier_s"] == nil || math.Abs(total-(dia+roles+note+ver)) > 1e-9 {
		t.Errorf("pass2_timing %v: want diarize_s, roles_s, note_s and verifier_s, total_s their sum", tm)
	}
	if evs[0].Body.(live.ReadyBody).Vertical != "clinical" {
		t.Errorf("ready %+v", evs[0].Body)
	}
}

func TestClinicalPromptsNumberTheTranscript(t *testing.T) {
	v := clinical.New(csTables(t))
	st := livetest.ScriptState(clinicalScript)
	for _, l := range v.Live {
		system, user := l.Prompt(st, -1)
		if !strings.Contains(system, "JSON") || !strings.Contains(system, "concise") {
			t.Errorf("%s: the system prompt does not ask for concise JSON: %q", l.ID, system)
		}
		for i, line := range clinicalScript {
			if want := "[" + strconv.Itoa(i+1) + "] " + line.Text + "\n"; !strings.Contains(user, want) {
				t.Errorf("%s: prompt lacks numbered line %q:\n%s", l.ID, want, user)
			}
		}
		if _, user := l.Prompt(&live.State{Lanes: map[string]live.LaneBody{}}, -1); user != "" {
			t.Errorf("%s: a prompt before the first sentence (the lane must skip): %q", l.ID, user)
		}
	}
	_, user := livetest.LaneByID(t, v, "codes").Prompt(st, -1)
	for _, want := range []string{"metformin (RxCUI 6809)", "nitrofurantoin (RxCUI 7454)", "semaglutide (RxCUI 1991302)"} {
		if !strings.Contains(user, want) {
			t.Errorf("codes prompt lacks the RxNorm hint %q:\n%s", want, user)
		}
	}
}

func TestCodesLaneValidatesAgainstTheTables(t *testing.T) {
	v := clinical.New(csTables(t))
	l := livetest.LaneByID(t, v, "codes")
	st := livetest.ScriptState(clinicalScript)
	answer := `{"diagnoses":["N39.0","e119","E11.9","E11","Z99.999","Q99.99X"],
		"medications":["metformin 500 MG Oral Tablet","Nitrofurantoin","semaglutide weekly injection","5640","zorbitrex 20 mg","987654321"]}`
	body, data, err := l.Finish(st, -1, json.RawMessage(answer))
	if err != nil {
		t.Fatal(err)
	}
	c := data.(clinical.CodeSuggestions)
	wantICD := []clinical.ICDCode{
		{Code: "N39.0", Description: "Urinary tract infection, site not specified", Suggested: "N39.0"},
		{Code: "E11.9", Description: "Type 2 diabetes mellitus without complications", Suggested: "e119"},
	}
	if !reflect.DeepEqual(c.ICD10CM, wantICD) {
		t.Errorf("icd10cm %+v\nwant %+v", c.ICD10CM, wantICD)
	}
	var rx []string
	for _, d := range c.RxNorm {
		rx = append(rx, d.RxCUI+" "+d.Name+" "+d.TTY+" by "+d.Match)
	}
	wantRx := []string{
		"861007 metformin hydrochloride 500 MG Oral Tablet SCD by product",
		"7454 nitrofurantoin IN by name",
		"1991302 semaglutide IN by ingredient",
		"5640 ibuprofen IN by rxcui",
	}
	if !reflect.DeepEqual(rx, wantRx) {
		t.Errorf("rxnorm %q\nwant %q", rx, wantRx)
	}
	var rejected []string
	for _, r := range c.Rejected {
		rejected = append(rejected, r.System+" "+r.Suggested)
	}
	wantRejected := []string{"ICD-10-CM E11", "ICD-10-CM Z99.999", "ICD-10-CM Q99.99X", "RxNorm zorbitrex 20 mg", "RxNorm 987654321"}
	if !reflect.DeepEqual(rejected, wantRejected) {
		t.Errorf("rejected %q\nwant %q", rejected, wantRejected)
	}
	if !strings.Contains(c.Rejected[0].Reason, "category") {
		t.Errorf("E11 rejected for %q; it is a category, not billable", c.Rejected[0].Reason)
	}
	for _, want := range []string{"- N39.0 Urinary tract infection, site not specified\n", "- E11.9 Type 2 diabetes mellitus without complications\n", "nitrofurantoin IN (RxCUI 7454)", "Not in the code tables"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(strings.Split(body, "Not in the code tables")[0], "Z99.999") {
		t.Errorf("a made-up code is listed as valid:\n%s", body)
	}
	if c.Versions["icd10cm"] != codes.ICD10CMVersion || c.Versions["rxnorm"] != codes.RxNormVersion {
		t.Errorf("versions %v", c.Versions)
	}
}

func TestNoteLaneRendersSOAP(t *testing.T) {
	l := livetest.LaneByID(t, clinical.New(nil), "note")
	body, data, err := l.Finish(livetest.ScriptState(clinicalScript), -1, json.RawMessage(
		`{"subjective":["Dysuria and frequency for 3 days","  "],"objective":["T 98.6 F","UA: leukocytes, nitrites positive"],"assessment":["Uncomplicated cystitis"],"plan":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	n := data.(clinical.SOAPNote)
	if len(n.Subjective) != 1 || len(n.Objective) != 2 || n.Plan == nil || len(n.Plan) != 0 {
		t.Errorf("note %+v (blank bullets dropped, empty sections [] not null)", n)
	}
	want := "### Subjective\n- Dysuria and frequency for 3 days\n\n### Objective\n- T 98.6 F\n- UA: leukocytes, nitrites positive\n\n" +
		"### Assessment\n- Uncomplicated cystitis\n\n### Plan\n_Nothing yet._\n"
	if body != want {
		t.Errorf("body\n%s\nwant\n%s", body, want)
	}
}

func TestPriorAuthLane(t *testing.T) {
	l := livetest.LaneByID(t, clinical.New(csTables(t)), "priorauth")
	_, data, err := l.Finish(livetest.ScriptState(clinicalScript), -1, json.RawMessage(`{"items":[
		{"item":"semaglutide weekly","kind":"medication","likelihood":"likely","reason":"GLP-1 agonists usually need prior authorization"},
		{"item":"MRI lumbar spine","kind":"imaging","likelihood":"possible","reason":"advanced imaging"},
		{"item":"thing","kind":"spaceship","likelihood":"likely","reason":"not a kind"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := data.(clinical.PriorAuth)
	if len(p.Items) != 2 || p.Items[0].RxCUI == nil || *p.Items[0].RxCUI != "1991302" || p.Items[1].RxCUI != nil {
		t.Errorf("items %+v (semaglutide resolved to RxCUI 1991302, imaging has none, an unknown kind is dropped)", p.Items)
	}
	raw, _ := json.Marshal(p)
	if !strings.Contains(string(raw), `"rxcui":null`) {
		t.Errorf("rxcui is not null for non-medications: %s", raw)
	}
}

func TestVisitLevelTwoOfThree(t *testing.T) {
	l := livetest.LaneByID(t, clinical.New(nil), "visit_level")
	for _, c := range []struct{ problems, data, risk, level, mdm string }{
		{"moderate", "limited", "moderate", "99214", "moderate"},
		{"high", "minimal", "low", "99213", "low"},
		{"minimal", "minimal", "high", "99212", "straightforward"},
		{"high", "extensive", "moderate", "99215", "high"},
	} {
		ans, _ := json.Marshal(map[string]string{"problems": c.problems, "data": c.data, "risk": c.risk, "rationale": "Two chronic problems (lines 3, 7)."})
		body, data, err := l.Finish(livetest.ScriptState(clinicalScript), -1, ans)
		if err != nil {
			t.Fatal(err)
		}
		v := data.(clinical.VisitLevel)
		if *v.Level != c.level || *v.MDM != c.mdm || !strings.HasPrefix(body, "**"+c.level+"**") {
			t.Errorf("%+v: level %s mdm %s, body %q", c, *v.Level, *v.MDM, body)
		}
	}
	if _, _, err := l.Finish(livetest.ScriptState(clinicalScript), -1, json.RawMessage(`{"problems":"huge","data":"limited","risk":"low","rationale":""}`)); err == nil {
		t.Error("an element outside the AMA scale was accepted")
	}
}

func TestClinicalSummaryBeforeAnyLane(t *testing.T) {
	sum := livetest.ClientJSON(t, clinical.New(nil).Summary(livetest.ScriptState(clinicalScript[:2]))).(map[string]any)
	codesData := sum["codes"].(map[string]any)
	if sum["note"] == "" || codesData["icd10cm"] == nil || codesData["rejected"] == nil || sum["visit_level"].(map[string]any)["level"] != nil {
		t.Errorf("summary without lane states is not well shaped: %v", sum)
	}
}

func TestPromptKeepsTheLatestLinesOfALongTranscript(t *testing.T) {
	st := &live.State{Lanes: map[string]live.LaneBody{}}
	for i := range 400 {
		st.Sentences = append(st.Sentences, live.Sentence{I: i, T: float64(i), Text: "The patient describes the pain again in slightly different words, line " + strconv.Itoa(i+1) + "."})
	}
	_, user := livetest.LaneByID(t, clinical.New(nil), "note").Prompt(st, -1)
	if len(user) > 16500 || !strings.Contains(user, "[400] The patient") || strings.Contains(user, "\n[1] ") ||
		!strings.Contains(user, "are left out: the transcript is longer than a prompt holds]") {
		t.Errorf("a long transcript's prompt (%d characters) does not keep the latest lines and say what was left out:\n%.300s", len(user), user)
	}
}
