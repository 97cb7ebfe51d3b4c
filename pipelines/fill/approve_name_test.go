package fill

import (
	"crypto/ed25519"
	"strconv"
	"strings"
	"testing"
	"time"

	"boxd/engine/attest"
	"boxd/internal/problem"
)

type approvalKey struct {
	key *attest.Key
	rec *attest.Record
	now time.Time
}

func testApprovalKey(t *testing.T) approvalKey {
	t.Helper()
	k := attest.NewKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	now := time.Date(2026, 9, 23, 12, 0, 0, 0, time.UTC)
	rec, err := attest.NewRecord(RecordKind, "fr_1", nil).Sign(k, now)
	if err != nil {
		t.Fatal(err)
	}
	return approvalKey{k, rec, now}
}

// TestApprovalNameIsPlainText: person.name, which the signed approval
// record carries and every reader of it shows, is refused (400 naming the
// field, the character and its position) when it holds a terminal escape,
// a bidirectional override or isolate, an invisible format character, a
// line separator, a private-use character or U+FFFD; names in any script,
// Persian and Indic joiners included, pass.
func TestApprovalNameIsPlainText(t *testing.T) {
	body := func(name string) *ApproveBody {
		b := &ApproveBody{Confirm: true}
		b.Person.Name = name
		return b
	}
	for _, name := range []string{"Dr. Ana Núñez", "José-María O'Neil", "李小龙", "محمد", "علی\u200cرضا", "क्\u200dष", "Zoë Ødegård", "  Ann Lee  "} {
		if err := body(name).Validate(); err != nil {
			t.Errorf("%q refused: %v", name, err)
		}
	}
	for _, c := range []struct {
		name, code string
		at         int
	}{
		{"\x1b[31mAlice", "U+001B", 1},
		{"Alice\x1b]0;pwned\x07", "U+001B", 6},
		{"Alice\u202eecilA", "U+202E", 6},
		{"\u202aAlice", "U+202A", 1},
		{"Bob\u2066x\u2069", "U+2066", 4},
		{"Bob\u2069", "U+2069", 4},
		{"Al\u200bice", "U+200B", 3},
		{"\ufeffAlice", "U+FEFF", 1},
		{"Ann\u00adLee", "U+00AD", 4},
		{"\u200dAnn", "U+200D", 1},
		{"Ann\u200e", "U+200E", 4},
		{"Ann\u2028Lee", "U+2028", 4},
		{"Ann\x7fLee", "U+007F", 4},
		{"Ann\u0085Lee", "U+0085", 4},
		{"Ann\tLee", "U+0009", 4},
		{"Ann\uE000", "U+E000", 4},
		{"Ann\uFFFD", "U+FFFD", 4},
	} {
		err := body(c.name).Validate()
		p, ok := problem.As(err)
		if !ok || p.Kind != problem.Invalid || !strings.Contains(p.Message, "person.name") || !strings.Contains(p.Message, c.code) ||
			!strings.Contains(p.Message, "at character "+strconv.Itoa(c.at)) {
			t.Errorf("%q: %v, want 400 naming person.name, %s at character %d", c.name, err, c.code, c.at)
		}
	}
}

// TestApprovalFlagsNamedOnce: acknowledge_flags names each flag once (a
// list of one flag repeated thousands of times, within the body's 16 KiB,
// was signed whole into the approval record), so the record holds at most
// MaxFlags numbers.
func TestApprovalFlagsNamedOnce(t *testing.T) {
	k := testApprovalKey(t)
	out := &Result{ID: "fr_1", Record: k.rec, Review: Review{Flags: []Flag{{N: 1, Why: "x"}, {N: 2, Why: "y"}}}}
	b := ApproveBody{Confirm: true, AcknowledgeFlags: []int{1, 2, 1}}
	b.Person.Name = "Ana Ruiz"
	_, err := Approve(out, b, k.key, k.now)
	if p, ok := problem.As(err); !ok || p.Kind != problem.Invalid || !strings.Contains(p.Message, "names 1 twice") {
		t.Errorf("a flag named twice: %v", err)
	}
	b.AcknowledgeFlags = []int{2, 1}
	if a, err := Approve(out, b, k.key, k.now); err != nil || len(a.Acknowledged) != 2 {
		t.Errorf("each flag once: %v", err)
	}
}
