package fill

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"boxd/internal/problem"
	"boxd/internal/records"
	"boxd/internal/run"
)

// RunTTL is how long a run is kept before it is removed (contract 2,
// section 3: removal after 24 hours).
const RunTTL = 24 * time.Hour

// Inbox is the demo forms' endpoint: what released Submits sent.
type Inbox struct {
	mu   sync.Mutex
	sent []Sent
}

// Sent is one released Submit.
type Sent struct {
	RunID  string            `json:"run_id"`
	Demo   string            `json:"demo"`
	Fields map[string]string `json:"fields"`
}

func (in *Inbox) receive(s Sent) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.sent = append(in.sent, s)
	return len(in.sent)
}

// Sent is what the released Submits sent, in order.
func (in *Inbox) Sent() []Sent {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Sent(nil), in.sent...)
}

// Keep keeps a finished run for its owner (a key id or a session id).
func (s *Service) Keep(out *Result, owner string) { s.runs().Put(out.ID, owner, out) }

// Delete removes owner's run now (404 when there is none).
func (s *Service) Delete(id, owner string) error {
	if !s.runs().Delete(id, owner) {
		return problem.New(problem.NotFound, "no fill run %s: it was deleted, removed after 24 hours, or belongs to another token", id)
	}
	return nil
}

// ApproveRun signs owner's approval of run id (Approve's rules: 409 until
// every flag is acknowledged, 409 twice); for a demo form it then
// releases the form's one held Submit to the Inbox (Release).
func (s *Service) ApproveRun(ctx context.Context, id, owner string, b ApproveBody) (*Approval, error) {
	out, err := s.runs().Update(id, owner, func(r *Result) (*Result, error) {
		ap, err := Approve(r, b, s.Key, s.now())
		if err != nil {
			return r, err
		}
		c := *r
		c.Approval = ap
		return &c, nil
	})
	if err != nil {
		return nil, err
	}
	if out.Demo == "" {
		return out.Approval, nil
	}
	released, why := false, ""
	if fields, err := s.Release(ctx, out); err != nil {
		why = "the demo form's Submit was not released: " + err.Error()
	} else {
		n := s.inbox().receive(Sent{RunID: out.ID, Demo: out.Demo, Fields: fields})
		released, why = true, fmt.Sprintf("the held Submit of the demo form %q was released to this box's demo endpoint (%s, submission %d)", out.Demo, DemoAction(out.Demo), n)
	}
	out, err = s.runs().Update(id, owner, func(r *Result) (*Result, error) {
		c := *r
		ap := *c.Approval
		ap.Released, ap.Why = released, why
		c.Approval = &ap
		return &c, nil
	})
	if err != nil {
		return nil, err
	}
	return out.Approval, nil
}

func (s *Service) runs() *run.Store[*Result] {
	s.once.Do(s.init)
	return s.Runs
}

func (s *Service) inbox() *Inbox {
	s.once.Do(s.init)
	return s.Inbox
}

func (s *Service) init() {
	if s.Runs == nil {
		s.Runs = &run.Store[*Result]{TTL: RunTTL, Now: s.Now, What: "fill run"}
	}
	if s.Inbox == nil {
		s.Inbox = &Inbox{}
	}
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Answer is POST /fill/run's answer: the run and its record's
// verification.
type Answer struct {
	*Result
	Check records.Check `json:"check"`
}

// Serve runs a fill on the run path for owner: events to env.Events, the
// proposals spend env.Budget; the run is kept for owner (approve, delete)
// and its record verified against the box's key; done (the answer) is
// sent last.
func (s *Service) Serve(ctx context.Context, env run.Env, req Request, owner string) (*Answer, error) {
	out, err := s.Run(ctx, req, env.Events, env.Budget)
	if err != nil {
		return nil, err
	}
	s.Keep(out, owner)
	raw, err := json.Marshal(out.Record)
	if err != nil {
		return nil, fmt.Errorf("fill: %w", err)
	}
	ans := &Answer{Result: out, Check: records.CheckOf(records.Verify(raw, s.Key.PublicKey()))}
	env.Events.End(run.TypeDone, ans)
	return ans, nil
}
