package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"boxd/internal/run"
)

// socketWriteTimeout bounds one event write: a client that stops reading
// is dropped instead of holding its run.
const socketWriteTimeout = 10 * time.Second

// Pings find dead peers: a socket whose peer does not answer a ping within
// PingTimeout is dropped (its run ends as if the client left). Tests
// shorten them.
var (
	PingEvery   = 30 * time.Second
	PingTimeout = 10 * time.Second
)

// Socket is the one WebSocket sink: run events as text messages under a
// write timeout, refusals as an error event and the kind's close code
// (the problem table), close reasons cut to the 123 bytes a close frame
// holds, reads bounded per message, and pings. A socket route's Upgrade
// returns one (it is an api.Conn).
type Socket struct {
	Conn *websocket.Conn
	now  func() time.Time
	// Began is when the run started (the at_ms of the socket's own error
	// events); zero: at_ms 0.
	Began time.Time
}

// AcceptSocket upgrades r; on an error the request was answered (426,
// 400, …). Reads are bounded by ReadMessage, not by the library.
func AcceptSocket(w http.ResponseWriter, r *http.Request, now func() time.Time) (*Socket, error) {
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(-1) // ReadMessage bounds every message
	return &Socket{Conn: conn, now: now}, nil
}

// Send writes one event.
func (c *Socket) Send(ev run.Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), socketWriteTimeout)
	defer cancel()
	return c.Conn.Write(ctx, websocket.MessageText, b)
}

// ErrorEvent sends an error event with msg, at the run's clock.
func (c *Socket) ErrorEvent(msg string) error {
	var at int64
	if !c.Began.IsZero() {
		at = c.now().Sub(c.Began).Milliseconds()
	}
	return c.Send(run.Event{Type: run.TypeError, AtMS: at, Body: run.ErrorBody{Message: msg}})
}

// CloseWith closes with code and msg (cut to fit a close frame).
func (c *Socket) CloseWith(code int, msg string) {
	if len(msg) > 123 {
		cut := 120
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	_ = c.Conn.Close(websocket.StatusCode(code), msg)
}

// Refuse tells a refusal (Conn): an error event, then the kind's close
// code.
func (c *Socket) Refuse(err error) { c.RefuseWith(CloseCodeOf(err), Message(err)) }

// RefuseWith sends an error event with msg and closes with code.
func (c *Socket) RefuseWith(code int, msg string) {
	_ = c.ErrorEvent(msg)
	c.CloseWith(code, msg)
}

// SocketMessage is one message read from a socket.
type SocketMessage struct {
	Type websocket.MessageType
	Data []byte
	Size int64 // bytes when over the frame limit (Data is then nil)
	Huge bool  // over the message cap: the socket closes
}

// ReadMessage reads one message: up to limit bytes whole; a larger one up
// to most is read and dropped (Size says how large); above most it is
// Huge and reading stops there.
func (c *Socket) ReadMessage(ctx context.Context, limit int, most int64) (SocketMessage, error) {
	typ, r, err := c.Conn.Reader(ctx)
	if err != nil {
		return SocketMessage{}, err
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return SocketMessage{}, err
	}
	if len(data) <= limit {
		return SocketMessage{Type: typ, Data: data}, nil
	}
	n, err := io.Copy(io.Discard, io.LimitReader(r, most-int64(len(data))+1))
	if err != nil {
		return SocketMessage{}, err
	}
	size := int64(len(data)) + n
	return SocketMessage{Type: typ, Size: size, Huge: size > most}, nil
}

// KeepAlive pings the peer every PingEvery until ctx ends; a ping not
// answered within PingTimeout calls cancel (the peer is gone).
func (c *Socket) KeepAlive(ctx context.Context, cancel context.CancelFunc) {
	t := time.NewTicker(PingEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, pcancel := context.WithTimeout(ctx, PingTimeout)
		err := c.Conn.Ping(pctx)
		pcancel()
		if err != nil {
			cancel()
			return
		}
	}
}
