package clinical_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"boxd/engine/diarize"
	"boxd/pipelines/chat"
	"boxd/pipelines/live"
	"boxd/pipelines/live/clinical"
	"boxd/pipelines/live/livetest"
)

var noteSectionTitles = []string{"CHIEF COMPLAINT", "HISTORY OF PRESENT ILLNESS", "PHYSICAL EXAM", "RESULTS", "ASSESSMENT AND PLAN"}

// csCheckClaims checks a final note and its claim check against the
// script: claims numbered from 1 in note order, each in a section of the
// note, citing sorted lines, each sentence of the note ending in its
// citation; the check labels every claim of the note, with the cited
// lines' text as evidence, UNSUPPORTED without a call for a line that does
// not exist, and counts and flagged as its labels say.
func csCheckClaims(t *testing.T, script []livetest.Line, fn clinical.FinalNote, check clinical.ClaimCheck) {
	t.Helper()
	if fn.Claims == nil || check.Claims == nil {
		t.Fatalf("claims are null: note %+v, check %+v", fn, check)
	}
	for k, c := range fn.Claims {
		if c.I != k+1 || !slices.Contains(noteSectionTitles, c.Section) || c.Claim == "" || len(c.Cites) == 0 || !slices.IsSorted(c.Cites) {
			t.Errorf("claim %d: %+v", k+1, c)
		}
		// The claim's line ends in its citation (a note on missing lines
		// goes inside the sentence).
		ref, head := " "+citeRefOf(c.Cites), strings.TrimRight(c.Claim, ".!?")
		if !slices.ContainsFunc(strings.Split(fn.Note, "\n"), func(l string) bool {
			return strings.HasPrefix(l, head) && strings.HasSuffix(l, ref)
		}) {
			t.Errorf("data.note has no line %q…%q:\n%s", head, ref, fn.Note)
		}
	}
	if len(check.Claims) != len(fn.Claims) {
		t.Fatalf("the check has %d claims, the note %d", len(check.Claims), len(fn.Claims))
	}
	var want clinical.ClaimCounts
	flagged := 0
	for k, c := range check.Claims {
		if !reflect.DeepEqual(c.NoteClaim, fn.Claims[k]) {
			t.Errorf("checked claim %d is %+v, the note's %+v", k+1, c.NoteClaim, fn.Claims[k])
		}
		var texts []string
		missing := false
		for _, n := range c.Cites {
			if n >= 1 && n <= len(script) {
				texts = append(texts, script[n-1].Text)
			} else {
				missing = true
			}
		}
		if c.Evidence != strings.Join(texts, " ") {
			t.Errorf("claim %d evidence %q, want the cited lines' text %q", k+1, c.Evidence, strings.Join(texts, " "))
		}
		if missing && (c.Label != "UNSUPPORTED" || !strings.Contains(c.Reason, "does not exist")) {
			t.Errorf("claim %d cites a line that does not exist: %+v", k+1, c)
		}
		switch c.Label {
		case "SUPPORTED":
			want.Supported++
		case "PARTIAL":
			want.Partial++
		case "UNSUPPORTED":
			want.Unsupported++
		case "ERROR":
			want.Error++
		default:
			t.Errorf("claim %d label %q", k+1, c.Label)
		}
		if c.Label == "PARTIAL" || c.Label == "UNSUPPORTED" || c.Leak {
			flagged++
		}
	}
	if check.Counts != want || check.Flagged != flagged {
		t.Errorf("counts %+v flagged %d, want %+v and %d", check.Counts, check.Flagged, want, flagged)
	}
}

func citeRefOf(cites []int) string {
	parts := make([]string, len(cites))
	for i, n := range cites {
		parts[i] = fmt.Sprint(n)
	}
	return "[[" + strings.Join(parts, ",") + "]]"
}

// p2Cut is a 72-character claim the grammar stopped inside a word.
const p2Cut = "Prescribe nitrofurantoin 100 milligrams twice daily for five days then r"

// p2NoteAnswer is a final_note answer: a claim citing two lines in reverse
// order, one not a citation, one with nothing to say, one holding its own
// citation, one citing a line that does not exist, one cut at the limit.
var p2NoteAnswer = `{"cc":["[2] Burning on urination and frequency for three days"],
	"hpi":["[3,2] No fever or back pain!","not a citation","[4]  ...  ","[4] Takes metformin 500 mg [[9]] twice a day,"],
	"exam":["[5] Temperature 98.6"],
	"results":["[99] A1c 8.4 on the last check","[5] Urine dipstick positive for leukocytes and nitrites"],
	"plan":["[6] ` + p2Cut + `"]}`

func p2Note(t *testing.T, st *live.State) (string, clinical.FinalNote) {
	t.Helper()
	body, data, err := livetest.LaneByID(t, clinical.New(nil), "final_note").Finish(st, -1, json.RawMessage(p2NoteAnswer))
	if err != nil {
		t.Fatal(err)
	}
	return body, data.(clinical.FinalNote)
}

func TestFinalNoteCitesAndBody(t *testing.T) {
	if len(p2Cut) != 72 {
		t.Fatalf("the cut claim has %d characters, want the 72 the grammar allows", len(p2Cut))
	}
	st := livetest.ScriptState(clinicalScript)
	body, fn := p2Note(t, st)
	want := []clinical.NoteClaim{
		{I: 1, Section: "CHIEF COMPLAINT", Claim: "Burning on urination and frequency for three days.", Cites: []int{2}},
		{I: 2, Section: "HISTORY OF PRESENT ILLNESS", Claim: "No fever or back pain!", Cites: []int{2, 3}},
		{I: 3, Section: "HISTORY OF PRESENT ILLNESS", Claim: "Takes metformin 500 mg twice a day.", Cites: []int{4}},
		{I: 4, Section: "PHYSICAL EXAM", Claim: "Temperature 98.6.", Cites: []int{5}},
		{I: 5, Section: "RESULTS", Claim: "A1c 8.4 on the last check.", Cites: []int{99}},
		{I: 6, Section: "RESULTS", Claim: "Urine dipstick positive for leukocytes and nitrites.", Cites: []int{5}},
		{I: 7, Section: "ASSESSMENT AND PLAN", Claim: "Prescribe nitrofurantoin 100 milligrams twice daily for five days then.", Cites: []int{6}},
	}
	if !reflect.DeepEqual(fn.Claims, want) {
		t.Errorf("claims\n%+v\nwant\n%+v", fn.Claims, want)
	}
	wantBody := "### CHIEF COMPLAINT\n\nBurning on urination and frequency for three days. [[2]]\n\n" +
		"### HISTORY OF PRESENT ILLNESS\n\nNo fever or back pain! [[2,3]]\nTakes metformin 500 mg twice a day. [[4]]\n\n" +
		"### PHYSICAL EXAM\n\nTemperature 98.6. [[5]]\n\n" +
		"### RESULTS\n\nA1c 8.4 on the last check (line 99 does not exist). [[99]]\nUrine dipstick positive for leukocytes and nitrites. [[5]]\n\n" +
		"### ASSESSMENT AND PLAN\n\nPrescribe nitrofurantoin 100 milligrams twice daily for five days then. [[6]]\n"
	if body != wantBody {
		t.Errorf("body\n%s\nwant\n%s", body, wantBody)
	}
	if fn.Note != plainOf(wantBody) {
		t.Errorf("data.note\n%s\nwant the body without Markdown:\n%s", fn.Note, plainOf(wantBody))
	}
	// Every line of the note but the titles ends in a citation.
	cite := regexp.MustCompile(`[.!?] \[\[[0-9]+(,[0-9]+)?\]\]$`)
	for _, line := range strings.Split(strings.TrimSpace(fn.Note), "\n") {
		if line != "" && !slices.Contains(noteSectionTitles, line) && !cite.MatchString(line) {
			t.Errorf("note line %q does not end in a citation", line)
		}
	}

	// A note of nothing: every section says so, claims [] not null.
	body, data, err := livetest.LaneByID(t, clinical.New(nil), "final_note").Finish(st, -1, json.RawMessage(`{"cc":[],"hpi":[],"exam":[],"results":[],"plan":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(data); !strings.Contains(string(raw), `"claims":[]`) || strings.Count(body, "(not discussed)") != 5 {
		t.Errorf("empty note %s\n%s", raw, body)
	}
	if _, _, err := livetest.LaneByID(t, clinical.New(nil), "final_note").Finish(st, -1, json.RawMessage(`{"cc":`)); err == nil {
		t.Error("an answer that is not JSON was accepted")
	}
}

// plainOf is the note's Markdown body as data.note writes it: titles
// without "### " and no blank line under them.
func plainOf(md string) string {
	return regexp.MustCompile(`(?m)^### (.*)\n\n`).ReplaceAllString(md, "$1\n")
}

// p2Asker is a fake judge: it records each call and answers in turn.
type p2Asker struct {
	answers []string
	errs    []error
	calls   []struct {
		schema      string
		maxTokens   int
		system, usr string
	}
}

func (a *p2Asker) ask(schema json.RawMessage, maxTokens int, system, user string) (json.RawMessage, error) {
	k := len(a.calls)
	a.calls = append(a.calls, struct {
		schema      string
		maxTokens   int
		system, usr string
	}{string(schema), maxTokens, system, user})
	if k < len(a.errs) && a.errs[k] != nil {
		return nil, a.errs[k]
	}
	return json.RawMessage(a.answers[k]), nil
}

func p2StateWithNote(t *testing.T) (*live.State, clinical.FinalNote) {
	t.Helper()
	st := livetest.ScriptState(clinicalScript)
	body, fn := p2Note(t, st)
	st.Lanes["final_note"] = live.LaneBody{Lane: "final_note", Title: "Cited note", Body: body, Data: fn}
	return st, fn
}

func TestVerifierJudgesClaimsInBatches(t *testing.T) {
	st, fn := p2StateWithNote(t)
	a := &p2Asker{answers: []string{
		`{"claims":[{"label":"SUPPORTED","leak":"no","reason":"line 2 says so"},{"label":"PARTIAL","leak":"no","reason":"only part"},` +
			`{"label":"UNSUPPORTED","leak":"no","reason":"not said"},{"label":"SUPPORTED","leak":"yes","reason":"about someone else"}]}`,
		`{"claims":[{"label":"MAYBE","leak":"no","reason":"x"},{"label":"SUPPORTED","leak":"no","reason":"ok"}]}`,
	}}
	body, data, err := livetest.LaneByID(t, clinical.New(nil), "verifier").Run(st, a.ask)
	if err != nil {
		t.Fatal(err)
	}
	check := data.(clinical.ClaimCheck)
	csCheckClaims(t, clinicalScript, fn, check)
	// Six claims cite lines that exist: two calls of 4 and 2; claim 5
	// (line 99) is UNSUPPORTED without one.
	if len(a.calls) != 2 || !strings.Contains(a.calls[0].schema, `"minItems":4,"maxItems":4`) || !strings.Contains(a.calls[1].schema, `"minItems":2,"maxItems":2`) ||
		a.calls[1].maxTokens >= a.calls[0].maxTokens {
		t.Fatalf("calls %+v", a.calls)
	}
	if u := a.calls[0].usr; !strings.Contains(u, "Claim 1 (CHIEF COMPLAINT): Burning on urination and frequency for three days.\nCited lines:\n[2] "+clinicalScript[1].Text+"\n") ||
		!strings.Contains(u, "Claim 2 (HISTORY OF PRESENT ILLNESS): No fever or back pain!\nCited lines:\n[2] "+clinicalScript[1].Text+"\n[3] "+clinicalScript[2].Text+"\n") {
		t.Errorf("judge prompt:\n%s", u)
	}
	if strings.Contains(a.calls[0].usr+a.calls[1].usr, "A1c 8.4 on the last check") {
		t.Error("a claim citing a line that does not exist was sent to the judge")
	}
	var labels []string
	for _, c := range check.Claims {
		labels = append(labels, fmt.Sprintf("%s/%v", c.Label, c.Leak))
	}
	wantLabels := []string{"SUPPORTED/false", "PARTIAL/false", "UNSUPPORTED/false", "SUPPORTED/true", "UNSUPPORTED/false", "ERROR/false", "SUPPORTED/false"}
	if !reflect.DeepEqual(labels, wantLabels) {
		t.Errorf("labels %v\nwant %v", labels, wantLabels)
	}
	if check.Counts != (clinical.ClaimCounts{Supported: 3, Partial: 1, Unsupported: 2, Error: 1}) || check.Flagged != 4 {
		t.Errorf("counts %+v flagged %d (ERROR is neither supported nor flagged; a leak is flagged)", check.Counts, check.Flagged)
	}
	if check.Claims[1].Evidence != clinicalScript[1].Text+" "+clinicalScript[2].Text || check.Claims[4].Reason != "cited line 99 does not exist" {
		t.Errorf("claims %+v", check.Claims)
	}
	if !strings.Contains(body, "**7 claims:** 3 supported, 1 partial, 2 unsupported, 1 not checked") || !strings.Contains(body, "**4 flagged**") {
		t.Errorf("body:\n%s", body)
	}
	raw, _ := json.Marshal(check)
	for _, k := range []string{`"counts":{"SUPPORTED":3,"PARTIAL":1,"UNSUPPORTED":2,"ERROR":1}`, `"flagged":4`, `"i":1,"section":"CHIEF COMPLAINT","claim":`, `"cites":[2,3],"evidence":`, `"label":"PARTIAL","leak":false,"reason":"only part"`} {
		if !strings.Contains(string(raw), k) {
			t.Errorf("verifier data lacks %s: %s", k, raw)
		}
	}
}

func TestVerifierErrorWhenTheAnswerCannotBeRead(t *testing.T) {
	for _, c := range []struct{ name, first string }{
		{"not JSON", `{"claims":[`},
		{"too few judgements", `{"claims":[{"label":"SUPPORTED","leak":"no","reason":"ok"}]}`},
		{"bad leak", `{"claims":[{"label":"SUPPORTED","leak":"maybe","reason":"ok"},{"label":"SUPPORTED","leak":"maybe","reason":"ok"},{"label":"SUPPORTED","leak":"maybe","reason":"ok"},{"label":"SUPPORTED","leak":"maybe","reason":"ok"}]}`},
	} {
		st, _ := p2StateWithNote(t)
		a := &p2Asker{answers: []string{c.first, `{"claims":[{"label":"SUPPORTED","leak":"no","reason":"ok"},{"label":"SUPPORTED","leak":"no","reason":"ok"}]}`}}
		_, data, err := livetest.LaneByID(t, clinical.New(nil), "verifier").Run(st, a.ask)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		check := data.(clinical.ClaimCheck)
		for k := range 4 {
			if cl := check.Claims[k]; cl.Label != "ERROR" || cl.Leak || !strings.HasPrefix(cl.Reason, "the judge's answer could not be read") {
				t.Errorf("%s: claim %d %+v, want ERROR", c.name, k+1, cl)
			}
		}
		if check.Counts != (clinical.ClaimCounts{Supported: 2, Unsupported: 1, Error: 4}) || check.Flagged != 1 {
			t.Errorf("%s: counts %+v flagged %d", c.name, check.Counts, check.Flagged)
		}
	}
}

// TestVerifierErrorWhenTheAnswerIsCut: a judge answer cut at its token
// limit labels that batch ERROR (never SUPPORTED); the lane goes on.
func TestVerifierErrorWhenTheAnswerIsCut(t *testing.T) {
	st, _ := p2StateWithNote(t)
	a := &p2Asker{
		answers: []string{`{"claims":[{"label":"SUPP`, `{"claims":[{"label":"SUPPORTED","leak":"no","reason":"ok"},{"label":"SUPPORTED","leak":"no","reason":"ok"}]}`},
		errs:    []error{fmt.Errorf("%w at 400 tokens", live.ErrAnswerCut), nil},
	}
	_, data, err := livetest.LaneByID(t, clinical.New(nil), "verifier").Run(st, a.ask)
	if err != nil {
		t.Fatalf("a cut answer failed the lane: %v", err)
	}
	check := data.(clinical.ClaimCheck)
	for k := range 4 {
		if cl := check.Claims[k]; cl.Label != "ERROR" || cl.Leak {
			t.Errorf("claim %d %+v, want ERROR", k+1, cl)
		}
	}
	if check.Counts.Error != 4 || check.Counts.Supported != 2 {
		t.Errorf("counts %+v", check.Counts)
	}
}

func TestVerifierFailsWhenACallFails(t *testing.T) {
	st, _ := p2StateWithNote(t)
	a := &p2Asker{answers: []string{`{}`}, errs: []error{errors.New("the model failed")}}
	if _, data, err := livetest.LaneByID(t, clinical.New(nil), "verifier").Run(st, a.ask); err == nil || data != nil {
		t.Errorf("a failed call gave %v, %v; want the lane to fail", data, err)
	}
	// A note without claims needs no call.
	st.Lanes["final_note"] = live.LaneBody{Lane: "final_note", Data: clinical.FinalNote{Claims: []clinical.NoteClaim{}}}
	a = &p2Asker{}
	body, data, err := livetest.LaneByID(t, clinical.New(nil), "verifier").Run(st, a.ask)
	if err != nil || len(a.calls) != 0 || data.(clinical.ClaimCheck).Claims == nil || body == "" {
		t.Errorf("no claims: %v %+v %v, %d calls", body, data, err, len(a.calls))
	}
}

// p2Session runs the clinical script through v with chat and budget, and
// returns its events; Stop must succeed (done, close 1000).
func p2Session(t *testing.T, v *live.Vertical, c *chat.Service, budget *livetest.Budget) []live.Event {
	t.Helper()
	rec := &livetest.Recorder{}
	s, err := live.Start(context.Background(), live.Config{
		Vertical: v, Models: live.Models{ASR: "whisper-test", LLM: "model-27b"},
		Transcribe: livetest.ScriptedTranscriber(clinicalScript), Chat: c, Budget: budget, Send: rec.Send,
		Diarize: &live.Diarization{Diarizer: &livetest.ScriptedDiarizer{Lines: clinicalScript}, Options: diarize.DefaultOptions},
	})
	if err != nil {
		t.Fatal(err)
	}
	livetest.Feed(t, s, clinicalScript[len(clinicalScript)-1].End+0.3)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := rec.Events()
	if evs[len(evs)-1].Type != live.TypeDone {
		t.Fatalf("last event %s, want done", evs[len(evs)-1].Type)
	}
	return evs
}

// p2Vertical is the clinical vertical without its live lanes; note, when
// set, stands in for the final_note lane (no model call).
func p2Vertical(t *testing.T, note bool) *live.Vertical {
	v := clinical.New(nil)
	v.Live = nil
	if note {
		real := v.Final[1]
		v.Final[1] = &live.LaneSpec{ID: "final_note", Title: "Cited note", Local: true, Pass2: true,
			Finish: func(st *live.State, i int, _ json.RawMessage) (string, any, error) {
				return real.Finish(st, i, json.RawMessage(p2NoteAnswer))
			}}
	}
	return v
}

// p2Failed checks a session whose pass 2 failed at lane failed: one error
// event saying so right before done, the note falling back to the SOAP
// note, summary.pass2 giving the reason, and the lanes after it absent.
func p2Failed(t *testing.T, evs []live.Event, failed, why string) map[string]any {
	t.Helper()
	var errs []int
	lanes := map[string]live.LaneBody{}
	for i, e := range evs {
		switch b := e.Body.(type) {
		case live.ErrorBody:
			errs = append(errs, i)
		case live.LaneBody:
			lanes[b.Lane] = b
		}
	}
	prefix := "pass 2 failed: the " + failed + " lane failed: "
	msg := ""
	if len(errs) == 1 {
		msg = evs[errs[0]].Body.(live.ErrorBody).Message
	}
	if len(errs) != 1 || errs[0] != len(evs)-2 || !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, why) ||
		!strings.HasSuffix(msg, "; note is the single-pass SOAP note from the live transcript") {
		t.Fatalf("error events at %v of %d: %q; want one, right before done, starting %q", errs, len(evs), msg, prefix)
	}
	if _, ok := lanes["final_transcript"]; !ok {
		t.Error("no final_transcript lane")
	}
	if _, ok := lanes["verifier"]; ok {
		t.Error("the verifier lane emitted after pass 2 failed")
	}
	sum := livetest.ClientMap(t, evs[len(evs)-1].Body.(live.DoneBody).Summary)
	if note, _ := sum["note"].(string); !strings.HasPrefix(note, "### Subjective\n") {
		t.Errorf("summary.note is not the SOAP fallback: %q", note)
	}
	p2 := sum["pass2"].(map[string]any)
	reason := strings.TrimSuffix(strings.TrimPrefix(msg, "pass 2 failed: "), "; note is the single-pass SOAP note from the live transcript")
	if p2["ran"] != false || p2["diarized"] != true || p2["reason"] != reason {
		t.Errorf("summary.pass2 %v, want ran false and the reason %q", p2, reason)
	}
	if v := sum["verifier"].(map[string]any); v["flagged"] != float64(0) || len(v["claims"].([]any)) != 0 {
		t.Errorf("summary.verifier %v, want the empty shape", v)
	}
	if tm := sum["pass2_timing"].(map[string]any); tm["verifier_s"] != nil || tm["diarize_s"] == nil {
		t.Errorf("pass2_timing %v", tm)
	}
	return sum
}

func TestClinicalPass2FallsBackWhenTheNoteFails(t *testing.T) {
	// No chat model on the box: the note's call fails.
	evs := p2Session(t, p2Vertical(t, false), &chat.Service{ModelID: "model-27b"}, &livetest.Budget{Tokens: 100000, AudioMS: 600000, StopReserveTokens: 2000})
	sum := p2Failed(t, evs, "final_note", "no chat model is loaded")
	if fn := sum["final_note"].(map[string]any); fn["note"] != "" || len(fn["claims"].([]any)) != 0 {
		t.Errorf("summary.final_note %v, want the empty shape", fn)
	}
	for _, e := range evs {
		if e.Type == live.TypeReceipt {
			t.Error("a receipt without a model call")
		}
	}
}

func TestClinicalPass2FallsBackWhenTheBudgetIsUsedUp(t *testing.T) {
	// No generated token left at stop: no call is made (it would end the
	// session with 4402) and the session ends with done.
	evs := p2Session(t, p2Vertical(t, false), livetest.TinyChat(t, 4096, 1), &livetest.Budget{Tokens: 0, AudioMS: 600000, StopReserveTokens: 2000})
	p2Failed(t, evs, "final_note", "the token budget is used up")
	for _, e := range evs {
		if e.Type == live.TypeReceipt {
			t.Error("a model call ran with no token left")
		}
	}
}

func TestClinicalPass2FallsBackWhenTheVerifierFails(t *testing.T) {
	evs := p2Session(t, p2Vertical(t, true), &chat.Service{ModelID: "model-27b"}, &livetest.Budget{Tokens: 100000, AudioMS: 600000, StopReserveTokens: 2000})
	sum := p2Failed(t, evs, "verifier", "no chat model is loaded")
	var note live.LaneBody
	for _, e := range evs {
		if b, ok := e.Body.(live.LaneBody); ok && b.Lane == "final_note" {
			note = b
		}
	}
	if want := livetest.ClientJSON(t, note.Data); !reflect.DeepEqual(sum["final_note"], want) {
		t.Errorf("summary.final_note %v, want the lane's state %v", sum["final_note"], want)
	}
	if tm := sum["pass2_timing"].(map[string]any); tm["note_s"] == nil {
		t.Errorf("pass2_timing %v: the note step ran", tm)
	}
}

// TestClinicalVerifierOnTheTinyModel: the claim check's calls on the real
// (random-weight) model: the grammar gives exactly one judgement per claim
// with a label on the scale, so no claim is ERROR; one receipt per batch.
func TestClinicalVerifierOnTheTinyModel(t *testing.T) {
	evs := p2Session(t, p2Vertical(t, true), livetest.TinyChat(t, 4096, 1), &livetest.Budget{Tokens: 100000, AudioMS: 600000, StopReserveTokens: 2000})
	var fn clinical.FinalNote
	var check clinical.ClaimCheck
	receipts := 0
	var order []string
	for _, e := range evs {
		switch b := e.Body.(type) {
		case live.ErrorBody:
			t.Errorf("error event: %s", b.Message)
		case live.ReceiptBody:
			receipts++
		case live.LaneBody:
			order = append(order, b.Lane)
			if b.Lane == "final_note" {
				fn = b.Data.(clinical.FinalNote)
			} else if b.Lane == "verifier" {
				check = b.Data.(clinical.ClaimCheck)
			}
		}
	}
	if !reflect.DeepEqual(order, []string{"final_transcript", "final_note", "verifier"}) {
		t.Errorf("lanes %v", order)
	}
	csCheckClaims(t, clinicalScript, fn, check)
	if receipts != 3 || check.Counts.Error != 0 || check.Claims[4].Label != "UNSUPPORTED" {
		t.Errorf("%d receipts (want 3: the role map, and 6 claims judged 4 at a time), counts %+v", receipts, check.Counts)
	}
	sum := livetest.ClientMap(t, evs[len(evs)-1].Body.(live.DoneBody).Summary)
	if p2 := sum["pass2"].(map[string]any); p2["ran"] != true || p2["diarized"] != true {
		t.Errorf("pass2 %v", p2)
	}
	if body, _, _ := livetest.LaneByID(t, clinical.New(nil), "final_note").Finish(livetest.ScriptState(clinicalScript), -1, json.RawMessage(p2NoteAnswer)); sum["note"] != body {
		t.Errorf("summary.note is not the cited note:\n%v", sum["note"])
	}
}

// drainingBudget lets ask's tokens-left check pass, then finds the budget
// spent when the call reserves (another call on the same key took it).
type drainingBudget struct {
	*livetest.Budget
	armed atomic.Bool
}

func (d *drainingBudget) Reserve(ctx context.Context, want int64) (int64, func(int64), error) {
	if d.armed.Load() {
		d.Spend(1 << 40)
	}
	return d.Budget.Reserve(ctx, want)
}

// TestPass2BudgetGoneAtReservation: a pass-2 call refused for budget after
// stop fails pass 2 (the error event) and the session still ends with done,
// not with 4402.
func TestPass2BudgetGoneAtReservation(t *testing.T) {
	b := &drainingBudget{Budget: &livetest.Budget{Tokens: 100000, AudioMS: 600000, StopReserveTokens: 2000}}
	rec := &livetest.Recorder{}
	s, err := live.Start(context.Background(), live.Config{
		Vertical: p2Vertical(t, false), Models: live.Models{ASR: "whisper-test", LLM: "model-27b"},
		Transcribe: livetest.ScriptedTranscriber(clinicalScript), Chat: livetest.TinyChat(t, 4096, 1), Budget: b, Send: rec.Send,
		Diarize: &live.Diarization{Diarizer: &livetest.ScriptedDiarizer{Lines: clinicalScript}, Options: diarize.DefaultOptions},
	})
	if err != nil {
		t.Fatal(err)
	}
	livetest.Feed(t, s, clinicalScript[len(clinicalScript)-1].End+0.3)
	b.armed.Store(true)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	evs := rec.Events()
	if last := evs[len(evs)-1]; last.Type != live.TypeDone {
		t.Fatalf("last event %s, want done", last.Type)
	}
	var failed bool
	for _, e := range evs {
		if b, ok := e.Body.(live.ErrorBody); ok && strings.HasPrefix(b.Message, "pass 2 failed: ") && strings.Contains(b.Message, "token budget is used up") {
			failed = true
		}
	}
	if !failed {
		t.Error("no error event saying pass 2 failed for want of tokens")
	}
}
