package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDomains: a challenge is kept per key and domain (asking again gives
// the same token; another key gets its own), survives a reopen, and is
// verified by method and time; unknown domains are ErrNotFound.
func TestDomains(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	a, err := s.Challenge(ctx, "k1", "shop.example", "tok-1", now)
	if err != nil || a.Token != "tok-1" || a.Verified() {
		t.Fatalf("%+v %v", a, err)
	}
	if again, _ := s.Challenge(ctx, "k1", "shop.example", "tok-2", now); again.Token != "tok-1" {
		t.Errorf("asking again replaced the token: %+v", again)
	}
	if other, _ := s.Challenge(ctx, "k2", "shop.example", "tok-3", now); other.Token != "tok-3" {
		t.Errorf("another key shares the token: %+v", other)
	}
	if _, err := s.MarkVerified(ctx, "k1", "nope.example", "dns", now); !errors.Is(err, ErrNotFound) {
		t.Errorf("verify unknown: %v", err)
	}
	if _, err := s.MarkVerified(ctx, "k1", "shop.example", "dns", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ds, err := s.Domains(ctx, "k1")
	if err != nil || len(ds) != 1 || !ds[0].Verified() || ds[0].Method != "dns" || !ds[0].VerifiedAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("%+v %v", ds, err)
	}
	if d, _ := s.Domain(ctx, "k2", "shop.example"); d.Verified() {
		t.Error("one key's verification covers another")
	}
	if _, err := s.Domain(ctx, "k3", "shop.example"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown: %v", err)
	}
}
