package attest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzCanonical: canonical JSON is valid JSON, means the same value as its
// input, and is a fixed point.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `"x"`, `{"b":1,"a":[true,false,null,"\u00e9"]}`, `{"z":{"y":"\n\t\"\\"}}`,
		`{"é":"1","e":"2","E":"3"}`, `"\ud83d\ude00"`, `1.5e10`, `{"a":{"a":{"a":[]}}}`, `"<>&\u2028"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			if _, err := CanonicalJSON(raw); err == nil {
				t.Fatalf("accepted invalid JSON %q", raw)
			}
			return
		}
		c, err := CanonicalJSON(raw)
		if err != nil {
			return // e.g. trailing data after one value
		}
		if !json.Valid(c) || !utf8.Valid(c) {
			t.Fatalf("canonical form is not valid UTF-8 JSON: %q", c)
		}
		c2, err := CanonicalJSON(c)
		if err != nil || !bytes.Equal(c, c2) {
			t.Fatalf("not a fixed point:\n%q\n%q", c, c2)
		}
		var a, b any
		da := json.NewDecoder(bytes.NewReader(raw))
		da.UseNumber()
		db := json.NewDecoder(bytes.NewReader(c))
		db.UseNumber()
		if da.Decode(&a) != nil || db.Decode(&b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("meaning changed:\n%q\n%q", raw, c)
		}
		if bytes.ContainsAny(c, " \n\r\t") && !bytes.Contains(raw, []byte(" ")) && !bytes.Contains(raw, []byte(`\u0020`)) {
			// Whitespace may appear only inside strings.
			var s string
			if json.Unmarshal(c, &s) != nil {
				// not a bare string: check outside strings
				if hasStructuralSpace(c) {
					t.Fatalf("whitespace between tokens: %q", c)
				}
			}
		}
	})
}

// hasStructuralSpace reports whitespace outside strings.
func hasStructuralSpace(c []byte) bool {
	in, esc := false, false
	for _, ch := range c {
		switch {
		case esc:
			esc = false
		case in && ch == '\\':
			esc = true
		case ch == '"':
			in = !in
		case !in && (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t'):
			return true
		}
	}
	return false
}

// FuzzVerifyRecord: the verifier never panics, and never accepts a record
// whose meaning differs from the signed one, whatever bytes it is given.
func FuzzVerifyRecord(f *testing.F) {
	_, raw := sample(f)
	f.Add(raw)
	f.Add([]byte(`{"format":"service.record.v1","entries":[{}]}`))
	f.Add([]byte(`{"format":"service.record.v1","kind":"k","id":"i","created":"c","count":"0","head":"0000000000000000000000000000000000000000000000000000000000000000","signature":"","entries":[],"signer":{"scheme":"ed25519","pubkey":"00","key_id":""}}`))
	f.Add([]byte(`[1,2,3]`))
	want := stripTexts(f, raw)
	pub := testKey(1).PublicKey()
	f.Fuzz(func(t *testing.T, data []byte) {
		v := VerifyRecord(data, pub)
		if !v.OK {
			if v.Problem == "" {
				t.Fatal("failed without naming a problem")
			}
			return
		}
		// Accepted: it must be the signed record, perhaps without some texts.
		if got := stripTexts(t, data); !bytes.Equal(got, want) {
			t.Fatalf("accepted a different record:\n%s", data)
		}
	})
}

// FuzzRecordTamper flips one byte of a valid record: the result is either
// rejected or means the same record.
func FuzzRecordTamper(f *testing.F) {
	_, raw := sample(f)
	c, _ := CanonicalJSON(raw)
	for _, pos := range []int{0, 10, 100, 500, 1000, len(c) - 2} {
		f.Add(pos, byte('x'))
		f.Add(pos, byte('0'))
	}
	want := stripTexts(f, raw)
	pub := testKey(1).PublicKey()
	f.Fuzz(func(t *testing.T, pos int, b byte) {
		if pos < 0 {
			pos = -pos
		}
		m := append([]byte(nil), c...)
		i := pos % len(m)
		if m[i] == b {
			return
		}
		m[i] = b
		v := VerifyRecord(m, pub)
		if v.OK && !bytes.Equal(stripTexts(t, m), want) {
			t.Fatalf("byte %d -> %q accepted a changed record", i, b)
		}
	})
}

// stripTexts is the canonical form of a record without its entries' texts.
func stripTexts(t testing.TB, raw []byte) []byte {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("strip: %v", err)
	}
	if es, ok := m["entries"].([]any); ok {
		for _, e := range es {
			if em, ok := e.(map[string]any); ok {
				delete(em, "text")
			}
		}
	}
	out, err := Canonical(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
