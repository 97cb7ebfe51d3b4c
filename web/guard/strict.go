package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"reflect"
	"strings"

	"boxd/internal/problem"
	"boxd/web/api"
)

// Strictness against crafted requests (docs/decisions.md, "Hostile
// clients"): every error is {"error": …} JSON, also where net/http or a
// library would answer in plain text or HTML (strict here; the server's
// own canned answers in canned.go), and request bodies are read strictly
// (body.go, strictKeys here: no key twice, no key in the wrong case).

// Strict answers what must not reach the mux: CONNECT (405), request
// targets that are not clean paths (400, where the mux would redirect to
// the cleaned path with an HTML body), and a subtree's root without its
// slash (the mux's redirect to /tree/; notFound answers instead). Errors
// handlers write as plain text or HTML (websocket.Accept's handshake
// refusals) become JSON (plainErrors).
func Strict(mux *http.ServeMux, notFound http.HandlerFunc) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		redirect := reflect.TypeOf(http.RedirectHandler("/", http.StatusMovedPermanently))
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodConnect {
				w.Header().Set("Allow", "DELETE, GET, HEAD, OPTIONS, POST")
				api.WriteProblem(w, problem.New(problem.MethodNotAllowed, "%s", "CONNECT is not supported: boxd is an API server, not a proxy"))
				return
			}
			if p := r.URL.EscapedPath(); p != cleanPath(p) {
				api.WriteProblem(w, problem.New(problem.Invalid, "%s", uncleanPath(p)))
				return
			}
			if h, _ := mux.Handler(r); reflect.TypeOf(h) == redirect {
				notFound(w, r)
				return
			}
			pw := plainErrors(w)
			next.ServeHTTP(pw, r)
			pw.finish(plainErrorJSON)
		})
	}
}

// cleanPath is the path ServeMux routes a request by (its cleanPath): a
// leading slash, no empty, . or .. segments, a trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		if len(p) == len(np)+1 && strings.HasPrefix(p, np) {
			return p
		}
		np += "/"
	}
	return np
}

func uncleanPath(p string) string {
	shown := p
	if len(shown) > 200 {
		shown = shown[:200] + "…"
	}
	if !strings.HasPrefix(p, "/") {
		return fmt.Sprintf("request target %q is not a path; send a path starting with /", shown)
	}
	clean := cleanPath(p)
	if len(clean) > 200 {
		clean = clean[:200] + "…"
	}
	return fmt.Sprintf("path %q has empty, . or .. segments; the box does not resolve them: request %s", shown, clean)
}

// plainErrors holds back an error response written as text/plain or
// text/html (net/http's and websocket.Accept's), to be written as
// {"error": …} when the handler returns (plainErrorJSON).
func plainErrors(w http.ResponseWriter) *heldError {
	return &heldError{ResponseWriter: w, limit: plainErrorText, hold: func(h http.Header) bool {
		ct := h.Get("Content-Type")
		return strings.HasPrefix(ct, "text/plain") || strings.HasPrefix(ct, "text/html")
	}}
}

// plainErrorText bounds the text kept from a held error.
const plainErrorText = 1 << 10

// plainErrorJSON is a held plain-text error as {"error": its text}.
func plainErrorJSON(code int, text []byte) ([]byte, bool) {
	msg := strings.TrimSpace(strings.ToValidUTF8(string(text), "\uFFFD"))
	if msg == "" {
		msg = http.StatusText(code)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(api.ErrorBody{Error: msg}) != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// Shapes of the request types that decode themselves, so that strictKeys
// knows their keys, and the record of POST /record/verify, which is passed
// on as sent: records.Verify reports a duplicate key in it as its failed
// canonical check (200, ok false), as it does for any malformed record.
