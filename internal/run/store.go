package run

import (
	"sync"
	"time"

	"boxd/internal/problem"
)

// Store keeps finished runs of one family for a time, each readable only
// by its owner: a run id of another owner, or of a run forgotten or
// expired, reads as not found (the two are never told apart, so ids cannot
// be probed). It holds at most Max runs; adding one more forgets the
// oldest.
type Store[T any] struct {
	// TTL is how long a run is kept after it was put (the contract's
	// "runs kept one hour").
	TTL time.Duration
	// Max bounds the runs held (default 1,000).
	Max int
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// What names the runs in messages ("walkthrough run").
	What string

	mu    sync.Mutex
	runs  map[string]*stored[T]
	order []string // ids, oldest first
}

type stored[T any] struct {
	owner   string
	expires time.Time
	v       T
}

func (s *Store[T]) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Put keeps v under id for owner.
func (s *Store[T]) Put(id, owner string, v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == nil {
		s.runs = map[string]*stored[T]{}
	}
	now := s.now()
	s.sweep(now)
	if _, ok := s.runs[id]; !ok {
		s.order = append(s.order, id)
	}
	s.runs[id] = &stored[T]{owner: owner, expires: now.Add(s.TTL), v: v}
	limit := s.Max
	if limit <= 0 {
		limit = 1000
	}
	for len(s.order) > limit {
		delete(s.runs, s.order[0])
		s.order = s.order[1:]
	}
}

// Get returns owner's run id, or a problem.NotFound error.
func (s *Store[T]) Get(id, owner string) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok || r.owner != owner || !s.now().Before(r.expires) {
		var zero T
		return zero, s.notFound(id)
	}
	return r.v, nil
}

// Update replaces owner's run id with f's result under the store's lock
// (sign-offs and approvals change a run in place); the expiry stays. An
// error from f is returned as is.
func (s *Store[T]) Update(id, owner string, f func(T) (T, error)) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok || r.owner != owner || !s.now().Before(r.expires) {
		var zero T
		return zero, s.notFound(id)
	}
	v, err := f(r.v)
	if err != nil {
		return r.v, err
	}
	r.v = v
	return v, nil
}

// Delete forgets owner's run id; it reports whether there was one.
func (s *Store[T]) Delete(id, owner string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok || r.owner != owner {
		return false
	}
	delete(s.runs, id)
	for i, x := range s.order {
		if x == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	return true
}

// Len is how many runs are held, expired ones not yet swept included.
func (s *Store[T]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.runs)
}

// sweep forgets expired runs from the front (runs expire in put order).
func (s *Store[T]) sweep(now time.Time) {
	for len(s.order) > 0 {
		r := s.runs[s.order[0]]
		if r != nil && now.Before(r.expires) {
			return
		}
		delete(s.runs, s.order[0])
		s.order = s.order[1:]
	}
}

func (s *Store[T]) notFound(id string) *problem.Error {
	what := s.What
	if what == "" {
		what = "run"
	}
	return problem.New(problem.NotFound, "no %s %q for this token: runs are kept for %s after they finish, and only their owner can read them", what, id, s.TTL)
}
