package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"boxd/internal/problem"
	"boxd/internal/strictjson"

	"github.com/coder/websocket"

	"boxd/engine/asr/stream"
	"boxd/internal/families"
	"boxd/internal/platform"
	"boxd/pipelines/live"
)

// livePath is the live audio socket (contract document 1, sections 6 and 7).
const livePath = "/ws/live"

// liveVerticalIDs are the verticals /ws/live serves (the families table).
var liveVerticalIDs = families.LiveIDs()

func (s *Server) liveRoutes() {
	s.Handle(http.MethodGet, livePath, s.liveSocket)
}

// sockets sends WebSocket upgrades of the live route past the origins
// middleware: a refused Origin must still get the upgrade, an error event
// and close code 4403 (contract section 7), not an HTTP 403 the browser
// reports as a failed connection with no reason. liveSocket checks the
// Origin against the same rules (originAllowed). Every other request goes
// through checked (the origins middleware).
func (s *Server) sockets(checked http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == livePath && wantsWebSocket(r) {
			s.mux.ServeHTTP(w, r)
			return
		}
		checked.ServeHTTP(w, r)
	})
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
		return liveQuery{}, fmt.Errorf("vertical is required: /ws/live?vertical=<%s>&token=<token>", strings.Join(liveVerticalIDs, "|"))
	}
	known := false
	for _, id := range liveVerticalIDs {
		known = known || v == id
	}
	if !known {
		return liveQuery{}, fmt.Errorf("vertical %q has no live audio; use one of %s", v, strings.Join(liveVerticalIDs, ", "))
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

// openLive starts a live session for a caller already authenticated for
// vertical: the socket and the replay route (POST /demo/replay) both open
// sessions here. It checks that the box serves the vertical and has
// speech recognition (transcribe; 503 / close 1011), takes a live slot
// (one per demo token, the key's and the box's live caps: 409 / 4409,
// 429 / 4429), checks that some audio and token budget is left (402 /
// 4402, "for today" with a key), and starts the session with the
// principal as its budget and send as its event sink (send is called from
// one goroutine, in order; an error ends the session).
//
// lang and target apply to translate ("" takes auto and en; region tags
// map to the base code) and are ignored for other verticals. ctx bounds
// the whole session: cancel it when the client goes away. The session
// clock (at_ms) is the server's.
//
// admitted is set when the route's admission (declare) already took the
// live slot and checked the budgets (the replay route); openLive then
// neither takes nor frees a slot.
//
// The returned func closes the session (if Stop has not) and frees the
// live slot; call it once the session is over. The refusal's problem kind
// gives the HTTP status and the WebSocket close code.
func (s *Server) openLive(ctx context.Context, pr *platform.Principal, vertical, lang, target string, transcribe live.StartTranscriber, send func(live.Event) error, admitted bool) (*live.Session, func(), *problem.Error) {
	v := s.liveVerticals[vertical]
	if v == nil {
		return nil, nil, problem.New(problem.Unavailable, "the %s vertical is not available on this box; retry later or ask the operator", vertical)
	}
	if transcribe == nil {
		return nil, nil, problem.New(problem.Unavailable, "speech recognition unavailable: the operator sets models.asr.path")
	}
	if families.AcceptsLiveParam(vertical, "lang") {
		var err error
		if lang, target, err = live.Languages(lang, target); err != nil {
			return nil, nil, problem.New(problem.Invalid, "%s", err.Error())
		}
	} else {
		lang, target = "", ""
	}
	release := func() {}
	if !admitted {
		var d *problem.Error
		if release, d = pr.AcquireLive(); d != nil {
			return nil, nil, d
		}
		if d := pr.RequireAudio(ctx); d != nil {
			release()
			return nil, nil, d
		}
		if d := pr.RequireTokens(ctx, 1); d != nil {
			release()
			return nil, nil, d
		}
	}
	sess, err := live.Start(ctx, live.Config{
		Vertical: v, Lang: lang, Target: target, Models: s.liveModels,
		Transcribe: transcribe, Chat: s.chat, Budget: liveBudget{budget{pr}}, Send: send, Now: s.now,
		Debounce: s.liveDebounce, Demo: !pr.IsKey(),
	})
	if err != nil {
		release()
		if p, ok := problem.As(err); ok {
			return nil, nil, p // a language the speech model cannot take (4400), no speech (1011)
		}
		return nil, nil, problem.Wrap(problem.Internal, err, "the live session could not start: %v", err)
	}
	unwatch := pr.OnRevoke(func(msg string) { sess.End(problem.Unauthorized, msg) })
	return sess, func() { unwatch(); sess.Close(); release() }, nil
}

// What a live session is told when the box shuts down: first that it
// stops now (its final lanes follow), and, if shutdown_grace_s runs out
// before done, that it was cut.
const (
	shutdownStopMessage = "the box is shutting down: this session stops now as if stop had been sent; its final lanes and done follow"
	shutdownCutMessage  = "the box shut down before this session was done (shutdown_grace_s ran out); reconnect once it is back: the session's transcript was not kept"
)

// stopMessage is the one text frame a client sends.
type stopMessage struct {
	Type string `json:"type"`
}

// isStopFrame says whether a text frame is {"type":"stop"}. The key is
// "type" exactly: encoding/json alone would also take "Type" or "TYPE",
// and of a duplicated "type" its last. Other keys are ignored.
func isStopFrame(data []byte) bool {
	var sm stopMessage
	return json.Unmarshal(data, &sm) == nil && sm.Type == "stop" && strictjson.Check(data, &sm) == nil
}

const textFrameHelp = `text frames take only {"type":"stop"} (end the session and get done); send audio as binary frames of 16 kHz mono PCM16 little-endian, about 3200 bytes per 100 ms`

// liveSocket is WS /ws/live?vertical=&token=[&lang=&target=]. Every
// refusal and every end other than a normal stop is an error event and
// then a close code (section 7); a normal stop ends with done and 1000.
func (s *Server) liveSocket(w http.ResponseWriter, r *http.Request) {
	// Counted before the upgrade: http.Server.Shutdown waits for this
	// request until it is hijacked, so Serve sees the count (see drain).
	s.sessions.add()
	defer s.sessions.done()
	if !wantsWebSocket(r) {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		writeError(w, http.StatusUpgradeRequired, "this is a WebSocket route: connect to ws://<box>/ws/live?vertical=<clinical|sales|field|translate>&token=<token> with a WebSocket client")
		return
	}
	// The Origin is checked below, after the upgrade, so that a refused one
	// gets an error event and 4403 (see sockets).
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept answered the HTTP request (426, 400, ...)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(-1) // readLive bounds every message
	c := &liveConn{conn: conn, now: s.now}

	if msg := s.hostRefusal(r.Host); msg != "" { // as hosts does for HTTP (hosts.go)
		c.refuse(4403, msg)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !s.originAllowed(origin) {
		c.refuse(4403, "origin "+origin+" is not allowed; the operator lists front-end origins under origins in boxd.yaml (localhost and 127.0.0.1 are always allowed)")
		return
	}
	q, err := parseLiveQuery(r.URL.Query())
	if err != nil {
		c.refuse(closeOf(problem.Invalid), err.Error())
		return
	}
	token := r.URL.Query().Get("token")
	if token == "" {
		if t, ok := bearer(r); ok {
			token = t
		}
	}
	if token == "" {
		c.refuse(closeOf(problem.Unauthorized), "missing token: open /ws/live?vertical=<vertical>&token=<demo session token or dk_ developer key> (get a token from POST /demo/session)")
		return
	}
	pr, d := s.platform.Authenticate(r.Context(), token, q.vertical)
	if d != nil {
		c.refuse(closeCodeOf(d), d.Message)
		return
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c.began = s.now()
	sess, closeSession, d := s.openLive(ctx, pr, q.vertical, q.lang, q.target, s.transcribe, c.sendSession, false)
	if d != nil {
		c.began = time.Time{}
		c.refuse(closeCodeOf(d), d.Message)
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
func (s *Server) runLive(ctx context.Context, cancel context.CancelFunc, c *liveConn, sess *live.Session) int {
	msgs := make(chan liveMsg)
	go func() {
		defer cancel() // a read error: the client went away or closed
		for {
			m, err := readLive(ctx, c.conn)
			if err != nil {
				return
			}
			select {
			case msgs <- m:
			case <-ctx.Done():
				return
			}
			if m.huge {
				return
			}
		}
	}()

	go pingLive(ctx, cancel, c)

	var stopDone chan error // set while Stop runs
	stopCtx, stopCancel := context.WithCancel(ctx)
	defer stopCancel()
	drain := s.drain // nil once seen
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
		code := closeOf(e.Kind)
		c.closeWith(code, e.Message)
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
				sess.Error(shutdownStopMessage)
				stopDone = make(chan error, 1)
				go func(done chan<- error) { done <- sess.Stop(stopCtx) }(stopDone)
			}
		case <-s.cut:
			// The shutdown grace is over: end with an error event and 1001;
			// cancelling the stop cuts a model call in progress short (not
			// ctx: that would drop the socket before the error event).
			sess.End(problem.ShuttingDown, shutdownCutMessage)
			stopCancel()
			return end()
		case err := <-stopDone:
			stopDone = nil
			if sess.Ending() != nil {
				return end()
			}
			if err != nil {
				sess.Close()
				c.refuse(closeOf(problem.Unavailable), "the session could not stop: "+err.Error())
				return closeOf(problem.Unavailable)
			}
			c.closeWith(closeNormal, "done")
			return closeNormal
		case m := <-msgs:
			if stopDone != nil {
				continue // stopping: later frames are ignored
			}
			switch {
			case m.huge:
				sess.Close()
				c.refuse(int(websocket.StatusMessageTooBig), fmt.Sprintf("a message of more than %d bytes was sent; audio frames are at most %d bytes (about 3200 per 100 ms)", liveMessageCap, liveFrameLimit))
				return int(websocket.StatusMessageTooBig)
			case m.data == nil && m.size > 0:
				sess.Error(fmt.Sprintf("a %d-byte message was dropped: frames are at most %d bytes (2 s of audio); send about 3200 bytes (100 ms) per frame", m.size, liveFrameLimit))
			case m.typ == websocket.MessageBinary:
				idle.Reset(idleFor)
				err := sess.Audio(ctx, m.data)
				switch {
				case err == nil, errors.Is(err, live.ErrEnded):
					// ErrEnded: Ended is closed, the next turn closes the socket.
				case errors.Is(err, stream.ErrBadFrame):
					sess.Error(strings.TrimPrefix(err.Error(), "stream: "))
				case ctx.Err() != nil:
				default:
					sess.Close()
					c.refuse(closeOf(problem.Unavailable), "the audio could not be taken: "+err.Error())
					return closeOf(problem.Unavailable)
				}
			default:
				if !isStopFrame(m.data) {
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

// Pings find dead peers: a socket whose peer does not answer a ping within
// livePingTimeout is dropped (its session ends as if the client left).
var (
	livePingEvery   = 30 * time.Second
	livePingTimeout = 10 * time.Second
)

// pingLive pings the peer until ctx ends; a failed ping cancels the
// session's context.
func pingLive(ctx context.Context, cancel context.CancelFunc, c *liveConn) {
	t := time.NewTicker(livePingEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, pcancel := context.WithTimeout(ctx, livePingTimeout)
		err := c.conn.Ping(pctx)
		pcancel()
		if err != nil {
			cancel()
			return
		}
	}
}
