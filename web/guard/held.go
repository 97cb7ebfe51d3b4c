package guard

import (
	"net/http"
	"strconv"
)

// heldError holds back an error response (status 400 or more, before
// anything was written) that hold picks by its headers, and on finish
// writes what rewrite makes of its body instead: net/http's and
// websocket.Accept's plain-text errors become {"error"} (strict), and the
// contract's {"error"} becomes OpenAI's object for the official SDKs
// (sdkErrors). Everything else passes through untouched.
type heldError struct {
	http.ResponseWriter
	hold func(h http.Header) bool
	// limit bounds the body kept. Past it, spill passes the response on
	// as written (a body that big is not an error this layer rewrites);
	// otherwise the rest is dropped (the first limit bytes are enough).
	limit   int
	spill   bool
	code    int // the held error's status; 0: none held
	body    []byte
	started bool
}

func (e *heldError) WriteHeader(code int) {
	if !e.started && e.code == 0 && code >= 400 && e.hold(e.Header()) {
		e.code = code
		return
	}
	e.started = true
	e.ResponseWriter.WriteHeader(code)
}

func (e *heldError) Write(b []byte) (int, error) {
	if e.code != 0 {
		room := e.limit - len(e.body)
		switch {
		case len(b) <= room:
			e.body = append(e.body, b...)
			return len(b), nil
		case !e.spill:
			e.body = append(e.body, b[:max(0, room)]...)
			return len(b), nil
		}
		e.release(e.body)
	}
	e.started = true
	return e.ResponseWriter.Write(b)
}

// Flush does nothing while an error is held: a flush would send the
// headers with status 200.
func (e *heldError) Flush() {
	if e.code != 0 {
		return
	}
	e.started = true
	_ = http.NewResponseController(e.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach Hijack and deadlines.
func (e *heldError) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// release writes the held status and body.
func (e *heldError) release(body []byte) {
	code := e.code
	e.code, e.body, e.started = 0, nil, true
	e.ResponseWriter.WriteHeader(code)
	_, _ = e.ResponseWriter.Write(body)
}

// finish answers a held error with rewrite's JSON body, or with the body
// as it was written when rewrite declines.
func (e *heldError) finish(rewrite func(code int, body []byte) ([]byte, bool)) {
	if e.code == 0 {
		return
	}
	out, ok := rewrite(e.code, e.body)
	if !ok {
		e.release(e.body)
		return
	}
	h := e.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	e.release(out)
}
