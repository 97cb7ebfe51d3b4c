package web

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"boxd/problem"
)

// Body size limits of the platform routes.
const (
	smallBody  = 4 << 10  // POST /demo/session
	keyBody    = 16 << 10 // POST /v1/keys
	recordBody = 17 << 20 // POST /record/verify (a record may be 16 MiB)
)

func badRequest(format string, args ...any) *problem.Error {
	return problem.New(problem.Invalid, format, args...)
}

// decodeJSON reads one JSON object of at most limit bytes into dst,
// refusing unknown fields, wrong types, trailing data and other media types
// with a message that names the problem.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, dst any) *problem.Error {
	if e := checkJSONType(r); e != nil {
		return e
	}
	if r.ContentLength > limit {
		return tooLarge(limit)
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err, limit)
	}
	if _, err := dec.Token(); err != io.EOF {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(limit)
		}
		return badRequest("body has data after its JSON object; send exactly one object")
	}
	return nil
}

// checkJSONType accepts no Content-Type, JSON types, and curl's default for
// -d (application/x-www-form-urlencoded), whose body is read as JSON too;
// other types (multipart, XML) get 415.
func checkJSONType(r *http.Request) *problem.Error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "application/x-www-form-urlencoded" || mt == "text/plain") {
		return nil
	}
	return problem.New(problem.Unsupported, "Content-Type %q: send a JSON body with Content-Type: application/json", ct)
}

func tooLarge(limit int64) *problem.Error {
	return problem.New(problem.TooLarge, "body is larger than %d bytes, this route's limit", limit)
}

func jsonError(err error, limit int64) *problem.Error {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
		mbe    *http.MaxBytesError
	)
	switch {
	case errors.As(err, &mbe):
		return tooLarge(limit)
	case errors.Is(err, io.EOF):
		return badRequest("empty body; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("body ends in the middle of its JSON; send a complete JSON object")
	case errors.As(err, &syntax):
		return badRequest("body is not valid JSON (at byte %d): %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badRequest("body must be a JSON object, not %s", article(typ.Value))
		}
		return badRequest("field %s must be %s, not %s", typ.Field, goTypeName(typ.Type.String()), article(typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return badRequest("unknown field %s; remove it", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return badRequest("body: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func article(jsonKind string) string {
	switch jsonKind {
	case "object":
		return "an object"
	case "array":
		return "an array"
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	case "null":
		return "null"
	}
	if strings.HasPrefix(jsonKind, "number ") {
		return "the number " + strings.TrimPrefix(jsonKind, "number ")
	}
	return jsonKind
}

func goTypeName(t string) string {
	t = strings.TrimPrefix(t, "*")
	switch {
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map[") || strings.Contains(t, "."):
		return "an object"
	}
	return t
}

// bearer returns the token of an Authorization: Bearer header ("" if none).
func bearer(r *http.Request) (string, bool) {
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
