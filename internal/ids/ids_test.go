package ids

import (
	"regexp"
	"testing"
)

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func() string
		want string
	}{
		{"completion", func() string { return New("chatcmpl-", 12) }, `^chatcmpl-[0-9a-f]{24}$`},
		{"tool call", func() string { return New("call_", 12) }, `^call_[0-9a-f]{24}$`},
		{"job", func() string { return New("job_", 12) }, `^job_[0-9a-f]{24}$`},
		{"report", func() string { return New("rp_", 12) }, `^rp_[0-9a-f]{24}$`},
		{"site check", func() string { return New("sc_", 12) }, `^sc_[0-9a-f]{24}$`},
		{"key id", func() string { return New("key_", 8) }, `^key_[0-9a-f]{16}$`},
		{"request id", func() string { return New("", 8) }, `^[0-9a-f]{16}$`},
		{"session token", func() string { return Token("ds_", 32) }, `^ds_[A-Za-z0-9_-]{43}$`},
		{"key secret", func() string { return Token("dk_", 32) }, `^dk_[A-Za-z0-9_-]{43}$`},
		{"odd length token", func() string { return Token("", 5) }, `^[A-Za-z0-9_-]{7}$`},
		{"empty", func() string { return New("x", 0) + Token("y", 0) }, `^xy$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			re := regexp.MustCompile(tc.want)
			seen := map[string]bool{}
			for range 100 {
				id := tc.make()
				if !re.MatchString(id) {
					t.Fatalf("%q does not match %s", id, tc.want)
				}
				seen[id] = true
			}
			if tc.name != "empty" && len(seen) != 100 {
				t.Errorf("%d distinct of 100", len(seen))
			}
		})
	}
}
