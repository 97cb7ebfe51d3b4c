package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"boxd/gpu"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/llmcall"
)

// Sentence is one final transcript sentence. Line numbers that lanes cite
// are I+1.
type Sentence struct {
	I int     `json:"i"`
	T float64 `json:"t"`
	// End is when the sentence's speech ended (0: not known).
	End  float64 `json:"end,omitempty"`
	Text string  `json:"text"`
	// Speaker and Role are set after pass 2's diarization (the sentences
	// are then final_transcript's lines): S01 and Doctor, say.
	Speaker string `json:"speaker,omitempty"`
	Role    string `json:"role,omitempty"`
}

// State is what a lane sees: the transcript so far and every lane's latest
// state. It is a copy; lanes may keep it.
type State struct {
	Vertical  string
	Lang      string
	Target    string
	Sentences []Sentence
	Lanes     map[string]LaneBody
	// PerSentence holds what per-sentence lanes emitted, by lane id and
	// sentence index (translation), so a summary can gather them. Its maps
	// are never changed once published (copy on write), so a snapshot may
	// share them.
	PerSentence map[string]map[int]LaneBody
	AudioS      float64
	// Pass2Failed is why pass 2 failed after stop (the first Pass2 lane
	// that failed and its error), "" when it did not fail.
	Pass2Failed string
	// Diarized is pass 2's speaker-attributed transcript once diarized
	// (nil before stop, and when diarization failed or the vertical has
	// no Roles).
	Diarized *Diarized
}

// Lines is the transcript with line numbers ("[n] text", n from 1), the form
// lanes are prompted with and cite. After pass 2's diarization each line
// names its speaker's role (or label): "[n] Doctor: text".
func (st *State) Lines() string {
	var b strings.Builder
	for _, s := range st.Sentences {
		who := s.Role
		if who == "" {
			who = s.Speaker
		}
		if who != "" {
			fmt.Fprintf(&b, "[%d] %s: %s\n", s.I+1, who, s.Text)
			continue
		}
		fmt.Fprintf(&b, "[%d] %s\n", s.I+1, s.Text)
	}
	return b.String()
}

// Line returns the sentence of line n (from 1) and whether it exists.
func (st *State) Line(n int) (Sentence, bool) {
	for _, s := range st.Sentences {
		if s.I+1 == n {
			return s, true
		}
	}
	return Sentence{}, false
}

// Vertical is a live vertical: its live lanes, the lanes that run after
// stop (in order) and how its done summary is built.
type Vertical struct {
	ID    string
	Live  []*LaneSpec
	Final []*LaneSpec
	// Summary builds done.summary from the final state.
	Summary func(st *State) map[string]any
	// Pass2Fallback says what stands in for pass 2's output when one of
	// its lanes (LaneSpec.Pass2) fails; the error event ends with it.
	Pass2Fallback string
	// Roles, when set, makes pass 2 diarize the session's audio on stop
	// and map its speakers to these roles (diarized.go).
	Roles *Roles
}

// LaneSpec is one lane: a model call over the transcript so far whose JSON
// answer (constrained by Schema through a grammar) becomes the lane's
// state.
type LaneSpec struct {
	ID, Title string
	// Schema is the JSON schema of the model's answer.
	Schema json.RawMessage
	// MaxTokens bounds one call (default 512).
	MaxTokens int
	// Prompt builds the system and user messages; an empty user message
	// skips the run (nothing to do yet). sentence is the index of the
	// sentence a per-sentence lane runs for, else -1.
	Prompt func(st *State, sentence int) (system, user string)
	// Finish turns the model's JSON into the lane's body and data (and
	// checks it: codes against tables, quotes against the transcript).
	Finish func(st *State, sentence int, answer json.RawMessage) (body string, data any, err error)
	// PerSentence lanes (translation) run once for each final sentence, in
	// order, and each event is one sentence, not the lane's whole state.
	PerSentence bool
	// Local lanes compute their state without a model call (Finish gets a
	// nil answer).
	Local bool
	// Run, when set, replaces Prompt, the model call and Finish: the lane
	// makes its own model calls through ask (several in one run, each one
	// receipt and budget event, each counted against the budget) and
	// returns its state. Schema and MaxTokens are those of its largest
	// call.
	Run func(st *State, ask Ask) (body string, data any, err error)
	// Pass2 lanes are after-stop lanes of the vertical's pass 2: when one
	// fails (its model call, the budget, its answer), Stop sends one error
	// event saying pass 2 failed, skips the Pass2 lanes after it and
	// records why in State.Pass2Failed for the summary.
	Pass2 bool
}

// Ask makes one model call of a Run lane: the answer is constrained by
// schema and at most maxTokens long.
type Ask func(schema json.RawMessage, maxTokens int, system, user string) (json.RawMessage, error)

// ErrAnswerCut is the error (wrapped) of a model call whose answer reached
// its MaxTokens: it is not whole JSON. A Run lane may read the cut answer
// as it sees fit (the clinical verifier labels its claims ERROR).
var ErrAnswerCut = errors.New("the answer was cut")

// errNoTokens: after stop, a call of a Pass2 lane would find no generated
// token left (it is not made, so the session still ends with done).
var errNoTokens = errors.New("the token budget is used up")

// laneRunner runs one live lane: debounced, never two runs at once, the
// latest result replaces the lane's state.
type laneRunner struct {
	s    *Session
	spec *LaneSpec

	mu    sync.Mutex
	dirty bool
	queue []int // per-sentence lanes: sentences waiting
	done  bool
	wake  chan struct{}
	// finishing is closed by finish: a debounce wait ends at once.
	finishing chan struct{}
}

func newLaneRunner(s *Session, spec *LaneSpec) *laneRunner {
	return &laneRunner{s: s, spec: spec, wake: make(chan struct{}, 1), finishing: make(chan struct{})}
}

func (r *laneRunner) trigger(i int) {
	r.mu.Lock()
	if r.spec.PerSentence {
		r.queue = append(r.queue, i)
	}
	r.dirty = true
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// finish asks the loop to catch up with the transcript and return.
func (r *laneRunner) finish() {
	r.mu.Lock()
	if !r.done {
		r.done = true
		close(r.finishing)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *laneRunner) loop() {
	ctx := r.s.ctx
	for {
		select {
		case <-r.wake:
		case <-ctx.Done():
			return
		}
		r.mu.Lock()
		done := r.done
		r.mu.Unlock()
		if !done && !r.spec.PerSentence {
			// Debounce: more sentences arriving now join this run.
			t := time.NewTimer(r.s.cfg.Debounce)
			select {
			case <-t.C:
			case <-r.finishing: // stop: catch up now
				t.Stop()
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		for {
			r.mu.Lock()
			dirty, queue, done := r.dirty, r.queue, r.done
			r.dirty, r.queue = false, nil
			r.mu.Unlock()
			if !dirty {
				if done {
					return
				}
				break
			}
			if r.spec.PerSentence {
				for _, i := range queue {
					r.run(ctx, i)
				}
			} else {
				r.run(ctx, -1)
			}
			if ctx.Err() != nil || r.s.Ending() != nil {
				return
			}
		}
	}
}

// pauseMessage says which lanes pause, until when, and why.
func (s *Session) pauseMessage(left int64) string {
	var model, local []string
	for _, spec := range s.cfg.Vertical.Live {
		if spec.Local {
			local = append(local, spec.ID)
		} else {
			model = append(model, spec.ID)
		}
	}
	msg := fmt.Sprintf("live lanes %s are paused until stop: %d generated tokens are left of the token budget%s, and up to %d are kept for the stop artifact",
		strings.Join(model, ", "), left, s.suffix(), s.cfg.Budget.StopReserve())
	if len(local) > 0 {
		msg += fmt.Sprintf("; %s need no model and keep updating", strings.Join(local, ", "))
	}
	return msg
}

// run runs the lane once and publishes its state.
func (r *laneRunner) run(ctx context.Context, sentence int) {
	s := r.s
	if !r.spec.Local {
		// The pause holds until stop: the unspent budget only goes down in
		// a session (TokensLeft does not count running calls'
		// reservations, so another lane's call in flight cannot pause the
		// lanes by mistake), and no lane that needs the model runs again.
		s.mu.Lock()
		paused := s.paused
		s.mu.Unlock()
		if paused {
			return
		}
		left, err := s.cfg.Budget.TokensLeft(ctx)
		if err == nil && left <= s.cfg.Budget.StopReserve() {
			s.mu.Lock()
			first := !s.paused
			s.paused = true
			s.mu.Unlock()
			if first {
				s.budgetEvent(ctx)
				s.emit(TypeError, ErrorBody{Message: s.pauseMessage(left)})
			}
			return
		}
	}
	st := s.Snapshot()
	lb, err := s.runLane(ctx, r.spec, st, sentence, false)
	if err != nil {
		if ctx.Err() == nil && s.Ending() == nil {
			s.emit(TypeError, ErrorBody{Message: fmt.Sprintf("the %s lane failed: %v", r.spec.ID, err)})
		}
		return
	}
	if lb != nil && r.spec.PerSentence {
		s.setSentenceLane(sentence, *lb)
	} else if lb != nil {
		s.setLane(*lb)
	}
}

// setSentenceLane records a per-sentence lane's event for sentence i,
// copying the maps so that snapshots sharing the old ones stay unchanged.
func (s *Session) setSentenceLane(i int, lb LaneBody) {
	s.mu.Lock()
	defer s.mu.Unlock()
	outer := make(map[string]map[int]LaneBody, len(s.state.PerSentence)+1)
	maps.Copy(outer, s.state.PerSentence)
	inner := make(map[int]LaneBody, len(outer[lb.Lane])+1)
	maps.Copy(inner, outer[lb.Lane])
	inner[i] = lb
	outer[lb.Lane] = inner
	s.state.PerSentence = outer
}

// ErrSkip, returned by a lane's Finish or Run, says the lane had nothing
// to do yet: no lane event is sent and its state stays as it was.
var ErrSkip = errors.New("live: nothing to do")

// runLane makes the lane's model call (if any) and emits receipt, budget
// and lane events. It returns the lane state, or nil when the lane had
// nothing to do yet.
func (s *Session) runLane(ctx context.Context, spec *LaneSpec, st *State, sentence int, final bool) (*LaneBody, error) {
	began := s.cfg.Now()
	var (
		body string
		data any
		err  error
	)
	switch {
	case spec.Run != nil:
		body, data, err = spec.Run(st, func(schema json.RawMessage, maxTokens int, system, user string) (json.RawMessage, error) {
			return s.ask(ctx, spec, schema, maxTokens, system, user, final)
		})
	case spec.Local:
		body, data, err = spec.Finish(st, sentence, nil)
	default:
		system, user := s.fitPrompt(spec, st, sentence)
		if user == "" {
			return nil, nil
		}
		answer, cerr := s.ask(ctx, spec, spec.Schema, spec.MaxTokens, system, user, final)
		if cerr != nil {
			return nil, cerr
		}
		body, data, err = spec.Finish(st, sentence, answer)
	}
	if errors.Is(err, ErrSkip) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lb := LaneBody{Lane: spec.ID, Title: spec.Title, Body: body, Data: data, LatencyMS: s.cfg.Now().Sub(began).Milliseconds()}
	s.emit(TypeLane, lb)
	return &lb, nil
}

// ask is one model call of a lane. After stop, a Pass2 lane's call is not
// made when no token is left (errNoTokens): pass 2 then fails and the
// session still ends with done, where a call would end it with 4402.
func (s *Session) ask(ctx context.Context, spec *LaneSpec, schema json.RawMessage, maxTokens int, system, user string, final bool) (json.RawMessage, error) {
	if final && spec.Pass2 {
		if left, err := s.cfg.Budget.TokensLeft(ctx); err == nil && left <= 0 {
			return nil, errNoTokens
		}
	}
	return s.call(ctx, spec.ID, schema, maxTokens, system, user, final, final && spec.Pass2)
}

// promptSlack covers the chat template's tokens around the messages.
const promptSlack = 64

// fitPrompt builds the lane's prompt so that it and the lane's longest
// answer fit the model's context: while they do not, the oldest quarter of
// the transcript is left out (line numbers stay those of the whole
// transcript, so citations still point at the right lines).
func (s *Session) fitPrompt(spec *LaneSpec, st *State, sentence int) (string, string) {
	system, user := spec.Prompt(st, sentence)
	eng := s.cfg.Chat.Engine
	if user == "" || eng == nil {
		return system, user
	}
	maxTok := spec.MaxTokens
	if maxTok <= 0 {
		maxTok = 512
	}
	budget := eng.ContextPerRequest() - maxTok - promptSlack
	cut := *st
	for {
		toks, err := eng.Tokenize(system+"\n"+user, false, false)
		if err != nil || len(toks) <= budget || len(cut.Sentences) <= 1 {
			return system, user
		}
		drop := max(1, len(cut.Sentences)/4)
		if sentence >= 0 {
			// Keep the sentence a per-sentence lane runs for.
			drop = min(drop, max(0, len(cut.Sentences)-1))
		}
		cut.Sentences = cut.Sentences[drop:]
		system, user = spec.Prompt(&cut, sentence)
		if user == "" {
			return system, user
		}
	}
}

// call runs one model call with schema at live priority, emits its
// receipt and the budget, and returns the JSON answer.
func (s *Session) call(ctx context.Context, id string, schema json.RawMessage, maxTok int, system, user string, final, pass2 bool) (json.RawMessage, error) {
	if maxTok <= 0 {
		maxTok = 512
	}
	// The receipt event goes out through the session, with the receipt
	// body the session's events carry.
	emit := llmcall.EmitFunc(func(typ string, body any) {
		if rb, ok := body.(run.ReceiptBody); ok {
			body = ReceiptBody(rb)
		}
		s.emit(typ, body)
	})
	// One model call at a time per session: a call reserves its whole
	// MaxTokens, so concurrent lanes would see each other's reservations as
	// spent budget and could end the session while tokens remain.
	s.callMu.Lock()
	defer s.callMu.Unlock()
	answer, res, err := s.cfg.Chat.JSON(ctx, s.cfg.Budget, schema, llmcall.Request{
		Messages: []llmcall.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
		Sampling: llmcall.Temperature(0), MaxTokens: maxTok, Priority: gpu.Live, Events: emit,
	})
	if res == nil { // refused before generating: no receipt, nothing charged
		if problem.Is(err, problem.Budget) {
			if pass2 {
				// A pass-2 call after stop: the session still ends with
				// done (the budget ran out between ask's check and the
				// reservation, spent by another call on the same key),
				// and pass 2 fails.
				return nil, errNoTokens
			}
			s.end(problem.Budget, "token budget used up"+s.suffix())
		}
		return nil, err
	}
	// The call generated, so it was charged and its receipt emitted (also
	// when it failed after generating).
	if err == nil || ctx.Err() == nil {
		s.budgetEvent(ctx)
		if left, lerr := s.cfg.Budget.TokensLeft(ctx); lerr == nil && left == 0 && !final {
			s.end(problem.Budget, "token budget used up"+s.suffix())
		}
	}
	if errors.Is(err, llmcall.ErrCut) {
		return nil, fmt.Errorf("%w at %d tokens", ErrAnswerCut, maxTok)
	}
	if err != nil {
		return nil, err
	}
	return answer, nil
}
