package platform

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"strings"
	"sync"
	"time"

	"boxd/internal/problem"

	"boxd/internal/store"
)

// Principal is who is calling: a demo session or a developer key.
type Principal struct {
	p       *Platform
	session *Session
	key     *store.Key
}

// IsKey reports whether the caller used a developer key.
func (pr *Principal) IsKey() bool { return pr.key != nil }

// KeyID is the developer key's id, or nil for a demo session.
func (pr *Principal) KeyID() *string {
	if pr.key == nil {
		return nil
	}
	id := pr.key.ID
	return &id
}

// LogID identifies the caller in logs: a key id or a session hash, never
// the token.
func (pr *Principal) LogID() string {
	if pr.key != nil {
		return pr.key.ID
	}
	return "session:" + pr.session.ID
}

// Session is the demo session, or nil for a key.
func (pr *Principal) Session() *Session { return pr.session }

// Vertical is the demo session's vertical ("" for a key).
func (pr *Principal) Vertical() string {
	if pr.session != nil {
		return pr.session.Vertical
	}
	return ""
}

// Authenticate resolves a bearer token (demo token or dk_ key) for a route
// of vertical ("" when the route takes any vertical). For a key it also
// applies the per-minute request limit and counts the request.
func (p *Platform) Authenticate(ctx context.Context, token, vertical string) (*Principal, *problem.Error) {
	if token == "" {
		return nil, deny(problem.Unauthorized, "missing token: send Authorization: Bearer <demo session token or dk_ developer key> (get a token from POST /demo/session)")
	}
	if strings.HasPrefix(token, "dk_") {
		return p.authKey(ctx, token, vertical)
	}
	if d := wrongKind(token, p.cfg.AdminSecret.Reveal()); d != nil {
		return nil, d
	}
	now := p.now()
	sum := sha256.Sum256([]byte(token))
	p.mu.Lock()
	s, ok := p.sessions[sum]
	p.mu.Unlock()
	if !ok {
		return nil, deny(problem.Unauthorized, "unknown demo session token (demo sessions live in memory and end when the box restarts); create a session with POST /demo/session")
	}
	if !now.Before(s.Expires) {
		return nil, deny(problem.Unauthorized, "this demo session expired at %s; create a new one with POST /demo/session", s.Expires.UTC().Format(time.RFC3339))
	}
	pr := &Principal{p: p, session: s}
	if d := pr.Allow(vertical); d != nil {
		return nil, d
	}
	return pr, nil
}

// wrongKind names a bearer token that is a credential, but not one these
// routes take: an OpenAI-style key (an app pointed at the box with its
// OpenAI key still set), or the box's admin secret.
func wrongKind(token, admin string) *problem.Error {
	const take = "send a dk_ developer key (boxd keys create, or POST /v1/keys with the admin secret) or a demo session token (POST /demo/session)"
	switch {
	case strings.HasPrefix(token, "sk-"):
		return deny(problem.Unauthorized, "this is an OpenAI-style key (sk-…), not one of this box's: %s", take)
	case admin != "" && subtle.ConstantTimeCompare([]byte(token), []byte(admin)) == 1:
		return deny(problem.Unauthorized, "the admin secret opens the admin routes only (POST /v1/keys, GET and DELETE /v1/keys/{key_id}); for this route %s", take)
	}
	return nil
}

// Allow checks that the caller may use vertical: a demo token only its own,
// a key the verticals it was created with (403 / 4403). "" is allowed.
func (pr *Principal) Allow(vertical string) *problem.Error {
	switch {
	case vertical == "":
		return nil
	case pr.session != nil && pr.session.Vertical != vertical:
		return deny(problem.Forbidden, "this demo token is for the %s vertical; this route needs a %s token", pr.session.Vertical, vertical)
	case pr.key != nil && !allows(pr.key.Limits.Verticals, vertical):
		return deny(problem.Forbidden, "this developer key is not allowed the %s vertical (allowed: %s)", vertical, keyVerticals(pr.key.Limits.Verticals))
	}
	return nil
}

func (p *Platform) authKey(ctx context.Context, token, vertical string) (*Principal, *problem.Error) {
	k, err := p.store.KeyBySecret(ctx, token)
	if errors.Is(err, store.ErrNotFound) {
		return nil, deny(problem.Unauthorized, "unknown developer key; check the key, or ask the operator for one (POST /v1/keys)")
	}
	if err != nil {
		return nil, storeDenial(err)
	}
	if k.Revoked() {
		return nil, deny(problem.Unauthorized, "%s", revokedMessage(*k.RevokedAt))
	}
	if d := (&Principal{p: p, key: &k}).Allow(vertical); d != nil {
		return nil, d
	}
	now := p.now()
	if v := p.rate.Allow(k.ID, int(k.Limits.RequestsPerMinute), now); !v.OK {
		d := deny(problem.RateLimited, "this developer key made %d requests in the last minute (limit %d); retry after the time in Retry-After", v.Count, k.Limits.RequestsPerMinute)
		d.RetryAfter = v.RetryAfter
		return nil, d
	}
	if err := p.store.AddUsage(ctx, k.ID, Day(now), 0, 0, 1); err != nil {
		return nil, storeDenial(err)
	}
	return &Principal{p: p, key: &k}, nil
}

func allows(verticals []string, v string) bool {
	if verticals == nil {
		return true
	}
	for _, x := range verticals {
		if x == v {
			return true
		}
	}
	return false
}

// budgetSuffix ends key budget messages: key budgets are daily.
func (pr *Principal) budgetSuffix() string {
	if pr.key != nil {
		return " for today"
	}
	return ""
}

// TokensLeft is the generated-token budget left, less what running calls
// have reserved: a key's daily allowance, or the session's budget. It is
// what admission and reservations go by.
func (pr *Principal) TokensLeft(ctx context.Context) (int64, error) { return pr.tokens(ctx, true) }

// TokensUnspent is the token budget not yet spent: TokensLeft without the
// reservations of running calls (run.Budget's TokensLeft: what budget
// events show, and what live lanes pause on).
func (pr *Principal) TokensUnspent(ctx context.Context) (int64, error) { return pr.tokens(ctx, false) }

// tokens is the budget less what was spent and, with reserved, less what
// running calls hold.
func (pr *Principal) tokens(ctx context.Context, reserved bool) (int64, error) {
	p := pr.p
	var left int64
	if pr.session == nil {
		u, err := p.store.UsageOn(ctx, pr.key.ID, Day(p.now()))
		if err != nil {
			return 0, err
		}
		left = pr.key.Limits.DailyLLMTokens - u.LLMTokens
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case pr.session != nil:
		left = pr.session.tokensLeft
		if reserved {
			left -= pr.session.reserved
		}
	case reserved:
		left -= p.reserved[pr.key.ID]
	}
	return max(0, left), nil
}

// AudioLeftMS is the audio budget left in milliseconds.
func (pr *Principal) AudioLeftMS(ctx context.Context) (int64, error) {
	p := pr.p
	if pr.session != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		return max(0, pr.session.audioLeftMS), nil
	}
	u, err := p.store.UsageOn(ctx, pr.key.ID, Day(p.now()))
	if err != nil {
		return 0, err
	}
	return max(0, pr.key.Limits.DailyAudioSeconds*1000-u.AudioMS), nil
}

// StopReserve is the token budget a live session keeps back for its stop
// artifact (limits.stop_reserve_tokens).
func (pr *Principal) StopReserve() int64 { return int64(pr.p.cfg.Limits.StopReserveTokens) }

// RequireTokens refuses (402) when fewer than need generated tokens are
// left; need 1 means "any budget at all".
func (pr *Principal) RequireTokens(ctx context.Context, need int64) *problem.Error {
	left, err := pr.TokensLeft(ctx)
	if err != nil {
		return storeDenial(err)
	}
	if left < max(need, 1) {
		if left == 0 {
			return deny(problem.Budget, "token budget used up%s", pr.budgetSuffix())
		}
		return deny(problem.Budget, "not enough token budget: %d generated tokens left, this needs about %d%s", left, need, pr.budgetSuffix())
	}
	return nil
}

// RequireAudio refuses (402) when the audio budget is used up.
func (pr *Principal) RequireAudio(ctx context.Context) *problem.Error {
	left, err := pr.AudioLeftMS(ctx)
	if err != nil {
		return storeDenial(err)
	}
	if left <= 0 {
		return deny(problem.Budget, "audio budget used up%s", pr.budgetSuffix())
	}
	return nil
}

// Reservation holds generated tokens for a running call so that
// concurrent calls cannot together spend more than the budget.
type Reservation struct {
	pr       *Principal
	Granted  int64
	released bool
}

// ReserveTokens reserves up to want tokens (at least 1 must be left) and
// grants min(want, left). Reading what is left and reserving happen under
// one lock, so concurrent calls never together exceed the budget.
func (pr *Principal) ReserveTokens(ctx context.Context, want int64) (*Reservation, *problem.Error) {
	p := pr.p
	p.reserveMu.Lock()
	defer p.reserveMu.Unlock()
	if pr.key != nil {
		p.noticeRevocation(ctx, pr.key.ID)
	}
	if d := pr.revokedDenial(); d != nil {
		return nil, d
	}
	left, err := pr.TokensLeft(ctx)
	if err != nil {
		return nil, storeDenial(err)
	}
	if left <= 0 {
		return nil, deny(problem.Budget, "token budget used up%s", pr.budgetSuffix())
	}
	grant := min(want, left)
	p.mu.Lock()
	if pr.session != nil {
		pr.session.reserved += grant
	} else {
		p.reserved[pr.key.ID] += grant
	}
	p.mu.Unlock()
	return &Reservation{pr: pr, Granted: grant}, nil
}

// Commit charges used tokens (at most the grant) and releases the rest.
// It is safe to call once; later calls do nothing.
func (r *Reservation) Commit(ctx context.Context, used int64) error {
	if r.released {
		return nil
	}
	r.released = true
	used = min(max(used, 0), r.Granted)
	pr, p := r.pr, r.pr.p
	if pr.session != nil {
		p.mu.Lock()
		pr.session.reserved -= r.Granted
		pr.session.tokensLeft -= used
		p.mu.Unlock()
		return nil
	}
	// Charge first, then release: in between, what is left is understated,
	// never overstated.
	var err error
	if used > 0 {
		err = p.store.AddUsage(ctx, pr.key.ID, Day(p.now()), used, 0, 0)
	}
	p.mu.Lock()
	p.reserved[pr.key.ID] -= r.Granted
	if p.reserved[pr.key.ID] == 0 {
		delete(p.reserved, pr.key.ID)
	}
	p.mu.Unlock()
	return err
}

// Release gives the reservation back without charging.
func (r *Reservation) Release() { _ = r.Commit(context.Background(), 0) }

// ChargeAudio counts ms of received audio and returns the audio left.
func (pr *Principal) ChargeAudio(ctx context.Context, ms int64) (int64, error) {
	p := pr.p
	if pr.session != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		pr.session.audioLeftMS = max(0, pr.session.audioLeftMS-ms)
		if exp := pr.session.Expires; !p.now().Before(exp) {
			// A live session does not outlive its token: the audio
			// received is charged, and the session ends (4401).
			return pr.session.audioLeftMS, deny(problem.Unauthorized, "this demo session expired at %s; create a new one with POST /demo/session", exp.UTC().Format(time.RFC3339))
		}
		return pr.session.audioLeftMS, nil
	}
	if err := p.store.AddUsage(ctx, pr.key.ID, Day(p.now()), 0, ms, 0); err != nil {
		return 0, err
	}
	// A revocation by another process ends the session through its
	// watcher (OnRevoke); the audio already received is charged.
	p.noticeRevocation(ctx, pr.key.ID)
	return pr.AudioLeftMS(ctx)
}

// Lock takes a demo token's one-run-at-a-time lock (409 when a run is
// going). Keys are not limited to one run; their unlock does nothing.
func (pr *Principal) Lock() (unlock func(), d *problem.Error) {
	if pr.session == nil {
		return func() {}, nil
	}
	p := pr.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr.session.busy {
		return nil, deny(problem.Conflict, "this demo token already has a run in progress; wait for it to finish (demo tokens run one request at a time)")
	}
	pr.session.busy = true
	var once bool
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !once {
			once = true
			pr.session.busy = false
		}
	}, nil
}

// revokedDenial is 401 (close 4401) for a key revoked since it was
// authenticated, nil otherwise.
func (pr *Principal) revokedDenial() *problem.Error {
	if pr.key == nil {
		return nil
	}
	pr.p.mu.Lock()
	at, revoked := pr.p.revoked[pr.key.ID]
	pr.p.mu.Unlock()
	if !revoked {
		return nil
	}
	return deny(problem.Unauthorized, "%s", revokedMessage(at))
}

// OnRevoke calls fn with the refusal message if the principal's key is
// revoked while a live session or replay runs with it (at once if it
// already was); stop ends the watch. A demo token is never revoked.
func (pr *Principal) OnRevoke(fn func(msg string)) (stop func()) {
	if pr.key == nil {
		return func() {}
	}
	p, id := pr.p, pr.key.ID
	w := &revokeWatch{fn: fn}
	p.mu.Lock()
	if at, revoked := p.revoked[id]; revoked {
		p.mu.Unlock()
		fn(revokedMessage(at))
		return func() {}
	}
	if p.watchers[id] == nil {
		p.watchers[id] = map[*revokeWatch]struct{}{}
	}
	p.watchers[id][w] = struct{}{}
	if !p.polling {
		p.polling = true
		go p.pollRevocations()
	}
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		delete(p.watchers[id], w)
		if len(p.watchers[id]) == 0 {
			delete(p.watchers, id)
			delete(p.revokeChecked, id)
		}
		p.mu.Unlock()
	}
}

// AcquireLive takes a live slot for a socket or a replay: one live session
// per demo token (409 / close 4409), the key's concurrent live sessions and
// the box's live cap (429 Retry-After 30 / close 4429).
func (pr *Principal) AcquireLive() (release func(), d *problem.Error) {
	p := pr.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr.session != nil && pr.session.liveOpen {
		return nil, deny(problem.Conflict, "this token already has a live session; close the other one or create a new session")
	}
	if p.live >= p.cfg.Limits.LiveCap {
		d := deny(problem.RateLimited, "all %d live sessions on this box are in use; retry in 30 seconds", p.cfg.Limits.LiveCap)
		d.RetryAfter = 30 * time.Second
		return nil, d
	}
	if pr.key != nil && int64(p.liveByKey[pr.key.ID]) >= pr.key.Limits.ConcurrentLiveSessions {
		d := deny(problem.RateLimited, "this developer key has %d live sessions open (limit %d); close one or retry in 30 seconds", p.liveByKey[pr.key.ID], pr.key.Limits.ConcurrentLiveSessions)
		d.RetryAfter = 30 * time.Second
		return nil, d
	}
	p.live++
	if pr.key != nil {
		p.liveByKey[pr.key.ID]++
	} else {
		pr.session.liveOpen = true
	}
	var done bool
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if done {
			return
		}
		done = true
		p.live--
		if pr.key != nil {
			if p.liveByKey[pr.key.ID]--; p.liveByKey[pr.key.ID] <= 0 {
				delete(p.liveByKey, pr.key.ID)
			}
		} else {
			pr.session.liveOpen = false
		}
	}, nil
}

// AcquireCall takes one of a demo token's concurrent model-call slots
// (limits.demo_concurrent_calls), so that one token cannot hold every
// model sequence while other callers wait: a call over them waits for
// one of the token's own calls to end (or ctx), and when four times as
// many already wait it is refused (429, Retry-After 1). Keys are apps
// serving many people; their calls are bounded by their request rate,
// and release does nothing for them.
func (pr *Principal) AcquireCall(ctx context.Context) (release func(), d *problem.Error) {
	if pr.session == nil {
		return func() {}, nil
	}
	p := pr.p
	limit := max(1, p.cfg.Bounds.DemoConcurrentCalls)
	p.mu.Lock()
	sess := pr.session
	if sess.callSlots == nil {
		sess.callSlots = make(chan struct{}, limit)
	}
	slots := sess.callSlots
	if sess.callWaiting >= 4*limit {
		p.mu.Unlock()
		return nil, deny(problem.RateLimited, "this demo token runs %d model calls and %d more wait (limits.demo_concurrent_calls is %d); wait for them to finish", limit, sess.callWaiting, limit).Retry(time.Second)
	}
	sess.callWaiting++
	p.mu.Unlock()
	var err error
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		err = ctx.Err()
	}
	p.mu.Lock()
	sess.callWaiting--
	p.mu.Unlock()
	if err != nil {
		return nil, problem.Wrap(problem.Unavailable, err, "the request ended while it waited for a model-call slot")
	}
	var once sync.Once
	return func() { once.Do(func() { <-slots }) }, nil
}
