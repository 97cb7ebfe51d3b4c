package fill

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/internal/records"
)

// ApprovalKind is the kind of the signed approval record.
const ApprovalKind = "fill-approval"

// ApproveBody is POST /fill/runs/{run_id}/approve's body.
type ApproveBody struct {
	Person struct {
		Name string `json:"name"`
	} `json:"person"`
	Confirm          bool  `json:"confirm"`
	AcknowledgeFlags []int `json:"acknowledge_flags"`
}

// Validate checks the body's own fields.
func (b *ApproveBody) Validate() error {
	name := strings.TrimSpace(b.Person.Name)
	switch {
	case !b.Confirm:
		return problem.New(problem.Invalid, "confirm must be true: the person confirms they reviewed every field")
	case name == "" || len([]rune(name)) > 200:
		return problem.New(problem.Invalid, "person.name is required (at most 200 characters): the approval names who approved")
	}
	if at, r, what := unprintable(name); what != "" {
		return problem.New(problem.Invalid, "person.name holds U+%04X (%s) at character %d: send the name as plain text, without control, bidirectional or invisible formatting characters",
			r, what, at)
	}
	return nil
}

// unprintable finds the first character of a name that is not plain text
// (1-based position, the character, what it is; "" when there is none):
// control characters (ESC begins terminal escapes), bidirectional
// embeddings, overrides and isolates (U+202A to U+202E, U+2066 to U+2069,
// which reorder what a signed record's reader sees), other format
// characters (invisible: zero-width spaces, marks, the BOM), line and
// paragraph separators, private-use characters and U+FFFD (bytes that
// were not UTF-8). A zero-width joiner or non-joiner between a letter (or
// a mark: an Indic virama) and a letter is text: Persian and Indic names
// are written with them.
func unprintable(s string) (at int, r rune, what string) {
	rs := []rune(s)
	for i, c := range rs {
		switch {
		case unicode.Is(unicode.Cc, c):
			return i + 1, c, "a control character"
		case c >= 0x202A && c <= 0x202E, c >= 0x2066 && c <= 0x2069:
			return i + 1, c, "a bidirectional control"
		case (c == 0x200C || c == 0x200D) && i > 0 && i+1 < len(rs) && unicode.In(rs[i-1], unicode.L, unicode.M) && unicode.IsLetter(rs[i+1]):
		case unicode.Is(unicode.Cf, c):
			return i + 1, c, "an invisible formatting character"
		case unicode.In(c, unicode.Zl, unicode.Zp):
			return i + 1, c, "a line or paragraph separator"
		case unicode.Is(unicode.Co, c):
			return i + 1, c, "a private-use character"
		case c == utf8.RuneError:
			return i + 1, c, "bytes that were not UTF-8"
		}
	}
	return 0, 0, ""
}

// Approval is the signed approval of a run.
type Approval struct {
	Person       string         `json:"person"`
	Acknowledged []int          `json:"acknowledged_flags"`
	Record       *attest.Record `json:"record"`
	// Released says whether a held Submit was sent: only a demo form's
	// is, to the box's own demo endpoint; Why says what happened.
	Released bool   `json:"released"`
	Why      string `json:"why"`
}

// Approve signs the person's approval of out: every flag must be
// acknowledged by number (409 naming those that are not); an approved
// run cannot be approved again (409). The approval record binds the run's
// record by its id and signature.
func Approve(out *Result, b ApproveBody, key *attest.Key, now time.Time) (*Approval, error) {
	if out.Approval != nil {
		return nil, problem.New(problem.Conflict, "run %s was approved by %s already", out.ID, out.Approval.Person)
	}
	var missing []string
	for _, f := range out.Review.Flags {
		if !slices.Contains(b.AcknowledgeFlags, f.N) {
			missing = append(missing, strconv.Itoa(f.N))
		}
	}
	if len(missing) > 0 {
		return nil, problem.New(problem.Conflict, "flags %s are not acknowledged: Submit stays locked until acknowledge_flags names every flag of the review (text aimed at AI agents was found on the page)", strings.Join(missing, ", ")).
			With("unacknowledged_flags", missing)
	}
	seen := map[int]bool{}
	for _, n := range b.AcknowledgeFlags {
		if n < 1 || n > len(out.Review.Flags) {
			return nil, problem.New(problem.Invalid, "acknowledge_flags names %d; the review's flags are numbered 1 to %d", n, len(out.Review.Flags))
		}
		if seen[n] {
			return nil, problem.New(problem.Invalid, "acknowledge_flags names %d twice; name each flag once", n)
		}
		seen[n] = true
	}
	person := strings.TrimSpace(b.Person.Name)
	rb := attest.NewRecord(ApprovalKind, out.ID+"-approval", map[string]string{"run": out.ID, "record": out.Record.ID})
	j, err := json.Marshal(map[string]any{"person": person, "acknowledged_flags": b.AcknowledgeFlags, "run_record": out.Record.ID,
		"run_record_signature": out.Record.Signature, "filled": out.Review.Summary.Filled})
	if err != nil {
		return nil, err
	}
	rb.AddText("approval", string(j), map[string]any{"step": "approval"})
	rec, err := rb.Sign(key, now)
	if err != nil {
		return nil, fmt.Errorf("fill: sign the approval: %w", err)
	}
	ack := append([]int{}, b.AcknowledgeFlags...)
	return &Approval{Person: person, Acknowledged: ack, Record: rec, Released: false,
		Why: "nothing was sent: only a demo form's held Submit is released, and this run filled submitted HTML"}, nil
}

// FlightCheck is POST /flight/verify's answer: the record's verification,
// and the step where a change was made.
type FlightCheck struct {
	attest.Verification
	// Step is the first changed step: its 1-based number and type
	// (sources, page, field, held, flag, approval); nil when none was.
	Step *Step `json:"changed_step"`
}

// Step names one step of a record.
type Step struct {
	N    int    `json:"n"`
	Type string `json:"type"`
}

// Flight verifies a fill or approval record and names the step where a
// change was made.
func Flight(raw []byte, trusted ed25519.PublicKey) FlightCheck {
	v := records.Verify(raw, trusted)
	out := FlightCheck{Verification: v}
	if v.FirstBadEntry == nil {
		return out
	}
	var rec struct {
		Entries []struct {
			Type string `json:"type"`
		} `json:"entries"`
	}
	if json.Unmarshal(raw, &rec) == nil && *v.FirstBadEntry >= 1 && *v.FirstBadEntry <= len(rec.Entries) {
		out.Step = &Step{N: *v.FirstBadEntry, Type: rec.Entries[*v.FirstBadEntry-1].Type}
	} else {
		out.Step = &Step{N: *v.FirstBadEntry}
	}
	return out
}
