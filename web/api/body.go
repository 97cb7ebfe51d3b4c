package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"boxd/internal/problem"
	"boxd/internal/strictjson"
)

// BadRequest is a 400 refusal saying what to fix.
func BadRequest(format string, args ...any) *problem.Error {
	return problem.New(problem.Invalid, format, args...)
}

// decodeJSON reads one JSON object of at most limit bytes into dst,
// refusing unknown fields, wrong types, trailing data, duplicate and
// wrong-case keys and other media types with a message that names the
// problem.
func DecodeJSON(w http.ResponseWriter, r *http.Request, limit int64, dst any) *problem.Error {
	return decodeBody(w, r, limit, dst, false)
}

// decodeBody is decodeJSON; lenient ignores unknown fields (decodeOpenAI:
// OpenAI clients send fields a box does not use). The body is read whole
// (it is at most limit bytes), decoded, then its keys are checked
// (strict.go: a key twice in one object, a key in the wrong case).
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, dst any, lenient bool) *problem.Error {
	if e := checkJSONType(r); e != nil {
		return e
	}
	if r.ContentLength > limit {
		return tooLarge(limit)
	}
	data, e := readBody(w, r, limit)
	if e != nil {
		return e
	}
	if b := strictjson.BOM(data); b != nil {
		return BadRequest("the body %s", b)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if !lenient {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(dst); err != nil {
		return jsonError(strictjson.Explain(data, err), limit)
	}
	if _, err := dec.Token(); err != io.EOF {
		return BadRequest("body has data after its JSON object; send exactly one object")
	}
	return strictKeys(data, dst)
}

// readBody reads a body of at most limit bytes. Its buffer grows with the
// bytes that arrive (doubling, from 64 KiB at most), never ahead of them
// to the Content-Length a client declares: a client that declares
// megabytes and sends nothing holds nothing, and a buffer is at most
// twice the bytes received. The declared length caps the growth (the
// server ends the body there), so a body that arrives whole ends in a
// buffer of its size. Errors are jsonError's (413, the body's deadline
// or the box's body memory, a body cut short).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *problem.Error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	// One byte past a declared length lets the end be read without
	// another growth.
	ceiling := limit + 1
	if n := r.ContentLength; n >= 0 && n < limit {
		ceiling = n + 1
	}
	buf := make([]byte, 0, min(ceiling, bodyStartBuffer))
	for {
		if len(buf) == cap(buf) {
			size := 2 * int64(cap(buf))
			if int64(cap(buf)) < ceiling {
				size = min(size, ceiling)
			}
			next := make([]byte, len(buf), size)
			copy(next, buf)
			buf = next
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, jsonError(err, limit)
		}
	}
}

// bodyStartBuffer is the most a body's buffer starts with.
const bodyStartBuffer = 64 << 10

// checkJSONType accepts no Content-Type and JSON types (application/json,
// any +json); every other type gets 415: multipart, XML, and also
// application/x-www-form-urlencoded (curl's default for -d) and
// text/plain, the types a browser page may send to another origin
// without a preflight.
func checkJSONType(r *http.Request) *problem.Error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return nil
	}
	hint := ""
	if mt == "application/x-www-form-urlencoded" {
		hint = " (curl -d sends application/x-www-form-urlencoded unless told otherwise)"
	}
	return problem.New(problem.Unsupported, "Content-Type %q is not JSON: send a JSON body with Content-Type: application/json, e.g. curl -H 'Content-Type: application/json'%s", ct, hint)
}

func tooLarge(limit int64) *problem.Error {
	return problem.New(problem.TooLarge, "body is larger than %d bytes, this route's limit", limit)
}

func jsonError(err error, limit int64) *problem.Error {
	var (
		syntax *json.SyntaxError
		named  *strictjson.TypeError
		mbe    *http.MaxBytesError
	)
	if p, ok := problem.As(err); ok { // the body's deadline (limits.go)
		return p
	}
	switch {
	case errors.As(err, &mbe):
		return tooLarge(limit)
	case errors.Is(err, io.EOF):
		return BadRequest("empty body; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return BadRequest("body ends in the middle of its JSON; send a complete JSON object")
	case errors.As(err, &syntax):
		return BadRequest("body is not valid JSON (at byte %d): %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &named): // decodeBody's, explained: the path, in JSON's words
		if named.Path == "" {
			return BadRequest("body must be %s, not %s", strings.Replace(named.Want, "an object", "a JSON object", 1), named.Got)
		}
		return BadRequest("field %s must be %s, not %s", named.Path, named.Want, named.Got)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return BadRequest("unknown field %s; remove it", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return BadRequest("body: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// bearer returns the token of an Authorization: Bearer header ("" if none).
func BearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", true
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// DecodeOpenAI reads a JSON body like decodeJSON but ignores unknown fields:
// OpenAI clients send fields a box does not use. Duplicate and wrong-case
// keys are refused all the same (body.go).
func DecodeOpenAI(w http.ResponseWriter, r *http.Request, limit int64, dst any) *problem.Error {
	return decodeBody(w, r, limit, dst, true)
}

// strictKeys refuses a body (already decoded into dst) with a key twice in
// one object, at any depth, or a key that matches a field only when case
// is ignored (encoding/json accepts both: the last value wins, "Model"
// sets model).
func strictKeys(data []byte, dst any) *problem.Error {
	if e := strictjson.Check(data, dst); e != nil {
		return BadRequest("%s", e.Error())
	}
	return nil
}
