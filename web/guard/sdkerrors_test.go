package guard

import (
	"net/http"
	"testing"
)

// TestOpenAIErrorShape covers the rewrite itself: which requests get it,
// and what it does to bodies that are not the contract's error.
func TestOpenAIErrorShape(t *testing.T) {
	for _, tc := range []struct {
		path   string
		header string
		want   bool
	}{
		{"/v1/chat/completions", "X-Stainless-Lang", true},
		{"/v1/models", "x-stainless-package-version", true},
		{"/v1/chat/completions", "", false},
		{"/v1/chat/completions", "X-Stainless", false},
		{"/live/clinical", "X-Stainless-Lang", false},
	} {
		r, _ := http.NewRequest("GET", "http://box"+tc.path, nil)
		if tc.header != "" {
			r.Header.Set(tc.header, "go")
		}
		if got := fromOpenAISDK(r); got != tc.want {
			t.Errorf("%s with %q: %v", tc.path, tc.header, got)
		}
	}
	out, ok := openAIErrorBody(403, []byte(`{"error":"origin x is not allowed","category":"policy"}`))
	if !ok || string(out) != `{"error":{"category":"policy","code":"forbidden","message":"origin x is not allowed","param":null,"type":"permission_error"}}`+"\n" {
		t.Errorf("rewrite: %s", out)
	}
	for _, body := range []string{`{"error":{"message":"x"}}`, `not json`, `{"other":"x"}`} {
		if _, ok := openAIErrorBody(400, []byte(body)); ok {
			t.Errorf("%s was rewritten", body)
		}
	}
}
