package receipts

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/internal/store"
)

// FuzzRead: GET /receipts/{id}'s reader never panics, whatever id it is
// asked for and whatever body the store holds (a state directory edited
// by hand, a row written by an older box); a receipt it calls attested
// passes every check and is the receipt the box signed.
func FuzzRead(f *testing.F) {
	dir := f.TempDir()
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 7
	key := attest.NewKey(ed25519.NewKeyFromSeed(seed))
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	now := time.Unix(1_800_000_000, 0)
	b := New(key, st, configs.Defaults(), func() time.Time { return now })
	ctx := context.Background()
	keyID := "key_0123456789abcdef"
	mc := call("chatcmpl-1")
	mc.KeyID = &keyID
	signed, err := b.Issue(ctx, mc, "tiny-chat")
	if err != nil {
		f.Fatal(err)
	}
	good, err := st.Receipt(ctx, signed.ID)
	if err != nil {
		f.Fatal(err)
	}
	f.Add("chatcmpl-1", good)
	f.Add("chatcmpl-2", []byte(`{"receipt":{"usage":{"prompt_tokens":"9223372036854775807","completion_tokens":"1","total_tokens":"-9223372036854775808"}}}`))
	f.Add("", []byte(`{"receipt":{"params":{"a":1}}}`))
	f.Add("x' OR '1'='1", []byte(`null`))
	f.Add("\x00", []byte(`{"receipt":`))
	n := 0
	f.Fuzz(func(t *testing.T, id string, body []byte) {
		if _, err := b.Read(ctx, id); err != nil && id != signed.ID && !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown id %q: %v, want not found", id, err)
		}
		n++
		rid := fmt.Sprintf("fuzz-%d", n)
		if err := st.PutReceipt(ctx, rid, now, body, time.Time{}, 0); err != nil {
			t.Fatal(err)
		}
		r, err := b.Read(ctx, rid)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				t.Fatalf("stored receipt %s not found", rid)
			}
			return
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
		ok := true
		for _, c := range r.Checks {
			ok = ok && c.OK
		}
		if r.Proof.Verified != ok || (r.Status == StatusAttested) != ok {
			t.Fatalf("verified %v, status %s, checks %+v", r.Proof.Verified, r.Status, r.Checks)
		}
		if ok && !reflect.DeepEqual(r.Receipt, signed) {
			t.Fatalf("attested a receipt the box did not sign:\n%s", body)
		}
		if ok && (r.Usage.PromptTokens < 0 || r.Usage.CompletionTokens < 0 || r.Usage.PromptTokens+r.Usage.CompletionTokens != r.Usage.TotalTokens) {
			t.Fatalf("attested usage %+v", r.Usage)
		}
	})
}
