package live

import (
	"context"
	"time"

	"boxd/internal/families"
	"boxd/internal/problem"
	"boxd/pipelines/llmcall"
)

// Opener starts live sessions for callers already admitted (their live
// slot taken and their budgets checked): the socket and the replay route
// both open sessions here.
type Opener struct {
	// Verticals are the live verticals by id; one missing here is 503 /
	// close 1011.
	Verticals map[string]*Vertical
	Chat      *llmcall.Model
	Models    Models
	// Debounce is how long live lanes wait for more sentences (0: the
	// session default).
	Debounce time.Duration
	Now      func() time.Time
	// Diarize is pass 2's diarizer (verticals with Roles).
	Diarize *Diarization
}

// Serves reports whether the box serves vertical live, and why not.
func (o *Opener) Serves(vertical string, transcribe StartTranscriber) *problem.Error {
	if o.Verticals[vertical] == nil {
		return problem.New(problem.Unavailable, "the %s vertical is not available on this box; retry later or ask the operator", vertical)
	}
	if transcribe == nil {
		return problem.New(problem.Unavailable, "speech recognition unavailable: the operator sets models.asr.path")
	}
	return nil
}

// Caller is who a session is for: the budget it spends, whether it is a
// demo session token, and, for a key that can be revoked, how to hear of
// it (OnRevoke registers a func and returns its unregistering; nil: none).
type Caller struct {
	Budget   Budget
	Demo     bool
	OnRevoke func(func(msg string)) (stop func())
}

// Open checks that the box serves vertical and has speech recognition
// (transcribe; 503 / close 1011) and starts a session for who (a revoked
// key ends it) with send as its event sink (send is called from one
// goroutine, in order; an error ends the session). The returned func
// closes the session (if Stop has not); call it once the session is over. lang and target apply to
// translate ("" takes auto and en; region tags map to the base code) and
// are ignored for other verticals. ctx bounds the whole session: cancel
// it when the client goes away. The session clock (at_ms) is the box's.
// demo is set for a demo session token. The refusal's problem kind gives
// the HTTP status and the WebSocket close code.
func (o *Opener) Open(ctx context.Context, who Caller, vertical, lang, target string, transcribe StartTranscriber, send func(Event) error) (*Session, func(), *problem.Error) {
	if d := o.Serves(vertical, transcribe); d != nil {
		return nil, nil, d
	}
	if families.AcceptsLiveParam(vertical, "lang") {
		var err error
		if lang, target, err = Languages(lang, target); err != nil {
			return nil, nil, problem.New(problem.Invalid, "%s", err.Error())
		}
	} else {
		lang, target = "", ""
	}
	sess, err := Start(ctx, Config{
		Vertical: o.Verticals[vertical], Lang: lang, Target: target, Models: o.Models,
		Transcribe: transcribe, Chat: o.Chat, Budget: who.Budget, Send: send, Now: o.Now,
		Debounce: o.Debounce, Demo: who.Demo, Diarize: o.Diarize,
	})
	if err != nil {
		if p, ok := problem.As(err); ok {
			return nil, nil, p // a language the speech model cannot take (4400), no speech (1011)
		}
		return nil, nil, problem.Wrap(problem.Internal, err, "the live session could not start: %v", err)
	}
	unwatch := func() {}
	if who.OnRevoke != nil {
		unwatch = who.OnRevoke(func(msg string) { sess.End(problem.Unauthorized, msg) })
	}
	return sess, func() { unwatch(); sess.Close() }, nil
}

// What a live session is told when the box shuts down: first that it
// stops now (its final lanes follow), and, if shutdown_grace_s runs out
// before done, that it was cut.
const (
	StopMessage = "the box is shutting down: this session stops now as if stop had been sent; its final lanes and done follow"
	CutMessage  = "the box shut down before this session was done (shutdown_grace_s ran out); reconnect once it is back: the session's transcript was not kept"
)
