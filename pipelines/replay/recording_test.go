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
	notice := live.Event{Type: live.TypeError, Body: live.ErrorBody{Message: live.Pass2SkippedPrefix + "no diarization model"}}
	laneFailed := live.Event{Type: live.TypeError, Body: live.ErrorBody{Message: "the crm lane failed: model error"}}
	for _, c := range []struct {
		name   string
		events []live.Event
		kept   bool
	}{
		{"done", []live.Event{ready, done}, true},
		{"pass-2 notice before done", []live.Event{ready, notice, done}, true},
		{"a lane failed", []live.Event{ready, laneFailed, notice, done}, false},
		{"no done", []live.Event{ready, notice}, false},
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
