package llm

import (
	"context"
	"testing"

	"boxd/engine/models/testmodels"
)

// TestTunedEngineDecodesAsFixed: an engine whose threads are tuned (and
// made to probe another count within each answer) writes the same greedy text as
// one with a fixed count: the thread count changes how the work is split,
// not what is computed.
func TestTunedEngineDecodesAsFixed(t *testing.T) {
	open := func(tune bool) *Engine {
		e, err := Open(context.Background(), EngineOptions{Options: Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 1024, Parallel: 1, Threads: 2, TuneThreads: tune}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		return e
	}
	fixed, tuned := open(false), open(true)
	if tuned.dec.tune == nil || fixed.dec.tune != nil {
		t.Fatal("TuneThreads did not choose the tuner")
	}
	for range 3 {
		a := run(t, fixed, "The roof inspection found", Request{MaxTokens: 48})
		tuned.dec.tune.ProbeNow() // a probe at the next step: another count mid-answer
		b := run(t, tuned, "The roof inspection found", Request{MaxTokens: 48})
		if a.Text != b.Text {
			t.Fatalf("tuned %q, fixed %q", b.Text, a.Text)
		}
	}
	if tuned.dec.switches < 3 {
		t.Errorf("the tuned engine changed its thread count %d times in 3 answers: the test decoded nothing with another count", tuned.dec.switches)
	}
}
