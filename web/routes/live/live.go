// Package live declares the live audio socket, /ws/live (contract
// document 1, sections 6 and 7), over pipelines/live: a socket route on the
// one admission path, its frames fed to the session on api.Socket.
package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"boxd/configs"
	"boxd/web/api"
	"boxd/web/guard"

	"boxd/internal/problem"
	"boxd/internal/strictjson"

	"github.com/coder/websocket"

	"boxd/engine/asr/stream"
	"boxd/internal/families"
	"boxd/pipelines/live"
)

// Path is the live audio socket (contract document 1, sections 6 and 7).
const Path = "/ws/live"

// VerticalIDs are the verticals /ws/live serves (the families table).
var VerticalIDs = families.LiveIDs()

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log    *slog.Logger
	Config *configs.Config
	Now    func() time.Time
	// Sessions opens live sessions (the verticals, the chat model, the
	// models named in ready events).
	Sessions *live.Opener
	// Transcribe starts speech recognition for a session; nil closes live
	// sockets with 1011 (no models.asr.path).
	Transcribe live.StartTranscriber
}

type routes struct {
	api        *api.API
	log        *slog.Logger
	cfg        *configs.Config
	now        func() time.Time
	sessions   *live.Opener
	transcribe live.StartTranscriber
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	s := &routes{api: a, log: d.Log, cfg: d.Config, now: d.Now, sessions: d.Sessions, transcribe: d.Transcribe}
	s.declare()
}

func (s *routes) declare() {
	s.liveSocket()
}

// liveQuery is a checked /ws/live query.
type liveQuery struct {
	vertical, lang, target string
}

// parseLiveQuery checks vertical, lang and target (close 4400 on error).
// lang and target belong to translate only; given with another vertical
// they are refused rather than ignored.
func parseLiveQuery(q url.Values) (liveQuery, error) {
	for _, k := range []string{"vertical", "lang", "target", "token"} {
		if len(q[k]) > 1 {
			return liveQuery{}, fmt.Errorf("%s is given %d times; give it once", k, len(q[k]))
		}
	}
	v := q.Get("vertical")
	if v == "" {
		return liveQuery{}, fmt.Errorf("vertical is required: /ws/live?vertical=<%s>&token=<token>", strings.Join(VerticalIDs, "|"))
	}
	known := false
	for _, id := range VerticalIDs {
		known = known || v == id
	}
	if !known {
		return liveQuery{}, fmt.Errorf("vertical %q has no live audio; use one of %s", v, strings.Join(VerticalIDs, ", "))
	}
	if !families.AcceptsLiveParam(v, "lang") {
		for _, k := range []string{"lang", "target"} {
			if q.Has(k) {
				return liveQuery{}, fmt.Errorf("%s applies to the %s vertical only; leave it out for %s (it is transcribed as English)", k, strings.Join(families.WithLiveParam(k), ", "), v)
			}
		}
		return liveQuery{vertical: v}, nil
	}
	lang, target, err := live.Languages(q.Get("lang"), q.Get("target"))
	if err != nil {
		return liveQuery{}, err
	}
	return liveQuery{vertical: v, lang: lang, target: target}, nil
}

// stopMessage is the one text frame a client sends.
type stopMessage struct {
	Type string `json:"type"`
}

// IsStopFrame says whether a text frame is {"type":"stop"}. The key is
// "type" exactly: encoding/json alone would also take "Type" or "TYPE",
// and of a duplicated "type" its last. Other keys are ignored.
func IsStopFrame(data []byte) bool {
	var sm stopMessage
	return json.Unmarshal(data, &sm) == nil && sm.Type == "stop" && strictjson.Check(data, &sm) == nil
}

const textFrameHelp = `text frames take only {"type":"stop"} (end the session and get done); send audio as binary frames of 16 kHz mono PCM16 little-endian, about 3200 bytes per 100 ms`

// liveSocket declares WS /ws/live?vertical=&token=[&lang=&target=] on
// the one admission path, as a socket: the upgrade first (a plain GET is
// 426), then the Host and Origin (4403), then admission in its documented
// order with every refusal an error event and the kind's close code
// (section 7): the token (?token= or Authorization, 4401), the query
// (4400), the token's vertical (4403), the box serving the vertical and
// speech (1011), some audio and token budget left (4402), a live slot
// (4409 / 4429). A normal stop ends with done and 1000.
func (s *routes) liveSocket() {
	api.Declare(s.api, api.Declared[liveQuery]{
		Route:   api.Route{Method: http.MethodGet, Path: Path, Auth: api.Bearer, Socket: true, MinTokens: 1, Audio: true, LiveSlot: true},
		Upgrade: s.upgrade,
		Token: func(r *http.Request) (string, error) {
			if t := r.URL.Query().Get("token"); t != "" {
				return t, nil
			}
			if t, ok := api.BearerToken(r); ok && t != "" {
				return t, nil
			}
			return "", problem.New(problem.Unauthorized, "missing token: open /ws/live?vertical=<vertical>&token=<demo session token or dk_ developer key> (get a token from POST /demo/session)")
		},
		Query: func(q url.Values, lq *liveQuery) (err error) {
			*lq, err = parseLiveQuery(q)
			return err
		},
		VerticalOf: func(lq *liveQuery) string { return lq.vertical },
		Validate: func(lq *liveQuery) error {
			if d := s.sessions.Serves(lq.vertical, s.transcribe); d != nil {
				return d
			}
			return nil
		},
		Serve: s.serveSocket,
	})
}

// upgrade accepts the WebSocket and checks its Host and Origin (as
// guard.Hosts and guard.Origins do for HTTP): a refusal there is an error
// event and 4403, not a status a browser reports with no reason.
func (s *routes) upgrade(w http.ResponseWriter, r *http.Request) (api.Conn, bool) {
	if !api.WantsWebSocket(r) {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		api.WriteProblem(w, problem.New(problem.UpgradeRequired, "%s", "this is a WebSocket route: connect to ws://<box>/ws/live?vertical=<clinical|sales|field|translate>&token=<token> with a WebSocket client"))
		return nil, false
	}
	c, err := api.AcceptSocket(w, r, s.now)
	if err != nil {
		return nil, false // Accept answered the HTTP request (426, 400, ...)
	}
	if msg := guard.HostPolicyOf(s.cfg).Refusal(r.Host); msg != "" {
		c.RefuseWith(4403, msg)
		return nil, false
	}
	if origin := r.Header.Get("Origin"); origin != "" && !guard.OriginPolicyOf(s.cfg).Allowed(origin) {
		c.RefuseWith(4403, "origin "+origin+" is not allowed; the operator lists front-end origins under origins in boxd.yaml (localhost and 127.0.0.1 are always allowed)")
		return nil, false
	}
	return c, true
}

// serveSocket runs an admitted live session until it stops, ends or the
// client goes away.
func (s *routes) serveSocket(a *api.Admitted, q *liveQuery) {
	c := a.Conn.(*api.Socket)
	defer c.Conn.CloseNow()
	pr := a.Principal
	ctx, cancel := context.WithCancel(a.R.Context())
	defer cancel()
	c.Began = s.now()
	who := live.Caller{Budget: api.Budget{Principal: pr}, Demo: !pr.IsKey(), OnRevoke: pr.OnRevoke}
	sess, closeSession, d := s.sessions.Open(ctx, who, q.vertical, q.lang, q.target, s.transcribe, c.Send)
	if d != nil {
		c.Began = time.Time{}
		c.Refuse(d)
		return
	}
	defer closeSession()
	s.log.Info("live session opened", "caller", pr.LogID(), "vertical", q.vertical)
	code := s.runLive(ctx, cancel, c, sess)
	s.log.Info("live session ended", "caller", pr.LogID(), "vertical", q.vertical, "close", code)
}

// runLive feeds the client's frames to the session until it stops, ends
// or the client goes away, and closes the socket; it returns the close
// code (0: the client went away).
func (s *routes) runLive(ctx context.Context, cancel context.CancelFunc, c *api.Socket, sess *live.Session) int {
	msgs := make(chan api.SocketMessage)
	go func() {
		defer cancel() // a read error: the client went away or closed
		for {
			m, err := c.ReadMessage(ctx, FrameLimit, MessageCap)
			if err != nil {
				return
			}
			select {
			case msgs <- m:
			case <-ctx.Done():
				return
			}
			if m.Huge {
				return
			}
		}
	}()

	go c.KeepAlive(ctx, cancel)

	var stopDone chan error // set while Stop runs
	stopCtx, stopCancel := context.WithCancel(ctx)
	defer stopCancel()
	drain := s.api.Drain() // nil once seen
	// A socket that sends no audio for limits.live_idle_s is closed (an
	// error event, then 4408; the contract's reconnect rule applies) so
	// that it does not hold a live slot others wait for.
	idleFor := time.Duration(max(1, s.cfg.Bounds.LiveIdleS)) * time.Second
	idle := time.NewTimer(idleFor)
	defer idle.Stop()
	// A socket on which no speech is recognised for
	// limits.live_speech_idle_s is closed the same way, whatever bytes it
	// sends: 100 ms of silence every 45 s must not hold a live slot for
	// as long as the audio budget lasts (live.Session.SinceSpeech).
	speechFor := liveSpeechIdle(s.cfg.Bounds.LiveSpeechIdleS)
	speech := time.NewTimer(speechFor)
	defer speech.Stop()
	// end closes with the session's ending; its error event was sent.
	end := func() int {
		if stopDone != nil {
			<-stopDone
		}
		e := sess.Ending()
		sess.Close() // flushes the queued events, the error event last
		code := api.CloseOf(e.Kind)
		c.CloseWith(code, e.Message)
		return code
	}
	for {
		select {
		case <-idle.C:
			if stopDone == nil {
				sess.End(problem.Timeout, fmt.Sprintf("no audio for %d s: the session was closed to free its live slot (limits.live_idle_s); reconnect and send audio frames, or send {\"type\":\"stop\"} when done", s.cfg.Bounds.LiveIdleS))
			}
		case <-speech.C:
			switch since := sess.SinceSpeech(); {
			case stopDone != nil:
				// Stopping: the final lanes are on their way.
			case since < speechFor:
				speech.Reset(speechFor - since)
			default:
				sess.End(problem.Timeout, fmt.Sprintf("no speech for %d s: the session was closed to free its live slot (limits.live_speech_idle_s); silence and noise do not keep a session open; reconnect when there is speech, or send {\"type\":\"stop\"} when done", int(speechFor/time.Second)))
			}
		case <-ctx.Done():
			if stopDone != nil {
				<-stopDone
			}
			return 0
		case <-sess.Ended():
			return end()
		case <-drain:
			// The box is shutting down: the session stops as if the client
			// had sent stop, so its final lanes and done still arrive.
			drain = nil
			if stopDone == nil {
				sess.Error(live.StopMessage)
				stopDone = make(chan error, 1)
				go func(done chan<- error) { done <- sess.Stop(stopCtx) }(stopDone)
			}
		case <-s.api.Cut():
			// The shutdown grace is over: end with an error event and 1001;
			// cancelling the stop cuts a model call in progress short (not
			// ctx: that would drop the socket before the error event).
			sess.End(problem.ShuttingDown, live.CutMessage)
			stopCancel()
			return end()
		case err := <-stopDone:
			stopDone = nil
			if sess.Ending() != nil {
				return end()
			}
			if err != nil {
				sess.Close()
				c.RefuseWith(api.CloseOf(problem.Unavailable), "the session could not stop: "+err.Error())
				return api.CloseOf(problem.Unavailable)
			}
			c.CloseWith(api.CloseNormal, "done")
			return api.CloseNormal
		case m := <-msgs:
			if stopDone != nil {
				continue // stopping: later frames are ignored
			}
			switch {
			case m.Huge:
				sess.Close()
				c.RefuseWith(int(websocket.StatusMessageTooBig), fmt.Sprintf("a message of more than %d bytes was sent; audio frames are at most %d bytes (about 3200 per 100 ms)", MessageCap, FrameLimit))
				return int(websocket.StatusMessageTooBig)
			case m.Data == nil && m.Size > 0:
				sess.Error(fmt.Sprintf("a %d-byte message was dropped: frames are at most %d bytes (2 s of audio); send about 3200 bytes (100 ms) per frame", m.Size, FrameLimit))
			case m.Type == websocket.MessageBinary:
				idle.Reset(idleFor)
				err := sess.Audio(ctx, m.Data)
				switch {
				case err == nil, errors.Is(err, live.ErrEnded):
					// ErrEnded: Ended is closed, the next turn closes the socket.
				case errors.Is(err, stream.ErrBadFrame):
					sess.Error(strings.TrimPrefix(err.Error(), "stream: "))
				case ctx.Err() != nil:
				default:
					sess.Close()
					c.RefuseWith(api.CloseOf(problem.Unavailable), "the audio could not be taken: "+err.Error())
					return api.CloseOf(problem.Unavailable)
				}
			default:
				if !IsStopFrame(m.Data) {
					sess.Error("unknown text frame: " + textFrameHelp)
					continue
				}
				stopDone = make(chan error, 1)
				go func(done chan<- error) { done <- sess.Stop(stopCtx) }(stopDone)
			}
		}
	}
}

// liveSpeechIdle is limits.live_speech_idle_s as a duration (0: the
// default, 120 s).
func liveSpeechIdle(setting int) time.Duration {
	if setting <= 0 {
		setting = 120
	}
	return time.Duration(setting) * time.Second
}
