package records_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"boxd/engine/attest"
	"boxd/internal/records"
)

// fuzzChain signs a draft and a sign-off that continues it.
func fuzzChain(f *testing.F, k *attest.Key) (draftRaw, signoffRaw []byte) {
	f.Helper()
	run := records.NewRun("walkthrough-draft", "run_1", map[string]string{"subject": "kitchen"})
	run.Input(records.Text("transcript", "the sink leaks"))
	run.Input(records.Hashed("video", []byte{1, 2, 3}))
	out := "replace the trap"
	run.ModelCall(records.ModelCall{ReceiptID: "chatcmpl-1", Model: "model-27b",
		Data: map[string]string{"status": "attested", "completion_tokens": "42"}, Text: &out})
	run.Output(records.Artifact{Name: "report", Text: &out, Data: map[string]string{"lines": "1"}})
	d, err := run.Sign(k, now)
	if err != nil {
		f.Fatal(err)
	}
	so := records.Continue(d, "walkthrough-signoff", "run_1-signoff", map[string]string{"step": "signoff"})
	so.Add("signed_by", nil, map[string]any{"name": "Ana Ruiz", "confirm": true})
	s, err := so.Sign(k, now.Add(time.Minute))
	if err != nil {
		f.Fatal(err)
	}
	draftRaw, err = json.Marshal(d)
	if err != nil {
		f.Fatal(err)
	}
	signoffRaw, err = json.Marshal(s)
	if err != nil {
		f.Fatal(err)
	}
	return draftRaw, signoffRaw
}

// meaning is a record's canonical form without its entries' texts (a
// record may leave a text out and keep its hash), "" when it is not a
// JSON object.
func meaning(raw []byte) string {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&m) != nil {
		return ""
	}
	if es, ok := m["entries"].([]any); ok {
		for _, e := range es {
			if em, ok := e.(map[string]any); ok {
				delete(em, "text")
			}
		}
	}
	c, err := attest.Canonical(m)
	if err != nil {
		return ""
	}
	return string(c)
}

// FuzzVerify: POST /record/verify's and `boxd verify`'s verifier, alone
// and with a previous record, never panics and is deterministic; ok is
// exactly "no check failed"; and a record (or previous record) it accepts
// under the box's key means what one of the box's signed records means.
func FuzzVerify(f *testing.F) {
	k := testKey(1)
	draftRaw, signoffRaw := fuzzChain(f, k)
	f.Add(draftRaw, []byte(nil))
	f.Add(signoffRaw, draftRaw)
	f.Add(signoffRaw, signoffRaw)
	f.Add(draftRaw, signoffRaw)
	f.Add(bytes.Replace(signoffRaw, []byte(`"continues"`), []byte(`"x"`), 1), draftRaw)
	f.Add([]byte(`{"format":"service.record.v1","kind":"k","id":"i","entries":[{"type":"continues","data":{}}]}`), []byte(`{}`))
	f.Add([]byte(`{"format":"service.record.v1","format":"x"}`), []byte(nil))
	f.Add([]byte(`[]`), []byte(`null`))
	signed := map[string]bool{meaning(draftRaw): true, meaning(signoffRaw): true}
	reg := records.NewRegistry()
	reg.Register("walkthrough-signoff", records.Continues("walkthrough-draft"))
	reg.Register("walkthrough-draft", nil)
	pub := k.PublicKey()
	f.Fuzz(func(t *testing.T, raw, prev []byte) {
		for _, v := range []attest.Verification{
			reg.Verify(raw, pub), reg.VerifyContinuation(raw, prev, pub),
			records.Verify(raw, pub), records.VerifyContinuation(raw, prev, pub),
		} {
			failed := false
			for _, c := range v.Checks {
				if c.Name == "" || c.Detail == "" {
					t.Fatalf("incomplete check %+v", c)
				}
				failed = failed || !c.OK
			}
			if v.OK == failed || v.OK != (v.Problem == "") {
				t.Fatalf("ok %v, problem %q, checks %+v", v.OK, v.Problem, v.Checks)
			}
			if _, err := json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(reg.VerifyContinuation(raw, prev, pub), reg.VerifyContinuation(raw, prev, pub)) {
			t.Fatal("VerifyContinuation is not deterministic")
		}
		if v := reg.Verify(raw, pub); v.OK && !signed[meaning(raw)] {
			t.Fatalf("accepted a record the box did not sign:\n%s", raw)
		}
		if v := reg.VerifyContinuation(raw, prev, pub); v.OK && (!signed[meaning(raw)] || !signed[meaning(prev)]) {
			t.Fatalf("accepted a continuation the box did not sign:\n%s\nafter\n%s", raw, prev)
		}
	})
}
