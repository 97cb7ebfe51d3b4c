package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Table names what a family keeps: Runs are read only by their owner and
// kept for a while (the contract's "runs kept one hour"); Reports and
// Pairs are addressed by their id alone (a report URL, a public pair page)
// and kept until they expire.
type Table string

// The tables of kept items.
const (
	Runs    Table = "runs"
	Reports Table = "reports"
	Pairs   Table = "pairs"
)

func (t Table) valid() bool { return t == Runs || t == Reports || t == Pairs }

// Kept is one kept item: a family's JSON (or other bytes) under an id.
type Kept struct {
	ID      string
	Family  string // the route family ("walkthrough", "staging", ...)
	Owner   string // who may read it: a key id or a session hash
	Created time.Time
	Expires time.Time
	Body    []byte
}

// Put keeps k in t (replacing an item with the same id).
func (s *Store) Put(ctx context.Context, t Table, k Kept) error {
	if !t.valid() {
		return fmt.Errorf("store: no table %q", t)
	}
	if k.ID == "" || !k.Expires.After(k.Created) {
		return fmt.Errorf("store: %s: an item needs an id and an expiry after its creation", t)
	}
	if k.Body == nil {
		k.Body = []byte{}
	}
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO `+string(t)+` (id, family, owner, created, expires, body) VALUES (?, ?, ?, ?, ?, ?)`,
		k.ID, k.Family, k.Owner, k.Created.UnixMilli(), k.Expires.UnixMilli(), k.Body)
	if err != nil {
		return fmt.Errorf("store: put %s %s: %w", t, k.ID, err)
	}
	return nil
}

// Get reads item id of t as of now: ErrNotFound when there is none, it
// expired, or (owner not "") it belongs to another owner — the three are
// not told apart, so ids cannot be probed.
func (s *Store) Get(ctx context.Context, t Table, id, owner string, now time.Time) (Kept, error) {
	if !t.valid() {
		return Kept{}, fmt.Errorf("store: no table %q", t)
	}
	var k Kept
	var created, expires int64
	err := s.db.QueryRowContext(ctx, `SELECT id, family, owner, created, expires, body FROM `+string(t)+` WHERE id = ?`, id).
		Scan(&k.ID, &k.Family, &k.Owner, &created, &expires, &k.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return Kept{}, ErrNotFound
	}
	if err != nil {
		return Kept{}, fmt.Errorf("store: get %s %s: %w", t, id, err)
	}
	k.Created, k.Expires = time.UnixMilli(created), time.UnixMilli(expires)
	if !now.Before(k.Expires) || (owner != "" && owner != k.Owner) {
		return Kept{}, ErrNotFound
	}
	return k, nil
}

// Delete removes item id of t if owner (or anyone, owner "") holds it; it
// reports whether one was removed.
func (s *Store) Delete(ctx context.Context, t Table, id, owner string) (bool, error) {
	if !t.valid() {
		return false, fmt.Errorf("store: no table %q", t)
	}
	res, err := s.db.ExecContext(ctx, `DELETE FROM `+string(t)+` WHERE id = ? AND (? = '' OR owner = ?)`, id, owner, owner)
	if err != nil {
		return false, fmt.Errorf("store: delete %s %s: %w", t, id, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Sweep removes the items of every table that expired by now and returns
// how many went.
func (s *Store) Sweep(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	for _, t := range []Table{Runs, Reports, Pairs} {
		res, err := s.db.ExecContext(ctx, `DELETE FROM `+string(t)+` WHERE expires <= ?`, now.UnixMilli())
		if err != nil {
			return total, fmt.Errorf("store: sweep %s: %w", t, err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}
