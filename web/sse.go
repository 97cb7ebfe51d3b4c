package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// sseHeartbeat is the longest a started stream stays silent: after that
// long without an event a comment line (": keep-alive") is written, so
// proxies and clients with idle timeouts keep the stream. Tests shorten
// it.
var sseHeartbeat = 15 * time.Second

// sseWriteTimeout bounds one write to a stream: a client that stops
// reading is cut (the write fails, the run's sink error stops the work)
// instead of holding its model sequence.
const sseWriteTimeout = 30 * time.Second

// sseStream is the one server-sent-events writer of every streaming route
// (chat chunks, replays, tool runs). The status and headers go out with
// the first event, so a refusal before any output is still a status
// (fail); after it, a refusal is a last event. Nothing is written after
// the ending event. A heartbeat comment keeps a started stream alive.
// Methods are safe for concurrent use; close must be called before the
// handler returns.
type sseStream struct {
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
func newSSE(w http.ResponseWriter) *sseStream {
	s := &sseStream{w: w, rc: http.NewResponseController(w), stop: make(chan struct{}), done: make(chan struct{})}
	go s.heartbeat()
	return s
}

// errStreamEnded is returned by send after the ending event.
var errStreamEnded = errors.New("sse: the stream has ended")

// Started reports whether the status and headers were sent.
func (s *sseStream) Started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// send writes v (marshalled to JSON; a string is written as is) as one
// data line and flushes it.
func (s *sseStream) send(v any) error { return s.write(v, false) }

// end writes v as the stream's last event.
func (s *sseStream) end(v any) error { return s.write(v, true) }

func (s *sseStream) write(v any, last bool) error { return s.writeEvent("", v, last) }

// writeEvent writes v as one event, named (an "event:" line, as
// OpenAI's Responses stream names its events) unless name is "".
func (s *sseStream) writeEvent(name string, v any, last bool) error {
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
		return errStreamEnded
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
func (s *sseStream) flushLocked(write func() error) error {
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

// fail answers err: its status and {"error"} body before the stream
// started, else the tail events (an error event, chat's error chunk and
// [DONE]) as the stream's last. Nothing is written after the ending event.
func (s *sseStream) fail(err error, tail ...any) {
	s.mu.Lock()
	if s.ended || s.closed {
		s.mu.Unlock()
		return
	}
	if !s.started {
		s.ended = true
		s.mu.Unlock()
		writeProblem(s.w, err)
		return
	}
	s.mu.Unlock()
	for i, v := range tail {
		if s.write(v, i == len(tail)-1) != nil {
			return
		}
	}
}

// close stops the heartbeat; the stream writes nothing after it. Call it
// before the handler returns.
func (s *sseStream) close() {
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

func (s *sseStream) heartbeat() {
	defer close(s.done)
	t := time.NewTicker(sseHeartbeat / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		if s.started && !s.ended && !s.closed && time.Since(s.last) >= sseHeartbeat {
			_ = s.flushLocked(func() error {
				_, err := fmt.Fprint(s.w, ": keep-alive\n\n")
				return err
			})
		}
		s.mu.Unlock()
	}
}
