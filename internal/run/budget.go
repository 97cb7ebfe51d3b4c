package run

import "context"

// Budget is the caller's generated-token budget, as a run spends it (a
// internal/platform Principal adapted). Calls reserve what they may generate so
// that concurrent calls cannot together overspend, and commit what they
// used.
type Budget interface {
	// Reserve grants up to want tokens (at least one left, else a
	// problem.Budget error); commit charges what was used and releases
	// the rest. commit must be called exactly once.
	Reserve(ctx context.Context, want int64) (granted int64, commit func(used int64), err error)
	// TokensLeft is what is not yet spent: the budget less the tokens
	// committed. Reservations of calls still running are not deducted
	// (they are not spent, and most is released), so the figure shown in
	// budget events only goes down as tokens are spent; Reserve is what
	// guards against overspending.
	TokensLeft(ctx context.Context) (int64, error)
	// KeyID is the developer key paying, nil for a demo session.
	KeyID() *string
	// Daily is true for a developer key: its budgets are per UTC day and
	// budget messages end "for today".
	Daily() bool
}

// UsedUpSuffix is what budget messages end with for b: " for today" for a
// developer key, "" for a demo session.
func UsedUpSuffix(b Budget) string {
	if b != nil && b.Daily() {
		return " for today"
	}
	return ""
}

// BudgetOf is the budget event's body for b: the generated tokens left,
// the paying key and, for a key, the period ("day"). A nil b (a public
// route) gives an empty body.
func BudgetOf(ctx context.Context, b Budget) BudgetBody {
	var body BudgetBody
	if b == nil {
		return body
	}
	body.LLMTokensLeft, _ = b.TokensLeft(ctx)
	body.KeyID = b.KeyID()
	if b.Daily() {
		body.Period = "day"
	}
	return body
}
