package records

import (
	"crypto/ed25519"
	"fmt"
	"sort"
	"sync"

	"boxd/engine/attest"
	"boxd/internal/strictjson"
)

// Names of the checks this package adds after attest.VerifyRecord's
// (format, numbers, chain, count, head, signature, signer).
const (
	// CheckFields: the record's fields have the service.record.v1 types
	// (appears only when they do not).
	CheckFields = "fields"
	// CheckContinues: a continuation's link is well formed and, when the
	// previous record is given, names its kind, id, head and signer.
	CheckContinues = "continues"
	// CheckPrevious: the previous record given verifies on its own.
	CheckPrevious = "previous"
	// CheckContinuesKind: the kind of the previous record is one the
	// record's kind may continue (Continues).
	CheckContinuesKind = "continues_kind"
	// CheckCanonical: no object of the record holds a key twice (appears
	// only when one does). JSON readers disagree about which of two values
	// counts (Go's and most others take the last, some the first), so such
	// a record could be read as saying something its signature does not
	// cover; it is not valid, whatever the other checks say.
	CheckCanonical = "canonical"
)

// Subject is what a Verifier sees: the record, parsed after its chain and
// signature were checked (read the outcome from Checks), and the previous
// record when the caller gave one that could be read.
type Subject struct {
	Record   *attest.Record
	Previous *attest.Record
	// Checks are the checks so far; Verifiers read, never change, them.
	Checks []attest.Check
}

// Verifier checks the rules of one record kind beyond the generic chain,
// signature and continuation checks and returns its own named checks,
// which go into the same list; a failing one makes the record fail.
type Verifier func(s Subject) []attest.Check

// Registry maps record kinds to their Verifiers. Register every kind
// before the registry is used; Verify is safe for concurrent use.
type Registry struct {
	kinds map[string]Verifier
}

// NewRegistry is an empty registry: every record gets the generic checks
// only.
func NewRegistry() *Registry { return &Registry{kinds: map[string]Verifier{}} }

// Register adds a kind with its Verifier (nil: a known kind with no rules
// of its own). It panics on an empty or already registered kind.
func (r *Registry) Register(kind string, v Verifier) {
	if kind == "" {
		panic("records: Register with an empty kind")
	}
	if _, dup := r.kinds[kind]; dup {
		panic("records: kind " + kind + " registered twice")
	}
	r.kinds[kind] = v
}

// Known reports whether kind is registered.
func (r *Registry) Known(kind string) bool { _, ok := r.kinds[kind]; return ok }

// Kinds lists the registered kinds, sorted.
func (r *Registry) Kinds() []string {
	out := make([]string, 0, len(r.kinds))
	for k := range r.kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Verify checks a record given as JSON against the trusted key (nil trusts
// nobody): attest.VerifyRecord's checks, then the continues check of a
// record that claims to continue another, then the checks of the kind's
// Verifier. A kind that is not registered gets the generic checks only,
// which is no failure by itself. ok is false when any check fails; problem
// is the first failure.
func (r *Registry) Verify(raw []byte, trusted ed25519.PublicKey) attest.Verification {
	return r.verify(raw, nil, false, trusted)
}

// VerifyContinuation is Verify for a continuation given with the record it
// continues (previous, JSON): the previous record is verified as well
// (check previous) and the link must name its kind, id, head and signer
// (check continues).
func (r *Registry) VerifyContinuation(raw, previous []byte, trusted ed25519.PublicKey) attest.Verification {
	return r.verify(raw, previous, true, trusted)
}

func (r *Registry) verify(raw, previous []byte, prevGiven bool, trusted ed25519.PublicKey) attest.Verification {
	v, _ := r.verifyParsed(raw, previous, prevGiven, trusted)
	return v
}

// verifyParsed is verify that also returns the record as read (nil when
// its format or fields are not a record's). The record is read once
// (attest.VerifyRecordParsed): no second decoding of the whole record.
func (r *Registry) verifyParsed(raw, previous []byte, prevGiven bool, trusted ed25519.PublicKey) (attest.Verification, *attest.Record) {
	v, rec, err := attest.VerifyRecordParsed(raw, trusted)
	if d := strictjson.Duplicate(raw); d != nil {
		canonical(&v, d)
	}
	if v.Signer == nil { // the format check failed: nothing more to read
		return v, nil
	}
	if err != nil {
		add(&v, attest.Check{Name: CheckFields, OK: false, Detail: "the record's fields do not have the " + attest.RecordFormat + " types: " + err.Error()})
		return v, nil
	}
	var prev *attest.Record
	var prevCheck *attest.Check
	if prevGiven {
		pv, p := r.verifyParsed(previous, nil, false, trusted)
		prev = p
		c := attest.Check{Name: CheckPrevious, OK: pv.OK}
		switch {
		case pv.OK:
			c.Detail = fmt.Sprintf("the previous record %s %s verifies", p.Kind, p.ID)
		default:
			c.Detail = "the previous record does not verify: " + pv.Problem
		}
		prevCheck = &c
	}
	for _, c := range checkContinuation(rec, prev, prevGiven) {
		add(&v, c)
	}
	if prevCheck != nil {
		add(&v, *prevCheck)
	}
	if kv := r.kinds[rec.Kind]; kv != nil {
		for _, c := range kv(Subject{Record: rec, Previous: prev, Checks: append([]attest.Check(nil), v.Checks...)}) {
			add(&v, c)
		}
	}
	return v, rec
}

// canonical puts the failed canonical check first: it is the problem,
// whatever else failed.
func canonical(v *attest.Verification, d *strictjson.Error) {
	where := "at the top level"
	if d.Path != "" {
		where = "in " + d.Path
	}
	c := attest.Check{Name: CheckCanonical, OK: false,
		Detail: fmt.Sprintf("key %q appears twice %s: readers disagree about which value counts, so the record is not valid", d.Key, where)}
	v.Checks = append([]attest.Check{c}, v.Checks...)
	v.Problem = c.Name + ": " + c.Detail
	v.OK = false
}

// add appends a check the way attest does: the first failure is the
// problem.
func add(v *attest.Verification, c attest.Check) {
	v.Checks = append(v.Checks, c)
	if !c.OK && v.Problem == "" {
		v.Problem = c.Name + ": " + c.Detail
	}
	v.OK = v.Problem == ""
}

// Standard is the box's registry: every record kind the box signs, with
// its rules. A pipeline that signs a new kind registers it here.
func Standard() *Registry {
	r := NewRegistry()
	// site-check (pipelines/sitecheck): one entry per report section;
	// nothing beyond the generic checks.
	r.Register("site-check", nil)
	return r
}

var standard = sync.OnceValue(Standard)

// Verify verifies a record with the standard registry: the one entry point
// of POST /record/verify and `boxd verify`.
func Verify(raw []byte, trusted ed25519.PublicKey) attest.Verification {
	return standard().Verify(raw, trusted)
}

// VerifyContinuation verifies a continuation and the record it continues
// with the standard registry.
func VerifyContinuation(raw, previous []byte, trusted ed25519.PublicKey) attest.Verification {
	return standard().VerifyContinuation(raw, previous, trusted)
}
