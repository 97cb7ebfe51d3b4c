// Package diarize says who spoke when in 16 kHz mono audio: the types a
// diarizer returns and the interface pass 2 calls. Its implementations are
// sub-packages: classical (boxd-classical-1, model-free: spectral features,
// speaker-change detection and clustering, used when no diarizer model is
// configured) and neural (pyannote segmentation-3.0's architecture plus
// WeSpeaker ResNet34 embeddings on ggml: segnet, embnet); cluster is the
// clustering both use and score computes DER and JER as dscore does.
package diarize

import (
	"context"
	"fmt"
)

// SampleRate is the rate of the audio a Diarizer takes.
const SampleRate = 16000

// Turn is one speaker's stretch of speech, in seconds from the audio's
// start. Speaker counts from 0 in order of first appearance. Turns of
// different speakers may overlap (overlapped speech).
type Turn struct {
	Start, End float64
	Speaker    int
}

// Result is a diarization: turns sorted by start, and how many speakers.
type Result struct {
	Turns    []Turn
	Speakers int
}

// Options bound the number of speakers a diarizer may find.
type Options struct {
	MinSpeakers, MaxSpeakers int
}

// DefaultOptions: one to four speakers.
var DefaultOptions = Options{MinSpeakers: 1, MaxSpeakers: 4}

// Check says what is wrong with o, naming the settings.
func (o Options) Check() error {
	switch {
	case o.MinSpeakers < 1:
		return fmt.Errorf("diarize: min_speakers is %d; it must be at least 1", o.MinSpeakers)
	case o.MaxSpeakers < 1:
		return fmt.Errorf("diarize: max_speakers is %d; it must be at least 1", o.MaxSpeakers)
	case o.MaxSpeakers < o.MinSpeakers:
		return fmt.Errorf("diarize: max_speakers (%d) is below min_speakers (%d)", o.MaxSpeakers, o.MinSpeakers)
	case o.MaxSpeakers > 16:
		return fmt.Errorf("diarize: max_speakers is %d; at most 16", o.MaxSpeakers)
	}
	return nil
}

// Diarizer labels speakers in pcm (mono float samples in [-1, 1] at
// SampleRate). Diarize honours ctx (it returns ctx.Err() when cancelled)
// and never keeps pcm after it returns.
type Diarizer interface {
	Diarize(ctx context.Context, pcm []float32, o Options) (Result, error)
	// Name is the model name final_transcript.model reports, such as
	// boxd-classical-1.
	Name() string
}
