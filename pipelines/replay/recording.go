package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"boxd/internal/atomicfile"
	"boxd/pipelines/live"
	"boxd/pipelines/live/scripts"
)

// A recording is the event stream of a replay that went through the real
// pipeline and ended with done and no error event but the pass-2 notice
// (GET /demo/recordings).
// The replay route keeps the latest such replay of each script in
// <state_dir>/recordings/<id>.json; nothing writes recordings by hand.

// RecordingsDir is where recordings live under a state directory.
func RecordingsDir(stateDir string) string { return filepath.Join(stateDir, "recordings") }

// Recording is one stored replay: the contract's recording fields (less
// events_url, which the route adds) plus how it was made.
type Recording struct {
	ID        string  `json:"id"`
	Vertical  string  `json:"vertical"`
	Title     string  `json:"title"`
	DurationS float64 `json:"duration_s"`
	// Speed is the replay speed the events were paced at; at_ms values are
	// wall-clock milliseconds of that replay.
	Speed      float64           `json:"speed"`
	RecordedAt int64             `json:"recorded_at"` // Unix seconds
	Events     []json.RawMessage `json:"events"`
}

// Recorder collects a replay's events for a recording. Key ids are left
// out: a recording is public.
type Recorder struct {
	mu     sync.Mutex
	rec    Recording
	errors int
	done   bool
	err    error
}

// NewRecorder starts a recording of a replay of sc with audioS seconds of
// audio at speed.
func NewRecorder(sc scripts.Script, audioS, speed float64) *Recorder {
	return &Recorder{rec: Recording{ID: sc.ID, Vertical: sc.Vertical, Title: sc.Title,
		DurationS: float64(int64(audioS*10+0.5)) / 10, Speed: speed}}
}

// Add records one event (call it from the session's Send, in order).
func (r *Recorder) Add(e live.Event) {
	switch b := e.Body.(type) {
	case live.ReceiptBody:
		b.KeyID = nil
		e.Body = b
	case live.BudgetBody:
		b.KeyID, b.Period = nil, ""
		e.Body = b
	}
	raw, err := json.Marshal(e)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.err = err
		return
	}
	r.rec.Events = append(r.rec.Events, raw)
	switch e.Type {
	case live.TypeError:
		// An error means the replay did not go as a live session should.
		r.errors++
	case live.TypeDone:
		r.done = true
	}
}

// ErrIncomplete: the replay did not end with done or had error events, so
// it is not kept.
var ErrIncomplete = errors.New("replay: the replay did not finish cleanly; the previous recording is kept")

// Save writes the recording to dir/<id>.json (atomically) when the replay
// ended with done and sent no error event.
func (r *Recorder) Save(dir string, now time.Time) error {
	r.mu.Lock()
	rec := r.rec
	rec.Events = append([]json.RawMessage(nil), r.rec.Events...)
	ok, err := r.done && r.errors == 0, r.err
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if !ok {
		return ErrIncomplete
	}
	rec.RecordedAt = now.Unix()
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("replay: recordings directory: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, rec.ID+".json"), b, 0o600); err != nil {
		return fmt.Errorf("replay: saving the recording of %s: %w", rec.ID, err)
	}
	return nil
}

// LoadRecording reads the recording of script id from dir; os.ErrNotExist
// when there is none.
func LoadRecording(dir, id string) (*Recording, error) {
	if _, ok := scripts.Lookup(id); !ok {
		return nil, os.ErrNotExist
	}
	b, err := os.ReadFile(filepath.Join(dir, id+".json"))
	if err != nil {
		return nil, err
	}
	var rec Recording
	if err := json.Unmarshal(b, &rec); err != nil || rec.ID != id {
		return nil, fmt.Errorf("replay: recording %s is damaged: %v", id, err)
	}
	if rec.Events == nil {
		rec.Events = []json.RawMessage{}
	}
	return &rec, nil
}

// Recordings lists the recordings in dir in the scripts' order; damaged
// files are skipped.
func Recordings(dir string) []*Recording {
	var out []*Recording
	for _, id := range scripts.IDs() {
		if rec, err := LoadRecording(dir, id); err == nil {
			out = append(out, rec)
		}
	}
	return out
}
