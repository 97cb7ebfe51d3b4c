package live

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"boxd/internal/families"
	"boxd/web/api"
)

// FuzzLiveControl: what a live socket's caller controls besides audio
// (the query of /ws/live and its text frames) and the request headers
// every route reads (Authorization, Accept, Upgrade) never panic; a query
// accepted names a live vertical and gives lang and target only to a
// vertical that takes them; a text frame other than JSON is not a stop.
// (The request target: web/guard's FuzzCleanPath.)
func FuzzLiveControl(f *testing.F) {
	for _, s := range []struct{ query, frame, header string }{
		{"vertical=clinical&token=abc", `{"type":"stop"}`, "Bearer dk_x"},
		{"vertical=translate&lang=de-AT&target=en-GB", `{"type":"stop","x":1}`, "bearer  "},
		{"vertical=translate&lang=xx&target=auto", `{"type":"STOP"}`, "Basic abc"},
		{"vertical=sales&lang=de", `{"type":"stop"`, "text/event-stream, */*;q=0.1"},
		{"vertical=clinical&vertical=sales", `"stop"`, "websocket, h2c"},
		{"vertical=%zz&token=%", "\x00", "/a/../b//c/./"},
		{"", "", ""},
	} {
		f.Add(s.query, []byte(s.frame), s.header)
	}
	f.Fuzz(func(t *testing.T, query string, frame []byte, header string) {
		if q, err := url.ParseQuery(query); err == nil {
			lq, err := parseLiveQuery(q)
			if err == nil {
				if !slices.Contains(VerticalIDs, lq.vertical) {
					t.Fatalf("accepted vertical %q", lq.vertical)
				}
				if !families.AcceptsLiveParam(lq.vertical, "lang") && (lq.lang != "" || lq.target != "" || q.Has("lang") || q.Has("target")) {
					t.Fatalf("lang %q target %q for %s", lq.lang, lq.target, lq.vertical)
				}
			} else if err.Error() == "" {
				t.Fatal("a refusal without a message")
			}
		}
		if IsStopFrame(frame) && (!json.Valid(frame) || !bytes.Contains(frame, []byte(`"type"`))) {
			t.Fatalf("%q read as stop", frame)
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", header)
		r.Header.Set("Accept", header)
		r.Header.Set("Upgrade", header)
		if tok, ok := api.BearerToken(r); ok && tok != "" && !strings.Contains(header, tok) {
			t.Fatalf("bearer token %q is not in %q", tok, header)
		}
		_, _ = api.WantsStream(r), api.WantsWebSocket(r)
	})
}
