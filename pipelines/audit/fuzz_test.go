package audit

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// FuzzReadAnswer: whatever an endpoint sends as a chat completion, whole
// or streamed, is read without a panic, within its bound, or refused.
func FuzzReadAnswer(f *testing.F) {
	f.Add([]byte(`{"model":"m","choices":[{"message":{"content":"hi","tool_calls":[{"function":{"name":"f","arguments":"{}"}}]},"finish_reason":"stop","logprobs":{"content":[{"token":"hi","logprob":-0.1,"bytes":[104,105],"top_logprobs":[{"token":"hi","logprob":-0.1}]}]}}]}`))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"logprobs\":{\"content\":[{\"token\":\"a\",\"logprob\":-1,\"bytes\":[300]}]}}]}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"{\"}}]},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n"))
	f.Add([]byte("data: {\"error\":\"x\"}\n"))
	f.Add([]byte("data: not json\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, rep := range []func() (Reply, error){
			func() (Reply, error) { return readWhole(bytes.NewReader(b)) },
			func() (Reply, error) { return readStream(bytes.NewReader(b), time.Now()) },
		} {
			r, err := rep()
			if err == nil && len(r.Text) > maxReplyBytes {
				t.Fatalf("an answer of %d bytes was read", len(r.Text))
			}
			for _, tok := range r.Tokens {
				_ = tokenKey(tok.Hex, tok.Text)
			}
		}
	})
}

// FuzzVerifyReport: any bytes given as a report are checked without a
// panic, and a signed report changed in any byte does not verify unless
// the change is one JSON ignores (whitespace between tokens).
func FuzzVerifyReport(f *testing.F) {
	key := testKey()
	rep := &Report{ID: "aud_1", Format: ReportFormat, Verdict: VerdictPass, Reasons: []string{"ok <&> ü"}, Passes: []PassSummary{}, Receipts: []string{}}
	if err := rep.Sign(key); err != nil {
		f.Fatal(err)
	}
	good, _ := json.Marshal(rep)
	f.Add(good, 10, byte('x'))
	f.Add([]byte(`{"signature":"00","signer":{"pubkey":"zz"}}`), 0, byte(0))
	f.Fuzz(func(t *testing.T, b []byte, at int, c byte) {
		_ = VerifyReport(b, key.PublicKeyHex())
		if len(good) == 0 || at < 0 {
			return
		}
		i := at % len(good)
		changed := append([]byte{}, good...)
		if changed[i] == c {
			return
		}
		changed[i] = c
		v := VerifyReport(changed, key.PublicKeyHex())
		if !v.ValidSignature {
			return
		}
		var a, b2 any
		if json.Unmarshal(good, &a) != nil || json.Unmarshal(changed, &b2) != nil {
			t.Fatalf("a report that does not parse verified: %q", changed)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b2)
		if !bytes.Equal(ja, jb) {
			t.Fatalf("a changed report verified: byte %d to %q", i, c)
		}
	})
}
