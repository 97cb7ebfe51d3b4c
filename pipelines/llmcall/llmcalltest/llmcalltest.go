// Package llmcalltest holds the fakes tests of model-calling pipelines
// share: a receipt issuer that records what it signs, and a token budget
// that grants what is asked and records what is committed.
package llmcalltest

import (
	"context"
	"strings"
	"sync"
	"testing"

	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/llmcall"
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

// Tiny is the tiny chat model testmodels writes, with its tiny vision
// projector when projector is set, as a model whose receipts the returned
// Issuer records. The engine closes when the test ends.
func Tiny(t testing.TB, projector bool) (*llmcall.Model, *Issuer) {
	t.Helper()
	o := llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 4096, Parallel: 1, Threads: 1}
	if projector {
		o.Projector = testmodels.Generated(t, testmodels.VisionFile)
	}
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	iss := &Issuer{}
	return &llmcall.Model{Engine: e, ModelID: "tiny-chat", WeightsRoot: strings.Repeat("cd", 32), Upstream: "tiny", Provider: "test", Receipts: iss}, iss
}
