package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"boxd/internal/families"
	"boxd/internal/problem"

	"boxd/internal/ids"
	"boxd/internal/store"
)

// KeySpec is the body of POST /v1/keys. Pointers tell absent from zero.
// verticals is an array of vertical ids or the string "all".
type KeySpec struct {
	Label                  *string         `json:"label"`
	Verticals              json.RawMessage `json:"verticals"`
	DailyLLMTokens         *int64          `json:"daily_llm_tokens"`
	DailyAudioSeconds      *int64          `json:"daily_audio_seconds"`
	Plan                   *string         `json:"plan"`
	RequestsPerMinute      *int64          `json:"requests_per_minute"`
	ConcurrentLiveSessions *int64          `json:"concurrent_live_sessions"`
}

var planPattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// MaxLabel is the longest key label accepted.
const MaxLabel = 200

// unprintable finds the first rune of s that is not printable text: a
// control or format character (terminal escapes, bidirectional overrides),
// a line or paragraph separator, a private-use or unassigned code point,
// or a byte that is not UTF-8. The zero-width joiner and non-joiner
// (emoji sequences, Persian) are text. It reports its index in runes.
func unprintable(s string) (i int, r rune, ok bool) {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) && r != '\u200c' && r != '\u200d' {
			return i, r, false
		}
		i++
	}
	return 0, 0, true
}

// Printable is s when it is printable text, else s quoted with Go's
// escapes (strconv.Quote): for printing labels that older databases may
// hold with control characters.
func Printable(s string) string {
	if _, _, ok := unprintable(s); ok {
		return s
	}
	return strconv.Quote(s)
}

// Limits validates a spec and fills the free-plan defaults.
func (s KeySpec) Limits() (label, plan string, l store.Limits, d *problem.Error) {
	bad := func(format string, args ...any) *problem.Error {
		return deny(problem.Invalid, format, args...)
	}
	plan = "free"
	if s.Plan != nil {
		if !planPattern.MatchString(*s.Plan) {
			return "", "", l, bad("plan %q: use lower-case letters, digits, - or _ (up to 32); the default is free", *s.Plan)
		}
		plan = *s.Plan
	}
	if s.Label != nil {
		label = strings.TrimSpace(*s.Label)
		if len([]rune(label)) > MaxLabel {
			return "", "", l, bad("label is %d characters; the limit is %d", len([]rune(label)), MaxLabel)
		}
		if i, r, ok := unprintable(label); !ok {
			return "", "", l, bad("label holds a control or other non-printable character (%U at character %d); use printable text", r, i+1)
		}
	}
	if len(s.Verticals) > 0 && string(s.Verticals) != "null" {
		var all string
		var list []string
		switch {
		case json.Unmarshal(s.Verticals, &all) == nil:
			if all != "all" {
				return "", "", l, bad(`verticals: use "all" or an array of vertical ids`)
			}
		case json.Unmarshal(s.Verticals, &list) == nil:
			if len(list) == 0 {
				return "", "", l, bad(`verticals is empty; give at least one vertical id, or "all"`)
			}
			seen := map[string]bool{}
			for _, v := range list {
				if !IsVertical(v) {
					return "", "", l, bad("verticals: unknown vertical %q; use ids from: %s", v, families.Choices())
				}
				if !seen[v] {
					seen[v] = true
					l.Verticals = append(l.Verticals, v)
				}
			}
		default:
			return "", "", l, bad(`verticals: use "all" or an array of vertical ids (strings)`)
		}
	}
	num := func(name string, v *int64, def, lo, hi int64) (int64, *problem.Error) {
		if v == nil {
			return def, nil
		}
		if *v < lo || *v > hi {
			return 0, bad("%s is %d; use %d to %d", name, *v, lo, hi)
		}
		return *v, nil
	}
	if l.DailyLLMTokens, d = num("daily_llm_tokens", s.DailyLLMTokens, DefaultDailyLLMTokens, 0, MaxDailyLLMTokens); d != nil {
		return
	}
	if l.DailyAudioSeconds, d = num("daily_audio_seconds", s.DailyAudioSeconds, DefaultDailyAudioSeconds, 0, MaxDailyAudioSeconds); d != nil {
		return
	}
	if l.RequestsPerMinute, d = num("requests_per_minute", s.RequestsPerMinute, DefaultRequestsPerMinute, 1, MaxRequestsPerMinute); d != nil {
		return
	}
	if l.ConcurrentLiveSessions, d = num("concurrent_live_sessions", s.ConcurrentLiveSessions, DefaultConcurrentLiveSessions, 0, MaxConcurrentLiveSessions); d != nil {
		return
	}
	return label, plan, l, nil
}

// CreateKey validates spec and stores a new key. The secret is returned
// once; only its SHA-256 is kept.
func (p *Platform) CreateKey(ctx context.Context, spec KeySpec) (secret string, k store.Key, d *problem.Error) {
	label, plan, limits, d := spec.Limits()
	if d != nil {
		return "", store.Key{}, d
	}
	secret = ids.Token("dk_", 32)
	id := ids.New("key_", 8)
	k, err := p.store.CreateKey(ctx, id, secret, label, plan, limits, p.now())
	if err != nil {
		return "", store.Key{}, storeDenial(err)
	}
	return secret, k, nil
}

// LimitsView is a key's limits as the API shows them; verticals is "all"
// or a list, as it was given.
type LimitsView struct {
	Verticals              any   `json:"verticals"`
	DailyLLMTokens         int64 `json:"daily_llm_tokens"`
	DailyAudioSeconds      int64 `json:"daily_audio_seconds"`
	RequestsPerMinute      int64 `json:"requests_per_minute"`
	ConcurrentLiveSessions int64 `json:"concurrent_live_sessions"`
}

// ViewLimits renders limits.
func ViewLimits(l store.Limits) LimitsView {
	var v any = "all"
	if l.Verticals != nil {
		v = l.Verticals
	}
	return LimitsView{Verticals: v, DailyLLMTokens: l.DailyLLMTokens, DailyAudioSeconds: l.DailyAudioSeconds,
		RequestsPerMinute: l.RequestsPerMinute, ConcurrentLiveSessions: l.ConcurrentLiveSessions}
}

// Today is a key's use on the current UTC day.
type Today struct {
	Day              string `json:"day"`
	LLMTokens        int64  `json:"llm_tokens"`
	AudioSeconds     int64  `json:"audio_seconds"`
	Requests         int64  `json:"requests"`
	LLMTokensLeft    int64  `json:"llm_tokens_left"`
	AudioSecondsLeft int64  `json:"audio_seconds_left"`
}

// HistoryDay is one earlier UTC day of use (docs/decisions.md).
type HistoryDay struct {
	Day          string `json:"day"`
	LLMTokens    int64  `json:"llm_tokens"`
	AudioSeconds int64  `json:"audio_seconds"`
	Requests     int64  `json:"requests"`
}

// KeyRecord is GET /v1/keys/{key_id}.
type KeyRecord struct {
	KeyID     string       `json:"key_id"`
	Label     string       `json:"label"`
	Plan      string       `json:"plan"`
	Created   int64        `json:"created"`
	Revoked   bool         `json:"revoked"`
	RevokedAt *int64       `json:"revoked_at"`
	Limits    LimitsView   `json:"limits"`
	Today     Today        `json:"today"`
	History   []HistoryDay `json:"history"`
}

// seconds rounds used audio up to whole seconds (never understate use).
func seconds(ms int64) int64 { return (ms + 999) / 1000 }

// KeyRecord reads a key with today's use and the 30 days before today,
// newest first, every day present (zeros included).
func (p *Platform) KeyRecord(ctx context.Context, id string) (KeyRecord, *problem.Error) {
	k, err := p.store.KeyByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return KeyRecord{}, deny(problem.NotFound, "no developer key %q", id)
	}
	if err != nil {
		return KeyRecord{}, storeDenial(err)
	}
	now := p.now().UTC()
	today := Day(now)
	first := Day(now.AddDate(0, 0, -HistoryDays))
	use, err := p.store.UsageBetween(ctx, k.ID, first, today)
	if err != nil {
		return KeyRecord{}, storeDenial(err)
	}
	t := use[today]
	rec := KeyRecord{
		KeyID: k.ID, Label: k.Label, Plan: k.Plan, Created: k.Created.Unix(),
		Revoked: k.Revoked(), Limits: ViewLimits(k.Limits),
		Today: Today{
			Day: today, LLMTokens: t.LLMTokens, AudioSeconds: seconds(t.AudioMS), Requests: t.Requests,
			LLMTokensLeft:    max(0, k.Limits.DailyLLMTokens-t.LLMTokens),
			AudioSecondsLeft: max(0, k.Limits.DailyAudioSeconds-seconds(t.AudioMS)),
		},
		History: make([]HistoryDay, 0, HistoryDays),
	}
	if k.RevokedAt != nil {
		r := k.RevokedAt.Unix()
		rec.RevokedAt = &r
	}
	for i := 1; i <= HistoryDays; i++ {
		d := Day(now.AddDate(0, 0, -i))
		u := use[d]
		rec.History = append(rec.History, HistoryDay{Day: d, LLMTokens: u.LLMTokens, AudioSeconds: seconds(u.AudioMS), Requests: u.Requests})
	}
	return rec, nil
}

// RevokeKey revokes a key at once: its next request gets 401.
func (p *Platform) RevokeKey(ctx context.Context, id string) (store.Key, *problem.Error) {
	k, err := p.store.RevokeKey(ctx, id, p.now())
	if errors.Is(err, store.ErrNotFound) {
		return store.Key{}, deny(problem.NotFound, "no developer key %q", id)
	}
	if err != nil {
		return store.Key{}, storeDenial(err)
	}
	// Revocation is immediate (contract, platform section 3): calls that
	// reserve tokens from now on get 401, and open live sessions and
	// replays end with 4401.
	at := p.now()
	if k.RevokedAt != nil {
		at = *k.RevokedAt
	}
	p.revokedNow(k.ID, at)
	return k, nil
}

// revokedNow records that key id was revoked at at and tells the watchers
// of the sessions running with it, once.
func (p *Platform) revokedNow(id string, at time.Time) {
	p.mu.Lock()
	p.revoked[id] = at
	var fns []func(string)
	for w := range p.watchers[id] {
		fns = append(fns, w.fn)
	}
	delete(p.watchers, id)
	delete(p.revokeChecked, id)
	p.mu.Unlock()
	msg := revokedMessage(at)
	for _, fn := range fns {
		fn(msg)
	}
}

// noticeRevocation reads key id again from the store, at most every
// revocationCheckEvery, so that a revocation made by another process (the
// `boxd keys revoke` command, which writes the same store) also reaches
// the sessions running with the key.
func (p *Platform) noticeRevocation(ctx context.Context, id string) {
	now := p.now()
	p.mu.Lock()
	_, known := p.revoked[id]
	last, checked := p.revokeChecked[id]
	if known || (checked && now.Sub(last) < revocationCheckEvery) {
		p.mu.Unlock()
		return
	}
	p.revokeChecked[id] = now
	p.mu.Unlock()
	k, err := p.store.KeyByID(ctx, id)
	if err == nil && k.Revoked() {
		p.revokedNow(id, *k.RevokedAt)
	}
}

// pollRevocations reads every watched key from the store each revokePoll
// and ends the sessions of the revoked ones; it stops once no session
// watches a key (OnRevoke starts it again).
func (p *Platform) pollRevocations() {
	t := time.NewTicker(p.revokePoll)
	defer t.Stop()
	for range t.C {
		p.mu.Lock()
		ids := slices.Collect(maps.Keys(p.watchers))
		if len(ids) == 0 {
			p.polling = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		for _, id := range ids {
			ctx, cancel := context.WithTimeout(context.Background(), p.revokePoll)
			k, err := p.store.KeyByID(ctx, id)
			cancel()
			if err == nil && k.Revoked() {
				p.revokedNow(id, *k.RevokedAt)
			}
		}
	}
}

func revokedMessage(at time.Time) string {
	return fmt.Sprintf("this developer key was revoked at %s; ask the operator for a new one", at.UTC().Format(time.RFC3339))
}

// Sessions older than their lifetime are 401; this is how long a caller
// should expect one to last.
func (p *Platform) SessionLifetime() time.Duration {
	return time.Duration(p.cfg.Limits.SessionLifetimeS) * time.Second
}
