package guard

import (
	"strings"
	"testing"
)

// FuzzCleanPath: the request target the box routes by is a fixed point of
// cleanPath, and every unclean target gets a message.
func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"/a/../b//c/./", "", "/", "x", "//", "/v1/chat/completions", "/a/b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		if c := cleanPath(target); cleanPath(c) != c || !strings.HasPrefix(c, "/") {
			t.Fatalf("cleanPath(%q) = %q, again %q", target, c, cleanPath(c))
		}
		if p := uncleanPath(target); p == "" {
			t.Fatal("uncleanPath gave no message")
		}
	})
}
