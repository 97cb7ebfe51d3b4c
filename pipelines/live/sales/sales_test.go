package sales_test

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"boxd/pipelines/live"
	"boxd/pipelines/live/livetest"
	"boxd/pipelines/live/sales"
)

// salesScript is a synthetic discovery call (no real people or companies).
var salesScript = []livetest.Line{
	{Text: "Thanks for making time today, Dana. How is shipping going at Northwind Freight?", Start: 0.3, End: 4.0, Speaker: 0},
	{Text: "Honestly, late deliveries are hurting us; we ship about forty pallets a week.", Start: 4.4, End: 8.2, Speaker: 1},
	{Text: "Our current carrier is Contoso Logistics and that contract renews in June.", Start: 8.6, End: 12.1, Speaker: 1},
	{Text: "Your price looks about twenty percent higher than what we pay now.", Start: 12.5, End: 15.6, Speaker: 1},
	{Text: "I understand; most customers recover that through fewer failed deliveries.", Start: 16.0, End: 19.4, Speaker: 0},
	{Text: "Our operations director, Sam, signs off, and the budget is around fifty thousand a year.", Start: 19.8, End: 24.3, Speaker: 1},
	{Text: "Let us set up a demo with Sam next Tuesday.", Start: 24.7, End: 26.9, Speaker: 0},
}

func TestSalesSessionFillsEveryLane(t *testing.T) {
	v := sales.New()
	evs := livetest.RunSession(t, v, "", "", salesScript)
	sum := livetest.CheckSession(t, v, salesScript, evs)
	for _, k := range []string{"objection", "next_question", "crm", "followup", "final_transcript", "pass2", "pass2_timing"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary has no %s: %v", k, sum)
		}
	}
	// Pass 2 ran steps 1 and 2: their times, no note or claim check.
	if tm, _ := sum["pass2_timing"].(map[string]any); tm == nil || tm["diarize_s"] == nil || tm["roles_s"] == nil || tm["note_s"] != nil || tm["verifier_s"] != nil ||
		math.Abs(tm["total_s"].(float64)-tm["diarize_s"].(float64)-tm["roles_s"].(float64)) > 1e-9 {
		t.Errorf("pass2_timing %v", sum["pass2_timing"])
	}
	// The roles are Seller and Buyer.
	ft := sum["final_transcript"].(map[string]any)
	for sp, r := range ft["roles"].(map[string]any) {
		if r != "Seller" && r != "Buyer" {
			t.Errorf("speaker %s: role %v", sp, r)
		}
	}
	// followup is written on stop: after every live lane event; then the
	// final_transcript lane.
	lastLive, firstFollowup, finalTranscript := -1, -1, -1
	for i, e := range evs {
		if b, ok := e.Body.(live.LaneBody); ok {
			switch {
			case b.Lane == "followup" && firstFollowup < 0:
				firstFollowup = i
			case b.Lane == "final_transcript":
				finalTranscript = i
			case b.Lane != "followup":
				lastLive = i
			}
		}
	}
	if finalTranscript < firstFollowup {
		t.Errorf("final_transcript (event %d) came before followup (%d)", finalTranscript, firstFollowup)
	}
	if firstFollowup < lastLive {
		t.Errorf("followup (event %d) came before the last live lane event (%d)", firstFollowup, lastLive)
	}
}

func TestSalesPromptsNumberTheTranscript(t *testing.T) {
	v := sales.New()
	st := livetest.ScriptState(salesScript)
	for _, l := range append(append([]*live.LaneSpec{}, v.Live...), v.Final...) {
		if l.Local {
			continue // no model call, no prompt
		}
		system, user := l.Prompt(st, -1)
		if !strings.Contains(system, "JSON") || !strings.Contains(system, "concise") {
			t.Errorf("%s: the system prompt does not ask for concise JSON: %q", l.ID, system)
		}
		for i, line := range salesScript {
			if want := "[" + strconv.Itoa(i+1) + "] " + line.Text + "\n"; !strings.Contains(user, want) {
				t.Errorf("%s: prompt lacks numbered line %q:\n%s", l.ID, want, user)
			}
		}
		if _, user := l.Prompt(&live.State{Lanes: map[string]live.LaneBody{}}, -1); user != "" {
			t.Errorf("%s: a prompt before the first sentence (the lane must skip): %q", l.ID, user)
		}
	}
	// next_question and followup see the CRM fields known so far.
	_, crm, err := livetest.LaneByID(t, v, "crm").Finish(st, -1, json.RawMessage(`{"company":"Northwind Freight","contact_role":"","needs":["on-time delivery"],"budget":"","timeline":"","decision_makers":[],"competitors":[],"next_step":""}`))
	if err != nil {
		t.Fatal(err)
	}
	st.Lanes["crm"] = live.LaneBody{Lane: "crm", Data: crm}
	for _, id := range []string{"next_question", "followup"} {
		if _, user := livetest.LaneByID(t, v, id).Prompt(st, -1); !strings.Contains(user, `"company":"Northwind Freight"`) {
			t.Errorf("%s prompt lacks the CRM fields:\n%s", id, user)
		}
	}
}

func TestCRMLaneFields(t *testing.T) {
	l := livetest.LaneByID(t, sales.New(), "crm")
	body, data, err := l.Finish(livetest.ScriptState(salesScript), -1, json.RawMessage(`{"company":" Northwind Freight ","contact_role":"",
		"needs":["on-time delivery"," "],"budget":"about 50k a year","timeline":"contract renews in June",
		"decision_makers":["Sam, operations director"],"competitors":["Contoso Logistics"],"next_step":"demo with Sam next Tuesday"}`))
	if err != nil {
		t.Fatal(err)
	}
	got := livetest.ClientJSON(t, data)
	want := livetest.ClientJSON(t, map[string]any{"company": "Northwind Freight", "contact_role": nil, "needs": []string{"on-time delivery"},
		"budget": "about 50k a year", "timeline": "contract renews in June", "decision_makers": []string{"Sam, operations director"},
		"competitors": []string{"Contoso Logistics"}, "next_step": "demo with Sam next Tuesday"})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("crm %v\nwant %v", got, want)
	}
	if !strings.Contains(body, "- **Company:** Northwind Freight\n") || !strings.Contains(body, "- **Contact role:** _unknown_\n") {
		t.Errorf("body:\n%s", body)
	}
}

func TestObjectionAndNextQuestionLanes(t *testing.T) {
	v := sales.New()
	st := livetest.ScriptState(salesScript)
	body, data, err := livetest.LaneByID(t, v, "objection").Finish(st, -1, json.RawMessage(`{"objections":[
		{"objection":"Price is 20 percent above the current carrier","category":"price","response":"Compare the cost of failed deliveries"},
		{"objection":"x","category":"weather","response":"not a category"},
		{"objection":"","category":"trust","response":"empty objection"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	o := data.(sales.Objections)
	if len(o.Objections) != 1 || o.Objections[0].Category != "price" || !strings.Contains(body, "Compare the cost of failed deliveries") {
		t.Errorf("objections %+v\n%s", o, body)
	}
	_, data, err = livetest.LaneByID(t, v, "next_question").Finish(st, -1, json.RawMessage(`{"question":"Who else joins the demo?","topic":"authority","reason":"Sam signs off"}`))
	if err != nil {
		t.Fatal(err)
	}
	if q := data.(sales.NextQuestion); q.Question == nil || *q.Question != "Who else joins the demo?" || *q.Topic != "authority" {
		t.Errorf("next question %+v", q)
	}
}

func TestFollowupLaneWritesTheEmail(t *testing.T) {
	l := livetest.LaneByID(t, sales.New(), "followup")
	body, data, err := l.Finish(livetest.ScriptState(salesScript), -1, json.RawMessage(`{"subject":"Next Tuesday's demo","paragraphs":["Hi Dana,","Thanks for the call today.",""]}`))
	if err != nil {
		t.Fatal(err)
	}
	e := data.(sales.FollowupEmail)
	if *e.Subject != "Next Tuesday's demo" || e.Body != "Hi Dana,\n\nThanks for the call today." || len(e.Paragraphs) != 2 {
		t.Errorf("email %+v", e)
	}
	if !strings.HasPrefix(body, "**Subject:** Next Tuesday's demo\n\nHi Dana,") {
		t.Errorf("body %q", body)
	}
}

func TestSalesSummaryBeforeAnyLane(t *testing.T) {
	sum := livetest.ClientJSON(t, sales.New().Summary(livetest.ScriptState(salesScript[:1]))).(map[string]any)
	crm := sum["crm"].(map[string]any)
	if crm["company"] != nil || crm["needs"] == nil || sum["followup"].(map[string]any)["subject"] != nil || sum["objection"].(map[string]any)["objections"] == nil {
		t.Errorf("summary without lane states is not well shaped: %v", sum)
	}
}
