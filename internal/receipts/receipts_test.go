package receipts

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/internal/store"
)

func newBook(t *testing.T, now *time.Time, edit func(*configs.Config)) (*Book, *store.Store) {
	t.Helper()
	dir := t.TempDir()
	key, _, err := attest.LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := configs.Defaults()
	if edit != nil {
		edit(cfg)
	}
	return New(key, st, cfg, func() time.Time { return *now }), st
}

func call(id string) attest.ModelCall {
	return attest.ModelCall{ID: id, Model: "model-27b", WeightsRoot: "ab", RequestHash: attest.HashText("q"),
		OutputHash: attest.HashText("a"), Params: map[string]string{"max_tokens": "16"}, Usage: attest.NewUsage(3, 4)}
}

func TestIssueAndRead(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	keyID := "key_0123456789abcdef"
	for _, tc := range []struct {
		name    string
		mc      attest.ModelCall
		created string
	}{
		{"demo session", call("chatcmpl-1"), "1800000000"},
		{"developer key", func() attest.ModelCall { m := call("chatcmpl-2"); m.KeyID = &keyID; return m }(), "1800000000"},
		{"created given", func() attest.ModelCall { m := call("chatcmpl-3"); m.Created = "17"; return m }(), "17"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := newBook(t, &now, nil)
			ctx := context.Background()
			signed, err := b.Issue(ctx, tc.mc, "tiny-chat")
			if err != nil {
				t.Fatal(err)
			}
			if signed.Created != tc.created || signed.Format != attest.ModelCallFormat {
				t.Errorf("signed %+v", signed)
			}
			rec, err := b.Read(ctx, tc.mc.ID)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != StatusAttested || !rec.Proof.Verified || rec.Proof.Format != attest.ModelCallFormat || len(rec.Checks) == 0 {
				t.Errorf("status %s, proof %+v, checks %+v", rec.Status, rec.Proof, rec.Checks)
			}
			if rec.ID != tc.mc.ID || rec.Model != "model-27b" || rec.UpstreamModel != "tiny-chat" || rec.Usage != (Usage{3, 4, 7}) {
				t.Errorf("record %+v", rec)
			}
			if rec.Gateway.Sig != signed.Sig || rec.Gateway.PubKey != signed.Signer.PubKey || rec.Gateway.KeyID != signed.Signer.KeyID {
				t.Errorf("gateway %+v", rec.Gateway)
			}
			if !reflect.DeepEqual(rec.Receipt, signed) || !reflect.DeepEqual(rec.KeyID, tc.mc.KeyID) {
				t.Errorf("receipt %+v key %v", rec.Receipt, rec.KeyID)
			}
		})
	}
}

// TestReadRechecks: a stored receipt changed after signing reads back
// unverified.
func TestReadRechecks(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name   string
		edit   func(*stored)
		status string
	}{
		{"untouched", func(*stored) {}, StatusAttested},
		{"model changed", func(s *stored) { s.Receipt.Model = "other" }, StatusUnverified},
		{"signature changed", func(s *stored) { s.Receipt.Sig = "00" + s.Receipt.Sig[2:] }, StatusUnverified},
		{"upstream changed (not signed)", func(s *stored) { s.UpstreamModel = "x" }, StatusAttested},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, st := newBook(t, &now, nil)
			ctx := context.Background()
			signed, err := b.Issue(ctx, call("r"), "tiny")
			if err != nil {
				t.Fatal(err)
			}
			s := stored{Receipt: signed, UpstreamModel: "tiny"}
			tc.edit(&s)
			body, _ := json.Marshal(s)
			if err := st.PutReceipt(ctx, "forged", now, body, now.Add(-time.Hour), 0); err != nil {
				t.Fatal(err)
			}
			rec, err := b.Read(ctx, "forged")
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != tc.status || rec.Proof.Verified != (tc.status == StatusAttested) {
				t.Errorf("status %s verified %v, want %s", rec.Status, rec.Proof.Verified, tc.status)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		retention int
		max       int
		gaps      []time.Duration // before each issue
		kept      []bool
	}{
		{"max", 30, 2, []time.Duration{0, time.Second, time.Second}, []bool{false, true, true}},
		{"retention", 1, 100, []time.Duration{0, 12 * time.Hour, 13 * time.Hour}, []bool{false, true, true}},
		{"both loose", 30, 100, []time.Duration{0, time.Hour}, []bool{true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(1_800_000_000, 0)
			b, _ := newBook(t, &now, func(c *configs.Config) {
				c.Receipts.RetentionDays, c.Receipts.Max = tc.retention, tc.max
			})
			ctx := context.Background()
			ids := []string{}
			for i, gap := range tc.gaps {
				now = now.Add(gap)
				id := string(rune('a' + i))
				if _, err := b.Issue(ctx, call(id), "tiny"); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			for i, id := range ids {
				_, err := b.Read(ctx, id)
				if kept := err == nil; kept != tc.kept[i] {
					t.Errorf("receipt %s kept %v, want %v (%v)", id, kept, tc.kept[i], err)
				}
				if err != nil && !errors.Is(err, ErrNotFound) {
					t.Errorf("receipt %s: %v", id, err)
				}
			}
		})
	}
}

// TestRecordJSON pins the field order and names of GET /receipts/{id}.
func TestRecordJSON(t *testing.T) {
	b, err := json.Marshal(Record{})
	if err != nil {
		t.Fatal(err)
	}
	prefix := `{"id":"","model":"","weights_root":"","request_hash":"","output_hash":"",` +
		`"provider":{"miner_id":null,"pubkey":null,"sig":null},"gateway":{"pubkey":"","sig":"","key_id":""},` +
		`"proof":{"format":"","verified":false},"checks":null,"status":"","upstream_model":"",` +
		`"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0},"cost":null,"receipt":{`
	suffix := `},"key_id":null}`
	if !strings.HasPrefix(string(b), prefix) || !strings.HasSuffix(string(b), suffix) {
		t.Errorf("GET /receipts/{id} JSON changed:\n%s", b)
	}
}
