package crashtest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"boxd/engine/attest"
	"boxd/internal/store"
)

// selfState is a state directory and a ledger that agree: two keys (one
// revoked), usage, a receipt, a domain challenge, a studio report and
// an owner's persisted index.
func selfState(t *testing.T) (string, *ledger, *identity) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key := attest.NewKey(priv)
	if err := os.WriteFile(filepath.Join(dir, attest.KeyFile), []byte("the key file"), 0o600); err != nil {
		t.Fatal(err)
	}
	id := &identity{fileSHA256: keyFileHash(dir), pub: key.PublicKey(), keyID: key.ID()}
	l := newLedger()
	now := time.Now()
	for i, label := range []string{"a", "b"} {
		k := &keyRec{label: label, id: "key_" + label, secret: "dk_" + label, acked: true, owner: i == 0,
			sentReq: 3, ackedReq: 2, sentTok: 20, ackedTok: 5}
		if _, err := st.CreateKey(ctx, k.id, k.secret, label, "free", store.Limits{}, now); err != nil {
			t.Fatal(err)
		}
		if err := st.AddUsage(ctx, k.id, "2026-01-01", 8, 0, 2); err != nil {
			t.Fatal(err)
		}
		l.keys = append(l.keys, k)
		l.byLabel[label], l.byID[k.id] = k, k
	}
	b := l.byLabel["b"]
	b.revokeSent, b.revokeAcked = true, true
	if _, err := st.RevokeKey(ctx, b.id, now); err != nil {
		t.Fatal(err)
	}
	keyID := b.id
	signed, err := attest.IssueModelCall(key, attest.ModelCall{ID: "chatcmpl-1", Model: "model-27b", Usage: attest.NewUsage(3, 6), KeyID: &keyID})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"receipt": signed})
	if err := st.PutReceipt(ctx, "chatcmpl-1", now, body, time.Unix(0, 0), 0); err != nil {
		t.Fatal(err)
	}
	l.receipts["chatcmpl-1"] = b.id
	if _, err := st.Challenge(ctx, b.id, "shop.example", "boxd-verify-1", now); err != nil {
		t.Fatal(err)
	}
	l.domains[b.id+" shop.example"] = &domainRec{keyID: b.id, domain: "shop.example", token: "boxd-verify-1", acked: true}
	reports := filepath.Join(dir, "studio", "reports")
	if err := os.MkdirAll(reports, 0o700); err != nil {
		t.Fatal(err)
	}
	rep, _ := json.Marshal(map[string]any{"report_id": "rp_1", "item": reportItem, "category": "other", "details": "nonce 1"})
	if err := os.WriteFile(filepath.Join(reports, "rp_1.json"), rep, 0o600); err != nil {
		t.Fatal(err)
	}
	l.reports["nonce 1"] = &reportRec{id: "rp_1", acked: true}
	retr := filepath.Join(dir, "retrieval")
	if err := os.MkdirAll(retr, 0o700); err != nil {
		t.Fatal(err)
	}
	ix, _ := json.Marshal(map[string]any{"v": "x", "owner": "key_a", "hash": "h1", "documents": []map[string]string{{"id": "log", "text": "text 1"}}})
	if err := os.WriteFile(filepath.Join(retr, "o-h1.json"), ix, 0o600); err != nil {
		t.Fatal(err)
	}
	l.owners = []*keyRec{l.byLabel["a"]}
	l.indexes["key_a"] = []*indexSend{{text: "text 1", hash: "h1", acked: true}}
	return dir, l, id
}

func exec1(t *testing.T, dir, q string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, store.File))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
}

// TestChecksCatch: the checks TestKill9Server makes after each kill pass
// on a state that agrees with what the clients were told, and name each
// kind of loss, corruption or invention.
func TestChecksCatch(t *testing.T) {
	cases := []struct {
		name  string
		fault func(t *testing.T, dir string, l *ledger)
		want  string
	}{
		{"nothing wrong", func(*testing.T, string, *ledger) {}, ""},
		{"an acknowledged key lost", func(t *testing.T, dir string, _ *ledger) {
			exec1(t, dir, `DELETE FROM usage WHERE key_id = 'key_a'`)
			exec1(t, dir, `DELETE FROM keys WHERE key_id = 'key_a'`)
		}, "key key_a (a) was acknowledged and is gone"},
		{"a key never asked for", func(t *testing.T, dir string, _ *ledger) {
			exec1(t, dir, `INSERT INTO keys SELECT 'key_z', 'h', 'z', plan, created, NULL, verticals, 0, 0, 0, 0 FROM keys LIMIT 1`)
		}, "is stored but was never asked for"},
		{"a revocation lost", func(t *testing.T, dir string, _ *ledger) {
			exec1(t, dir, `UPDATE keys SET revoked_at = NULL`)
		}, "its revocation was acknowledged and it is not revoked"},
		{"usage under the acknowledged", func(t *testing.T, dir string, _ *ledger) {
			exec1(t, dir, `UPDATE usage SET requests = 1 WHERE key_id = 'key_a'`)
		}, "key key_a: 1 requests counted; 2 answered 2xx, 3 sent"},
		{"a receipt without its charge", func(t *testing.T, dir string, _ *ledger) {
			exec1(t, dir, `UPDATE usage SET llm_tokens = 5 WHERE key_id = 'key_b'`)
		}, "its stored receipts count 6 generated tokens, its usage 5"},
		{"a receipt changed", func(t *testing.T, dir string, _ *ledger) {
			exec1(t, dir, `UPDATE receipts SET body = replace(body, 'model-27b', 'model-28b')`)
		}, "receipt chatcmpl-1: check commitment failed"},
		{"a domain token changed", func(t *testing.T, dir string, _ *ledger) {
			exec1(t, dir, `UPDATE domains SET token = 'other'`)
		}, "acknowledged with token boxd-verify-1"},
		{"a report half written", func(t *testing.T, dir string, _ *ledger) {
			if err := os.WriteFile(filepath.Join(dir, "studio", "reports", "rp_1.json"), []byte(`{"report_id": "rp_1", "it`), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "studio report rp_1.json is not whole JSON"},
		{"an index lost", func(t *testing.T, dir string, _ *ledger) {
			if err := os.Remove(filepath.Join(dir, "retrieval", "o-h1.json")); err != nil {
				t.Fatal(err)
			}
		}, "owner key_a holds 0 persisted indexes"},
		{"the signing key changed", func(t *testing.T, dir string, _ *ledger) {
			if err := os.WriteFile(filepath.Join(dir, attest.KeyFile), []byte("another key"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "signing key file instance.key"},
		{"a corrupt database", func(t *testing.T, dir string, _ *ledger) {
			exec1(t, dir, `PRAGMA wal_checkpoint(TRUNCATE)`)
			f, err := os.OpenFile(filepath.Join(dir, store.File), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, _ := f.Stat()
			// Every page after the first two overwritten: the schema is
			// intact, the tables' pages are not.
			junk := []byte(strings.Repeat("\xa5", int(fi.Size())-8192))
			if _, err := f.WriteAt(junk, 8192); err != nil {
				t.Fatal(err)
			}
		}, "integrity_check"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, l, id := selfState(t)
			c.fault(t, dir, l)
			bad := checkState(dir, l, id)
			got := strings.Join(bad, "\n")
			switch {
			case c.want == "" && len(bad) > 0:
				t.Errorf("problems on a sound state:\n%s", got)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("want a problem naming %q, got:\n%s", c.want, got)
			}
		})
	}
}

// TestStoreChecksCatch: TestKill9Store's model names an acknowledged
// write that is gone and a row that was never begun.
func TestStoreChecksCatch(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := st.Put(context.Background(), store.Runs, store.Kept{ID: "kp-1", Owner: "o", Created: now, Expires: now.Add(time.Hour), Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	m := &storeModel{begun: map[int64]event{}, acked: map[int64]event{}}
	put := event{Seq: 1, Phase: "begin", Op: "put", Table: "runs", ID: "kp-1", Owner: "o", Hash: sha([]byte("x"))}
	if _, err := m.add(1, []string{mustJSON(put), `{"seq":1,"phase":"ack"}`}); err != nil {
		t.Fatal(err)
	}
	if bad := m.check(dir); len(bad) != 0 {
		t.Fatalf("problems on a sound state: %v", bad)
	}
	exec1(t, dir, `UPDATE runs SET body = x'79'`)
	if bad := fmt.Sprint(m.check(dir)); !strings.Contains(bad, "runs item kp-1 was acknowledged") || !strings.Contains(bad, "was never begun so") {
		t.Errorf("a changed body: %s", bad)
	}
	exec1(t, dir, `DELETE FROM runs`)
	if bad := fmt.Sprint(m.check(dir)); !strings.Contains(bad, "runs item kp-1 was acknowledged: present false") {
		t.Errorf("a lost row: %s", bad)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
