package retrieval

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"boxd/internal/problem"
)

// Quota bounds the indexes the service holds (the retrieval.* settings).
// An owner is a developer key or a demo session (the owner string the web
// layer passes: a demo session's starts with DemoOwnerPrefix). The zero
// Quota is DefaultQuota.
//
//   - PerKey, PerDemo: an owner at its own bound has its oldest index
//     replaced by the new one (it can only push out its own work);
//   - Demo: the indexes all demo sessions hold together, at most Max less
//     PerKey, so that demo sessions, which anyone can create, never take
//     the room developer keys need; a new demo index beyond it is 429 with
//     Retry-After until the oldest demo index expires;
//   - Max: the indexes on the box; a new one beyond it is 503.
//
// Demo sessions' indexes always expire in the hour and are never kept on
// disk (a session ends with the process): with retrieval.persist, what
// survives a restart is developer keys' indexes only, and they count
// against the same bounds after it.
type Quota struct {
	Max     int // retrieval.max_indexes (64)
	PerKey  int // retrieval.indexes_per_key (8)
	Demo    int // retrieval.demo_indexes (16)
	PerDemo int // retrieval.indexes_per_demo_session (2)
}

// isDemo reports whether owner is a demo session (DemoOwnerPrefix).
func isDemo(owner string) bool { return strings.HasPrefix(owner, DemoOwnerPrefix) }

// Default bounds.
const (
	defaultMaxIndexes = 64
	defaultPerKey     = 8
	defaultDemo       = 16
	defaultPerDemo    = 2
)

// bounds is q with its defaults (the zero Quota is DefaultQuota) and the
// demo share capped.
func (q Quota) bounds() Quota {
	if q == (Quota{}) {
		q = DefaultQuota()
	}
	if q.Max <= 0 {
		q.Max = defaultMaxIndexes
	}
	if q.PerKey <= 0 {
		q.PerKey = defaultPerKey
	}
	if q.PerDemo <= 0 {
		q.PerDemo = defaultPerDemo
	}
	if q.Demo < 0 {
		q.Demo = defaultDemo
	}
	q.PerKey = min(q.PerKey, q.Max)
	q.Demo = min(q.Demo, q.Max-q.PerKey)
	q.PerDemo = min(q.PerDemo, max(q.Demo, 1))
	return q
}

// DefaultQuota is the quota of the settings' defaults.
func DefaultQuota() Quota {
	return Quota{Max: defaultMaxIndexes, PerKey: defaultPerKey, Demo: defaultDemo, PerDemo: defaultPerDemo}
}

// usage is what the held indexes take, after the expired ones are gone
// (s.mu held).
type usage struct {
	mine       []*heldIndex // owner's
	demo       int          // all demo sessions'
	all        int
	demoExpiry time.Time // the oldest demo index's expiry
}

func (s *Service) usageLocked(owner string, now time.Time) usage {
	if s.held == nil {
		s.held = map[string]*heldIndex{}
	}
	var u usage
	for k, h := range s.held {
		if !now.Before(h.expires) {
			delete(s.held, k)
			continue
		}
		u.all++
		if h.owner == owner {
			u.mine = append(u.mine, h)
		}
		if h.demo {
			u.demo++
			if u.demoExpiry.IsZero() || h.expires.Before(u.demoExpiry) {
				u.demoExpiry = h.expires
			}
		}
	}
	return u
}

// refuseLocked says whether a new index of owner's would be refused: nil
// when it fits, or replaces owner's oldest (evict is then set).
func (s *Service) refuseLocked(owner string, demo bool, now time.Time) (evict *heldIndex, err error) {
	q := s.Quota.bounds()
	u := s.usageLocked(owner, now)
	per := q.PerKey
	if demo {
		per = q.PerDemo
	}
	if len(u.mine) >= per {
		// The owner's oldest goes: nobody else's room is taken.
		sort.Slice(u.mine, func(i, j int) bool { return u.mine[i].added.Before(u.mine[j].added) })
		return u.mine[0], nil
	}
	if demo && u.demo >= q.Demo {
		wait := time.Minute
		if !u.demoExpiry.IsZero() {
			wait = max(u.demoExpiry.Sub(now), time.Second)
		}
		return nil, problem.New(problem.RateLimited, "demo sessions together hold %d retrieval indexes, their share of this box's %d (retrieval.demo_indexes; the rest are kept for developer keys); retry after the time in Retry-After, when the oldest expires, or use a developer key",
			q.Demo, q.Max).Retry(wait)
	}
	if u.all >= q.Max {
		return nil, problem.New(problem.Unavailable, "this box holds %d retrieval indexes, its most (retrieval.max_indexes); retry when one expires (each is held an hour)", q.Max).Retry(time.Minute)
	}
	return nil, nil
}

// room refuses, before any work, a new index the quota would refuse
// (429 over the demo share, 503 over the box's bound).
func (s *Service) room(owner string, demo bool) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.refuseLocked(owner, demo, now)
	return err
}

// hold keeps ix for owner: an hour, or, for a developer key with
// persistence on, until it is replaced. The quota is checked again (other
// indexes may have come while this one was built).
func (s *Service) hold(owner string, demo bool, ix *Index, docs []Document) (time.Time, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	key := owner + " " + ix.Hash
	s.usageLocked(owner, now)
	if _, ok := s.held[key]; !ok {
		old, err := s.refuseLocked(owner, demo, now)
		if err != nil {
			return time.Time{}, err
		}
		if old != nil {
			delete(s.held, owner+" "+old.ix.Hash)
			if old.persistent {
				if err := os.Remove(s.persistPath(owner, old.ix.Hash)); err != nil && !os.IsNotExist(err) {
					return time.Time{}, fmt.Errorf("retrieval: remove the replaced index %s: %w", old.ix.Hash, err)
				}
			}
		}
	}
	text := map[string]string{}
	for _, d := range docs {
		text[d.ID] = d.Text
	}
	exp := now.Add(IndexTTL)
	h := &heldIndex{owner: owner, demo: demo, ix: ix, docs: text, expires: exp, added: now}
	if s.PersistDir != "" && !demo {
		h.expires, h.persistent = never, true
	}
	s.held[key] = h
	return exp, nil
}

// Held is how many indexes are held: in all and by demo sessions (tests,
// info).
func (s *Service) Held() (all, demo int) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.usageLocked("", now)
	return u.all, u.demo
}
