package attest

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const testFormat = "test.signed.v1"

type testInner struct {
	A string `json:"a"`
}

type testBody struct {
	V      string    `json:"v"`
	ID     string    `json:"id"`
	N      int       `json:"n"`
	Note   string    `json:"note,omitempty"`
	Tags   []string  `json:"tags"`
	Inner  testInner `json:"inner"`
	Signer Signer    `json:"signer"`
}

func (b testBody) SignedBy() Signer { return b.Signer }

// flatTest is how the receipts wrote themselves before Signed: the body
// embedded beside a Sig field. Signed writes and reads the same JSON.
type flatTest struct {
	testBody
	Sig string `json:"sig"`
}

func signedTest(t testing.TB, k *Key) (Signed[testBody], []byte) {
	t.Helper()
	b := testBody{V: testFormat, ID: "t-1", N: 3, Note: "a <b> & c", Tags: []string{"x", "é"}, Inner: testInner{A: "z"}, Signer: k.Signer()}
	s, err := Sign(k, testFormat, b)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, raw
}

func checkNames(cs []Check) (ok, failed []string) {
	for _, c := range cs {
		if c.OK {
			ok = append(ok, c.Name)
		} else {
			failed = append(failed, c.Name)
		}
	}
	return ok, failed
}

// TestSignedRoundTrip: a signed body is written flat (the body's fields,
// then sig), byte for byte as a struct embedding the body writes it; the
// object without sig is what the signature covers; read back, it is the
// same envelope and verifies.
func TestSignedRoundTrip(t *testing.T) {
	k := testKey(1)
	s, raw := signedTest(t, k)
	flat, _ := json.Marshal(flatTest{testBody: s.Body, Sig: s.Sig})
	if string(raw) != string(flat) {
		t.Errorf("wire\n %s\nwant\n %s", raw, flat)
	}
	if !strings.HasSuffix(string(raw), `,"sig":"`+s.Sig+`"}`) || !strings.HasPrefix(string(raw), `{"v":"`+testFormat+`","id":"t-1",`) {
		t.Errorf("not flat, body first: %s", raw)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "sig")
	unsigned, _ := json.Marshal(m)
	msg, _ := Message(testFormat, json.RawMessage(unsigned))
	if err := VerifyHex(k.PublicKeyHex(), s.Sig, msg); err != nil {
		t.Errorf("the object without sig is not what was signed: %v", err)
	}
	var back Signed[testBody]
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("read back %+v, want %+v", back, s)
	}
	cs, err := back.Verify(testFormat, k.PublicKey())
	if ok, failed := checkNames(cs); err != nil || len(failed) > 0 || strings.Join(ok, ",") != "signature,signer" {
		t.Errorf("checks %+v, %v", cs, err)
	}
	var empty Signed[testBody]
	if err := json.Unmarshal([]byte("null"), &empty); err != nil || !reflect.DeepEqual(empty, Signed[testBody]{}) {
		t.Errorf("null: %v %+v", err, empty)
	}
}

// TestSignedTamperRefused: a body field, the signature or the format
// changed after signing fails the signature check.
func TestSignedTamperRefused(t *testing.T) {
	k := testKey(1)
	s, raw := signedTest(t, k)
	read := func(raw []byte) Signed[testBody] {
		t.Helper()
		var out Signed[testBody]
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	flip := []byte(s.Sig)
	if flip[10] = '0'; s.Sig[10] == '0' {
		flip[10] = '1'
	}
	for _, c := range []struct {
		name   string
		s      Signed[testBody]
		format string
	}{
		{"a number changed", read([]byte(strings.Replace(string(raw), `"n":3`, `"n":4`, 1))), testFormat},
		{"a nested field changed", read([]byte(strings.Replace(string(raw), `"a":"z"`, `"a":"y"`, 1))), testFormat},
		{"a field left out", read([]byte(strings.Replace(string(raw), `"note":"a \u003cb\u003e \u0026 c",`, "", 1))), testFormat},
		{"the signature changed", read([]byte(strings.Replace(string(raw), s.Sig, string(flip), 1))), testFormat},
		{"no signature", Signed[testBody]{Body: s.Body}, testFormat},
		{"another format", s, "test.signed.v2"},
	} {
		cs, err := c.s.Verify(c.format, k.PublicKey())
		if _, failed := checkNames(cs); err != nil || strings.Join(failed, ",") != "signature" {
			t.Errorf("%s: checks %+v, %v", c.name, cs, err)
		}
	}
}

// TestSignedWrongKeyRefused: a receipt not signed by the pinned key fails
// the signer check; one that names a key other than the one that signed
// it fails the signature check.
func TestSignedWrongKeyRefused(t *testing.T) {
	k, other := testKey(1), testKey(2)
	s, _ := signedTest(t, k)
	cs, _ := s.Verify(testFormat, other.PublicKey())
	if ok, failed := checkNames(cs); strings.Join(ok, ",") != "signature" || strings.Join(failed, ",") != "signer" {
		t.Errorf("pinned another key: %+v", cs)
	}
	cs, _ = s.Verify(testFormat, nil)
	if _, failed := checkNames(cs); strings.Join(failed, ",") != "signer" {
		t.Errorf("no key pinned: %+v", cs)
	}
	b := s.Body
	b.Signer = other.Signer()
	claims, err := Sign(k, testFormat, b) // signed by k, naming other
	if err != nil {
		t.Fatal(err)
	}
	cs, _ = claims.Verify(testFormat, other.PublicKey())
	if ok, failed := checkNames(cs); strings.Join(ok, ",") != "signer" || strings.Join(failed, ",") != "signature" {
		t.Errorf("names another key: %+v", cs)
	}
	b.Signer = other.Signer()
	byOther, _ := Sign(other, testFormat, b)
	cs, _ = byOther.Verify(testFormat, k.PublicKey())
	if ok, failed := checkNames(cs); strings.Join(ok, ",") != "signature" || strings.Join(failed, ",") != "signer" {
		t.Errorf("another box's receipt: %+v", cs)
	}
}

// TestSignedBodyNotAnObject: a body that is not written as an object has
// no place for sig.
func TestSignedBodyNotAnObject(t *testing.T) {
	if _, err := json.Marshal(Signed[listBody]{Body: listBody{"a"}}); err == nil || !strings.Contains(err.Error(), "JSON object") {
		t.Errorf("a list body: %v", err)
	}
	if b, err := json.Marshal(Signed[emptyBody]{Sig: "ab"}); err != nil || string(b) != `{"sig":"ab"}` {
		t.Errorf("an empty body: %s %v", b, err)
	}
}

type listBody []string

func (listBody) SignedBy() Signer { return Signer{} }

type emptyBody struct{}

func (emptyBody) SignedBy() Signer { return Signer{} }

// decodesAsFlat reports how reading raw as a Signed envelope differs from
// reading it as the embedding struct the receipts used before ("" when it
// does not): the same value, or the same error (for a value of the wrong
// type: the same place, value and offset).
func decodesAsFlat(raw []byte) string {
	var s Signed[testBody]
	var f flatTest
	// The receipts' UnmarshalJSON hands its text to Signed's as it was
	// handed it (json.Unmarshal would take leading space off first).
	es, ef := s.UnmarshalJSON(raw), json.Unmarshal(raw, &f)
	if (es == nil) != (ef == nil) {
		return "one error: " + errString(es) + " / " + errString(ef)
	}
	if es == nil {
		if !reflect.DeepEqual(s, Signed[testBody]{Body: f.testBody, Sig: f.Sig}) {
			return "values differ"
		}
		return ""
	}
	var ts, tf *json.UnmarshalTypeError
	if errors.As(es, &ts) != errors.As(ef, &tf) {
		return "errors differ: " + es.Error() + " / " + ef.Error()
	}
	if ts == nil {
		if es.Error() != ef.Error() {
			return "errors differ: " + es.Error() + " / " + ef.Error()
		}
		return ""
	}
	// encoding/json names the embedded struct in the path; the flat JSON
	// has no such key.
	field := strings.TrimPrefix(strings.TrimPrefix(tf.Field, "testBody"), ".")
	sameType := ts.Type == tf.Type || ts.Type.Kind() == reflect.Struct && tf.Type.Kind() == reflect.Struct
	if ts.Value != tf.Value || ts.Offset != tf.Offset || ts.Field != field || !sameType {
		return "type errors differ: " + es.Error() + " / " + ef.Error()
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// TestSignedDecodesAsFlat: Signed reads JSON exactly as the embedding
// struct did, errors included: the first value of a wrong type in the
// text, whether in the body or sig.
func TestSignedDecodesAsFlat(t *testing.T) {
	_, raw := signedTest(t, testKey(1))
	for _, in := range append(flatSeeds(), string(raw)) {
		if d := decodesAsFlat([]byte(in)); d != "" {
			t.Errorf("%s: %s", in, d)
		}
	}
}

func flatSeeds() []string {
	return []string{
		`null`, `"x"`, `[1]`, `{}`, `7`, `{"sig":5}`, `{"sig":5,"n":"x"}`, `{"n":"x","sig":5}`,
		`{"inner":{"a":5},"sig":[1]}`, `{"sig":{"a":1},"inner":{"a":5}}`, `{"SIG":"ab","V":"x","Inner":{"A":"q"}}`,
		`{"tags":"x","sig":"a","sig":"b"}`, `{"n":1.5}`, `{"n":1e400}`, `{"inner":[],"tags":{}}`, `{"signer":{"pubkey":1},"sig":true}`,
		`{"v":"a"`, `{"v":"a"} x`, `{"sig":null,"v":null}`,
	}
}

// FuzzSignedDecodesAsFlat: whatever the JSON, Signed reads it as the
// embedding struct did.
func FuzzSignedDecodesAsFlat(f *testing.F) {
	_, raw := signedTest(f, testKey(1))
	f.Add(raw)
	for _, s := range flatSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if d := decodesAsFlat(raw); d != "" {
			t.Fatalf("%q: %s", raw, d)
		}
	})
}
