package platform

import (
	"boxd/internal/problem"
	"context"
	"strings"
	"testing"
	"time"

	"boxd/configs"
	"boxd/internal/store"
)

func newPlatform(t *testing.T, now Clock) (*Platform, *configs.Config) {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := configs.Defaults()
	return New(cfg, st, now), cfg
}

func TestNetworkGrouping(t *testing.T) {
	cases := map[string]string{
		"127.0.0.1:5000":             "127.0.0.1",
		"[::ffff:10.0.0.7]:80":       "10.0.0.7",
		"[2001:db8:1:2:aaaa::1]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:bbbb::9]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:3::1]:443":      "2001:db8:1:3::/64",
		"not-an-address":             "not-an-address",
	}
	for in, want := range cases {
		if got := Network(in); got != want {
			t.Errorf("Network(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestLiveSlots(t *testing.T) {
	p, cfg := newPlatform(t, nil)
	cfg.Limits.LiveCap = 3
	ctx := context.Background()
	tok, _, d := p.CreateSession("clinical", "127.0.0.1:1")
	if d != nil {
		t.Fatal(d)
	}
	pr, _ := p.Authenticate(ctx, tok, "clinical")
	rel, d := pr.AcquireLive()
	if d != nil {
		t.Fatal(d)
	}
	if _, d := pr.AcquireLive(); d == nil || d.Kind != problem.Conflict {
		t.Errorf("second socket on one token: %+v", d)
	}
	secret, _, _ := p.CreateKey(ctx, KeySpec{})
	kp, _ := p.Authenticate(ctx, secret, "sales")
	r1, d1 := kp.AcquireLive()
	r2, d2 := kp.AcquireLive()
	if d1 != nil || d2 != nil {
		t.Fatalf("key live sessions: %v %v", d1, d2)
	}
	if _, d := kp.AcquireLive(); d == nil || d.Kind != problem.RateLimited {
		t.Errorf("third live session on a key with limit 2: %+v", d)
	}
	if p.LiveSessions() != 3 {
		t.Errorf("live = %d", p.LiveSessions())
	}
	r1()
	r1() // twice is harmless
	if p.LiveSessions() != 2 {
		t.Errorf("live after release = %d", p.LiveSessions())
	}
	tok2, _, _ := p.CreateSession("field", "127.0.0.1:1")
	pr2, _ := p.Authenticate(ctx, tok2, "field")
	r3, d := pr2.AcquireLive()
	if d != nil {
		t.Fatal(d)
	}
	tok3, _, d := p.CreateSession("sales", "127.0.0.1:1")
	if d == nil || problem.RetrySeconds(d.RetryAfter) != 30 {
		t.Errorf("session with the live cap full: %v %+v", tok3, d)
	}
	rel()
	r2()
	r3()
	if p.LiveSessions() != 0 {
		t.Errorf("live at the end = %d", p.LiveSessions())
	}
}

func TestExpiredSessionsAreForgotten(t *testing.T) {
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	p, cfg := newPlatform(t, func() time.Time { return now })
	cfg.Limits.SessionLifetimeS = 60
	for range 5 {
		if _, _, d := p.CreateSession("code", "127.0.0.1:1"); d != nil {
			t.Fatal(d)
		}
	}
	if p.DemoSessions() != 5 {
		t.Fatalf("sessions = %d", p.DemoSessions())
	}
	now = now.Add(2 * time.Hour)
	_, _, _ = p.CreateSession("code", "127.0.0.1:1")
	p.mu.Lock()
	n, c, nets := len(p.sessions), p.perBox.Count("", now), p.perNet.Keys()
	p.mu.Unlock()
	if n != 1 || c != 1 || nets != 1 {
		t.Errorf("after expiry: %d sessions, %d creations remembered from %d networks", n, c, nets)
	}
}

func TestReservationRelease(t *testing.T) {
	p, cfg := newPlatform(t, nil)
	cfg.Limits.TokenBudget = 100
	ctx := context.Background()
	tok, _, _ := p.CreateSession("code", "127.0.0.1:1")
	pr, _ := p.Authenticate(ctx, tok, "code")
	r, d := pr.ReserveTokens(ctx, 70)
	if d != nil || r.Granted != 70 {
		t.Fatal(d)
	}
	if left, _ := pr.TokensLeft(ctx); left != 30 {
		t.Errorf("left while reserved = %d", left)
	}
	r.Release()
	if left, _ := pr.TokensLeft(ctx); left != 100 {
		t.Errorf("left after release = %d", left)
	}
	r2, _ := pr.ReserveTokens(ctx, 70)
	_ = r2.Commit(ctx, 500) // never more than granted
	if left, _ := pr.TokensLeft(ctx); left != 30 {
		t.Errorf("left after commit = %d", left)
	}
	if d := pr.RequireTokens(ctx, 31); d == nil || d.Kind != problem.Budget {
		t.Errorf("require 31 of 30: %+v", d)
	}
	if ms, _ := pr.ChargeAudio(ctx, 1500); ms != int64(cfg.Limits.AudioBudgetS)*1000-1500 {
		t.Errorf("audio left = %d", ms)
	}
}

// TestRevocationReachesOpenPrincipals: a key revoked after it was
// authenticated can reserve no more tokens, open watchers are told once,
// a watch started after the revocation fires at once, and stopped watches
// and other keys are left alone.
func TestRevocationReachesOpenPrincipals(t *testing.T) {
	p, _ := newPlatform(t, nil)
	ctx := context.Background()
	secret, k, _ := p.CreateKey(ctx, KeySpec{})
	otherSecret, _, _ := p.CreateKey(ctx, KeySpec{})
	pr, d := p.Authenticate(ctx, secret, "sales")
	if d != nil {
		t.Fatal(d)
	}
	other, _ := p.Authenticate(ctx, otherSecret, "sales")
	var told, stoppedTold, otherTold []string
	stop := pr.OnRevoke(func(msg string) { told = append(told, msg) })
	defer stop()
	pr.OnRevoke(func(msg string) { stoppedTold = append(stoppedTold, msg) })()
	defer other.OnRevoke(func(msg string) { otherTold = append(otherTold, msg) })()
	res, d := pr.ReserveTokens(ctx, 10)
	if d != nil {
		t.Fatal(d)
	}
	res.Release()

	if _, d := p.RevokeKey(ctx, k.ID); d != nil {
		t.Fatal(d)
	}
	if len(told) != 1 || !strings.Contains(told[0], "this developer key was revoked at ") || len(stoppedTold) != 0 || len(otherTold) != 0 {
		t.Errorf("watchers told %q; stopped watch %q; other key %q", told, stoppedTold, otherTold)
	}
	if _, d := pr.ReserveTokens(ctx, 10); d == nil || d.Kind != problem.Unauthorized || !strings.Contains(d.Message, "revoked") {
		t.Errorf("reserving after the revocation: %+v", d)
	}
	if _, d := other.ReserveTokens(ctx, 10); d != nil {
		t.Errorf("another key: %+v", d)
	}
	var late []string
	pr.OnRevoke(func(msg string) { late = append(late, msg) })
	if len(late) != 1 {
		t.Errorf("a watch started after the revocation: %q", late)
	}
	if _, d := p.Authenticate(ctx, secret, "sales"); d == nil || d.Kind != problem.Unauthorized {
		t.Errorf("authenticating the revoked key: %+v", d)
	}
}

// TestRevocationByAnotherProcess: `boxd keys revoke` writes the same store
// from another process; a session running with the key notices within
// revocationCheckEvery, from its next audio charge or token reservation.
func TestRevocationByAnotherProcess(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	p, cfg := newPlatform(t, clock)
	p.revokePoll = time.Hour        // this test drives the reads on use; TestIdleSessionsHearRevocation the poll
	cli := New(cfg, p.store, clock) // the command's own platform
	ctx := context.Background()
	secret, k, _ := p.CreateKey(ctx, KeySpec{})
	pr, d := p.Authenticate(ctx, secret, "sales")
	if d != nil {
		t.Fatal(d)
	}
	var told []string
	defer pr.OnRevoke(func(msg string) { told = append(told, msg) })()
	if _, err := pr.ChargeAudio(ctx, 100); err != nil { // reads the key: not revoked
		t.Fatal(err)
	}
	if _, d := cli.RevokeKey(ctx, k.ID); d != nil {
		t.Fatal(d)
	}
	now = now.Add(revocationCheckEvery / 2)
	if _, err := pr.ChargeAudio(ctx, 100); err != nil || len(told) != 0 {
		t.Fatalf("read again before revocationCheckEvery: %v, told %q", err, told)
	}
	now = now.Add(revocationCheckEvery)
	if _, err := pr.ChargeAudio(ctx, 100); err != nil {
		t.Fatal(err)
	}
	if len(told) != 1 || !strings.Contains(told[0], "revoked") {
		t.Fatalf("the session was told %q", told)
	}
	if _, d := pr.ReserveTokens(ctx, 5); d == nil || d.Kind != problem.Unauthorized {
		t.Errorf("reserving after the revocation: %+v", d)
	}
	// A chat call's reservation notices it too, without a watcher.
	secret2, k2, _ := p.CreateKey(ctx, KeySpec{})
	pr2, _ := p.Authenticate(ctx, secret2, "code")
	res, d := pr2.ReserveTokens(ctx, 5)
	if d != nil {
		t.Fatal(d)
	}
	res.Release()
	if _, d := cli.RevokeKey(ctx, k2.ID); d != nil {
		t.Fatal(d)
	}
	now = now.Add(revocationCheckEvery)
	if _, d := pr2.ReserveTokens(ctx, 5); d == nil || d.Kind != problem.Unauthorized {
		t.Errorf("reserving after another process revoked the key: %+v", d)
	}
}

// TestTokensUnspentIgnoresReservations: a running call's reservation
// guards the budget (TokensLeft, what admission and Reserve use) but is not
// spending (TokensUnspent, what budget events show); the commit is.
func TestTokensUnspentIgnoresReservations(t *testing.T) {
	p, _ := newPlatform(t, nil)
	ctx := context.Background()
	daily := int64(1000)
	secret, _, _ := p.CreateKey(ctx, KeySpec{DailyLLMTokens: &daily})
	pr, d := p.Authenticate(ctx, secret, "sales")
	if d != nil {
		t.Fatal(d)
	}
	res, d := pr.ReserveTokens(ctx, 600)
	if d != nil {
		t.Fatal(d)
	}
	left, _ := pr.TokensLeft(ctx)
	unspent, _ := pr.TokensUnspent(ctx)
	if left != 400 || unspent != 1000 {
		t.Errorf("with 600 reserved: left %d (want 400), unspent %d (want 1000)", left, unspent)
	}
	if err := res.Commit(ctx, 25); err != nil {
		t.Fatal(err)
	}
	left, _ = pr.TokensLeft(ctx)
	unspent, _ = pr.TokensUnspent(ctx)
	if left != 975 || unspent != 975 {
		t.Errorf("after spending 25: left %d, unspent %d, want 975 both", left, unspent)
	}
}
