package llmcall

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"boxd/engine/attest"
)

// orderLog records the order of a call's durable steps.
type orderLog struct{ steps []string }

type orderIssuer struct{ log *orderLog }

func (i orderIssuer) Issue(_ context.Context, mc attest.ModelCall, _ string) (attest.SignedModelCall, error) {
	i.log.steps = append(i.log.steps, "receipt stored")
	return attest.SignedModelCall{ModelCall: mc, Sig: "sig"}, nil
}

type orderBudget struct {
	budget
	log *orderLog
}

func (b *orderBudget) Reserve(_ context.Context, want int64) (int64, func(int64), error) {
	return want, func(used int64) {
		if used > 0 {
			b.log.steps = append(b.log.steps, "charged")
		}
	}, nil
}

type orderEvents struct{ log *orderLog }

func (e orderEvents) Emit(typ string, _ any) { e.log.steps = append(e.log.steps, typ+" event") }

// TestChargedBeforeTheReceipt: a call that generated charges its tokens
// before its receipt is stored and announced. Found while writing
// crashtest's kill -9 test (which checks that a key's stored receipts
// never count more tokens than its usage): the charge used to come after
// (deferred to the call's return), so a crash between the two left a
// stored receipt, already sent to the client, for tokens the key was never
// charged.
func TestChargedBeforeTheReceipt(t *testing.T) {
	for _, stream := range []bool{false, true} {
		log := &orderLog{}
		m := &Model{Engine: &fakeEngine{ctxLen: 4096, pieces: []string{"a", "b"}}, ModelID: "model-27b", WeightsRoot: "root",
			Upstream: "tiny", Provider: "box", Receipts: orderIssuer{log}, Now: func() time.Time { return time.Unix(1700000000, 0) }}
		r := Request{Messages: hello, MaxTokens: 16, Events: orderEvents{log}}
		if stream {
			r.Stream = func(string) error { return nil }
		}
		if _, err := m.Text(context.Background(), &orderBudget{log: log}, r); err != nil {
			t.Fatal(err)
		}
		want := []string{"charged", "receipt stored", "receipt event"}
		if !slices.Equal(log.steps, want) {
			t.Errorf("stream %v: steps %s, want %s", stream, strings.Join(log.steps, ", "), strings.Join(want, ", "))
		}
	}
}
