package platform

import (
	"context"
	"strings"
	"testing"

	"boxd/internal/problem"
)

// TestKeyLabelRefusesControlCharacters: a label holding a control or
// other non-printable character (terminal escapes, a bidirectional
// override, a line separator, bytes that are not UTF-8) is refused with
// 400 (problem.Invalid) naming the field and the character; printable
// labels, in any script and with emoji, are kept.
func TestKeyLabelRefusesControlCharacters(t *testing.T) {
	p, _ := newPlatform(t, nil)
	ctx := context.Background()
	for _, label := range []string{
		"clinic\x1b[2J\x1b[31mapp", // ANSI escapes
		"a\tb", "line\nbreak", "bell\a", "nul\x00", "del\x7f",
		"csi\u009b31m",       // C1 control
		"evil\u202etxt.exe",  // right-to-left override
		"zero\u200bwidth",    // zero-width space (format)
		"sep\u2028arator",    // line separator
		"private\ue000use",   // private use
		"not utf-8 \xff\xfe", // invalid UTF-8
		"replacement \ufffd", // what a decoder makes of invalid UTF-8
	} {
		_, _, d := p.CreateKey(ctx, KeySpec{Label: &label})
		if d == nil || d.Kind != problem.Invalid || !strings.Contains(d.Error(), "label") || !strings.Contains(d.Error(), "non-printable") {
			t.Errorf("label %q: %v, want an invalid-request refusal naming label", label, d)
		}
	}
	for _, label := range []string{"clinic app", "Clínica São Paulo", "東京 クリニック", "team 👩‍👩‍👧 ✓", "a\u00a0b", "  trimmed  "} {
		_, k, d := p.CreateKey(ctx, KeySpec{Label: &label})
		if d != nil || k.Label != strings.TrimSpace(label) {
			t.Errorf("label %q: %v, stored %q", label, d, k.Label)
		}
	}
	keys, _ := p.Store().ListKeys(ctx)
	if len(keys) != 6 {
		t.Errorf("%d keys stored, want the 6 printable ones", len(keys))
	}
}

// TestPrintableLabel: printable labels print as they are; any other is
// quoted with Go escapes, so a terminal shows it and obeys none of it.
func TestPrintableLabel(t *testing.T) {
	cases := map[string]string{
		"clinic app":       "clinic app",
		"Clínica 東京 👩‍👩‍👧": "Clínica 東京 👩‍👩‍👧",
		"":                 "",
		"x\x1b[2Jy":        `"x\x1b[2Jy"`,
		"a\tb":             `"a\tb"`,
		"evil\u202etxt":    `"evil\u202etxt"`,
		"bad \xff":         `"bad \xff"`,
	}
	for in, want := range cases {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %s, want %s", in, got, want)
		}
	}
}
