package web

import (
	"context"

	"boxd/internal/platform"
	"boxd/internal/run"
	"boxd/pipelines/live"
)

// budget adapts a principal to run.Budget, the budget every run spends.
type budget struct{ pr *platform.Principal }

var (
	_ run.Budget  = budget{}
	_ live.Budget = liveBudget{}
)

func (b budget) Reserve(ctx context.Context, want int64) (int64, func(int64), error) {
	res, d := b.pr.ReserveTokens(ctx, want)
	if d != nil {
		return 0, nil, d
	}
	return res.Granted, func(used int64) { _ = res.Commit(context.Background(), used) }, nil
}

func (b budget) KeyID() *string { return b.pr.KeyID() }

// TokensLeft is what is not spent (run.Budget): reservations of running
// calls are not shown as spending.
func (b budget) TokensLeft(ctx context.Context) (int64, error) { return b.pr.TokensUnspent(ctx) }

// Daily is true for a developer key: its budgets are per UTC day, and
// budget messages end "for today".
func (b budget) Daily() bool { return b.pr.IsKey() }

// liveBudget adapts a principal to live.Budget: the token budget plus the
// audio budget and the stop reserve.
type liveBudget struct{ budget }

func (b liveBudget) AudioLeftMS(ctx context.Context) (int64, error) { return b.pr.AudioLeftMS(ctx) }

func (b liveBudget) ChargeAudio(ctx context.Context, ms int64) (int64, error) {
	return b.pr.ChargeAudio(ctx, ms)
}

func (b liveBudget) StopReserve() int64 { return b.pr.StopReserve() }
