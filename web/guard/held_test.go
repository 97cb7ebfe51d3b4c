package guard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHeldError: the one held-error writer behind strict's plain-text
// rewrite and the SDKs' OpenAI object. A flush while an error is held does
// not send a 200; a held body over the limit spills as written (spill) or
// is cut (not spill); successes and unpicked errors pass untouched.
func TestHeldError(t *testing.T) {
	upper := func(code int, body []byte) ([]byte, bool) {
		return []byte(`{"error":"` + strings.ToUpper(string(body)) + `"}`), true
	}
	for _, tc := range []struct {
		name     string
		ct       string
		code     int
		flush    bool
		body     string
		spill    bool
		want     int
		wantBody string
	}{
		{"held and rewritten", "text/plain", 400, false, "bad", false, 400, `{"error":"BAD"}`},
		{"flush while held", "text/plain", 413, true, "too big", false, 413, `{"error":"TOO BIG"}`},
		{"cut at the limit", "text/plain", 400, false, "0123456789abc", false, 400, `{"error":"0123456789"}`},
		{"spilled past the limit", "text/plain", 400, false, "0123456789abc", true, 400, "0123456789abc"},
		{"success passes", "text/plain", 200, true, "ok", false, 200, "ok"},
		{"unpicked error passes", "application/json", 404, false, `{"error":"x"}`, false, 404, `{"error":"x"}`},
	} {
		rec := httptest.NewRecorder()
		h := &heldError{ResponseWriter: rec, limit: 10, spill: tc.spill, hold: func(h http.Header) bool { return h.Get("Content-Type") == "text/plain" }}
		h.Header().Set("Content-Type", tc.ct)
		h.WriteHeader(tc.code)
		if tc.flush {
			h.Flush()
		}
		_, _ = h.Write([]byte(tc.body))
		h.finish(upper)
		if rec.Code != tc.want || rec.Body.String() != tc.wantBody {
			t.Errorf("%s: %d %q, want %d %q", tc.name, rec.Code, rec.Body.String(), tc.want, tc.wantBody)
		}
	}
}
