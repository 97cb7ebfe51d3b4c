package replay

import (
	"errors"
	"testing"
	"time"

	"boxd/pipelines/live"
	"boxd/pipelines/live/scripts"
)

// TestRecorderKeepsCleanReplays: a replay is kept when it ends with done
// and sends no error event but the pass-2 notice; a lane failure, a
// budget end or a missing done keeps the previous recording.
func TestRecorderKeepsCleanReplays(t *testing.T) {
	sc, ok := scripts.Lookup("sales-discovery-logistics")
	if !ok {
		t.Fatal("no sales script")
	}
	ready := live.Event{Type: live.TypeReady, Body: live.ReadyBody{Vertical: "sales", Receipts: "signed"}}
	done := live.Event{Type: live.TypeDone, Body: live.DoneBody{Summary: map[string]any{}}}
	laneFailed := live.Event{Type: live.TypeError, Body: live.ErrorBody{Message: "the crm lane failed: model error"}}
	for _, c := range []struct {
		name   string
		events []live.Event
		kept   bool
	}{
		{"done", []live.Event{ready, done}, true},
		{"a lane failed", []live.Event{ready, laneFailed, done}, false},
		{"pass 2 failed", []live.Event{ready, live.Event{Type: live.TypeError, Body: live.ErrorBody{Message: "pass 2 failed: diarization failed: x"}}, done}, false},
		{"no done", []live.Event{ready}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r := NewRecorder(sc, 100, 1)
			for _, e := range c.events {
				r.Add(e)
			}
			err := r.Save(dir, time.Unix(1_790_000_000, 0))
			if c.kept != (err == nil) || (!c.kept && !errors.Is(err, ErrIncomplete)) {
				t.Fatalf("Save: %v, want kept %v", err, c.kept)
			}
			if rec, err := LoadRecording(dir, sc.ID); c.kept && (err != nil || len(rec.Events) != len(c.events)) {
				t.Errorf("kept recording: %v %v", rec, err)
			}
		})
	}
}
