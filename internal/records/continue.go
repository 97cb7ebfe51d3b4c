package records

import (
	"errors"
	"fmt"
	"maps"

	"boxd/engine/attest"
)

// Meta keys of a continuation: the previous record's kind, id and head.
const (
	MetaContinuesKind = "continues_kind"
	MetaContinuesID   = "continues_id"
	MetaContinuesHead = "continues_head"
)

// Link names the record a continuation carries on from: its kind, id, head
// (the hash its signature covers, so the link pins one exact version) and
// the key id of its signer.
type Link struct {
	Kind   string
	ID     string
	Head   string
	Signer string
}

// LinkTo is the link to rec.
func LinkTo(rec *attest.Record) Link {
	return Link{Kind: rec.Kind, ID: rec.ID, Head: rec.Head, Signer: rec.Signer.KeyID}
}

// Continue starts a record of kind and id that carries on from prev (a
// sign-off, review, approval or re-price of a draft): its first entry is a
// continues entry naming prev's kind, id, head and signer, and its meta
// holds continues_kind, continues_id and continues_head besides meta. Add
// the step's own entries (who signed, decisions, new totals) and Sign it.
//
// Continue trusts prev: verify a previous record that came from a client
// (Verify) before continuing it.
func Continue(prev *attest.Record, kind, id string, meta map[string]string) *Run {
	if prev == nil {
		r := NewRun(kind, id, meta)
		r.fail(errors.New("records: no previous record to continue"))
		return r
	}
	l := LinkTo(prev)
	m := maps.Clone(meta)
	if m == nil {
		m = map[string]string{}
	}
	var err error
	for _, k := range []string{MetaContinuesKind, MetaContinuesID, MetaContinuesHead} {
		if _, set := m[k]; set {
			err = fmt.Errorf("records: meta %s is set by Continue", k)
		}
	}
	m[MetaContinuesKind], m[MetaContinuesID], m[MetaContinuesHead] = l.Kind, l.ID, l.Head
	r := NewRun(kind, id, m)
	switch {
	case err != nil:
		r.fail(err)
	case l.Kind == "" || l.ID == "" || !isHash(l.Head):
		r.fail(errors.New("records: the previous record has no kind, id or head: sign it before continuing it"))
	}
	r.Add(TypeContinues, nil, map[string]any{"kind": l.Kind, "id": l.ID, "head": l.Head, "signer": l.Signer})
	return r
}

// LinkOf returns the link a continuation record names; ok is false when
// rec is not a continuation (or its continues entry is malformed).
func LinkOf(rec *attest.Record) (l Link, ok bool) {
	claims, l, err := linkOf(rec)
	return l, claims && err == nil
}

// linkOf reads rec's link: claims says whether rec claims to continue
// another record at all (a continues entry or continues_* meta), err what
// is wrong with the claim.
func linkOf(rec *attest.Record) (claims bool, l Link, err error) {
	for k := range rec.Meta {
		claims = claims || k == MetaContinuesKind || k == MetaContinuesID || k == MetaContinuesHead
	}
	for i, e := range rec.Entries {
		if e.Type != TypeContinues {
			continue
		}
		claims = true
		if i > 0 {
			return true, Link{}, fmt.Errorf("entry %d is a continues entry; only the first entry may name the previous record", i+1)
		}
	}
	if !claims {
		return false, Link{}, nil
	}
	if len(rec.Entries) == 0 || rec.Entries[0].Type != TypeContinues {
		return true, Link{}, errors.New("the meta names a previous record but the first entry is not a continues entry")
	}
	d := rec.Entries[0].Data
	str := func(k string) string { s, _ := d[k].(string); return s }
	l = Link{Kind: str("kind"), ID: str("id"), Head: str("head"), Signer: str("signer")}
	if l.Kind == "" || l.ID == "" || !isHash(l.Head) {
		return true, l, errors.New("the continues entry must hold the previous record's kind, id and head (64 lower-case hex)")
	}
	for _, m := range []struct{ key, want string }{
		{MetaContinuesKind, l.Kind}, {MetaContinuesID, l.ID}, {MetaContinuesHead, l.Head},
	} {
		if got, set := rec.Meta[m.key]; !set || got != m.want {
			return true, l, fmt.Errorf("meta %s is %q but the continues entry says %q", m.key, got, m.want)
		}
	}
	return true, l, nil
}

// checkContinuation is the continues check of rec: absent when rec is no
// continuation and no previous record was given; otherwise whether its
// link is well formed and, with prev, names exactly prev.
func checkContinuation(rec, prev *attest.Record, prevGiven bool) []attest.Check {
	claims, l, err := linkOf(rec)
	switch {
	case !claims && !prevGiven:
		return nil
	case !claims:
		return []attest.Check{{Name: CheckContinues, OK: false, Detail: "a previous record was given but this record does not continue another record"}}
	case err != nil:
		return []attest.Check{{Name: CheckContinues, OK: false, Detail: err.Error()}}
	case prev == nil && prevGiven:
		return []attest.Check{{Name: CheckContinues, OK: false, Detail: fmt.Sprintf("continues %s %s, but the previous record given cannot be read", l.Kind, l.ID)}}
	case prev == nil:
		return []attest.Check{{Name: CheckContinues, OK: true, Detail: fmt.Sprintf("continues %s %s at head %s (give the previous record to compare)", l.Kind, l.ID, short(l.Head))}}
	}
	var bad string
	switch {
	case l.Kind != prev.Kind || l.ID != prev.ID:
		bad = fmt.Sprintf("continues %s %s, but the previous record given is %s %s", l.Kind, l.ID, prev.Kind, prev.ID)
	case l.Head != prev.Head:
		bad = fmt.Sprintf("continues %s %s at head %s, but that record's head is %s: the link or the previous record was changed", l.Kind, l.ID, short(l.Head), short(prev.Head))
	case l.Signer != "" && l.Signer != prev.Signer.KeyID:
		bad = fmt.Sprintf("names signer %s, but the previous record was signed by %s", l.Signer, prev.Signer.KeyID)
	}
	if bad != "" {
		return []attest.Check{{Name: CheckContinues, OK: false, Detail: bad}}
	}
	return []attest.Check{{Name: CheckContinues, OK: true, Detail: fmt.Sprintf("continues %s %s: the link matches the previous record's id and head %s", l.Kind, l.ID, short(l.Head))}}
}

// Continues is a Verifier for a kind that must continue a record of one of
// kinds (a sign-off continues a draft or a re-price, …).
func Continues(kinds ...string) Verifier {
	return func(s Subject) []attest.Check {
		claims, l, err := linkOf(s.Record)
		if !claims || err != nil {
			return []attest.Check{{Name: CheckContinuesKind, OK: false, Detail: fmt.Sprintf("a %s record continues a record of kind %s; this one names no valid previous record", s.Record.Kind, orList(kinds))}}
		}
		for _, k := range kinds {
			if l.Kind == k {
				return []attest.Check{{Name: CheckContinuesKind, OK: true, Detail: fmt.Sprintf("a %s record continuing a %s record", s.Record.Kind, l.Kind)}}
			}
		}
		return []attest.Check{{Name: CheckContinuesKind, OK: false, Detail: fmt.Sprintf("a %s record continues a record of kind %s, not %s", s.Record.Kind, orList(kinds), l.Kind)}}
	}
}

func orList(s []string) string {
	switch len(s) {
	case 0:
		return "(none)"
	case 1:
		return s[0]
	}
	out := ""
	for i, x := range s {
		switch {
		case i == 0:
		case i == len(s)-1:
			out += " or "
		default:
			out += ", "
		}
		out += x
	}
	return out
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}
