package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Domain is a domain a developer key asked to verify: the challenge
// token it was given and, once the token was found where it was
// published, how (dns or well-known) and when.
type Domain struct {
	KeyID      string
	Domain     string
	Token      string
	Created    time.Time
	VerifiedAt *time.Time
	Method     string
}

// Verified reports whether the domain's challenge was found.
func (d Domain) Verified() bool { return d.VerifiedAt != nil }

// Challenge returns keyID's challenge for domain: the one it already has,
// or a new one with token (so asking twice gives the same token, and a
// verified domain stays verified).
func (s *Store) Challenge(ctx context.Context, keyID, domain, token string, now time.Time) (Domain, error) {
	if _, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO domains (key_id, domain, token, created) VALUES (?, ?, ?, ?)`,
		keyID, domain, token, now.UnixMilli()); err != nil {
		return Domain{}, fmt.Errorf("store: challenge for %s: %w", domain, err)
	}
	return s.Domain(ctx, keyID, domain)
}

// Domain reads keyID's domain (ErrNotFound when it never asked).
func (s *Store) Domain(ctx context.Context, keyID, domain string) (Domain, error) {
	d, err := scanDomain(s.db.QueryRowContext(ctx, `SELECT key_id, domain, token, created, verified_at, method FROM domains WHERE key_id = ? AND domain = ?`, keyID, domain))
	if errors.Is(err, sql.ErrNoRows) {
		return Domain{}, ErrNotFound
	}
	if err != nil {
		return Domain{}, fmt.Errorf("store: domain %s: %w", domain, err)
	}
	return d, nil
}

// MarkVerified records that keyID's challenge for domain was found by
// method.
func (s *Store) MarkVerified(ctx context.Context, keyID, domain, method string, now time.Time) (Domain, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE domains SET verified_at = ?, method = ? WHERE key_id = ? AND domain = ?`, now.UnixMilli(), method, keyID, domain)
	if err != nil {
		return Domain{}, fmt.Errorf("store: verify %s: %w", domain, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Domain{}, ErrNotFound
	}
	return s.Domain(ctx, keyID, domain)
}

// Domains lists keyID's domains, verified or not, by name.
func (s *Store) Domains(ctx context.Context, keyID string) ([]Domain, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key_id, domain, token, created, verified_at, method FROM domains WHERE key_id = ? ORDER BY domain`, keyID)
	if err != nil {
		return nil, fmt.Errorf("store: domains: %w", err)
	}
	defer rows.Close()
	var out []Domain
	for rows.Next() {
		d, err := scanDomain(rows)
		if err != nil {
			return nil, fmt.Errorf("store: domains: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func scanDomain(row interface{ Scan(...any) error }) (Domain, error) {
	var d Domain
	var created int64
	var verified sql.NullInt64
	if err := row.Scan(&d.KeyID, &d.Domain, &d.Token, &created, &verified, &d.Method); err != nil {
		return Domain{}, err
	}
	d.Created = time.UnixMilli(created).UTC()
	if verified.Valid {
		t := time.UnixMilli(verified.Int64).UTC()
		d.VerifiedAt = &t
	}
	return d, nil
}
