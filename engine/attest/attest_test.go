package attest

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func testKey(seed byte) *Key {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed
	}
	return NewKey(ed25519.NewKeyFromSeed(s))
}

func TestKeyCreatedOnceAndReloaded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	k1, created, err := LoadOrCreateKey(dir)
	if err != nil || !created {
		t.Fatalf("create: %v created=%v", err, created)
	}
	st, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", err, st.Mode())
	}
	k2, created, err := LoadOrCreateKey(dir)
	if err != nil || created {
		t.Fatalf("reload: %v created=%v", err, created)
	}
	if k1.PublicKeyHex() != k2.PublicKeyHex() || k1.ID() != k2.ID() || len(k1.PublicKeyHex()) != 64 {
		t.Errorf("reloaded a different key: %s vs %s", k1.PublicKeyHex(), k2.PublicKeyHex())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("state dir holds %d files, want only the key", len(entries))
	}
}

func TestKeyConcurrentCreateAgrees(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	keys := make([]string, 8)
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, _, err := LoadOrCreateKey(dir)
			if err != nil {
				t.Error(err)
				return
			}
			keys[i] = k.PublicKeyHex()
		}()
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if k != keys[0] {
			t.Fatalf("concurrent starts made different keys: %v", keys)
		}
	}
}

func TestKeyRefusals(t *testing.T) {
	cases := []struct {
		name  string
		setup func(path string)
		want  string
	}{
		{"readable by others", func(p string) { _ = os.Chmod(p, 0o644) }, "chmod 600"},
		{"group readable", func(p string) { _ = os.Chmod(p, 0o640) }, "other users can read it"},
		{"corrupt", func(p string) {
			_ = os.WriteFile(p, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600)
		}, "corrupt"},
		{"empty", func(p string) { _ = os.WriteFile(p, nil, 0o600) }, "will not replace it"},
		{"not a key", func(p string) { _ = os.WriteFile(p, []byte("hello"), 0o600) }, "no PEM block"},
		{"a directory", func(p string) { _ = os.Remove(p); _ = os.Mkdir(p, 0o700) }, "not a regular file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, _, err := LoadOrCreateKey(dir); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, KeyFile)
			before, _ := os.ReadFile(path)
			tc.setup(path)
			_, _, err := LoadOrCreateKey(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			// Never regenerated silently: the file is as the test left it.
			if after, _ := os.ReadFile(path); tc.name == "readable by others" && string(after) != string(before) {
				t.Error("the key file was rewritten")
			}
		})
	}
}

func TestSignVerify(t *testing.T) {
	k := testKey(1)
	sig, msg, err := k.Sign("test.v1", map[string]any{"b": "2", "a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if string(msg) != "test.v1\n{\"a\":\"1\",\"b\":\"2\"}" {
		t.Errorf("message = %q", msg)
	}
	if err := VerifyHex(k.PublicKeyHex(), sig, msg); err != nil {
		t.Error(err)
	}
	if err := VerifyHex(testKey(2).PublicKeyHex(), sig, msg); err == nil {
		t.Error("verified under another key")
	}
	if err := VerifyHex(k.PublicKeyHex(), sig, append(msg, ' ')); err == nil {
		t.Error("verified a changed message")
	}
}

// sample builds a five-entry record signed by key 1.
func sample(t testing.TB) (*Record, []byte) {
	b := NewRecord("test", "rec_1", map[string]string{"subject": "example"})
	b.AddText("input", "The patient reports back pain — 3 days.", map[string]any{"source": "transcript", "lines": []any{"1", "2"}})
	b.AddText("model", "Assessment: lumbar strain.", map[string]any{"receipt": "chatcmpl-1", "tokens": "42"})
	b.Add("score", nil, map[string]any{"level": "3", "ok": true, "note": nil})
	b.AddText("judgment", "Supported by line 2.", map[string]any{"nested": map[string]any{"k": "v"}})
	b.AddText("output", "Final note text with ünïcödé.", nil)
	r, err := b.Sign(testKey(1), time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return r, raw
}

func TestRecordVerifies(t *testing.T) {
	r, raw := sample(t)
	v := VerifyRecord(raw, testKey(1).PublicKey())
	if !v.OK || v.Entries != 5 || v.FirstBadEntry != nil || !v.SignedByTrustedKey {
		t.Fatalf("verification = %+v", v)
	}
	if r.Count != "5" || r.Entries[0].Prev != genesis || r.Head != r.Entries[4].Hash {
		t.Errorf("record = %+v", r)
	}
	if p := numberPath(mustAny(t, raw), "record"); p != "" {
		t.Errorf("record holds a number at %s", p)
	}
}

func mustAny(t testing.TB, raw []byte) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// mutate decodes the record, applies f, and re-encodes it.
func mutate(t *testing.T, raw []byte, f func(r map[string]any, entries []any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	f(m, m["entries"].([]any))
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func entry(entries []any, i int) map[string]any { return entries[i].(map[string]any) }

func TestRecordTampering(t *testing.T) {
	_, raw := sample(t)
	other := testKey(2)
	cases := []struct {
		name     string
		f        func(r map[string]any, e []any)
		firstBad int    // 0: no entry named
		check    string // the failing check
	}{
		{"text changed", func(r map[string]any, e []any) { entry(e, 0)["text"] = "The patient reports knee pain — 3 days." }, 1, "chain"},
		{"data value changed", func(r map[string]any, e []any) { entry(e, 1)["data"].(map[string]any)["tokens"] = "43" }, 2, "chain"},
		{"nested data changed", func(r map[string]any, e []any) {
			entry(e, 3)["data"].(map[string]any)["nested"].(map[string]any)["k"] = "w"
		}, 4, "chain"},
		{"type changed", func(r map[string]any, e []any) { entry(e, 2)["type"] = "scores" }, 3, "chain"},
		{"field added to entry", func(r map[string]any, e []any) { entry(e, 4)["extra"] = "x" }, 5, "chain"},
		{"text hash changed", func(r map[string]any, e []any) { entry(e, 3)["text_sha256"] = strings.Repeat("a", 64) }, 4, "chain"},
		{"hash forged to match", func(r map[string]any, e []any) {
			en := entry(e, 1)
			en["data"].(map[string]any)["tokens"] = "43"
			body := map[string]any{}
			for k, v := range en {
				if k != "text" && k != "hash" {
					body[k] = v
				}
			}
			h, _ := hashEntryMap(body)
			en["hash"] = h
		}, 3, "chain"},
		{"entries reordered", func(r map[string]any, e []any) { e[1], e[2] = e[2], e[1] }, 2, "chain"},
		{"entry dropped", func(r map[string]any, e []any) { r["entries"] = append(append([]any{}, e[:2]...), e[3:]...) }, 3, "chain"},
		{"first entry dropped", func(r map[string]any, e []any) { r["entries"] = e[1:] }, 1, "chain"},
		{"last entry dropped", func(r map[string]any, e []any) { r["entries"] = e[:4] }, 0, "count"},
		{"entry appended", func(r map[string]any, e []any) {
			cp := map[string]any{}
			for k, v := range entry(e, 4) {
				cp[k] = v
			}
			cp["n"] = "6"
			cp["prev"] = entry(e, 4)["hash"]
			r["entries"] = append(e, cp)
		}, 6, "chain"},
		{"header changed", func(r map[string]any, e []any) { r["kind"] = "other" }, 0, "signature"},
		{"meta changed", func(r map[string]any, e []any) { r["meta"].(map[string]any)["subject"] = "x" }, 0, "signature"},
		{"created changed", func(r map[string]any, e []any) { r["created"] = "2026-11-22T12:00:00Z" }, 0, "signature"},
		{"signature changed", func(r map[string]any, e []any) {
			s := []byte(r["signature"].(string))
			if s[0] == 'a' {
				s[0] = 'b'
			} else {
				s[0] = 'a'
			}
			r["signature"] = string(s)
		}, 0, "signature"},
		{"signer swapped, not re-signed", func(r map[string]any, e []any) {
			r["signer"] = map[string]any{"scheme": "ed25519", "pubkey": other.PublicKeyHex(), "key_id": other.ID()}
		}, 0, "signature"},
		{"signer swapped and re-signed", func(r map[string]any, e []any) {
			r["signer"] = map[string]any{"scheme": "ed25519", "pubkey": other.PublicKeyHex(), "key_id": other.ID()}
			header := map[string]any{}
			for k, v := range r {
				if k != "entries" && k != "signature" {
					header[k] = v
				}
			}
			sig, _, _ := other.Sign(RecordFormat, header)
			r["signature"] = sig
		}, 0, "signer"},
		{"number instead of string", func(r map[string]any, e []any) { entry(e, 1)["data"].(map[string]any)["tokens"] = 42 }, 2, "numbers"},
		{"count as a number", func(r map[string]any, e []any) { r["count"] = 5 }, 0, "format"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := VerifyRecord(mutate(t, raw, tc.f), testKey(1).PublicKey())
			if v.OK {
				t.Fatalf("tampered record verified: %+v", v)
			}
			failed := ""
			for _, c := range v.Checks {
				if !c.OK {
					failed = c.Name
					break
				}
			}
			if failed != tc.check {
				t.Errorf("first failing check %q, want %q (%s)", failed, tc.check, v.Problem)
			}
			if tc.firstBad == 0 {
				if v.FirstBadEntry != nil && tc.check != "chain" {
					t.Errorf("named entry %d, want none", *v.FirstBadEntry)
				}
			} else if v.FirstBadEntry == nil || *v.FirstBadEntry != tc.firstBad {
				t.Errorf("first bad entry %v, want %d (%s)", v.FirstBadEntry, tc.firstBad, v.Problem)
			}
			if v.Problem == "" {
				t.Error("no problem named")
			}
		})
	}
}

func TestRecordWithoutTextsStillVerifies(t *testing.T) {
	_, raw := sample(t)
	stripped := mutate(t, raw, func(r map[string]any, e []any) {
		for i := range e {
			delete(entry(e, i), "text")
		}
	})
	if strings.Contains(string(stripped), "lumbar") {
		t.Fatal("text not removed")
	}
	v := VerifyRecord(stripped, testKey(1).PublicKey())
	if !v.OK {
		t.Fatalf("record without texts: %+v", v)
	}
	some := mutate(t, raw, func(r map[string]any, e []any) { delete(entry(e, 2), "text"); delete(entry(e, 4), "text") })
	if v := VerifyRecord(some, testKey(1).PublicKey()); !v.OK {
		t.Fatalf("record with some texts removed: %+v", v)
	}
}

func TestRecordUntrustedOrMalformed(t *testing.T) {
	_, raw := sample(t)
	if v := VerifyRecord(raw, nil); v.OK || v.SignedByTrustedKey {
		t.Error("verified without a trusted key")
	}
	if v := VerifyRecord(raw, testKey(3).PublicKey()); v.OK || !strings.Contains(v.Problem, "not by the trusted key") {
		t.Errorf("wrong signer: %+v", v)
	}
	for _, bad := range []string{``, `[]`, `{}`, `{"format":"service.record.v1"}`, `{"format":"x"}`, `null`, `{"format":"service.record.v1","kind":"k","id":"i","created":"c","count":"0","head":"h","signature":"s","entries":[],"signer":{}}`} {
		if v := VerifyRecord([]byte(bad), testKey(1).PublicKey()); v.OK || v.Problem == "" {
			t.Errorf("%q verified: %+v", bad, v)
		}
	}
}

func TestRecordBuilderRefusesNumbers(t *testing.T) {
	b := NewRecord("test", "r", nil)
	b.Add("x", nil, map[string]any{"n": 3})
	if _, err := b.Sign(testKey(1), time.Now()); err == nil || !strings.Contains(err.Error(), "data.n is a number") {
		t.Errorf("err = %v", err)
	}
}

func TestModelCallReceipt(t *testing.T) {
	k := testKey(1)
	devKey := "key_abc"
	s, err := IssueModelCall(k, ModelCall{
		ID: "chatcmpl-1", Model: "model-27b", WeightsRoot: strings.Repeat("ab", 32),
		RequestHash: HashText("request"), OutputHash: HashText("output"),
		Params: map[string]string{"temperature": "0.7", "max_tokens": "64"},
		Usage:  NewUsage(10, 5), Created: "1790000000", KeyID: &devKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range CheckModelCall(s, k.PublicKey()) {
		if !c.OK {
			t.Errorf("check %s failed: %s", c.Name, c.Detail)
		}
	}
	raw, _ := json.Marshal(s)
	if strings.Contains(string(raw), "request\"") || strings.Contains(string(raw), "\"output\"") {
		t.Error("receipt holds text")
	}

	tampered := s
	tampered.Usage = NewUsage(10, 4)
	failed := map[string]bool{}
	for _, c := range CheckModelCall(tampered, k.PublicKey()) {
		failed[c.Name] = !c.OK
	}
	if !failed["commitment"] || !failed["signature"] || failed["metering"] {
		t.Errorf("tampered usage: %v", failed)
	}
	if c := CheckModelCall(s, testKey(2).PublicKey()); c[2].OK {
		t.Error("key_pinned passed for another box's key")
	}
	if _, err := IssueModelCall(k, ModelCall{ID: "x", Params: map[string]string{}}); err != nil {
		t.Error(err)
	}
	if hex.EncodeToString(k.PublicKey()) != k.PublicKeyHex() {
		t.Error("hex mismatch")
	}
}
