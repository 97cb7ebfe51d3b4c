package live_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"boxd/engine/diarize"
	"boxd/pipelines/chat"
	"boxd/pipelines/live"
	"boxd/pipelines/live/livetest"
)

// p2Script: the doctor asks, the patient answers; line 3 is one sentence
// the recogniser did not cut at the turn change.
var p2Script = []livetest.Line{
	{Text: "What brings you in today?", Start: 0.3, End: 2.0, Speaker: 0},
	{Text: "My back has hurt for two weeks.", Start: 2.4, End: 4.6, Speaker: 1},
	{Text: "Does it hurt when you bend?", Start: 5.0, End: 6.8, Speaker: 0},
	{Text: "Only in the morning.", Start: 7.2, End: 8.6, Speaker: 1},
}

func diarizedSession(t *testing.T, v *live.Vertical, c *chat.Service, d *live.Diarization, script []livetest.Line) []live.Event {
	t.Helper()
	rec := &livetest.Recorder{}
	s, err := live.Start(context.Background(), live.Config{
		Vertical: v, Models: live.Models{ASR: "whisper-test", LLM: "model-27b"},
		Transcribe: livetest.ScriptedTranscriber(script), Chat: c,
		Budget: &livetest.Budget{Tokens: 100000, AudioMS: 600000, StopReserveTokens: 2000},
		Send:   rec.Send, Debounce: 20 * time.Millisecond, Diarize: d,
	})
	if err != nil {
		t.Fatal(err)
	}
	livetest.Feed(t, s, script[len(script)-1].End+0.3)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := rec.Events()
	if evs[len(evs)-1].Type != live.TypeDone {
		t.Fatalf("last event %s", evs[len(evs)-1].Type)
	}
	return evs
}

// rolesVertical has Roles and one after-stop lane that records the
// transcript it was given, and final_transcript.
func rolesVertical(seen *string) *live.Vertical {
	return &live.Vertical{ID: "clinical",
		Roles: &live.Roles{Names: []string{"Doctor", "Patient", "Other"}, Setting: "A visit.", Asker: "Doctor", Answerer: "Patient", Rest: "Other"},
		Final: []*live.LaneSpec{{ID: "seen", Title: "Seen", Local: true, Finish: func(st *live.State, _ int, _ json.RawMessage) (string, any, error) {
			*seen = st.Lines()
			return "ok", map[string]any{}, nil
		}}, live.FinalTranscriptLane()},
		Summary: func(st *live.State) map[string]any {
			return map[string]any{"final_transcript": live.Final(st), "pass2_timing": live.Pass2Timing(st), "failed": st.Pass2Failed}
		}}
}

func finalTranscript(t *testing.T, evs []live.Event) map[string]any {
	t.Helper()
	sum := livetest.ClientMap(t, evs[len(evs)-1].Body.(live.DoneBody).Summary)
	return sum["final_transcript"].(map[string]any)
}

func TestPass2RolesFallBackToTheQuestionsRule(t *testing.T) {
	// No chat model: the role map cannot call one; the speaker who asks
	// the questions is the Doctor.
	var seen string
	d := &livetest.ScriptedDiarizer{Lines: p2Script}
	evs := diarizedSession(t, rolesVertical(&seen), &chat.Service{ModelID: "m"}, &live.Diarization{Diarizer: d, Options: diarize.DefaultOptions}, p2Script)
	ft := finalTranscript(t, evs)
	if ft["roles_source"] != live.RolesFromFallback {
		t.Errorf("roles_source %v", ft["roles_source"])
	}
	roles := ft["roles"].(map[string]any)
	if roles["S01"] != "Doctor" || roles["S02"] != "Patient" {
		t.Errorf("roles %v", roles)
	}
	want := "[1] Doctor: What brings you in today?\n[2] Patient: My back has hurt for two weeks.\n[3] Doctor: Does it hurt when you bend?\n[4] Patient: Only in the morning.\n"
	if seen != want {
		t.Errorf("the after-stop lanes saw\n%s\nwant\n%s", seen, want)
	}
	// The diarizer was handed the session's audio: every sample sent.
	if fed := int((p2Script[3].End + 0.3) * 10); d.Samples != fed*1600 {
		t.Errorf("the diarizer got %d samples, want %d", d.Samples, fed*1600)
	}
	for _, e := range evs {
		if e.Type == live.TypeError || e.Type == live.TypeReceipt {
			t.Errorf("%s event: %+v", e.Type, e.Body)
		}
	}
}

func TestPass2RolesByTheModel(t *testing.T) {
	var seen string
	evs := diarizedSession(t, rolesVertical(&seen), livetest.TinyChat(t, 4096, 1), &live.Diarization{Diarizer: &livetest.ScriptedDiarizer{Lines: p2Script}, Options: diarize.DefaultOptions}, p2Script)
	ft := finalTranscript(t, evs)
	receipts := 0
	for _, e := range evs {
		if e.Type == live.TypeReceipt {
			receipts++
		}
	}
	// The tiny random model answers within the grammar: a role from the
	// list for each speaker, one receipted call. Its map is kept when it
	// has both sides, else the questions rule decides (TestReadRoles).
	roles := ft["roles"].(map[string]any)
	if receipts != 1 || len(roles) != 2 || roles["S01"] == roles["S02"] {
		t.Fatalf("roles_source %v, %d receipts, roles %v", ft["roles_source"], receipts, roles)
	}
	if src := ft["roles_source"]; src != live.RolesFromModel && (src != live.RolesFromFallback || roles["S01"] != "Doctor") {
		t.Errorf("roles_source %v, roles %v", src, roles)
	}
	for _, l := range ft["lines"].([]any) {
		m := l.(map[string]any)
		if m["role"] != roles[m["speaker"].(string)] {
			t.Errorf("line %v: role is not the map's", m)
		}
	}
}

func TestPass2DiarizationFailures(t *testing.T) {
	cases := []struct {
		name string
		d    *live.Diarization
		why  string
	}{
		{"the diarizer fails", &live.Diarization{Diarizer: &livetest.ScriptedDiarizer{Lines: p2Script, Err: errors.New("out of memory")}, Options: diarize.DefaultOptions},
			"diarization failed: scripted-diarizer: out of memory"},
		{"the session is longer than the audio kept", &live.Diarization{Diarizer: &livetest.ScriptedDiarizer{Lines: p2Script}, Options: diarize.DefaultOptions, MaxAudioS: 1},
			"diarization failed: the session's audio (9 s) is longer than the 1 s kept in memory for diarization (diarize.max_audio_s)"},
		{"no diarizer", nil, "diarization failed: no diarizer is configured on this box"},
		{"bad speaker bounds", &live.Diarization{Diarizer: &livetest.ScriptedDiarizer{Lines: p2Script}, Options: diarize.Options{MinSpeakers: 1, MaxSpeakers: 0}},
			"diarization failed: scripted-diarizer: diarize: max_speakers is 0; it must be at least 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var seen string
			v := rolesVertical(&seen)
			v.Pass2Fallback = "final_transcript is the live transcript"
			evs := diarizedSession(t, v, &chat.Service{ModelID: "m"}, c.d, p2Script)
			checkFailed(t, evs, c.why, seen)
		})
	}
}

func checkFailed(t *testing.T, evs []live.Event, why, seen string) {
	t.Helper()
	var errs []string
	for _, e := range evs {
		if b, ok := e.Body.(live.ErrorBody); ok {
			errs = append(errs, b.Message)
		}
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "pass 2 failed: "+why) || !strings.HasSuffix(errs[0], "; final_transcript is the live transcript") {
		t.Fatalf("error events %q; want one saying pass 2 failed: %s", errs, why)
	}
	ft := finalTranscript(t, evs)
	if ft["model"] != nil || ft["diarize_s"] != nil || len(ft["roles"].(map[string]any)) != 0 || len(ft["lines"].([]any)) != len(p2Script) {
		t.Errorf("final_transcript after a failed diarization: %v", ft)
	}
	for _, l := range ft["lines"].([]any) {
		if m := l.(map[string]any); m["speaker"] != nil || m["role"] != nil {
			t.Errorf("line %v has a speaker", m)
		}
	}
	if strings.Contains(seen, "Doctor") || !strings.Contains(seen, "[1] What brings you in today?") {
		t.Errorf("the lanes saw %q", seen)
	}
	sum := livetest.ClientMap(t, evs[len(evs)-1].Body.(live.DoneBody).Summary)
	if tm := sum["pass2_timing"].(map[string]any); tm["diarize_s"] != nil || tm["roles_s"] != nil {
		t.Errorf("pass2_timing %v", tm)
	}
	if !strings.HasPrefix(sum["failed"].(string), why) {
		t.Errorf("Pass2Failed %q", sum["failed"])
	}
}

// TestPass2SplitsASentenceAtATurnChange: the recogniser made one sentence
// of two speakers' words; pass 2 splits it at the turn change, so the
// lines after it are renumbered, and the after-stop lanes (the cited note
// cites these n) see the new numbering with each line's role.
func TestPass2SplitsASentenceAtATurnChange(t *testing.T) {
	sentences := []livetest.Line{
		{Text: "What brings you in today?", Start: 0.3, End: 2.0},
		{Text: "My back hurts since Monday. Does it hurt when you bend?", Start: 2.4, End: 7.0},
		{Text: "Only in the morning.", Start: 7.4, End: 9.0},
	}
	turns := []livetest.Line{
		{Start: 0.3, End: 2.0, Speaker: 0},
		{Start: 2.4, End: 4.6, Speaker: 1},
		{Start: 4.8, End: 7.0, Speaker: 0},
		{Start: 7.4, End: 9.0, Speaker: 1},
	}
	var seen string
	evs := diarizedSession(t, rolesVertical(&seen), &chat.Service{ModelID: "m"}, &live.Diarization{Diarizer: &livetest.ScriptedDiarizer{Lines: turns}, Options: diarize.DefaultOptions}, sentences)
	want := "[1] Doctor: What brings you in today?\n[2] Patient: My back hurts since Monday.\n[3] Doctor: Does it hurt when you bend?\n[4] Patient: Only in the morning.\n"
	if seen != want {
		t.Errorf("the after-stop lanes saw\n%s\nwant\n%s", seen, want)
	}
	lines := finalTranscript(t, evs)["lines"].([]any)
	if len(lines) != 4 {
		t.Fatalf("%d lines: %v", len(lines), lines)
	}
	l2, l3 := lines[1].(map[string]any), lines[2].(map[string]any)
	if l2["start"] != 2.4 || l3["end"] != 7.0 || l2["end"].(float64) > l3["start"].(float64) || l3["n"] != 3.0 {
		t.Errorf("the split lines: %v %v", l2, l3)
	}
}
