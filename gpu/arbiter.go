package gpu

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
)

// Priority orders work on the accelerator: live sessions first, interactive
// calls next, background renders last.
type Priority int

// Priorities, lowest first.
const (
	Background Priority = iota
	Interactive
	Live
)

func (p Priority) String() string {
	switch p {
	case Live:
		return "live"
	case Interactive:
		return "interactive"
	}
	return "background"
}

// ErrQueueFull is returned when a pool's wait queue is full (back-pressure).
var ErrQueueFull = errors.New("gpu: the work queue is full")

// Arbiter schedules one machine's accelerator (or CPU) among its users.
// Each user is a pool of slots (the LLM's parallel sequences, the speech
// recogniser's streams); within a pool, waiting work is admitted highest
// priority first, first come first served within a priority.
type Arbiter struct {
	mu    sync.Mutex
	pools map[string]*Pool
}

// NewArbiter makes an arbiter with no pools.
func NewArbiter() *Arbiter { return &Arbiter{pools: map[string]*Pool{}} }

// Pool is a set of slots of one kind of work.
type Pool struct {
	a        *Arbiter
	name     string
	capacity int
	maxQueue int
	inUse    int
	active   [Live + 1]int
	waiting  waitHeap
	seq      uint64
}

// Pool returns the named pool, creating it with capacity slots and at most
// maxQueue waiters.
func (a *Arbiter) Pool(name string, capacity, maxQueue int) *Pool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.pools[name]; ok {
		return p
	}
	p := &Pool{a: a, name: name, capacity: max(1, capacity), maxQueue: max(0, maxQueue)}
	a.pools[name] = p
	return p
}

// Queued is the number of waiters in every pool (/healthz queue).
func (a *Arbiter) Queued() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, p := range a.pools {
		n += len(p.waiting)
	}
	return n
}

// Active is the number of slots in use at priority pr in every pool.
func (a *Arbiter) Active(pr Priority) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, p := range a.pools {
		n += p.active[pr]
	}
	return n
}

type waiter struct {
	prio  Priority
	seq   uint64
	ready chan struct{}
	index int
	done  bool
}

type waitHeap []*waiter

func (h waitHeap) Len() int { return len(h) }
func (h waitHeap) Less(i, j int) bool {
	if h[i].prio != h[j].prio {
		return h[i].prio > h[j].prio
	}
	return h[i].seq < h[j].seq
}
func (h waitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *waitHeap) Push(x any)   { w := x.(*waiter); w.index = len(*h); *h = append(*h, w) }
func (h *waitHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	w.index = -1
	return w
}

// Acquire takes a slot at priority pr, waiting while the pool is full.
// It fails with ErrQueueFull when maxQueue others already wait, or with the
// context's error. release gives the slot back (once).
func (p *Pool) Acquire(ctx context.Context, pr Priority) (release func(), err error) {
	a := p.a
	a.mu.Lock()
	if p.inUse < p.capacity && len(p.waiting) == 0 {
		p.inUse++
		p.active[pr]++
		a.mu.Unlock()
		return p.releaser(pr), nil
	}
	if len(p.waiting) >= p.maxQueue {
		a.mu.Unlock()
		return nil, fmt.Errorf("%w (%s: %d running, %d waiting)", ErrQueueFull, p.name, p.inUse, len(p.waiting))
	}
	p.seq++
	w := &waiter{prio: pr, seq: p.seq, ready: make(chan struct{})}
	heap.Push(&p.waiting, w)
	a.mu.Unlock()

	select {
	case <-w.ready:
		return p.releaser(pr), nil
	case <-ctx.Done():
		a.mu.Lock()
		defer a.mu.Unlock()
		if w.done { // admitted just as the context ended: hand the slot on
			p.active[pr]--
			p.inUse--
			p.admitLocked()
			return nil, ctx.Err()
		}
		heap.Remove(&p.waiting, w.index)
		return nil, ctx.Err()
	}
}

func (p *Pool) releaser(pr Priority) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			p.a.mu.Lock()
			defer p.a.mu.Unlock()
			p.inUse--
			p.active[pr]--
			p.admitLocked()
		})
	}
}

// admitLocked hands free slots to the best waiters.
func (p *Pool) admitLocked() {
	for p.inUse < p.capacity && len(p.waiting) > 0 {
		w := heap.Pop(&p.waiting).(*waiter)
		w.done = true
		p.inUse++
		p.active[w.prio]++
		close(w.ready)
	}
}

// Waiting is the number of waiters in this pool.
func (p *Pool) Waiting() int {
	p.a.mu.Lock()
	defer p.a.mu.Unlock()
	return len(p.waiting)
}
