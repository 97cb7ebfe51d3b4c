package live

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"boxd/engine/asr/stream"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/llmcall"
)

// Budget is the caller's token and audio budgets (a internal/platform
// Principal adapted).
type Budget interface {
	run.Budget
	AudioLeftMS(ctx context.Context) (int64, error)
	// ChargeAudio counts ms of received audio and returns the audio left.
	ChargeAudio(ctx context.Context, ms int64) (int64, error)
	// StopReserve is the token budget live lanes leave for the stop
	// artifact.
	StopReserve() int64
}

// Transcriber turns audio frames into transcript events; *stream.Stream is
// one. Close flushes the last sentence and returns when every event has
// been emitted.
type Transcriber interface {
	Write(ctx context.Context, frame []byte) error
	Close(ctx context.Context) error
}

// StartTranscriber starts a transcriber for a session; emit is called in
// order from the transcriber's goroutine.
type StartTranscriber func(ctx context.Context, lang string, emit func(stream.Event)) (Transcriber, error)

// Config is what a session runs with.
type Config struct {
	Vertical *Vertical
	// Lang and Target apply to translate ("auto" and "en" by default).
	Lang, Target string
	Models       Models
	Transcribe   StartTranscriber
	Chat         *llmcall.Model
	Budget       Budget
	// Send delivers events in order; an error ends the session (the peer
	// went away).
	Send func(Event) error
	Now  func() time.Time
	// Debounce is how long a live lane waits after new final sentences
	// before it runs (default 1 s), so a burst of sentences is one run.
	Debounce time.Duration
	// Demo is set for a demo session token (a developer key is an app in
	// real use): the clinical banner then asks for synthetic data only.
	Demo bool
	// Diarize is pass 2's diarizer, for verticals with Roles (nil: their
	// pass 2 fails, saying no diarizer is configured).
	Diarize *Diarization
}

// The clinical banners (ready.banner). The contract's demo banner says that
// real patient information must not be entered; an app using a developer
// key on the clinic's own box is told where the data stays instead.
const (
	clinicalDemoBanner = "Demo session: use synthetic or public data only; do not enter real patient information. Audio is never stored, and the transcript stays on this machine and is deleted when the session ends."
	clinicalBanner     = "This box runs on your own hardware: audio is never stored and the transcript stays on this machine and is deleted when the session ends."
)

// Ending is why a session ended on its own: the close code and the message
// of the error event sent before it. Kind is what the transport tells the
// peer (web maps it to the socket's close code).
type Ending struct {
	Kind    problem.Kind
	Message string
}

// ErrEnded is returned by Audio after the session has ended (see Ended).
var ErrEnded = errors.New("live: the session has ended")

// Session is one live session.
type Session struct {
	cfg   Config
	start time.Time
	ctx   context.Context
	stop  context.CancelFunc

	// em delivers the events in order; the ending error event is its
	// last (lanes still finishing send nothing after it).
	em *run.Emitter

	tr Transcriber

	mu        sync.Mutex
	state     State
	ended     *Ending
	endedCh   chan struct{}
	stopped   bool
	audioMS   int64 // whole milliseconds of audio received (and charged)
	samples   int64 // samples received: the charge carries their fraction of a millisecond
	lastAudio int64 // audio left (ms) at the last charge
	paused    bool  // live lanes paused at the stop reserve
	// audio is the session's audio for pass 2's diarization (vertical
	// with Roles), in memory only; dropped when pass 2 has read it or the
	// session closes.
	audio *audioBuffer

	// heard is when speech was last recognised (unix nanoseconds, the
	// wall clock, not cfg.Now): SinceSpeech.
	heard atomic.Int64

	callMu sync.Mutex // one model call at a time (see call)
	lanes  []*laneRunner
	laneWG sync.WaitGroup
}

// Start begins a session: it sends ready and starts the transcriber and the
// live lanes. ctx bounds the whole session.
func Start(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Debounce <= 0 {
		cfg.Debounce = time.Second
	}
	v := cfg.Vertical
	if v == nil {
		return nil, errors.New("live: no vertical")
	}
	if v.ID == "translate" {
		if cfg.Lang == "" {
			cfg.Lang = "auto"
		}
		if cfg.Target == "" {
			cfg.Target = "en"
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Session{cfg: cfg, start: cfg.Now(), ctx: ctx, stop: cancel,
		endedCh: make(chan struct{})}
	s.heard.Store(time.Now().UnixNano())
	if v.Roles != nil && cfg.Diarize != nil {
		s.audio = &audioBuffer{max: cfg.Diarize.maxSamples()}
	}
	s.state = State{Vertical: v.ID, Lang: cfg.Lang, Target: cfg.Target, Lanes: map[string]LaneBody{}}
	s.em = run.NewEmitter(cfg.Send, cfg.Now, run.DefaultQueue)
	s.start = s.em.Start()
	go func() {
		// A failed send ends the session: the peer went away.
		select {
		case <-s.em.Failed():
			s.stop()
		case <-ctx.Done():
		}
	}()

	// The transcriber starts before ready: a language the speech model
	// cannot transcribe is the caller's to fix (problem.Invalid, 4400), and
	// must not be announced as a session that then fails (1011, "retry").
	// It emits nothing until audio arrives, after Start returns.
	lang := cfg.Lang
	if v.ID != "translate" {
		lang = "en"
	}
	tr, err := cfg.Transcribe(ctx, lang, s.onTranscript)
	if err != nil {
		s.em.Close()
		cancel()
		if _, ok := problem.As(err); ok {
			return nil, err
		}
		return nil, problem.Wrap(problem.Unavailable, err, "speech recognition is unavailable: %v", err)
	}
	s.tr = tr

	ready := ReadyBody{Vertical: v.ID, Models: cfg.Models, Receipts: "signed"}
	switch v.ID {
	case "clinical":
		ready.Banner = clinicalBanner
		if cfg.Demo {
			ready.Banner = clinicalDemoBanner
		}
		ready.Locale = "us"
	case "translate":
		ready.Lang, ready.Target = cfg.Lang, cfg.Target
	}
	s.emit(TypeReady, ready)
	s.lastAudio, _ = cfg.Budget.AudioLeftMS(ctx)
	s.budgetEvent(ctx)

	for _, spec := range v.Live {
		r := newLaneRunner(s, spec)
		s.lanes = append(s.lanes, r)
		s.laneWG.Add(1)
		go func() { defer s.laneWG.Done(); r.loop() }()
	}
	return s, nil
}

// emit queues an event; events keep their order. After the ending or
// Close it drops them.
func (s *Session) emit(typ string, body any) { s.em.Emit(typ, body) }

// Ended is closed when the session ended on its own (budget used up, speech
// recognition failed); Ending says how.
func (s *Session) Ended() <-chan struct{} { return s.endedCh }

// Ending is why the session ended, nil while it runs.
func (s *Session) Ending() *Ending {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// end records the ending once and sends its error event.
func (s *Session) end(k problem.Kind, msg string) {
	s.mu.Lock()
	if s.ended != nil {
		s.mu.Unlock()
		return
	}
	s.ended = &Ending{Kind: k, Message: msg}
	s.mu.Unlock()
	// The error is the last event before the close: lanes still finishing
	// send nothing more.
	s.em.End(TypeError, ErrorBody{Message: msg})
	close(s.endedCh)
}

// End ends the session from outside (the box is shutting down): like a
// budget used up, the error event with msg is its last event, Ended
// closes and Ending reports k and msg. A session that already ended keeps
// its ending.
func (s *Session) End(k problem.Kind, msg string) { s.end(k, msg) }

// Error sends an error event through the session's queue (so at_ms stays
// in order with the session's own events); the session goes on.
func (s *Session) Error(msg string) { s.emit(TypeError, ErrorBody{Message: msg}) }

func (s *Session) suffix() string { return run.UsedUpSuffix(s.cfg.Budget) }

// Audio takes one binary frame of 16 kHz mono PCM16: it is charged to the
// audio budget and transcribed. A bad frame is an error the caller reports
// with an error event (the session goes on); ErrEnded means the session is
// over.
func (s *Session) Audio(ctx context.Context, frame []byte) error {
	if s.Ending() != nil || s.tr == nil {
		return ErrEnded
	}
	if len(frame) == 0 || len(frame)%2 != 0 || len(frame) > stream.MaxFrameBytes {
		return fmt.Errorf("%w: %d bytes; send 16 kHz mono PCM16 little-endian frames of an even number of bytes, at most %d (about 3200 per 100 ms)", stream.ErrBadFrame, len(frame), stream.MaxFrameBytes)
	}
	// Charge whole milliseconds of all the samples so far, so that frames
	// shorter than a millisecond are not free; a frame that completes no
	// millisecond makes no charge (and no store write).
	s.mu.Lock()
	s.samples += int64(len(frame) / 2)
	if s.audio != nil {
		s.audio.add(frame)
	}
	total := s.samples * 1000 / 16000
	ms := total - s.audioMS
	s.audioMS = total
	left := s.lastAudio
	s.mu.Unlock()
	if ms > 0 {
		var err error
		if left, err = s.cfg.Budget.ChargeAudio(ctx, ms); err != nil {
			if p, ok := problem.As(err); ok {
				// The caller may not go on (its token expired or was
				// revoked): the session ends with that.
				s.end(p.Kind, p.Message)
				return ErrEnded
			}
			return fmt.Errorf("live: charging audio: %w", err)
		}
	}
	s.mu.Lock()
	// A budget event every 5 s of audio, and when none is left (the
	// client's signal to stop sending).
	report := ms > 0 && (left == 0 || left/5000 != s.lastAudio/5000)
	s.lastAudio = left
	s.mu.Unlock()
	if err := s.tr.Write(ctx, frame); err != nil {
		if errors.Is(err, stream.ErrBadFrame) {
			return err
		}
		s.end(problem.Unavailable, "speech recognition failed: "+err.Error())
		return ErrEnded
	}
	if report {
		s.budgetEvent(ctx)
	}
	if left == 0 {
		s.end(problem.Budget, "audio budget used up"+s.suffix())
		return ErrEnded
	}
	return nil
}

// budgetEvent sends what is left.
func (s *Session) budgetEvent(ctx context.Context) {
	audio, _ := s.cfg.Budget.AudioLeftMS(ctx)
	tokens, _ := s.cfg.Budget.TokensLeft(ctx)
	b := BudgetBody{SecondsAudioLeft: audio / 1000, LLMTokensLeft: tokens}
	if s.cfg.Budget.Daily() {
		b.KeyID, b.Period = s.cfg.Budget.KeyID(), "day"
	}
	s.emit(TypeBudget, b)
}

// SinceSpeech is how long ago speech was last recognised (the session's
// start until then): the time since the last transcript event with text,
// partial or final. The transcriber only decodes what its voice activity
// detector (Silero VAD) marks as speech, and a partial comes about every
// second of open speech, so silence, noise and short clicks, however many
// bytes they take, never count, while someone talking does within a
// second or two. The live socket closes a session silent too long
// (limits.live_speech_idle_s) to free its live slot.
func (s *Session) SinceSpeech() time.Duration {
	return time.Since(time.Unix(0, s.heard.Load()))
}

// onTranscript receives the transcriber's events.
func (s *Session) onTranscript(e stream.Event) {
	if strings.TrimSpace(e.Text) != "" {
		s.heard.Store(time.Now().UnixNano())
	}
	s.emit(TypeTranscript, TranscriptBody{I: e.I, T: e.T, Text: e.Text, Final: e.Final})
	if !e.Final {
		return
	}
	s.mu.Lock()
	s.state.Sentences = append(s.state.Sentences, Sentence{I: e.I, T: e.T, End: e.End, Text: e.Text})
	s.mu.Unlock()
	for _, r := range s.lanes {
		r.trigger(e.I)
	}
}

// Snapshot is a copy of the session's state for a lane.
func (s *Session) Snapshot() *State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state
	st.Sentences = append([]Sentence(nil), s.state.Sentences...)
	st.Lanes = make(map[string]LaneBody, len(s.state.Lanes))
	for k, v := range s.state.Lanes {
		st.Lanes[k] = v
	}
	st.AudioS = float64(s.audioMS) / 1000
	return &st
}

// Stop ends the session as the speaker asked: the last sentence is
// transcribed, every live lane catches up with the whole transcript, the
// after-stop lanes run in order, and done carries the summary. The caller
// closes with 1000 after Stop returns without error.
func (s *Session) Stop(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return errors.New("live: already stopped")
	}
	s.stopped = true
	s.mu.Unlock()
	if s.tr != nil {
		if err := s.tr.Close(ctx); err != nil && s.Ending() == nil {
			s.end(problem.Unavailable, "speech recognition failed: "+err.Error())
		}
	}
	for _, r := range s.lanes {
		r.finish()
	}
	s.laneWG.Wait()
	if e := s.Ending(); e != nil {
		return fmt.Errorf("live: %s", e.Message)
	}
	v := s.cfg.Vertical
	if v.Roles != nil {
		s.diarizePass2(ctx)
	}
	for _, spec := range v.Final {
		st := s.Snapshot()
		if spec.Pass2 && st.Pass2Failed != "" {
			continue // pass 2 failed at an earlier step
		}
		lb, err := s.runLane(ctx, spec, st, -1, true)
		if err != nil {
			if e := s.Ending(); e != nil {
				return fmt.Errorf("live: %s", e.Message)
			}
			if spec.Pass2 {
				s.failPass2(spec, err)
				continue
			}
			s.emit(TypeError, ErrorBody{Message: fmt.Sprintf("the %s lane failed: %v", spec.ID, err)})
			continue
		}
		if lb != nil {
			s.setLane(*lb)
		}
	}
	st := s.Snapshot()
	summary := map[string]any{}
	if v.Summary != nil {
		summary = v.Summary(st)
	}
	s.emit(TypeDone, DoneBody{Summary: summary})
	s.Close()
	return nil
}

// failPass2 records that pass 2 failed at lane spec and sends the error
// event that says so (the contract's signal), with what stands in for
// pass 2's output.
func (s *Session) failPass2(spec *LaneSpec, err error) {
	s.failPass2Why(fmt.Sprintf("the %s lane failed: %v", spec.ID, err))
}

// failPass2Why records that pass 2 failed, saying why, and sends the
// error event.
func (s *Session) failPass2Why(why string) {
	s.mu.Lock()
	s.state.Pass2Failed = why
	s.mu.Unlock()
	msg := "pass 2 failed: " + why
	if fb := s.cfg.Vertical.Pass2Fallback; fb != "" {
		msg += "; " + fb
	}
	s.emit(TypeError, ErrorBody{Message: msg})
}

// Close ends the session without an artifact (the peer went away) and waits
// for the events queued so far to be sent.
func (s *Session) Close() {
	s.stop()
	s.mu.Lock()
	s.audio = nil // the session's audio goes with it
	s.mu.Unlock()
	for _, r := range s.lanes {
		r.finish()
	}
	s.laneWG.Wait()
	s.em.Close()
}

func (s *Session) setLane(lb LaneBody) {
	s.mu.Lock()
	s.state.Lanes[lb.Lane] = lb
	s.mu.Unlock()
}
