package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var ctx = context.Background()

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestKeysSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	lim := Limits{Verticals: []string{"clinical", "code"}, DailyLLMTokens: 1000, DailyAudioSeconds: 60, RequestsPerMinute: 5, ConcurrentLiveSessions: 1}
	if _, err := s.CreateKey(ctx, "key_1", "dk_secret1", "clinic app", "free", lim, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateKey(ctx, "key_2", "dk_secret2", "", "free", Limits{DailyLLMTokens: 5}, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUsage(ctx, "key_1", "2026-11-21", 10, 1500, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUsage(ctx, "key_1", "2026-11-21", 5, 500, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevokeKey(ctx, "key_2", now); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s2 := open(t, dir)
	k, err := s2.KeyBySecret(ctx, "dk_secret1")
	if err != nil {
		t.Fatal(err)
	}
	if k.ID != "key_1" || k.Label != "clinic app" || k.Revoked() || !k.Created.Equal(now) ||
		fmt.Sprint(k.Limits.Verticals) != "[clinical code]" || k.Limits.DailyLLMTokens != 1000 {
		t.Errorf("key = %+v", k)
	}
	u, _ := s2.UsageOn(ctx, "key_1", "2026-11-21")
	if u.LLMTokens != 15 || u.AudioMS != 2000 || u.Requests != 2 {
		t.Errorf("usage = %+v", u)
	}
	k2, _ := s2.KeyByID(ctx, "key_2")
	if !k2.Revoked() || k2.Limits.Verticals != nil {
		t.Errorf("key 2 = %+v", k2)
	}
	keys, _ := s2.ListKeys(ctx)
	if len(keys) != 2 || keys[0].ID != "key_1" {
		t.Errorf("list = %+v", keys)
	}
}

func TestUnknownKeys(t *testing.T) {
	s := open(t, t.TempDir())
	if _, err := s.KeyBySecret(ctx, "dk_nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v", err)
	}
	if _, err := s.KeyByID(ctx, "key_nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v", err)
	}
	if _, err := s.RevokeKey(ctx, "key_nope", time.Now()); !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v", err)
	}
}

func TestRevokeKeepsTheFirstTime(t *testing.T) {
	s := open(t, t.TempDir())
	t0 := time.Unix(1_790_000_000, 0).UTC()
	_, _ = s.CreateKey(ctx, "key_1", "dk_1", "", "free", Limits{}, t0)
	a, _ := s.RevokeKey(ctx, "key_1", t0.Add(time.Hour))
	b, _ := s.RevokeKey(ctx, "key_1", t0.Add(2*time.Hour))
	if !a.RevokedAt.Equal(*b.RevokedAt) || !a.RevokedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("revoked at %v then %v", a.RevokedAt, b.RevokedAt)
	}
}

func TestDuplicateSecretRefused(t *testing.T) {
	s := open(t, t.TempDir())
	_, _ = s.CreateKey(ctx, "key_1", "dk_same", "", "free", Limits{}, time.Now())
	if _, err := s.CreateKey(ctx, "key_2", "dk_same", "", "free", Limits{}, time.Now()); err == nil {
		t.Error("two keys with one secret")
	}
	if _, err := s.KeyByID(ctx, "key_2"); !errors.Is(err, ErrNotFound) {
		t.Error("a failed create left a row")
	}
}

func TestNoKeyInClearText(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	secrets := []string{"dk_Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHE", "dk_c2Vjb25kLWtleS1zZWNvbmQta2V5LXNlY29uZA"}
	for i, sec := range secrets {
		if _, err := s.CreateKey(ctx, fmt.Sprintf("key_%d", i), sec, "label", "free", Limits{}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	// Read the database and its WAL while open, then after close.
	check := func() {
		files, _ := filepath.Glob(filepath.Join(dir, File+"*"))
		if len(files) == 0 {
			t.Fatal("no database files")
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, sec := range secrets {
				for _, needle := range []string{sec, strings.TrimPrefix(sec, "dk_")} {
					if bytes.Contains(b, []byte(needle)) {
						t.Fatalf("%s holds a key in clear text", f)
					}
				}
			}
		}
		found := false
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if bytes.Contains(b, []byte(HashSecret(secrets[0]))) {
				found = true
			}
		}
		if !found {
			t.Fatal("the key's hash is not in the database either: the test reads the wrong files")
		}
	}
	check()
	s.Close()
	check()
	st, _ := os.Stat(filepath.Join(dir, File))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("database mode %04o", st.Mode().Perm())
	}
}

func TestTwoProcessesShareTheFile(t *testing.T) {
	dir := t.TempDir()
	daemon := open(t, dir)
	cli := open(t, dir)
	_, _ = daemon.CreateKey(ctx, "key_1", "dk_1", "", "free", Limits{}, time.Now())
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(2)
		go func() { defer wg.Done(); _ = daemon.AddUsage(ctx, "key_1", "2026-11-21", 1, 0, 1) }()
		go func() {
			defer wg.Done()
			if _, err := cli.CreateKey(ctx, fmt.Sprintf("key_c%d", i), fmt.Sprintf("dk_c%d", i), "", "free", Limits{}, time.Now()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if _, err := cli.RevokeKey(ctx, "key_1", time.Now()); err != nil {
		t.Fatal(err)
	}
	k, _ := daemon.KeyByID(ctx, "key_1")
	if !k.Revoked() {
		t.Error("the daemon does not see a revocation made by another connection")
	}
	u, _ := daemon.UsageOn(ctx, "key_1", "2026-11-21")
	if u.Requests != 20 {
		t.Errorf("requests = %d, want 20", u.Requests)
	}
}

func TestReceiptsRetention(t *testing.T) {
	s := open(t, t.TempDir())
	base := time.Unix(1_790_000_000, 0)
	for i := range 10 {
		created := base.Add(time.Duration(i) * time.Hour)
		if err := s.PutReceipt(ctx, fmt.Sprintf("r%d", i), created, []byte(`{"i":"x"}`), base.Add(-time.Hour), 5); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := s.CountReceipts(ctx); n != 5 {
		t.Errorf("kept %d receipts, max 5", n)
	}
	if _, err := s.Receipt(ctx, "r0"); !errors.Is(err, ErrNotFound) {
		t.Error("the oldest receipt survived the cap")
	}
	if b, err := s.Receipt(ctx, "r9"); err != nil || string(b) != `{"i":"x"}` {
		t.Errorf("r9: %s %v", b, err)
	}
	// Retention by age.
	if err := s.PutReceipt(ctx, "late", base.Add(100*time.Hour), []byte(`{}`), base.Add(99*time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.CountReceipts(ctx); n != 1 {
		t.Errorf("kept %d receipts after age pruning", n)
	}
	if err := s.PutReceipt(ctx, "late", base, []byte(`{}`), base, 0); err == nil {
		t.Error("a receipt id was reused")
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if _, err := s.db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(ctx, dir); err == nil || !strings.Contains(err.Error(), "newer than this boxd") {
		t.Errorf("err = %v", err)
	}
}

// TestDescriptorsBounded: after 40 concurrent writes the process holds at
// most maxConns descriptors on the database file. A connection the pool
// closes keeps its descriptor open while other connections of the process
// hold their WAL-mode lock (SQLite defers the close so as not to drop
// their POSIX locks); without the bound one stayed open for every
// connection of the burst.
func TestDescriptorsBounded(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, dir)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			now := time.Now()
			if err := s.PutReceipt(ctx, fmt.Sprintf("r%d", i), now, []byte(`{}`), now.Add(-time.Hour), 1000); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); target == filepath.Join(dir, File) {
			n++
		}
	}
	if n == 0 || n > maxConns {
		t.Errorf("%d descriptors on %s after 40 concurrent writes, want 1 to %d", n, File, maxConns)
	}
}
