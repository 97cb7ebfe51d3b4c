// Package problem is boxd's one error type for what a caller is told: a
// kind (what went wrong, in the caller's terms), a message that says what
// to fix, an optional wait before retrying and optional extra fields of the
// answer body.
//
// Pipelines and platform code return *Error; only the web package maps a
// kind to an HTTP status and a WebSocket close code (one table there), so
// nothing outside web names a status. An error that is not a *Error is an
// internal failure.
package problem

import (
	"errors"
	"fmt"
	"time"
)

// Kind is what went wrong, as the caller should act on it.
type Kind uint8

// The kinds. The comments give the HTTP status and close code web maps
// each to; the mapping itself lives in web/api (problem.go).
const (
	Internal      Kind = iota // 500, close 1011: a fault of the box
	Invalid                   // 400, close 4400: the request is wrong; fix it
	Unauthorized              // 401, close 4401: no, bad, expired or revoked credentials
	Budget                    // 402, close 4402: a token or audio budget is used up
	Forbidden                 // 403, close 4403: these credentials may not do this
	NotFound                  // 404: no such resource (also a foreign or expired run)
	Conflict                  // 409, close 4409: one at a time (a demo token's run, a state)
	TooLarge                  // 413, close 1009: a body, field or prompt over its limit
	Unsupported               // 415: a media type the route does not read
	Unprocessable             // 422: well formed but refused by a policy
	RateLimited               // 429, close 4429: a rate or cap; RetryAfter says when
	Upstream                  // 502, close 1011: the model or a fetched site failed
	Unavailable               // 503, close 1011: this box cannot serve it now (missing model, full store)
	Busy                      // 503, close 4429: every slot is in use; retry after RetryAfter
	ShuttingDown              // 503, close 1001: the box is stopping
	Timeout                   // 408, close 4408: the request (its body) did not arrive in time
	// The transport's own answers: the method (405), a Host that does not
	// name the box (421), an HTTP request to a socket route (426), a byte
	// range outside a file (416), a file changed since a condition (412).
	MethodNotAllowed
	Misdirected
	UpgradeRequired
	RangeNotSatisfiable
	PreconditionFailed
)

var kindNames = [...]string{
	Internal: "internal", Invalid: "invalid", Unauthorized: "unauthorized", Budget: "budget",
	Forbidden: "forbidden", NotFound: "not found", Conflict: "conflict", TooLarge: "too large",
	Unsupported: "unsupported media", Unprocessable: "unprocessable", RateLimited: "rate limited",
	Upstream: "upstream", Unavailable: "unavailable", Busy: "busy", ShuttingDown: "shutting down",
	Timeout: "timeout", MethodNotAllowed: "method not allowed", Misdirected: "misdirected",
	UpgradeRequired: "upgrade required", RangeNotSatisfiable: "range not satisfiable",
	PreconditionFailed: "precondition failed",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Kinds lists every kind (for tables that must cover them all).
func Kinds() []Kind {
	out := make([]Kind, len(kindNames))
	for i := range kindNames {
		out[i] = Kind(i)
	}
	return out
}

// Error is a refusal or failure the caller is told about.
type Error struct {
	Kind Kind
	// Message becomes {"error": Message}: it says what to fix.
	Message string
	// RetryAfter, when positive, becomes Retry-After (rounded up to whole
	// seconds, at least 1).
	RetryAfter time.Duration
	// Fields are extra fields of the answer body beside "error" (studio's
	// category and policy_url, staging's category and layer).
	Fields map[string]any
	// Cause is the underlying error, for logs and errors.Is; never shown.
	Cause error
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// New makes an error of kind with a formatted message.
func New(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Wrap makes an error of kind with a formatted message and a cause.
func Wrap(k Kind, cause error, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// Retry returns e with RetryAfter set.
func (e *Error) Retry(d time.Duration) *Error {
	e.RetryAfter = d
	return e
}

// With returns e with an extra body field.
func (e *Error) With(key string, value any) *Error {
	if e.Fields == nil {
		e.Fields = map[string]any{}
	}
	e.Fields[key] = value
	return e
}

// As returns the *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// KindOf is the kind of err: Internal when err holds no *Error.
func KindOf(err error) Kind {
	if e, ok := As(err); ok {
		return e.Kind
	}
	return Internal
}

// Is reports whether err holds an *Error of kind k.
func Is(err error, k Kind) bool {
	e, ok := As(err)
	return ok && e.Kind == k
}

// RetrySeconds is d as Retry-After: whole seconds rounded up, at least 1.
func RetrySeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(1, s)
}
