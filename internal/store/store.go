// Package store is boxd's embedded database (SQLite, in the state
// directory): developer keys, their daily usage, model-call receipts, and
// what tool families keep (runs, reports and public pairs; kept.go).
// Every write is one transaction, so a crash leaves either the whole change
// or none of it. Keys are stored as SHA-256 hashes only. It depends on no
// other boxd package: internal/platform (keys and budgets), receipts (the
// receipt book), pipelines and `boxd keys` use it directly.
package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// File is the database's name in the state directory.
const File = "boxd.db"

// ErrNotFound is returned for unknown keys and receipts.
var ErrNotFound = errors.New("not found")

// Store is an open database. It is safe for concurrent use, and several
// processes (the daemon and `boxd keys`) may use one file at once: SQLite's
// WAL mode and a busy timeout serialise their writes.
type Store struct {
	db   *sql.DB
	path string
}

const schemaVersion = 3

var migrations = []string{
	// 1: keys, usage, receipts
	`CREATE TABLE keys (
		key_id TEXT PRIMARY KEY,
		key_sha256 TEXT NOT NULL UNIQUE,
		label TEXT NOT NULL,
		plan TEXT NOT NULL,
		created INTEGER NOT NULL,
		revoked_at INTEGER,
		verticals TEXT NOT NULL,
		daily_llm_tokens INTEGER NOT NULL,
		daily_audio_seconds INTEGER NOT NULL,
		requests_per_minute INTEGER NOT NULL,
		concurrent_live_sessions INTEGER NOT NULL
	);
	CREATE TABLE usage (
		key_id TEXT NOT NULL REFERENCES keys(key_id),
		day TEXT NOT NULL,
		llm_tokens INTEGER NOT NULL DEFAULT 0,
		audio_ms INTEGER NOT NULL DEFAULT 0,
		requests INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (key_id, day)
	);
	CREATE TABLE receipts (
		id TEXT PRIMARY KEY,
		created INTEGER NOT NULL,
		body TEXT NOT NULL
	);
	CREATE INDEX receipts_created ON receipts(created);`,
	// 2: what tool families keep: runs (one owner, kept a while), reports
	// (addressed by id, may be public) and public pairs (staging)
	`CREATE TABLE runs (
		id TEXT PRIMARY KEY,
		family TEXT NOT NULL,
		owner TEXT NOT NULL,
		created INTEGER NOT NULL,
		expires INTEGER NOT NULL,
		body BLOB NOT NULL
	);
	CREATE INDEX runs_expires ON runs(expires);
	CREATE TABLE reports (
		id TEXT PRIMARY KEY,
		family TEXT NOT NULL,
		owner TEXT NOT NULL,
		created INTEGER NOT NULL,
		expires INTEGER NOT NULL,
		body BLOB NOT NULL
	);
	CREATE INDEX reports_expires ON reports(expires);
	CREATE TABLE pairs (
		id TEXT PRIMARY KEY,
		family TEXT NOT NULL,
		owner TEXT NOT NULL,
		created INTEGER NOT NULL,
		expires INTEGER NOT NULL,
		body BLOB NOT NULL
	);
	CREATE INDEX pairs_expires ON pairs(expires);`,
	// 3: domains a developer key asked to verify (the accessibility
	// audit's URL audits), with the challenge token and, once checked,
	// how and when it was verified
	`CREATE TABLE domains (
		key_id TEXT NOT NULL,
		domain TEXT NOT NULL,
		token TEXT NOT NULL,
		created INTEGER NOT NULL,
		verified_at INTEGER,
		method TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (key_id, domain)
	);`,
}

// maxConns bounds the store's SQLite connections, open and idle alike.
// SQLite runs one write transaction at a time, so more connections only
// wait on its lock; eight let reads go on beside a writer. Idle ones are
// kept, not closed: SQLite defers closing a connection's database file
// descriptor while another connection of the process holds a lock on the
// file (in WAL mode every open connection holds one), so a pool that
// opened connections for a burst and closed them after held one
// descriptor for each connection of the busiest moment, for good (the
// soak, soak/, ended idle with 6; 30 concurrent writes left 30:
// TestDescriptorsBounded).
const maxConns = 8

// Open opens (creating if needed) the database in dir.
func Open(ctx context.Context, dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	path := filepath.Join(dir, File)
	// Create the file 0600 before SQLite does (it would use the umask).
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
		f.Close()
	} else {
		return nil, fmt.Errorf("store: %w", err)
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	s := &Store{db: db, path: path}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	if v > schemaVersion {
		return fmt.Errorf("store: %s has schema version %d, newer than this boxd (%d); upgrade boxd", s.path, v, schemaVersion)
	}
	for i := v; i < schemaVersion; i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("store: migrate to %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return tx.Commit()
}

// HashSecret is the stored form of a developer key.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Limits are a key's limits.
type Limits struct {
	// Verticals is nil for all verticals.
	Verticals              []string
	DailyLLMTokens         int64
	DailyAudioSeconds      int64
	RequestsPerMinute      int64
	ConcurrentLiveSessions int64
}

// Key is a stored developer key (without the secret).
type Key struct {
	ID        string
	Label     string
	Plan      string
	Created   time.Time
	RevokedAt *time.Time
	Limits    Limits
}

// Revoked reports whether the key was revoked.
func (k Key) Revoked() bool { return k.RevokedAt != nil }

// CreateKey stores a new key under the hash of secret.
func (s *Store) CreateKey(ctx context.Context, id, secret, label, plan string, l Limits, now time.Time) (Key, error) {
	verticals := "all"
	if l.Verticals != nil {
		b, err := json.Marshal(l.Verticals)
		if err != nil {
			return Key{}, err
		}
		verticals = string(b)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO keys (key_id, key_sha256, label, plan, created, verticals,
		daily_llm_tokens, daily_audio_seconds, requests_per_minute, concurrent_live_sessions)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, HashSecret(secret), label, plan, now.Unix(), verticals,
		l.DailyLLMTokens, l.DailyAudioSeconds, l.RequestsPerMinute, l.ConcurrentLiveSessions)
	if err != nil {
		return Key{}, fmt.Errorf("store: create key: %w", err)
	}
	return Key{ID: id, Label: label, Plan: plan, Created: time.Unix(now.Unix(), 0).UTC(), Limits: l}, nil
}

const keyColumns = `key_id, label, plan, created, revoked_at, verticals, daily_llm_tokens, daily_audio_seconds, requests_per_minute, concurrent_live_sessions`

func scanKey(row interface{ Scan(...any) error }) (Key, error) {
	var k Key
	var created int64
	var revoked sql.NullInt64
	var verticals string
	err := row.Scan(&k.ID, &k.Label, &k.Plan, &created, &revoked, &verticals,
		&k.Limits.DailyLLMTokens, &k.Limits.DailyAudioSeconds, &k.Limits.RequestsPerMinute, &k.Limits.ConcurrentLiveSessions)
	if errors.Is(err, sql.ErrNoRows) {
		return Key{}, ErrNotFound
	}
	if err != nil {
		return Key{}, fmt.Errorf("store: read key: %w", err)
	}
	k.Created = time.Unix(created, 0).UTC()
	if revoked.Valid {
		t := time.Unix(revoked.Int64, 0).UTC()
		k.RevokedAt = &t
	}
	if verticals != "all" {
		if err := json.Unmarshal([]byte(verticals), &k.Limits.Verticals); err != nil {
			return Key{}, fmt.Errorf("store: key %s: verticals: %w", k.ID, err)
		}
		if k.Limits.Verticals == nil {
			k.Limits.Verticals = []string{}
		}
	}
	return k, nil
}

// KeyByID reads a key by its id.
func (s *Store) KeyByID(ctx context.Context, id string) (Key, error) {
	return scanKey(s.db.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM keys WHERE key_id = ?`, id))
}

// KeyBySecret finds the key whose secret is given (by its hash).
func (s *Store) KeyBySecret(ctx context.Context, secret string) (Key, error) {
	return scanKey(s.db.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM keys WHERE key_sha256 = ?`, HashSecret(secret)))
}

// ListKeys lists every key, oldest first.
func (s *Store) ListKeys(ctx context.Context) ([]Key, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+keyColumns+` FROM keys ORDER BY created, key_id`)
	if err != nil {
		return nil, fmt.Errorf("store: list keys: %w", err)
	}
	defer rows.Close()
	var out []Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RevokeKey revokes a key (once: revoking again keeps the first time).
func (s *Store) RevokeKey(ctx context.Context, id string, now time.Time) (Key, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ?`, now.Unix(), id)
	if err != nil {
		return Key{}, fmt.Errorf("store: revoke: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Key{}, ErrNotFound
	}
	return s.KeyByID(ctx, id)
}

// Usage is one key's use on one UTC day.
type Usage struct {
	Day       string
	LLMTokens int64
	AudioMS   int64
	Requests  int64
}

// AddUsage adds to a key's usage on day (YYYY-MM-DD, UTC).
func (s *Store) AddUsage(ctx context.Context, keyID, day string, tokens, audioMS, requests int64) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO usage (key_id, day, llm_tokens, audio_ms, requests) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (key_id, day) DO UPDATE SET llm_tokens = llm_tokens + excluded.llm_tokens,
		audio_ms = audio_ms + excluded.audio_ms, requests = requests + excluded.requests`,
		keyID, day, tokens, audioMS, requests)
	if err != nil {
		return fmt.Errorf("store: add usage: %w", err)
	}
	return nil
}

// UsageOn reads a key's usage on one day (zero when none).
func (s *Store) UsageOn(ctx context.Context, keyID, day string) (Usage, error) {
	u := Usage{Day: day}
	err := s.db.QueryRowContext(ctx, `SELECT llm_tokens, audio_ms, requests FROM usage WHERE key_id = ? AND day = ?`, keyID, day).
		Scan(&u.LLMTokens, &u.AudioMS, &u.Requests)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Usage{}, fmt.Errorf("store: usage: %w", err)
	}
	return u, nil
}

// UsageBetween reads a key's usage on days from..to inclusive (only days
// with use).
func (s *Store) UsageBetween(ctx context.Context, keyID, from, to string) (map[string]Usage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT day, llm_tokens, audio_ms, requests FROM usage WHERE key_id = ? AND day >= ? AND day <= ?`, keyID, from, to)
	if err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	defer rows.Close()
	out := map[string]Usage{}
	for rows.Next() {
		var u Usage
		if err := rows.Scan(&u.Day, &u.LLMTokens, &u.AudioMS, &u.Requests); err != nil {
			return nil, fmt.Errorf("store: usage: %w", err)
		}
		out[u.Day] = u
	}
	return out, rows.Err()
}

// PutReceipt stores a receipt body, then drops receipts older than
// keepAfter and, beyond max, the oldest ones, in the same transaction.
func (s *Store) PutReceipt(ctx context.Context, id string, created time.Time, body []byte, keepAfter time.Time, max int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: receipt: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO receipts (id, created, body) VALUES (?, ?, ?)`, id, created.Unix(), string(body)); err != nil {
		return fmt.Errorf("store: receipt %s: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM receipts WHERE created < ?`, keepAfter.Unix()); err != nil {
		return fmt.Errorf("store: prune receipts: %w", err)
	}
	if max > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM receipts WHERE id IN (SELECT id FROM receipts ORDER BY created DESC, id DESC LIMIT -1 OFFSET ?)`, max); err != nil {
			return fmt.Errorf("store: prune receipts: %w", err)
		}
	}
	return tx.Commit()
}

// Receipt reads a stored receipt body.
func (s *Store) Receipt(ctx context.Context, id string) ([]byte, error) {
	var body string
	err := s.db.QueryRowContext(ctx, `SELECT body FROM receipts WHERE id = ?`, id).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: receipt: %w", err)
	}
	return []byte(body), nil
}

// CountReceipts counts stored receipts.
func (s *Store) CountReceipts(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM receipts`).Scan(&n)
	return n, err
}
