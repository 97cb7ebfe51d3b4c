package records_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"boxd/engine/attest"
	"boxd/internal/records"
)

func testKey(seed byte) *attest.Key {
	s := make([]byte, ed25519.SeedSize)
	s[0] = seed
	return attest.NewKey(ed25519.NewKeyFromSeed(s))
}

var now = time.Date(2026, 9, 23, 12, 0, 0, 0, time.UTC)

func marshal(t *testing.T, rec *attest.Record) []byte {
	t.Helper()
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// check returns the named check (fails the test when there is none).
func check(t *testing.T, v attest.Verification, name string) attest.Check {
	t.Helper()
	for _, c := range v.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s check in %+v", name, v.Checks)
	return attest.Check{}
}

func hasCheck(v attest.Verification, name string) bool {
	for _, c := range v.Checks {
		if c.Name == name {
			return true
		}
	}
	return false
}

// draft builds the signed record of a run: two inputs (one kept, one
// hashed only), a model call, an output.
func draft(t *testing.T, k *attest.Key) *attest.Record {
	t.Helper()
	run := records.NewRun("walkthrough-draft", "run_1", map[string]string{"subject": "kitchen"})
	run.Input(records.Text("transcript", "the sink leaks"))
	run.Input(records.Hashed("video", []byte{1, 2, 3}))
	out := "replace the trap"
	run.ModelCall(records.ModelCall{ReceiptID: "chatcmpl-1", Model: "model-27b",
		Data: map[string]string{"status": "attested", "completion_tokens": "42"}, Text: &out})
	run.Output(records.Artifact{Name: "report", Text: &out, Data: map[string]string{"lines": "1"}})
	rec, err := run.Sign(k, now)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestVerifyRunRecord(t *testing.T) {
	k := testKey(1)
	rec := draft(t, k)
	if rec.Kind != "walkthrough-draft" || rec.Count != "4" || len(rec.Entries) != 4 {
		t.Fatalf("record: %+v", rec)
	}
	types := []string{records.TypeInput, records.TypeInput, records.TypeModelCall, records.TypeOutput}
	for i, e := range rec.Entries {
		if e.Type != types[i] {
			t.Errorf("entry %d type %s, want %s", i+1, e.Type, types[i])
		}
	}
	if d := rec.Entries[1].Data; d["name"] != "video" || rec.Entries[1].Text != nil || len(d["sha256"].(string)) != 64 {
		t.Errorf("hashed input: %+v", rec.Entries[1])
	}
	if d := rec.Entries[2].Data; d["receipt_id"] != "chatcmpl-1" || d["model"] != "model-27b" || d["completion_tokens"] != "42" {
		t.Errorf("model call: %+v", d)
	}
	if d := rec.Entries[0].Data; d["sha256"] != rec.Entries[0].TextSHA256 {
		t.Errorf("input hash %v, text hash %s", d["sha256"], rec.Entries[0].TextSHA256)
	}
	v := records.Verify(marshal(t, rec), k.PublicKey())
	if !v.OK || v.Entries != 4 || hasCheck(v, records.CheckContinues) {
		t.Fatalf("draft: %+v", v)
	}

	// Mistakes surface at Sign.
	for name, f := range map[string]func(r *records.Run){
		"no name":  func(r *records.Run) { r.Input(records.Artifact{SHA256: strings.Repeat("a", 64)}) },
		"bad hash": func(r *records.Run) { r.Output(records.Artifact{Name: "x", SHA256: "abc"}) },
		"text mismatch": func(r *records.Run) {
			s := "a"
			r.Input(records.Artifact{Name: "x", SHA256: strings.Repeat("0", 64), Text: &s})
		},
		"no receipt id": func(r *records.Run) { r.ModelCall(records.ModelCall{Model: "m"}) },
		"shadowed field": func(r *records.Run) {
			r.ModelCall(records.ModelCall{ReceiptID: "c", Model: "m", Data: map[string]string{"model": "x"}})
		},
		"number": func(r *records.Run) { r.Add("x", nil, map[string]any{"n": 1}) },
	} {
		r := records.NewRun("k", "id", nil)
		f(r)
		if _, err := r.Sign(k, now); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
	if _, err := records.NewRun("", "id", nil).Sign(k, now); err == nil {
		t.Error("no kind: signed")
	}
}

// TestVerifyContinueTwice: draft → sign-off → re-price, each verified alone and
// with the record it continues.
func TestVerifyContinueTwice(t *testing.T) {
	k := testKey(1)
	d := draft(t, k)

	so := records.Continue(d, "walkthrough-signoff", "run_1-signoff", map[string]string{"step": "signoff"})
	so.Add("signed_by", nil, map[string]any{"name": "Ana Ruiz", "role": "estimator", "confirm": true})
	signoff, err := so.Sign(k, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	rp := records.Continue(signoff, "walkthrough-price", "run_1-price-1", nil)
	rp.Add("measurement", nil, map[string]any{"line": "3", "low": "2.5", "high": "3"})
	rp.AddText("totals", `{"low":"100","high":"140"}`, nil)
	price, err := rp.Sign(k, now.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}

	if e := signoff.Entries[0]; e.Type != records.TypeContinues || e.Data["head"] != d.Head || e.Data["id"] != "run_1" || e.Data["kind"] != "walkthrough-draft" {
		t.Errorf("sign-off link: %+v", e)
	}
	if signoff.Meta[records.MetaContinuesHead] != d.Head || signoff.Meta[records.MetaContinuesID] != "run_1" || signoff.Meta["step"] != "signoff" {
		t.Errorf("sign-off meta: %v", signoff.Meta)
	}
	if l, ok := records.LinkOf(price); !ok || l != records.LinkTo(signoff) {
		t.Errorf("re-price link %+v %v", l, ok)
	}
	if _, ok := records.LinkOf(d); ok {
		t.Error("a draft has a link")
	}

	rawD, rawS, rawP := marshal(t, d), marshal(t, signoff), marshal(t, price)
	for name, raw := range map[string][]byte{"draft": rawD, "signoff": rawS, "price": rawP} {
		if v := records.Verify(raw, k.PublicKey()); !v.OK {
			t.Errorf("%s alone: %s", name, v.Problem)
		}
	}
	vs := records.VerifyContinuation(rawS, rawD, k.PublicKey())
	if !vs.OK || !check(t, vs, records.CheckContinues).OK || !check(t, vs, records.CheckPrevious).OK {
		t.Errorf("sign-off with draft: %+v", vs)
	}
	vp := records.VerifyContinuation(rawP, rawS, k.PublicKey())
	if !vp.OK || !strings.Contains(check(t, vp, records.CheckContinues).Detail, "walkthrough-signoff run_1-signoff") {
		t.Errorf("re-price with sign-off: %+v", vp)
	}
	// The re-price continues the sign-off, not the draft.
	if v := records.VerifyContinuation(rawP, rawD, k.PublicKey()); v.OK || check(t, v, records.CheckContinues).OK {
		t.Errorf("re-price with draft: %+v", v)
	}
	// A record that continues nothing, given a previous record.
	if v := records.VerifyContinuation(rawD, rawD, k.PublicKey()); v.OK || check(t, v, records.CheckContinues).OK {
		t.Errorf("draft with itself: %+v", v)
	}
	// The continuation of a tampered draft: the previous record fails.
	tamperedD := bytes.Replace(rawD, []byte("the sink leaks"), []byte("the sink is fine"), 1)
	v := records.VerifyContinuation(rawS, tamperedD, k.PublicKey())
	if v.OK || check(t, v, records.CheckPrevious).OK || !strings.Contains(v.Problem, "previous") {
		t.Errorf("tampered draft: %+v", v)
	}

	if _, err := records.Continue(nil, "k", "id", nil).Sign(k, now); err == nil {
		t.Error("continued nil")
	}
	if _, err := records.Continue(d, "k", "id", map[string]string{records.MetaContinuesID: "x"}).Sign(k, now); err == nil {
		t.Error("meta continues_id set by the caller")
	}
}

// TestVerifyTamperedLink: a continuation's link changed in the JSON breaks the
// chain and the continues check; one signed with a wrong link verifies
// alone but fails against the previous record, by name.
func TestVerifyTamperedLink(t *testing.T) {
	k := testKey(1)
	d := draft(t, k)
	so := records.Continue(d, "walkthrough-signoff", "s1", nil)
	so.Add("signed_by", nil, map[string]any{"name": "Ana"})
	signoff, err := so.Sign(k, now)
	if err != nil {
		t.Fatal(err)
	}
	rawD, rawS := marshal(t, d), marshal(t, signoff)

	other := strings.Repeat("b", 64)
	edited := bytes.Replace(rawS, []byte(`"head":"`+d.Head+`"`), []byte(`"head":"`+other+`"`), 1)
	if bytes.Equal(edited, rawS) {
		t.Fatal("link not found in the JSON")
	}
	v := records.VerifyContinuation(edited, rawD, k.PublicKey())
	if v.OK || check(t, v, "chain").OK || check(t, v, records.CheckContinues).OK {
		t.Errorf("edited link: %+v", v)
	}

	// A link to another version of the draft, properly signed.
	old := *d
	old.Head = other
	so2 := records.Continue(&old, "walkthrough-signoff", "s2", nil)
	wrong, err := so2.Sign(k, now)
	if err != nil {
		t.Fatal(err)
	}
	rawW := marshal(t, wrong)
	if v := records.Verify(rawW, k.PublicKey()); !v.OK {
		t.Errorf("wrong link alone: %s", v.Problem)
	}
	v = records.VerifyContinuation(rawW, rawD, k.PublicKey())
	c := check(t, v, records.CheckContinues)
	if v.OK || c.OK || !strings.Contains(c.Detail, "head") || !strings.HasPrefix(v.Problem, "continues: ") || !check(t, v, "signature").OK {
		t.Errorf("wrong link with draft: %+v", v)
	}

	// Meta that names a previous record without a continues entry.
	run := records.NewRun("walkthrough-signoff", "s3", map[string]string{records.MetaContinuesID: "run_1"})
	run.Add("signed_by", nil, nil)
	noEntry, _ := run.Sign(k, now)
	if v := records.Verify(marshal(t, noEntry), k.PublicKey()); v.OK || check(t, v, records.CheckContinues).OK {
		t.Errorf("meta without entry: %+v", v)
	}
}

func TestVerifyRegistryDispatch(t *testing.T) {
	k := testKey(1)
	d := draft(t, k)
	signoff, _ := records.Continue(d, "walkthrough-signoff", "s1", nil).Sign(k, now)
	bogus, _ := records.Continue(signoff, "walkthrough-signoff", "s2", nil).Sign(k, now)

	reg := records.NewRegistry()
	reg.Register("walkthrough-signoff", records.Continues("walkthrough-draft", "walkthrough-price"))
	var seen []string
	reg.Register("walkthrough-draft", func(s records.Subject) []attest.Check {
		seen = append(seen, s.Record.ID)
		calls := 0
		for _, e := range s.Record.Entries {
			if e.Type == records.TypeModelCall {
				calls++
			}
		}
		return []attest.Check{{Name: "model_calls", OK: calls > 0, Detail: "at least one model call"}}
	})
	reg.Register("site-check", nil)
	if got := reg.Kinds(); strings.Join(got, ",") != "site-check,walkthrough-draft,walkthrough-signoff" || !reg.Known("site-check") || reg.Known("x") {
		t.Errorf("kinds %v", got)
	}

	v := reg.Verify(marshal(t, d), k.PublicKey())
	if !v.OK || !check(t, v, "model_calls").OK || len(seen) != 1 || seen[0] != "run_1" {
		t.Errorf("draft: %+v %v", v, seen)
	}
	v = reg.Verify(marshal(t, signoff), k.PublicKey())
	if !v.OK || !check(t, v, records.CheckContinuesKind).OK || hasCheck(v, "model_calls") {
		t.Errorf("sign-off: %+v", v)
	}
	v = reg.Verify(marshal(t, bogus), k.PublicKey())
	if v.OK || check(t, v, records.CheckContinuesKind).OK || !strings.Contains(v.Problem, "walkthrough-draft or walkthrough-price, not walkthrough-signoff") {
		t.Errorf("sign-off of a sign-off: %+v", v)
	}

	// A kind verifier does not hide a generic failure, and a failure of
	// its own makes the record fail.
	empty, _ := records.NewRun("walkthrough-draft", "run_2", nil).Sign(k, now)
	v = reg.Verify(marshal(t, empty), k.PublicKey())
	if v.OK || v.Problem != "model_calls: at least one model call" {
		t.Errorf("draft without calls: %+v", v)
	}
	if v := reg.Verify(marshal(t, d), testKey(2).PublicKey()); v.OK || !strings.HasPrefix(v.Problem, "signer:") || !check(t, v, "model_calls").OK {
		t.Errorf("foreign key: %+v", v)
	}

	for _, f := range []func(){
		func() { reg.Register("site-check", nil) },
		func() { reg.Register("", nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("Register did not panic")
				}
			}()
			f()
		}()
	}
}

// TestVerifyUnknownKind: a kind no one registered gets exactly the generic
// checks, and is not an error by itself.
func TestVerifyUnknownKind(t *testing.T) {
	k := testKey(1)
	b := attest.NewRecord("never-heard-of", "r1", nil)
	b.AddText("input", "hello", nil)
	b.AddText("output", "world", map[string]any{"k": "v"})
	rec, _ := b.Sign(k, now)
	raw := marshal(t, rec)
	generic := attest.VerifyRecord(raw, k.PublicKey())
	for _, reg := range []*records.Registry{records.NewRegistry(), records.Standard()} {
		v := reg.Verify(raw, k.PublicKey())
		g, _ := json.Marshal(generic)
		got, _ := json.Marshal(v)
		if !v.OK || !bytes.Equal(g, got) {
			t.Errorf("unknown kind: %s, want %s", got, g)
		}
	}
	tampered := bytes.Replace(raw, []byte(`"world"`), []byte(`"World"`), 1)
	if v := records.Verify(tampered, k.PublicKey()); v.OK || v.Problem != attest.VerifyRecord(tampered, k.PublicKey()).Problem {
		t.Errorf("tampered unknown kind: %+v", v)
	}
	if v := records.Verify([]byte(`{"format":"x"}`), k.PublicKey()); v.OK || len(v.Checks) != 1 {
		t.Errorf("bad format: %+v", v)
	}
	// Standard knows site-check and adds nothing to it.
	if !records.Standard().Known("site-check") {
		t.Error("site-check is not in the standard registry")
	}
	sc, _ := records.NewRun("site-check", "sc_1", nil).Sign(k, now)
	if v := records.Verify(marshal(t, sc), k.PublicKey()); !v.OK || len(v.Checks) != len(attest.VerifyRecord(marshal(t, sc), k.PublicKey()).Checks) {
		t.Errorf("site-check: %+v", v)
	}
}

// TestVerifyRefusesDuplicateKeys: a record with a key twice is not valid.
// Go's reader keeps the last value, so a forged kind put first left the
// signature intact and the record verified (issue 15, item 10); a reader
// that keeps the first value would have shown the forged kind.
func TestVerifyRefusesDuplicateKeys(t *testing.T) {
	k := testKey(1)
	raw := marshal(t, draft(t, k))
	if v := records.Verify(raw, k.PublicKey()); !v.OK || hasCheck(v, records.CheckCanonical) {
		t.Fatalf("clean record: %+v", v)
	}
	cases := []struct{ name, old, new, where string }{
		{"forged kind first", `{`, `{"kind":"sign-off",`, `"kind" appears twice at the top level`},
		{"entry field", `{"n":"2"`, `{"n":"7","n":"2"`, `"n" appears twice in entries[1]`},
		{"escaped key", `{`, `{"\u006bind":"sign-off",`, `"kind" appears twice at the top level`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forged := bytes.Replace(raw, []byte(tc.old), []byte(tc.new), 1)
			if bytes.Equal(forged, raw) {
				t.Fatal("nothing replaced")
			}
			v := records.Verify(forged, k.PublicKey())
			if v.OK || len(v.Checks) == 0 || v.Checks[0].Name != records.CheckCanonical || v.Checks[0].OK ||
				!strings.Contains(v.Checks[0].Detail, tc.where) || !strings.HasPrefix(v.Problem, "canonical: ") {
				t.Errorf("%+v", v)
			}
			// Only the duplicate fails: the signature still holds (the last
			// value is the signed one).
			if c := check(t, v, "signature"); !c.OK {
				t.Errorf("signature: %+v", c)
			}
		})
	}
}
