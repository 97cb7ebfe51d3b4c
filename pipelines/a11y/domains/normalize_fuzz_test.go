package domains

import (
	"strings"
	"testing"

	"boxd/internal/problem"
)

// FuzzNormalize: a domain a key holder asks to verify (POST
// /a11y/domains/...) is read without panicking; a refusal is a 400 with
// a message; an accepted domain is lower-case ASCII letters, digits,
// hyphens and dots, of two or more labels of 1 to 63 bytes and at most
// 253 bytes in all, and the same when read again.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"shop.example.com", "Shop.Example.COM.", "bücher.example", "xn--bcher-kva.example", "localhost", "1.2.3.4",
		"[::1]", "example.com:443", "https://example.com", "a..b", "-a.example", "a_b.example", "\u200bexample.com",
		"ex\u0430mple.com", strings.Repeat("a.", 127) + "a", " example.com ", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Normalize(s)
		if err != nil {
			if p, ok := problem.As(err); !ok || p.Kind != problem.Invalid || p.Message == "" {
				t.Fatalf("refusal %v (%T), want a 400", err, err)
			}
			return
		}
		if len(d) > 253 || !strings.Contains(d, ".") || strings.Trim(d, "abcdefghijklmnopqrstuvwxyz0123456789-.") != "" {
			t.Fatalf("%q normalised to %q", s, d)
		}
		for _, l := range strings.Split(d, ".") {
			if l == "" || len(l) > 63 {
				t.Fatalf("%q normalised to %q, label %q", s, d, l)
			}
		}
		if again, err := Normalize(d); err != nil || again != d {
			t.Fatalf("%q normalised to %q, then %q (%v)", s, d, again, err)
		}
	})
}
