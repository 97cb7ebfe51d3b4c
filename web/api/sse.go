package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// SSEHeartbeat is the longest a started stream stays silent: after that
// long without an event a comment line (": keep-alive") is written, so
// proxies and clients with idle timeouts keep the stream. Tests shorten
// it.
var SSEHeartbeat = 15 * time.Second

// sseWriteTimeout bounds one write to a stream: a client that stops
// reading is cut (the write fails, the run's sink error stops the work)
// instead of holding its model sequence.
const sseWriteTimeout = 30 * time.Second

// SSE is the one server-sent-events writer of every streaming route
// (chat chunks, replays, tool runs). The status and headers go out with
// the first event, so a refusal before any output is still a status
// (fail); after it, a refusal is a last event. Nothing is written after
// the ending event. A heartbeat comment keeps a started stream alive.
// Methods are safe for concurrent use; close must be called before the
// handler returns.
type SSE struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	ended   bool
	closed  bool
	last    time.Time // last write

	stop chan struct{}
	done chan struct{}
}

// newSSE starts a stream on w; nothing is written until the first event.
func NewSSE(w http.ResponseWriter) *SSE {
	s := &SSE{w: w, rc: http.NewResponseController(w), stop: make(chan struct{}), done: make(chan struct{})}
	go s.heartbeat()
	return s
}

// ErrStreamEnded is returned by send after the ending event.
var ErrStreamEnded = errors.New("sse: the stream has ended")

// Started reports whether the status and headers were sent.
func (s *SSE) Started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// Send writes v (marshalled to JSON; a string is written as is) as one
// data line and flushes it.
func (s *SSE) Send(v any) error { return s.write(v, false) }

// End writes v as the stream's last event.
func (s *SSE) End(v any) error { return s.write(v, true) }

func (s *SSE) write(v any, last bool) error { return s.WriteEvent("", v, last) }

// WriteEvent writes v as one event, named (an "event:" line, as
// OpenAI's Responses stream names its events) unless name is "".
func (s *SSE) WriteEvent(name string, v any, last bool) error {
	var b []byte
	if str, ok := v.(string); ok {
		b = []byte(str)
	} else {
		var err error
		if b, err = json.Marshal(v); err != nil {
			return fmt.Errorf("sse: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.closed {
		return ErrStreamEnded
	}
	s.ended = last
	if !s.started {
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		s.w.WriteHeader(http.StatusOK)
		s.started = true
	}
	return s.flushLocked(func() error {
		var err error
		if name != "" {
			_, err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
		} else {
			_, err = fmt.Fprintf(s.w, "data: %s\n\n", b)
		}
		return err
	})
}

// flushLocked writes under a deadline and flushes.
func (s *SSE) flushLocked(write func() error) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	if err := write(); err != nil {
		return fmt.Errorf("sse: %w", err)
	}
	s.last = time.Now()
	if err := s.rc.Flush(); err != nil {
		return fmt.Errorf("sse: %w", err)
	}
	return nil
}

// Fail answers err: its status and {"error"} body before the stream
// started, else the tail events (an error event, chat's error chunk and
// [DONE]) as the stream's last. Nothing is written after the ending event.
func (s *SSE) Fail(err error, tail ...any) {
	s.mu.Lock()
	if s.ended || s.closed {
		s.mu.Unlock()
		return
	}
	if !s.started {
		s.ended = true
		s.mu.Unlock()
		WriteProblem(s.w, err)
		return
	}
	s.mu.Unlock()
	for i, v := range tail {
		if s.write(v, i == len(tail)-1) != nil {
			return
		}
	}
}

// Close stops the heartbeat; the stream writes nothing after it. Call it
// before the handler returns.
func (s *SSE) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.stop)
	}
	started := s.started
	s.mu.Unlock()
	<-s.done
	if started {
		_ = s.rc.SetWriteDeadline(time.Time{})
	}
}

func (s *SSE) heartbeat() {
	defer close(s.done)
	t := time.NewTicker(SSEHeartbeat / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		if s.started && !s.ended && !s.closed && time.Since(s.last) >= SSEHeartbeat {
			_ = s.flushLocked(func() error {
				_, err := fmt.Fprint(s.w, ": keep-alive\n\n")
				return err
			})
		}
		s.mu.Unlock()
	}
}

// SendEvent writes v as one named event ("event: name", then its data
// line), the stream's last when last: the Responses API names each event
// (the SDKs read the type from the data as well). Like write (sse.go),
// the status and headers go out with the first event.
func (s *SSE) SendEvent(name string, v any, last bool) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("sse: %w", err)
	}
	return s.WriteEvent(name, string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), last)
}
