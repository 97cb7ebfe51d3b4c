package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"boxd/engine/asr/stream"
	"boxd/pipelines/live"
)

// The one WebSocket sink: events as JSON text frames, each write bounded,
// refusals as an error event and then a close code whose reason fits a
// close frame.

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

// wantsWebSocket reports whether r asks for a WebSocket upgrade.
func wantsWebSocket(r *http.Request) bool {
	for _, v := range strings.Split(r.Header.Get("Upgrade"), ",") {
		if strings.EqualFold(strings.TrimSpace(v), "websocket") {
			return true
		}
	}
	return false
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
