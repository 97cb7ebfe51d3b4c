package api

import (
	"context"

	"boxd/internal/platform"
	"boxd/internal/run"
)

// Budget adapts a principal to run.Budget, the budget every run spends.
type Budget struct{ Principal *platform.Principal }

var _ run.Budget = Budget{}

// Reserve sets aside up to want tokens (run.Budget).
func (b Budget) Reserve(ctx context.Context, want int64) (int64, func(int64), error) {
	res, d := b.Principal.ReserveTokens(ctx, want)
	if d != nil {
		return 0, nil, d
	}
	return res.Granted, func(used int64) { _ = res.Commit(context.Background(), used) }, nil
}

// KeyID is the developer key's id (nil for a demo session).
func (b Budget) KeyID() *string { return b.Principal.KeyID() }

// TokensLeft is what is not spent (run.Budget): reservations of running
// calls are not shown as spending.
func (b Budget) TokensLeft(ctx context.Context) (int64, error) {
	return b.Principal.TokensUnspent(ctx)
}

// Daily is true for a developer key: its budgets are per UTC day, and
// budget messages end "for today".
func (b Budget) Daily() bool { return b.Principal.IsKey() }

// AudioLeftMS is the audio budget left (live.Budget).
func (b Budget) AudioLeftMS(ctx context.Context) (int64, error) {
	return b.Principal.AudioLeftMS(ctx)
}

// ChargeAudio spends ms of audio (live.Budget).
func (b Budget) ChargeAudio(ctx context.Context, ms int64) (int64, error) {
	return b.Principal.ChargeAudio(ctx, ms)
}

// StopReserve is the tokens kept for a live session's stop (live.Budget).
func (b Budget) StopReserve() int64 { return b.Principal.StopReserve() }
