package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestKeptOwnerExpiryAndSweep(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.UnixMilli(1_800_000_000_000)
	for _, tb := range []Table{Runs, Reports, Pairs} {
		k := Kept{ID: "x_" + string(tb), Family: "walkthrough", Owner: "session:a", Created: now, Expires: now.Add(time.Hour), Body: []byte(`{"n":1}`)}
		if err := st.Put(ctx, tb, k); err != nil {
			t.Fatal(err)
		}
		got, err := st.Get(ctx, tb, k.ID, "session:a", now)
		if err != nil || string(got.Body) != `{"n":1}` || got.Family != "walkthrough" || !got.Expires.Equal(k.Expires) {
			t.Fatalf("%s: %+v %v", tb, got, err)
		}
		if _, err := st.Get(ctx, tb, k.ID, "", now); err != nil {
			t.Fatalf("%s: read by id alone: %v", tb, err)
		}
		if _, err := st.Get(ctx, tb, k.ID, "session:b", now); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s: another owner read it: %v", tb, err)
		}
		if _, err := st.Get(ctx, tb, k.ID, "session:a", now.Add(time.Hour)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s: read after expiry: %v", tb, err)
		}
		if ok, _ := st.Delete(ctx, tb, k.ID, "session:b"); ok {
			t.Fatalf("%s: another owner deleted it", tb)
		}
	}
	if n, err := st.Sweep(ctx, now.Add(time.Hour)); err != nil || n != 3 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if err := st.Put(ctx, Table("keys"), Kept{ID: "a", Created: now, Expires: now.Add(time.Hour)}); err == nil {
		t.Fatal("Put must refuse a table that is not a kept-items table")
	}
}

// TestMigratesAVersionOneDatabase: a database written by the first schema
// gains the kept-items tables and keeps its keys.
func TestMigratesAVersionOneDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(migrations[0] + `; INSERT INTO receipts VALUES ('r1', 1, '{}'); PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if b, err := st.Receipt(ctx, "r1"); err != nil || string(b) != "{}" {
		t.Fatalf("receipt after the migration: %s %v", b, err)
	}
	now := time.Now()
	if err := st.Put(ctx, Runs, Kept{ID: "run_1", Owner: "o", Created: now, Expires: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
}
