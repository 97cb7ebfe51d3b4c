package records

import (
	"bytes"
	"encoding/json"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/internal/strictjson"
)

// Check is the response of POST /record/verify.
type Check struct {
	OK              bool           `json:"ok"`
	Checks          []attest.Check `json:"checks"`
	Entries         int            `json:"entries"`
	FirstBadEntry   *int           `json:"first_bad_entry"`
	Signer          *attest.Signer `json:"signer"`
	SignedByThisBox bool           `json:"signed_by_this_box"`
	Problem         string         `json:"problem,omitempty"`
}

// CheckOf is a verification as the verify routes answer it.
func CheckOf(v attest.Verification) Check {
	return Check{OK: v.OK, Checks: v.Checks, Entries: v.Entries, FirstBadEntry: v.FirstBadEntry,
		Signer: v.Signer, SignedByThisBox: v.SignedByTrustedKey, Problem: v.Problem}
}

// VerifyBodyLimit bounds a verify body: the records the box signs are far
// smaller (docs/decisions.md, Hostile clients).
const VerifyBodyLimit = 4 << 20

// VerifyBody is the body of POST /record/verify and /flight/verify.
type VerifyBody struct {
	Record json.RawMessage `json:"record"`
}

// StrictShape leaves the record to the verification (strictjson.Shaped):
// a duplicate key inside it is a failed check, not a refused body.
func (VerifyBody) StrictShape() any {
	return struct {
		Record strictjson.Opaque `json:"record"`
	}{}
}

// Raw is the record the body holds: an object, or a JSON string of one
// (an exported file's text).
func (b *VerifyBody) Raw() ([]byte, *problem.Error) {
	raw := bytes.TrimSpace(b.Record)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, problem.New(problem.Invalid, "%s", "record is required: send {\"record\": <the signed record object>}")
	}
	if raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, problem.New(problem.Invalid, "%s", "record: "+err.Error())
		}
		raw, b.Record = []byte(text), nil // one copy of the record in memory, not two
	}
	return raw, nil
}
