package llmcall

import (
	"context"
	"testing"

	"boxd/engine/llm"
	"boxd/internal/run"
)

// packedEngine's jobs generate two tokens for each piece of text they
// give (a reader that lags behind the model gets pieces joined).
type packedEngine struct{ *fakeEngine }

func (e packedEngine) start(ctx context.Context, r llm.Request) (job, error) {
	j, err := e.fakeEngine.start(ctx, r)
	if err != nil {
		return nil, err
	}
	return packedJob{j.(*fakeJob)}, nil
}

type packedJob struct{ *fakeJob }

func (j packedJob) Result() llm.Result {
	r := j.fakeJob.Result()
	r.CompletionTokens *= 2
	return r
}

// TestTokensCountedAsGenerated: a call whose Events keep a run's progress
// (a run.Emitter) counts its tokens there as they come, and the count is
// exact once the call ends, also when pieces held several tokens; calls
// add up; an Events without progress is only sent the receipt.
func TestTokensCountedAsGenerated(t *testing.T) {
	em := run.NewEmitter(func(run.Event) error { return nil }, nil, 0)
	defer em.Close()
	m := &Model{Engine: &fakeEngine{ctxLen: 4096, pieces: []string{"a", "b", "c", "d"}}, ModelID: "model-27b", Receipts: &issuer{}}
	var seen []int64
	res, err := m.Text(context.Background(), &budget{}, Request{Messages: hello, Events: em, Stream: func(string) error {
		seen = append(seen, em.ProgressNow().Tokens)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{1, 2, 3, 4}; len(seen) != len(want) || seen[0] != 1 || seen[3] != 4 {
		t.Fatalf("tokens while generating %v, want %v", seen, want)
	}
	if got := em.ProgressNow().Tokens; got != int64(res.Usage.CompletionTokens) || got != 4 {
		t.Fatalf("tokens after the call %d, usage %d", got, res.Usage.CompletionTokens)
	}

	m.Engine = packedEngine{&fakeEngine{ctxLen: 4096, pieces: []string{"ab", "cd"}}}
	res, err = m.Text(context.Background(), &budget{}, Request{Messages: hello, Events: em})
	if err != nil {
		t.Fatal(err)
	}
	if got := em.ProgressNow().Tokens; res.Usage.CompletionTokens != 4 || got != 8 {
		t.Fatalf("after a call of packed pieces: %d tokens counted, usage %d", got, res.Usage.CompletionTokens)
	}

	evs := &events{}
	m.Engine = &fakeEngine{ctxLen: 4096, pieces: []string{"x"}}
	if _, err := m.Text(context.Background(), &budget{}, Request{Messages: hello, Events: evs}); err != nil || len(evs.evs) != 1 {
		t.Fatalf("an Events without progress: %v, %d events", err, len(evs.evs))
	}
}
