package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"boxd/internal/problem"
	"boxd/pipelines/live"
	"boxd/pipelines/live/livetest"
	"boxd/pipelines/live/scripts"
	"boxd/pipelines/replay"
)

// fakeClock is the session's clock; sleep moves it.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.sleeps = append(c.sleeps, d)
}

// countVertical has one local live lane (the sentences so far) and a local
// after-stop lane; no model is needed.
func countVertical() *live.Vertical {
	count := &live.LaneSpec{ID: "count", Title: "Sentences", Local: true,
		Finish: func(st *live.State, _ int, _ json.RawMessage) (string, any, error) {
			return fmt.Sprintf("%d sentences", len(st.Sentences)), map[string]any{"n": len(st.Sentences)}, nil
		}}
	final := &live.LaneSpec{ID: "wrapup", Title: "Wrap-up", Local: true,
		Finish: func(st *live.State, _ int, _ json.RawMessage) (string, any, error) { return "ok", nil, nil }}
	return &live.Vertical{ID: "sales", Live: []*live.LaneSpec{count}, Final: []*live.LaneSpec{final},
		Summary: func(st *live.State) map[string]any {
			return map[string]any{"sentences": len(st.Sentences), "audio_s": st.AudioS}
		}}
}

// fromTimings is the scripted transcriber's view of a script's lines.
func fromTimings(lines []scripts.LineTiming) []livetest.Line {
	out := make([]livetest.Line, len(lines))
	for i, l := range lines {
		out[i] = livetest.Line{Text: l.Text, Start: l.Start, End: l.End}
	}
	return out
}

func start(t *testing.T, clk *fakeClock, lines []livetest.Line, audioMS int64) (*live.Session, *livetest.Recorder) {
	t.Helper()
	rec := &livetest.Recorder{}
	s, err := live.Start(context.Background(), live.Config{
		Vertical: countVertical(), Transcribe: livetest.ScriptedTranscriber(lines),
		Budget: &livetest.Budget{Tokens: 1000, AudioMS: audioMS}, Send: rec.Send, Now: clk.Now, Debounce: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, rec
}

var shortScript = []scripts.LineTiming{
	{N: 1, Text: "Thanks for taking the call today.", Start: 0.4, End: 1.9},
	{N: 2, Text: "We ship about forty pallets a week.", Start: 2.6, End: 4.05},
	{N: 3, Text: "Late deliveries are the main problem.", Start: 4.75, End: 6.2},
}

func TestRunPacesFramesAndStops(t *testing.T) {
	pcm := make([]byte, 74*3200+1600) // 7.45 s: 75 frames, the last half full
	for _, speed := range []float64{1.0, 1.5, 2.0} {
		t.Run(fmt.Sprint(speed), func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
			s, rec := start(t, clk, fromTimings(shortScript), 60_000)
			if err := replay.Run(context.Background(), s, pcm, speed, clk.Sleep); err != nil {
				t.Fatal(err)
			}
			step := time.Duration(float64(100*time.Millisecond) / speed)
			if len(clk.sleeps) != 75 {
				t.Errorf("%d sleeps for 75 frames", len(clk.sleeps))
			}
			for i, d := range clk.sleeps {
				want := step
				if i == 74 {
					want = step / 2
				}
				if d < want-1 || d > want+1 {
					t.Fatalf("sleep %d: %s, want %s", i, d, want)
				}
			}
			evs := rec.Events()
			if evs[0].Type != live.TypeReady || evs[len(evs)-1].Type != live.TypeDone {
				t.Fatalf("first %s, last %s", evs[0].Type, evs[len(evs)-1].Type)
			}
			var finals []live.TranscriptBody
			var finalAt []int64
			for _, e := range evs {
				if b, ok := e.Body.(live.TranscriptBody); ok && b.Final {
					finals = append(finals, b)
					finalAt = append(finalAt, e.AtMS)
				}
				if e.Type == live.TypeError {
					t.Errorf("error event %+v", e.Body)
				}
			}
			if len(finals) != len(shortScript) {
				t.Fatalf("%d finals", len(finals))
			}
			for i, f := range finals {
				l := shortScript[i]
				if f.Text != l.Text || f.T != l.Start || f.I != i {
					t.Errorf("final %d: %+v", i, f)
				}
				// Wall time is audio time over speed: the frame holding
				// the line's end goes out within one frame of l.End/speed.
				want := l.End * 1000 / speed
				if got := float64(finalAt[i]); got < want-1 || got > want+float64(step.Milliseconds())+1 {
					t.Errorf("final %d at %d ms, want about %.0f", i, finalAt[i], want)
				}
			}
			done := evs[len(evs)-1].Body.(live.DoneBody)
			if done.Summary["sentences"] != 3 || math.Abs(done.Summary["audio_s"].(float64)-7.45) > 0.001 {
				t.Errorf("summary %v", done.Summary)
			}
		})
	}
}

// TestRunScriptAudio replays a real script's espeak-ng audio with the
// transcriber scripted from its timings: every line arrives, in order, at
// its time.
func TestRunScriptAudio(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("espeak-ng is missing")
		}
		t.Skip("espeak-ng is missing")
	}
	pcm, lines, err := scripts.Audio(context.Background(), t.TempDir(), "sales-discovery-logistics")
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	s, rec := start(t, clk, fromTimings(lines), 300_000)
	if err := replay.Run(context.Background(), s, pcm, 2.0, clk.Sleep); err != nil {
		t.Fatal(err)
	}
	audioS := float64(len(pcm)) / 32000
	if elapsed := clk.Now().Sub(time.Unix(1_800_000_000, 0)).Seconds(); math.Abs(elapsed-audioS/2) > 0.1 {
		t.Errorf("replay took %.2f s of clock for %.2f s of audio at 2.0", elapsed, audioS)
	}
	evs := rec.Events()
	n := 0
	for _, e := range evs {
		if b, ok := e.Body.(live.TranscriptBody); ok && b.Final {
			if b.Text != lines[n].Text || b.T != lines[n].Start {
				t.Errorf("final %d: %+v", n, b)
			}
			n++
		}
	}
	if n != len(lines) || evs[len(evs)-1].Type != live.TypeDone {
		t.Errorf("%d finals of %d, last %s", n, len(lines), evs[len(evs)-1].Type)
	}
}

func TestRunRejectsBadSpeed(t *testing.T) {
	clk := &fakeClock{}
	s, _ := start(t, clk, nil, 1000)
	for _, sp := range []float64{0, 0.99, 2.01, math.NaN(), math.Inf(1)} {
		if err := replay.Run(context.Background(), s, make([]byte, 3200), sp, clk.Sleep); !errors.Is(err, replay.ErrSpeed) {
			t.Errorf("speed %v: %v", sp, err)
		}
	}
	if err := replay.Run(context.Background(), s, make([]byte, 3), 1, clk.Sleep); err == nil {
		t.Error("odd PCM accepted")
	}
	if len(clk.sleeps) != 0 {
		t.Error("slept before refusing")
	}
}

func TestRunStopsWhenTheSessionEnds(t *testing.T) {
	clk := &fakeClock{}
	s, rec := start(t, clk, fromTimings(shortScript), 1000) // 1 s of audio budget
	err := replay.Run(context.Background(), s, make([]byte, 50*3200), 2, clk.Sleep)
	var end *replay.Ended
	if !errors.As(err, &end) || end.Kind != problem.Budget || !errors.Is(err, live.ErrEnded) {
		t.Fatalf("err %v", err)
	}
	if len(clk.sleeps) != 10 {
		t.Errorf("%d sleeps, want 10 (10 frames of budget)", len(clk.sleeps))
	}
	s.Close()
	evs := rec.Events()
	if last := evs[len(evs)-1]; last.Type != live.TypeError {
		t.Errorf("last event %s", last.Type)
	}
}

func TestRunEndsWithTheContext(t *testing.T) {
	clk := &fakeClock{}
	s, rec := start(t, clk, fromTimings(shortScript), 60_000)
	ctx, cancel := context.WithCancel(context.Background())
	sleep := func(d time.Duration) {
		clk.Sleep(d)
		if len(clk.sleeps) == 5 {
			cancel()
		}
	}
	if err := replay.Run(ctx, s, make([]byte, 50*3200), 1, sleep); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	s.Close()
	for _, e := range rec.Events() {
		if e.Type == live.TypeDone {
			t.Error("done after the context ended")
		}
	}
}

func TestRunPacesByTheWallClock(t *testing.T) {
	clk := &fakeClock{t: time.Now()}
	s, rec := start(t, clk, fromTimings(shortScript[:1]), 60_000)
	began := time.Now()
	if err := replay.Run(context.Background(), s, make([]byte, 6*3200), 2, nil); err != nil {
		t.Fatal(err)
	}
	// 6 frames at 2.0: the last is due 6 × 50 ms after the start.
	if el := time.Since(began); el < 300*time.Millisecond || el > 2*time.Second {
		t.Errorf("took %s", el)
	}
	if evs := rec.Events(); evs[len(evs)-1].Type != live.TypeDone {
		t.Error("no done")
	}
}
