package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"boxd/problem"

	"github.com/coder/websocket"

	"boxd/engine/asr"
	"boxd/engine/asr/stream"
	"boxd/families"
	"boxd/pipelines/live"
	"boxd/web/platform"
)

// livePath is the live audio socket (contract document 1, sections 6 and 7).
const livePath = "/ws/live"

// liveVerticalIDs are the verticals /ws/live serves (the families table).
var liveVerticalIDs = families.LiveIDs()

// Frame limits. A binary frame of up to stream.MaxFrameBytes (2 s of audio)
// is audio; a larger message up to liveMessageCap is read, dropped and
// answered with an error event (the session goes on, like an odd-length
// frame); above liveMessageCap the socket is closed 1009 after an error
// event, since reading on would let one message take any memory or time.
const (
	liveFrameLimit = stream.MaxFrameBytes
	liveMessageCap = 1 << 20
)

// liveWriteTimeout bounds one event write: a client that stops reading is
// dropped instead of holding the session.
const liveWriteTimeout = 10 * time.Second

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

// wantsWebSocket reports whether r asks for a WebSocket upgrade.
func wantsWebSocket(r *http.Request) bool {
	for _, v := range strings.Split(r.Header.Get("Upgrade"), ",") {
		if strings.EqualFold(strings.TrimSpace(v), "websocket") {
			return true
		}
	}
	return false
}

// SpeechTranscriber starts live transcribers on the box's speech engine:
// Whisper in the session's spoken language ("auto" detects) with the
// transcribe task (translate sessions are translated by the text model),
// run by a stream.Stream on its own goroutine. A nil engine gives a nil
// StartTranscriber: live sockets then close 1011.
func SpeechTranscriber(e *stream.Engine) live.StartTranscriber {
	if e == nil {
		return nil
	}
	return func(ctx context.Context, lang string, emit func(stream.Event)) (live.Transcriber, error) {
		o, err := e.Options(lang, asr.TaskTranscribe)
		if err != nil {
			return nil, err
		}
		return stream.Start(ctx, e.Session(o), emit), nil
	}
}

// langTag is a language code as clients send it: a base of two or three
// letters and optional subtags (pt-BR, zh-Hans, es_419).
var langTag = regexp.MustCompile(`^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$`)

// liveLanguage checks a lang or target value and maps it to its base code
// (pt-BR → pt); auto is allowed for the spoken language only.
func liveLanguage(name, value string, auto bool) (string, error) {
	if strings.EqualFold(value, "auto") {
		if auto {
			return "auto", nil
		}
		return "", fmt.Errorf("%s cannot be auto: name the language to translate into, one of %s (en and es are tested end to end)", name, strings.Join(asr.SpokenLanguages, ", "))
	}
	accepted := strings.Join(asr.SpokenLanguages, ", ")
	if auto {
		accepted = "auto, " + accepted
	}
	if !langTag.MatchString(value) {
		return "", fmt.Errorf("%s %q is not a language code; use one of %s (a region such as pt-BR is accepted)", name, value, accepted)
	}
	base := strings.ToLower(value[:strings.IndexFunc(value+"-", func(r rune) bool { return r == '-' || r == '_' })])
	for _, l := range asr.SpokenLanguages {
		if base == l {
			return base, nil
		}
	}
	return "", fmt.Errorf("%s %q is not supported; use one of %s", name, value, accepted)
}

// liveLanguages checks translate's lang and target ("" takes the defaults
// auto and en).
func liveLanguages(lang, target string) (string, string, error) {
	if lang == "" {
		lang = "auto"
	}
	if target == "" {
		target = "en"
	}
	l, err := liveLanguage("lang", lang, true)
	if err != nil {
		return "", "", err
	}
	tg, err := liveLanguage("target", target, false)
	if err != nil {
		return "", "", err
	}
	return l, tg, nil
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
	lang, target, err := liveLanguages(q.Get("lang"), q.Get("target"))
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
		if lang, target, err = liveLanguages(lang, target); err != nil {
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
		return nil, nil, problem.Wrap(problem.Internal, err, "the live session could not start: %v", err)
	}
	unwatch := pr.OnRevoke(func(msg string) { sess.End(problem.Unauthorized, msg) })
	return sess, func() { unwatch(); sess.Close(); release() }, nil
}

// liveConn writes events to a socket.
type liveConn struct {
	conn  *websocket.Conn
	now   func() time.Time
	began time.Time // just before the session started: at_ms of our own events

}

// sendSession forwards the session's events. The session's emitter ends
// with the error event of its ending (budget used up, speech recognition
// failed): nothing is sent after it.
func (c *liveConn) sendSession(ev live.Event) error { return c.send(ev) }

func (c *liveConn) send(ev live.Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveWriteTimeout)
	defer cancel()
	return c.conn.Write(ctx, websocket.MessageText, b)
}

// errorEvent sends an error event on the session clock (0 before a session
// started).
func (c *liveConn) errorEvent(msg string) error {
	var at int64
	if !c.began.IsZero() {
		at = c.now().Sub(c.began).Milliseconds()
	}
	return c.send(live.Event{Type: live.TypeError, AtMS: at, Body: live.ErrorBody{Message: msg}})
}

// closeWith closes the socket with code; the reason is the message cut to
// the 123 bytes a close frame holds.
func (c *liveConn) closeWith(code int, msg string) {
	if len(msg) > 123 {
		cut := 120
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	_ = c.conn.Close(websocket.StatusCode(code), msg)
}

// refuse sends the error event that precedes every close, then closes.
func (c *liveConn) refuse(code int, msg string) {
	_ = c.errorEvent(msg)
	c.closeWith(code, msg)
}

// What a live session is told when the box shuts down: first that it
// stops now (its final lanes follow), and, if shutdown_grace_s runs out
// before done, that it was cut.
const (
	shutdownStopMessage = "the box is shutting down: this session stops now as if stop had been sent; its final lanes and done follow"
	shutdownCutMessage  = "the box shut down before this session was done (shutdown_grace_s ran out); reconnect once it is back: the session's transcript was not kept"
)

// liveMsg is one message from the client.
type liveMsg struct {
	typ  websocket.MessageType
	data []byte
	size int64 // bytes when over liveFrameLimit (data is then nil)
	huge bool  // over liveMessageCap: the socket closes
}

// readLive reads one message, keeping at most liveFrameLimit bytes.
func readLive(ctx context.Context, conn *websocket.Conn) (liveMsg, error) {
	typ, r, err := conn.Reader(ctx)
	if err != nil {
		return liveMsg{}, err
	}
	data, err := io.ReadAll(io.LimitReader(r, liveFrameLimit+1))
	if err != nil {
		return liveMsg{}, err
	}
	if len(data) <= liveFrameLimit {
		return liveMsg{typ: typ, data: data}, nil
	}
	n, err := io.Copy(io.Discard, io.LimitReader(r, liveMessageCap-int64(len(data))+1))
	if err != nil {
		return liveMsg{}, err
	}
	size := int64(len(data)) + n
	return liveMsg{typ: typ, size: size, huge: size > liveMessageCap}, nil
}

// stopMessage is the one text frame a client sends.
type stopMessage struct {
	Type string `json:"type"`
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

	var stopDone chan error // set while Stop runs
	stopCtx, stopCancel := context.WithCancel(ctx)
	defer stopCancel()
	drain := s.drain // nil once seen
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
				var sm stopMessage
				if json.Unmarshal(m.data, &sm) != nil || sm.Type != "stop" {
					sess.Error("unknown text frame: " + textFrameHelp)
					continue
				}
				stopDone = make(chan error, 1)
				go func(done chan<- error) { done <- sess.Stop(stopCtx) }(stopDone)
			}
		}
	}
}
