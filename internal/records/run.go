// Package records builds and verifies the box's signed records
// (service.record.v1, engine/attest) at the level of a run:
//
//   - Run builds the record of one run: its inputs (name, SHA-256 and,
//     when kept, the text), each model call by receipt id, its outputs and
//     any entries of its own, signed with the box's key.
//   - Continue starts a record that carries on from a previous one (a
//     sign-off, review, approval or re-price of a draft): its first entry,
//     of type continues, names the previous record's kind, id and head
//     hash, and its meta says the same.
//   - Registry verifies a record: the generic chain and signature check of
//     attest.VerifyRecord, the continuation link of a record that claims
//     one, then the rules registered for the record's kind, all in one
//     checks list. Verify uses the box's standard registry (Standard).
//
// Data in records holds strings only: numbers are written as strings.
package records

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"boxd/engine/attest"
)

// Entry types written by Run.
const (
	TypeInput     = "input"      // data {name, sha256, ...}; text when kept
	TypeModelCall = "model_call" // data {receipt_id, model, ...}
	TypeOutput    = "output"     // data {name, sha256, ...}; text when kept
	TypeContinues = "continues"  // data {kind, id, head, signer}; first entry of a continuation
)

// Artifact is an input or output of a run: a name, the SHA-256 of its
// content, and the content as text when the record keeps it (a record
// that keeps hashes only leaves Text nil). Data holds further fields,
// strings only.
type Artifact struct {
	Name   string
	SHA256 string // lower-case hex; Text's hash when empty
	Text   *string
	Data   map[string]string
}

// Text is an artifact whose text the record keeps.
func Text(name, text string) Artifact {
	return Artifact{Name: name, SHA256: hashHex([]byte(text)), Text: &text}
}

// Hashed is an artifact the record names by its SHA-256 only.
func Hashed(name string, content []byte) Artifact {
	return Artifact{Name: name, SHA256: hashHex(content)}
}

// ModelCall is one model call of a run, named by its receipt id (the
// completion id of GET /receipts/{id}). Data holds further fields such as
// status, purpose or token counts, strings only; Text is the call's output
// when the record keeps it.
type ModelCall struct {
	ReceiptID string
	Model     string
	Data      map[string]string
	Text      *string
}

// Run builds the signed record of one run. Methods record the first
// mistake and Sign returns it; a Run is not safe for concurrent use.
type Run struct {
	b   *attest.RecordBuilder
	n   int
	err error
}

// NewRun starts the record of a run: kind ("walkthrough-draft", …), id (the
// run id) and meta, strings only.
func NewRun(kind, id string, meta map[string]string) *Run {
	r := &Run{b: attest.NewRecord(kind, id, meta)}
	if kind == "" || id == "" {
		r.err = errors.New("records: a record needs a kind and an id")
	}
	return r
}

// Input adds an input entry.
func (r *Run) Input(a Artifact) { r.artifact(TypeInput, a) }

// Output adds an output entry.
func (r *Run) Output(a Artifact) { r.artifact(TypeOutput, a) }

func (r *Run) artifact(typ string, a Artifact) {
	if a.SHA256 == "" && a.Text != nil {
		a.SHA256 = hashHex([]byte(*a.Text))
	}
	switch {
	case a.Name == "":
		r.fail(fmt.Errorf("records: %s entry %d has no name", typ, r.n+1))
		return
	case !isHash(a.SHA256):
		r.fail(fmt.Errorf("records: %s %q: sha256 must be 64 lower-case hex characters", typ, a.Name))
		return
	case a.Text != nil && hashHex([]byte(*a.Text)) != a.SHA256:
		r.fail(fmt.Errorf("records: %s %q: sha256 is not the SHA-256 of its text", typ, a.Name))
		return
	}
	data, err := withFields(a.Data, "name", a.Name, "sha256", a.SHA256)
	if err != nil {
		r.fail(fmt.Errorf("records: %s %q: %w", typ, a.Name, err))
		return
	}
	r.Add(typ, a.Text, data)
}

// ModelCall adds a model_call entry.
func (r *Run) ModelCall(c ModelCall) {
	if c.ReceiptID == "" || c.Model == "" {
		r.fail(fmt.Errorf("records: model call entry %d needs a receipt id and a model", r.n+1))
		return
	}
	data, err := withFields(c.Data, "receipt_id", c.ReceiptID, "model", c.Model)
	if err != nil {
		r.fail(fmt.Errorf("records: model call %s: %w", c.ReceiptID, err))
		return
	}
	r.Add(TypeModelCall, c.Text, data)
}

// Add adds an entry of the run's own type (text may be nil; data holds no
// numbers). Use it for what the typed methods do not cover: a sign-off's
// signer, decisions, totals.
func (r *Run) Add(typ string, text *string, data map[string]any) {
	if r.err != nil {
		return
	}
	r.n++
	r.b.Add(typ, text, data)
}

// AddText adds an entry with text.
func (r *Run) AddText(typ, text string, data map[string]any) { r.Add(typ, &text, data) }

// Sign links and signs the record with the box's key.
func (r *Run) Sign(k *attest.Key, now time.Time) (*attest.Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	if k == nil {
		return nil, errors.New("records: no signing key")
	}
	rec, err := r.b.Sign(k, now)
	if err == nil && rec.Entries == nil {
		// attest writes a record without entries as "entries": null,
		// which does not verify; the signature does not cover entries.
		rec.Entries = []attest.Entry{}
	}
	return rec, err
}

func (r *Run) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// withFields copies extra into a data map and sets the named fields,
// refusing an extra field of the same name.
func withFields(extra map[string]string, kv ...string) (map[string]any, error) {
	data := make(map[string]any, len(extra)+len(kv)/2)
	for k, v := range extra {
		data[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if _, dup := data[kv[i]]; dup {
			return nil, fmt.Errorf("data field %s is set by the entry itself", kv[i])
		}
		data[kv[i]] = kv[i+1]
	}
	return data, nil
}

func hashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// isHash reports whether s is 64 lower-case hex characters.
func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
