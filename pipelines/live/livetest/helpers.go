package livetest

// Helpers the tests of the live core and of every vertical share: a state
// that has heard a script, a vertical's lane by id, the tiny chat model, a
// whole scripted session, and the checks of a clinical or sales session.

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"boxd/engine/attest"
	"boxd/engine/diarize"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/chat"
	"boxd/pipelines/live"
	"boxd/pipelines/live/clinical"
)

// ScriptState is the state of a session that has heard script: its lines
// as the final transcript, no lane run yet.
func ScriptState(script []Line) *live.State {
	st := &live.State{Lang: "en", Lanes: map[string]live.LaneBody{}}
	for i, l := range script {
		st.Sentences = append(st.Sentences, live.Sentence{I: i, T: l.Start, Text: l.Text})
	}
	return st
}

// LaneByID is the vertical's live or final lane with the id.
func LaneByID(t *testing.T, v *live.Vertical, id string) *live.LaneSpec {
	t.Helper()
	for _, l := range append(append([]*live.LaneSpec{}, v.Live...), v.Final...) {
		if l.ID == id {
			return l
		}
	}
	t.Fatalf("vertical %s has no lane %s", v.ID, id)
	return nil
}

// TinyChat is the generated tiny chat model (random weights: its answers
// are meaningless but follow each lane's schema) with ctx tokens per
// request and parallel sequences, on one thread (see docs/decisions.md,
// "Tests run the tiny model on one thread").
func TinyChat(t *testing.T, ctx, parallel int) *chat.Service {
	t.Helper()
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: ctx, Parallel: parallel, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return &chat.Service{Engine: e, ModelID: "model-27b", WeightsRoot: strings.Repeat("ab", 32), Upstream: "tiny", Provider: "test", Receipts: fakeReceipts{}}
}

// fakeReceipts signs nothing; the chat pipeline marks the receipt attested.
type fakeReceipts struct{}

func (fakeReceipts) Issue(ctx context.Context, mc attest.ModelCall, upstream string) (attest.SignedModelCall, error) {
	return attest.SignedModelCall{ModelCall: mc, Commitment: "c", Sig: "ab"}, nil
}

// ClientJSON is v as a client decodes it.
func ClientJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// ClientMap is ClientJSON of a value that encodes as an object.
func ClientMap(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := ClientJSON(t, v).(map[string]any)
	if !ok {
		t.Fatalf("%T does not encode as a JSON object", v)
	}
	return m
}

// Feed sends seconds of silence to s in 100 ms frames.
func Feed(t *testing.T, s *live.Session, seconds float64) {
	t.Helper()
	frame := make([]byte, 3200)
	for i := 0; i < int(seconds*10); i++ {
		if err := s.Audio(context.Background(), frame); err != nil {
			t.Fatal(err)
		}
	}
}

// RunSession runs a whole session of v over script with the scripted
// transcriber and the tiny chat model, and returns its events.
func RunSession(t *testing.T, v *live.Vertical, lang, target string, script []Line) []live.Event {
	t.Helper()
	return RunSessionPaused(t, v, lang, target, script, 0)
}

// RunSessionPaused is RunSession, but once pauseAt seconds of audio are in
// it waits until every live lane has emitted before the rest comes.
func RunSessionPaused(t *testing.T, v *live.Vertical, lang, target string, script []Line, pauseAt float64) []live.Event {
	t.Helper()
	rec := &Recorder{}
	s, err := live.Start(context.Background(), live.Config{
		Vertical: v, Lang: lang, Target: target, Models: live.Models{ASR: "whisper-test", LLM: "model-27b"},
		Transcribe: ScriptedTranscriber(script), Chat: TinyChat(t, 4096, 4),
		Budget: &Budget{Tokens: 500000, AudioMS: 600000, StopReserveTokens: 2000},
		Send:   rec.Send, Debounce: 20 * time.Millisecond,
		Diarize: &live.Diarization{Diarizer: &ScriptedDiarizer{Lines: script}, Options: diarize.DefaultOptions},
	})
	if err != nil {
		t.Fatal(err)
	}
	end := script[len(script)-1].End + 0.3
	if pauseAt > 0 {
		Feed(t, s, pauseAt)
		deadline := time.Now().Add(2 * time.Minute)
		for !allEmitted(rec.Events(), v.Live) {
			if time.Now().After(deadline) {
				t.Fatal("the live lanes did not all emit")
			}
			time.Sleep(20 * time.Millisecond)
		}
		end -= pauseAt
	}
	Feed(t, s, end)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rec.Events()
}

func allEmitted(evs []live.Event, lanes []*live.LaneSpec) bool {
	seen := map[string]bool{}
	for _, e := range evs {
		if b, ok := e.Body.(live.LaneBody); ok {
			seen[b.Lane] = true
		}
	}
	for _, l := range lanes {
		if !seen[l.ID] {
			return false
		}
	}
	return true
}

// CheckSession checks what a clinical or sales session must show: no
// error event; every lane at least
// once, the after-stop lanes after every live lane and in order; one
// receipt per model call (the role map's included); done last, and
// done.summary holding each lane's latest state and final_transcript: for
// a vertical with Roles (clinical, sales: RunSession diarizes with
// ScriptedDiarizer) each line's speaker the script's and its role the
// roles map's, summary.pass2 ran and diarized, pass2_timing's diarize_s
// and roles_s; clinical's summary.note is the cited note.
func CheckSession(t *testing.T, v *live.Vertical, script []Line, evs []live.Event) map[string]any {
	t.Helper()
	latest := map[string]live.LaneBody{}
	counts := map[string]int{}
	receipts := 0
	var order []string // lanes in the order of their first event
	for _, e := range evs {
		switch b := e.Body.(type) {
		case live.ErrorBody:
			t.Errorf("error event: %s", b.Message)
		case live.ReceiptBody:
			receipts++
		case live.LaneBody:
			if counts[b.Lane] == 0 {
				order = append(order, b.Lane)
			}
			latest[b.Lane] = b
			counts[b.Lane]++
			if b.Body == "" || b.Data == nil || b.Title == "" {
				t.Errorf("lane %s without title, body or data: %+v", b.Lane, b)
			}
		}
	}
	calls := 0
	for _, l := range append(append([]*live.LaneSpec{}, v.Live...), v.Final...) {
		if counts[l.ID] == 0 {
			t.Errorf("lane %s never emitted", l.ID)
		}
		switch {
		case l.Local:
		case l.ID == "verifier":
			// One call per 4 claims whose cited lines all exist (the
			// others are UNSUPPORTED without a call).
			judged := 0
			for _, c := range latest[l.ID].Data.(clinical.ClaimCheck).Claims {
				ok := len(c.Cites) > 0
				for _, n := range c.Cites {
					ok = ok && n >= 1 && n <= len(script)
				}
				if ok {
					judged++
				}
			}
			calls += (judged + 3) / 4
		default:
			calls += counts[l.ID]
		}
	}
	if v.Roles != nil {
		calls++ // the role map's one call (the tiny model always answers)
	}
	if receipts != calls {
		t.Errorf("%d receipts for %d model calls", receipts, calls)
	}
	// The after-stop lanes come last, in the vertical's order.
	if len(order) >= len(v.Final) {
		tail := order[len(order)-len(v.Final):]
		for k, l := range v.Final {
			if tail[k] != l.ID {
				t.Errorf("lanes in order %v; the after-stop lanes must end it in order %v", order, tail)
				break
			}
		}
	}
	last := evs[len(evs)-1]
	if last.Type != live.TypeDone {
		t.Fatalf("last event %s, want done", last.Type)
	}
	// The summary as a client reads it.
	raw, err := json.Marshal(last.Body.(live.DoneBody).Summary)
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	for id, lb := range latest {
		key := id
		if id == "note" {
			key = "note_sections"
		}
		if want := ClientJSON(t, lb.Data); !reflect.DeepEqual(sum[key], want) {
			t.Errorf("summary.%s is not lane %s's latest state (latest replaces):\n%v\nwant %v", key, id, sum[key], want)
		}
	}
	noteLane := "note"
	if v.ID == "clinical" {
		noteLane = "final_note" // with pass 2, summary.note is the cited note
	}
	if lb, ok := latest[noteLane]; ok && sum["note"] != lb.Body {
		t.Errorf("summary.note is not the latest %s body:\n%v\n---\n%s", noteLane, sum["note"], lb.Body)
	}
	ft, _ := sum["final_transcript"].(map[string]any)
	lines, _ := ft["lines"].([]any)
	if len(lines) != len(script) {
		t.Fatalf("final_transcript has %d lines, want %d: %v", len(lines), len(script), ft)
	}
	diarized := v.Roles != nil
	// Speakers are named S01, S02, … in order of their first line.
	names := map[int]string{}
	for _, l := range script {
		if _, ok := names[l.Speaker]; !ok {
			names[l.Speaker] = fmt.Sprintf("S%02d", len(names)+1)
		}
	}
	roles, _ := ft["roles"].(map[string]any)
	for i, l := range lines {
		m := l.(map[string]any)
		if m["n"] != float64(i+1) || m["text"] != script[i].Text || m["start"] != script[i].Start || m["end"] != script[i].End {
			t.Errorf("final_transcript line %d: %v", i+1, m)
		}
		for _, k := range []string{"speaker", "role", "end"} {
			if _, ok := m[k]; !ok {
				t.Errorf("final_transcript line %d has no %s key", i+1, k)
			}
		}
		switch {
		case !diarized && (m["speaker"] != nil || m["role"] != nil):
			t.Errorf("final_transcript line %d without diarization has a speaker or role: %v", i+1, m)
		case diarized && (m["speaker"] != names[script[i].Speaker] || m["role"] == nil || m["role"] != roles[names[script[i].Speaker]]):
			t.Errorf("final_transcript line %d: speaker %v role %v, want %s with its role in roles %v", i+1, m["speaker"], m["role"], names[script[i].Speaker], roles)
		}
	}
	p2, _ := sum["pass2"].(map[string]any)
	tm, _ := sum["pass2_timing"].(map[string]any)
	if !diarized {
		if len(roles) != 0 || ft["model"] != nil || ft["diarize_s"] != nil || ft["audio_s"] == nil {
			t.Errorf("final_transcript without diarization: want roles {}, model and diarize_s null, audio_s: %v", ft)
		}
		return sum
	}
	if len(roles) != len(names) || ft["model"] != "scripted-diarizer" || ft["diarize_s"] == nil || ft["audio_s"] == nil || (ft["roles_source"] != live.RolesFromModel && ft["roles_source"] != live.RolesFromFallback) {
		t.Errorf("final_transcript: want roles for %d speakers, model scripted-diarizer, diarize_s, audio_s and roles_source: %v", len(names), ft)
	}
	for sp, r := range roles {
		if !slices.Contains(v.Roles.Names, fmt.Sprint(r)) {
			t.Errorf("speaker %s has role %v, not one of %v", sp, r, v.Roles.Names)
		}
	}
	if p2["ran"] != true || p2["diarized"] != true {
		t.Errorf("summary.pass2 = %v, want ran and diarized true", p2)
	}
	for _, k := range []string{"diarize_s", "roles_s", "total_s"} {
		if _, ok := tm[k].(float64); !ok {
			t.Errorf("pass2_timing.%s = %v, want seconds", k, tm[k])
		}
	}
	return sum
}
