// Package llmcalltest holds the fakes tests of model-calling pipelines
// share: a receipt issuer that records what it signs, and a token budget
// that grants what is asked and records what is committed.
package llmcalltest

import (
	"context"
	"sync"

	"boxd/engine/attest"
)

// Issuer records the model calls it signs (llmcall.Receipts).
type Issuer struct {
	mu    sync.Mutex
	calls []attest.ModelCall
}

// Issue records mc and signs it with a placeholder signature.
func (i *Issuer) Issue(_ context.Context, mc attest.ModelCall, _ string) (attest.SignedModelCall, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.calls = append(i.calls, mc)
	return attest.SignedModelCall{ModelCall: mc, Sig: "sig"}, nil
}

// Calls are the model calls signed so far.
func (i *Issuer) Calls() []attest.ModelCall {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]attest.ModelCall(nil), i.calls...)
}

// Budget grants every reservation in full and records each commit
// (run.Budget).
type Budget struct {
	mu        sync.Mutex
	committed []int64
}

// Reserve grants want.
func (b *Budget) Reserve(_ context.Context, want int64) (int64, func(int64), error) {
	return want, func(used int64) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.committed = append(b.committed, used)
	}, nil
}

// TokensLeft is plenty.
func (b *Budget) TokensLeft(context.Context) (int64, error) { return 1 << 20, nil }

// KeyID is nil: a session, not a key.
func (b *Budget) KeyID() *string { return nil }

// Daily is false: a session's budget.
func (b *Budget) Daily() bool { return false }

// Committed are the commits so far.
func (b *Budget) Committed() []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int64(nil), b.committed...)
}
