package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"boxd/engine/asr/frontend"
	"boxd/engine/asr/vad"
)

// Sentence is one finished sentence of a batch transcript, in seconds
// from the start of the audio.
type Sentence struct {
	I     int     `json:"i"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Text  string  `json:"text"`
}

// Result is a batch transcript.
type Result struct {
	Language  string     `json:"language"`
	Duration  float64    `json:"duration_s"`
	Sentences []Sentence `json:"sentences"`
}

// Events are the final transcript events a stream of the same audio ends
// with.
func (r *Result) Events() []Event {
	out := make([]Event, len(r.Sentences))
	for i, s := range r.Sentences {
		out[i] = Event{I: s.I, T: s.Start, Text: s.Text, Final: true, End: s.End}
	}
	return out
}

// Transcribe is the batch path: the VAD over the whole audio, the same
// cuts (vad.Spans) and the same final decode of each sentence as a
// Session, with the language fixed by the first sentence.
func Transcribe(ctx context.Context, rec Recognizer, det Detector, pcm []float32, o Options) (*Result, error) {
	o = o.withDefaults()
	var st vad.State
	probs := make([]float32, 0, (len(pcm)+vad.Window-1)/vad.Window)
	w := make([]float32, vad.Window)
	for off := 0; off < len(pcm); off += vad.Window {
		clear(w)
		copy(w, pcm[off:min(len(pcm), off+vad.Window)])
		p, err := det.Prob(&st, w)
		if err != nil {
			return nil, fmt.Errorf("stream: vad: %w", err)
		}
		probs = append(probs, p)
	}
	res := &Result{Language: o.Language, Duration: float64(len(pcm)) / frontend.SampleRate}
	for _, sp := range vad.SpansAudio(probs, pcm, o.VAD) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tr, err := transcribe(ctx, rec, pcm[sp.Start:sp.End], o, o.Final, res.Language)
		if err != nil {
			return nil, err
		}
		if res.Language == "" {
			res.Language = tr.Language
		}
		if text := tr.Text(); text != "" {
			res.Sentences = append(res.Sentences, Sentence{I: len(res.Sentences), Start: seconds(sp.Start), End: seconds(sp.End), Text: text})
		}
	}
	return res, nil
}

// Frame limits: the contract's frames are about 100 ms (3200 bytes); up to
// two seconds is accepted.
const MaxFrameBytes = 2 * frontend.SampleRate * 2

// Errors a Stream returns.
var (
	ErrClosed   = errors.New("stream: closed")
	ErrBadFrame = errors.New("stream: bad audio frame")
)

// Stream runs a Session on its own goroutine so the caller's reader never
// waits for a decode: Write queues audio (blocking only when MaxBacklog is
// queued), the worker feeds everything queued at once and re-decodes the
// partial only when it has caught up, and Close flushes.
type Stream struct {
	s    *Session
	emit func(Event)
	ch   chan []float32

	mu     sync.Mutex
	closed bool
	err    error
	done   chan struct{}
}

// MaxBacklog is the audio a Stream queues before Write blocks (frames of
// about 100 ms: 60 s).
const MaxBacklog = 600

// Start runs s until ctx ends or Close; emit is called from the worker
// goroutine, in order.
func Start(ctx context.Context, s *Session, emit func(Event)) *Stream {
	st := &Stream{s: s, emit: emit, ch: make(chan []float32, MaxBacklog), done: make(chan struct{})}
	go st.run(ctx)
	return st
}

// Write queues one PCM16 little-endian frame of 16 kHz mono audio.
func (st *Stream) Write(ctx context.Context, frame []byte) error {
	switch {
	case len(frame) == 0:
		return fmt.Errorf("%w: empty; send 16 kHz mono PCM16 little-endian, about 3200 bytes per 100 ms", ErrBadFrame)
	case len(frame)%2 != 0:
		return fmt.Errorf("%w: %d bytes is not a whole number of 16-bit samples", ErrBadFrame, len(frame))
	case len(frame) > MaxFrameBytes:
		return fmt.Errorf("%w: %d bytes; send at most %d (2 s) per frame, about 3200 (100 ms) is expected", ErrBadFrame, len(frame), MaxFrameBytes)
	}
	pcm, err := frontend.PCM16(frame)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadFrame, err)
	}
	st.mu.Lock()
	closed, failed := st.closed, st.err
	st.mu.Unlock()
	if failed != nil {
		return failed
	}
	if closed {
		return ErrClosed
	}
	select {
	case st.ch <- pcm:
		return nil
	case <-st.done:
		return st.failure()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops taking audio, waits for what is queued to be decoded and the
// last sentence flushed, and returns the first error the worker met.
func (st *Stream) Close(ctx context.Context) error {
	st.mu.Lock()
	if !st.closed {
		st.closed = true
		close(st.ch)
	}
	st.mu.Unlock()
	select {
	case <-st.done:
		return st.failure()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (st *Stream) failure() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.err
}

func (st *Stream) fail(err error) {
	st.mu.Lock()
	if st.err == nil {
		st.err = err
	}
	st.mu.Unlock()
}

// maxBatch bounds the audio one Feed takes (10 s), so a backlog is worked
// off in steps and finals keep coming.
const maxBatch = 10 * frontend.SampleRate

func (st *Stream) run(ctx context.Context) {
	defer close(st.done)
	for {
		var pcm []float32
		select {
		case first, ok := <-st.ch:
			if !ok {
				evs, err := st.s.Flush(ctx)
				st.send(evs)
				if err != nil {
					st.fail(err)
				}
				return
			}
			pcm = first
		case <-ctx.Done():
			st.fail(ctx.Err())
			return
		}
	more:
		for len(pcm) < maxBatch {
			select {
			case p, ok := <-st.ch:
				if !ok {
					break more // closed: the next receive flushes
				}
				pcm = append(pcm, p...)
			default:
				break more
			}
		}
		evs, err := st.s.Feed(ctx, pcm, len(st.ch) == 0)
		st.send(evs)
		if err != nil {
			st.fail(err) // writers see done and the error
			return
		}
	}
}

func (st *Stream) send(evs []Event) {
	for _, e := range evs {
		st.emit(e)
	}
}
