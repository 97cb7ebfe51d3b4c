package live_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/chat"

	"boxd/pipelines/live"
	"boxd/pipelines/live/livetest"
)

// scriptState is the state of a session that has heard script: its lines
// as the final transcript, no lane run yet.
func scriptState(script []livetest.Line) *live.State {
	st := &live.State{Lang: "en", Lanes: map[string]live.LaneBody{}}
	for i, l := range script {
		st.Sentences = append(st.Sentences, live.Sentence{I: i, T: l.Start, Text: l.Text})
	}
	return st
}

// laneByID is the vertical's live or final lane with the id.
func laneByID(t *testing.T, v *live.Vertical, id string) *live.LaneSpec {
	t.Helper()
	for _, l := range append(append([]*live.LaneSpec{}, v.Live...), v.Final...) {
		if l.ID == id {
			return l
		}
	}
	t.Fatalf("vertical %s has no lane %s", v.ID, id)
	return nil
}

// tinyChat is the generated tiny chat model (random weights: its answers
// are meaningless but follow each lane's schema) with ctx tokens per
// request and parallel sequences, on one thread (see docs/decisions.md,
// "Tests run the tiny model on one thread").
func tinyChat(t *testing.T, ctx, parallel int) *chat.Service {
	t.Helper()
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: ctx, Parallel: parallel, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return &chat.Service{Engine: e, ModelID: "model-27b", WeightsRoot: strings.Repeat("ab", 32), Upstream: "tiny", Provider: "test", Receipts: fakeReceipts{}}
}

// clientJSON is v as a client decodes it.
func clientJSON(t *testing.T, v any) any {
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

// clientMap is clientJSON of a value that encodes as an object.
func clientMap(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := clientJSON(t, v).(map[string]any)
	if !ok {
		t.Fatalf("%T does not encode as a JSON object", v)
	}
	return m
}
