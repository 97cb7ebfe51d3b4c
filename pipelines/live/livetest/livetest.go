// Package livetest holds test doubles for live sessions. ScriptedTranscriber
// stands in for speech recognition in lane tests: random-weight Whisper
// models give meaningless text, so lane behaviour is tested with a
// transcriber that emits a script's known sentences at their real times.
// It also holds the helpers the tests of the core and of every vertical
// share (helpers.go). It is for tests only; nothing outside _test.go files
// may use it.
package livetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"boxd/engine/asr/stream"
	"boxd/engine/diarize"
	"boxd/internal/problem"
	"boxd/pipelines/live"
)

// Line is one known sentence of a script: its text and where it starts and
// ends in the audio, in seconds.
type Line struct {
	Text       string
	Start, End float64
	// Speaker is who says it (0, 1, …): ScriptedDiarizer's turns.
	Speaker int
}

// ScriptedDiarizer is a diarizer that knows the script: one turn per
// line, its speaker the line's. It checks that it was handed the
// session's audio (at least up to the last line's end).
type ScriptedDiarizer struct {
	Lines []Line
	// Err, when set, is what Diarize fails with.
	Err error
	// Samples is how many samples the last call was given.
	Samples int
}

// Name is the model name final_transcript reports.
func (d *ScriptedDiarizer) Name() string { return "scripted-diarizer" }

// Diarize returns the script's turns.
func (d *ScriptedDiarizer) Diarize(ctx context.Context, pcm []float32, o diarize.Options) (diarize.Result, error) {
	d.Samples = len(pcm)
	if d.Err != nil {
		return diarize.Result{}, d.Err
	}
	if err := o.Check(); err != nil {
		return diarize.Result{}, err
	}
	if n := len(d.Lines); n > 0 && float64(len(pcm))/diarize.SampleRate < d.Lines[n-1].End {
		return diarize.Result{}, fmt.Errorf("livetest: %d samples of audio, the script runs to %.1f s", len(pcm), d.Lines[n-1].End)
	}
	var r diarize.Result
	for _, l := range d.Lines {
		r.Turns = append(r.Turns, diarize.Turn{Start: l.Start, End: l.End, Speaker: l.Speaker})
		r.Speakers = max(r.Speakers, l.Speaker+1)
	}
	return r, nil
}

// ScriptedTranscriber returns a live.StartTranscriber that, as audio
// arrives, emits each line once the audio received has passed its end: a
// partial with the first half of its words halfway through, then the
// final. Close emits the lines not yet reached. Frames are checked like
// the real stream's (even length, at most stream.MaxFrameBytes).
func ScriptedTranscriber(lines []Line) live.StartTranscriber {
	return func(ctx context.Context, lang string, emit func(stream.Event)) (live.Transcriber, error) {
		return &scripted{lines: lines, emit: emit}, nil
	}
}

type scripted struct {
	mu      sync.Mutex
	lines   []Line
	emit    func(stream.Event)
	samples int
	next    int  // next line to finish
	partial bool // partial of line next sent
	closed  bool
}

func (s *scripted) Write(ctx context.Context, frame []byte) error {
	if len(frame) == 0 || len(frame)%2 != 0 || len(frame) > stream.MaxFrameBytes {
		return stream.ErrBadFrame
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return stream.ErrClosed
	}
	s.samples += len(frame) / 2
	now := float64(s.samples) / 16000
	for s.next < len(s.lines) {
		l := s.lines[s.next]
		if !s.partial && now >= (l.Start+l.End)/2 {
			words := strings.Fields(l.Text)
			s.emit(stream.Event{I: s.next, T: l.Start, Text: strings.Join(words[:(len(words)+1)/2], " "), Final: false})
			s.partial = true
		}
		if now < l.End {
			break
		}
		s.emit(stream.Event{I: s.next, T: l.Start, Text: l.Text, Final: true, End: l.End})
		s.next++
		s.partial = false
	}
	return nil
}

func (s *scripted) Close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("livetest: closed twice")
	}
	s.closed = true
	for ; s.next < len(s.lines); s.next++ {
		l := s.lines[s.next]
		s.emit(stream.Event{I: s.next, T: l.Start, Text: l.Text, Final: true, End: l.End})
	}
	return nil
}

// Budget is an in-memory live.Budget for tests.
type Budget struct {
	mu                sync.Mutex
	Tokens            int64
	AudioMS           int64
	StopReserveTokens int64
	Key               *string
	reserved          int64
	TokensCalled      int
}

// Reserve grants up to want tokens.
func (b *Budget) Reserve(ctx context.Context, want int64) (int64, func(int64), error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	left := b.Tokens - b.reserved
	if left <= 0 {
		return 0, nil, errBudget
	}
	g := min(want, left)
	b.reserved += g
	return g, func(used int64) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.reserved -= g
		b.Tokens -= min(used, g)
	}, nil
}

// errBudget is the refusal of a used-up budget, as internal/platform's.
var errBudget = problem.New(problem.Budget, "token budget used up")

// KeyID is the key paying, nil for a demo token.
func (b *Budget) KeyID() *string { return b.Key }

// TokensLeft is what is not yet spent (run.Budget).
func (b *Budget) TokensLeft(ctx context.Context) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(0, b.Tokens), nil
}

// AudioLeftMS is the audio left.
func (b *Budget) AudioLeftMS(ctx context.Context) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(0, b.AudioMS), nil
}

// ChargeAudio counts received audio.
func (b *Budget) ChargeAudio(ctx context.Context, ms int64) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.AudioMS = max(0, b.AudioMS-ms)
	return b.AudioMS, nil
}

// Spend takes n generated tokens as another caller of the same budget
// would (tests of a budget that runs out between a check and a call).
func (b *Budget) Spend(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Tokens = max(0, b.Tokens-n)
}

// StopReserve is the tokens kept for the stop artifact.
func (b *Budget) StopReserve() int64 { return b.StopReserveTokens }

// Daily is true with a key.
func (b *Budget) Daily() bool { return b.Key != nil }

// Recorder collects the events a session sends; Send is its live.Session
// send function.
type Recorder struct {
	mu  sync.Mutex
	evs []live.Event
}

// Send records e.
func (r *Recorder) Send(e live.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, e)
	return nil
}

// Events is a copy of the events so far.
func (r *Recorder) Events() []live.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]live.Event(nil), r.evs...)
}

// TopicLane is a model lane for session tests: it asks for the topic of
// the transcript as {"topic": ≤ 20 characters} and shows it as its body.
func TopicLane() *live.LaneSpec {
	schema := json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string","maxLength":20}},"required":["topic"]}`)
	return &live.LaneSpec{ID: "topic", Title: "Topic", Schema: schema, MaxTokens: 64,
		Prompt: func(st *live.State, _ int) (string, string) { return "Name the topic.", st.Lines() },
		Finish: func(st *live.State, _ int, a json.RawMessage) (string, any, error) {
			var v map[string]any
			if err := json.Unmarshal(a, &v); err != nil {
				return "", nil, err
			}
			return fmt.Sprint(v["topic"]), v, nil
		}}
}
