package web

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"boxd/problem"
	"boxd/run"
)

// Work is a run of a route family: it emits its events (receipt, budget,
// lane, done...) through em, in the contract's order, and returns the
// answer of a stream: false request. An error ends the run: before the
// first event it is the answer's status, after it an error event.
type Work func(ctx context.Context, em *run.Emitter) (answer any, err error)

// serveRun runs work for an admitted request on the one transport: as
// server-sent events when the caller asked for a stream (each event one
// data line, a heartbeat while the run is silent), else through a
// collector that answers the returned value as JSON, with the receipt ids
// of the run's model calls in x-service-receipt. It is the only way a
// route family's run reaches a client.
func (s *Server) serveRun(a *Admitted, work Work) {
	ctx := a.R.Context()
	if a.Stream {
		sse := newSSE(a.W)
		defer sse.close()
		em := run.NewEmitter(func(ev run.Event) error { return sse.send(ev) }, s.now, 0)
		_, err := work(ctx, em)
		at := em.AtMS()
		em.Close()
		if err != nil && ctx.Err() == nil {
			sse.fail(err, run.Event{Type: run.TypeError, AtMS: at, Body: run.ErrorBody{Message: message(err)}})
		}
		return
	}
	col := &collector{}
	em := run.NewEmitter(col.add, s.now, 0)
	answer, err := work(ctx, em)
	em.Close()
	if ids := col.receipts(); len(ids) > 0 {
		a.W.Header().Set("x-service-receipt", strings.Join(ids, ", "))
	}
	switch {
	case err != nil && ctx.Err() != nil: // the client left
	case err != nil:
		writeProblem(a.W, err)
	default:
		writeJSON(a.W, http.StatusOK, answer)
	}
}

// message is what a caller is told of err.
func message(err error) string {
	if p, ok := problem.As(err); ok {
		return p.Message
	}
	return err.Error()
}

// collector keeps a run's events for a stream: false answer.
type collector struct {
	mu     sync.Mutex
	events []run.Event
}

func (c *collector) add(ev run.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, ev)
	return nil
}

// receipts are the ids of the run's receipt events, in order.
func (c *collector) receipts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for _, ev := range c.events {
		if rb, ok := ev.Body.(run.ReceiptBody); ok && ev.Type == run.TypeReceipt {
			ids = append(ids, rb.ID)
		}
	}
	return ids
}
