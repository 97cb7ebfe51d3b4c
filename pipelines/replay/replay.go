// Package replay plays a demo script's audio through a live session as if
// someone were speaking it: 100 ms frames of 16 kHz mono PCM16, paced in
// real time divided by the replay speed (contract document 1, sections 4
// and 8: speed 1.0 to 2.0), then a stop. The session runs the real
// pipeline (speech recognition, lanes, the after-stop lanes), so replay
// events are the same as live ones.
package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"boxd/pipelines/live"
)

// Replay speeds (contract section 8).
const (
	MinSpeed     = 1.0
	MaxSpeed     = 2.0
	DefaultSpeed = 1.0
)

// FrameBytes is one 100 ms frame of 16 kHz mono PCM16, what a live client
// sends.
const FrameBytes = 3200

// FrameDuration is the audio time of one full frame.
const FrameDuration = 100 * time.Millisecond

// ErrSpeed is returned for a speed outside MinSpeed..MaxSpeed.
var ErrSpeed = errors.New("replay: speed must be between 1.0 and 2.0")

// ValidSpeed reports whether speed is an allowed replay speed.
func ValidSpeed(speed float64) bool { return speed >= MinSpeed && speed <= MaxSpeed }

// Run sends pcm to s in 100 ms frames, one every 100 ms / speed, and then
// stops the session, which writes the final lanes and sends done. Each
// frame is sent once its audio would have been spoken, so a sentence's
// final transcript arrives about when it ends (divided by speed). sleep
// waits before each frame for its duration over speed; nil paces by the
// wall clock (frame k is due (k+1) × 100 ms / speed after Run began, so
// slow frames do not make the replay drift). Run returns early with ctx's
// error when ctx ends, and with the session's ending when the session ends
// on its own (a budget used up, speech recognition failed); the caller
// then closes the session. A nil error means done was sent.
func Run(ctx context.Context, s *live.Session, pcm []byte, speed float64, sleep func(time.Duration)) error {
	return RunUntil(ctx, s, pcm, speed, sleep, nil)
}

// RunUntil is Run, except that once early is closed no more audio is sent
// and the session stops at once, as a speaker who stops mid-sentence:
// what was heard is finished and done follows (the server drains this
// way). A nil early never closes.
func RunUntil(ctx context.Context, s *live.Session, pcm []byte, speed float64, sleep func(time.Duration), early <-chan struct{}) error {
	if !ValidSpeed(speed) {
		return fmt.Errorf("%w, not %g", ErrSpeed, speed)
	}
	if len(pcm)%2 != 0 {
		return fmt.Errorf("replay: PCM16 audio has an odd length (%d bytes)", len(pcm))
	}
	// Like a microphone, a frame goes out once its audio has been spoken:
	// frame k after (k+1) × 100 ms / speed.
	wait := sleep
	if wait == nil {
		start := time.Now()
		var due time.Duration
		wait = func(d time.Duration) {
			due += d
			left := time.Until(start.Add(due))
			if left <= 0 {
				return
			}
			t := time.NewTimer(left)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			case <-s.Ended():
			case <-early:
			}
		}
	}
	for off := 0; off < len(pcm); off += FrameBytes {
		frame := pcm[off:min(off+FrameBytes, len(pcm))]
		wait(time.Duration(float64(len(frame)/2) * float64(time.Second) / (16000 * speed)))
		if err := ctx.Err(); err != nil {
			return err
		}
		if closed(early) {
			break
		}
		if err := s.Audio(ctx, frame); err != nil {
			if errors.Is(err, live.ErrEnded) {
				return ended(s)
			}
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.Stop(ctx)
}

// closed reports whether ch is closed (false for nil).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// ended is the session's own ending as an error.
func ended(s *live.Session) error {
	if e := s.Ending(); e != nil {
		return &Ended{Ending: *e}
	}
	return live.ErrEnded
}

// Ended is the error Run returns when the session ended on its own before
// the audio was through: the problem kind and the message of the error event
// the session already sent.
type Ended struct{ live.Ending }

func (e *Ended) Error() string {
	return fmt.Sprintf("replay: session ended (%s): %s", e.Kind, e.Message)
}

// Is makes errors.Is(err, live.ErrEnded) true.
func (e *Ended) Is(target error) bool { return target == live.ErrEnded }
