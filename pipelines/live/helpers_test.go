package live_test

import (
	"testing"

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
