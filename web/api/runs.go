package api

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"boxd/internal/problem"
	"boxd/internal/run"
)

// Work is a run of a route family: it emits its events (receipt, budget,
// lane, done...) through em, in the contract's order, and returns the
// answer of a stream: false request. An error ends the run: before the
// first event it is the answer's status, after it an error event.
type Work func(ctx context.Context, em *run.Emitter) (answer any, err error)

// RunProgress is the longest a streamed run stays silent: after that
// long without an event its emitter sends a progress event (stage,
// tokens so far, units done of total). stream: false answers send none.
// Tests shorten it.
var RunProgress = 5 * time.Second

// serveRun runs work for an admitted request on the one transport: as
// server-sent events when the caller asked for a stream (each event one
// data line, a progress event after RunProgress of silence), else through a
// collector that answers the returned value as JSON, with the receipt ids
// of the run's model calls in x-service-receipt and, when the answer
// embeds a run.Tally, its receipts and last budget filled from the same
// events. It is the only way a route family's run reaches a client.
func (s *API) Run(a *Admitted, work Work) {
	ctx := a.R.Context()
	if a.Stream {
		sse := NewSSE(a.W)
		defer sse.Close()
		em := run.NewEmitter(func(ev run.Event) error { return sse.Send(ev) }, s.Now, 0)
		em.ReportEvery(RunProgress)
		_, err := work(ctx, em)
		at := em.AtMS()
		em.Close()
		if err != nil && ctx.Err() == nil {
			sse.Fail(err, run.Event{Type: run.TypeError, AtMS: at, Body: run.ErrorBody{Message: Message(err)}})
		}
		return
	}
	col := &collector{}
	em := run.NewEmitter(col.add, s.Now, 0)
	answer, err := work(ctx, em)
	em.Close()
	tally := col.tally()
	if len(tally.Receipts) > 0 {
		ids := make([]string, len(tally.Receipts))
		for i, rc := range tally.Receipts {
			ids[i] = rc.ID
		}
		a.W.Header().Set("x-service-receipt", strings.Join(ids, ", "))
	}
	if t, ok := answer.(run.Tallied); ok && err == nil {
		t.SetTally(tally)
	}
	switch {
	case err != nil && ctx.Err() != nil: // the client left
	case err != nil:
		WriteProblem(a.W, err)
	default:
		WriteJSON(a.W, http.StatusOK, answer)
	}
}

// Message is what a caller is told of err.
func Message(err error) string {
	if p, ok := problem.As(err); ok {
		return p.Message
	}
	return err.Error()
}

// collector keeps a run's receipts and last budget for a stream: false
// answer.
type collector struct {
	mu sync.Mutex
	t  run.Tally
}

func (c *collector) add(ev run.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t.Add(ev)
	return nil
}

func (c *collector) tally() run.Tally {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}
