package asr

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// Batching across transcriptions. Each running transcription holds a
// slot (its own caches); the backend computes one graph at a time
// (Model.exec). A decoder step of one token per sequence, the whole of
// every step after a window's prompt, is a request to the batcher: the
// transcription that takes the backend next runs every request waiting
// then as one graph (decodeGraph over several groups), so the weights
// are read once for all of them instead of once each. whisper.cpp's server
// decodes one request at a time.
//
// To keep the transcriptions in step, the one that runs a batch first
// waits, at most batchWait, until every slot that is inside its step loop
// has its next request in: their Go side between two steps (the logit
// filters, the pick) takes well under a millisecond, and without the wait
// two transcriptions would alternate, each running alone.

// batchWait bounds how long a batch waits for the other slots' requests.
const batchWait = 2 * time.Millisecond

// DefaultSlots is how many transcriptions run at once when Options.Slots
// is 0: the default live-session cap.
const DefaultSlots = 4

type batcher struct {
	mu       sync.Mutex
	pending  []*stepReq
	stepping int           // slots inside their step loops
	wake     chan struct{} // a request came, or a slot left its loop
}

// stepReq is one slot's decoder step: reorder its beams (parents, when
// set), then run one token per sequence at past.
type stepReq struct {
	g       group
	parents []int32
	out     [][]float32 // per sequence, the logits
	err     error
	done    chan struct{}
}

func newBatcher() *batcher { return &batcher{wake: make(chan struct{}, 1)} }

func (b *batcher) poke() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// enter and leave bracket a slot's step loop.
func (b *batcher) enter() {
	b.mu.Lock()
	b.stepping++
	b.mu.Unlock()
}

func (b *batcher) leave() {
	b.mu.Lock()
	b.stepping--
	b.mu.Unlock()
	b.poke()
}

func (b *batcher) add(r *stepReq) {
	b.mu.Lock()
	b.pending = append(b.pending, r)
	b.mu.Unlock()
	b.poke()
}

// take returns the waiting requests once every stepping slot has one in,
// or after wait.
func (b *batcher) take(wait time.Duration) []*stepReq {
	deadline := time.Now().Add(wait)
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		b.mu.Lock()
		left := time.Until(deadline)
		if len(b.pending) >= b.stepping || left <= 0 {
			reqs := b.pending
			b.pending = nil
			b.mu.Unlock()
			return reqs
		}
		b.mu.Unlock()
		if t == nil {
			t = time.NewTimer(left)
		} else {
			t.Reset(left)
		}
		select {
		case <-b.wake:
		case <-t.C:
		}
	}
}

// step runs one decoder step for a slot's sequences (one token each, at
// past), reordering its beams first when parents is set, batched with the
// steps other slots have waiting. It returns each sequence's logits.
func (m *Model) step(sl *slot, tokens []int32, past int, parents []int32) ([][]float32, error) {
	r := &stepReq{g: group{sl: sl, tokens: tokens, B: len(tokens), past: past}, parents: parents, done: make(chan struct{})}
	m.batch.add(r)
	// Wait for the backend or for another slot to run the request, which
	// ever comes first: a slot whose step is done must not queue for the
	// backend behind a batch that is waiting for it (that split four
	// transcriptions into two pairs that took turns, each batch waiting
	// batchWait in vain for the other pair).
	select {
	case <-r.done:
		return r.out, r.err
	case m.exec <- struct{}{}:
	}
	defer m.exec.Unlock()
	select {
	case <-r.done: // another slot ran it
		return r.out, r.err
	default:
	}
	// Only the holder of exec takes requests, so ours is still waiting.
	m.runSteps(m.batch.take(batchWait))
	<-r.done
	return r.out, r.err
}

// runSteps runs requests as one graph (beam reorders first, each alone)
// and hands each its logits. The caller holds m.exec.
func (m *Model) runSteps(reqs []*stepReq) {
	defer func() {
		for _, r := range reqs {
			close(r.done)
		}
	}()
	// In slot order: the cross attention runs over the span of slots.
	slices.SortFunc(reqs, func(a, b *stepReq) int { return a.g.sl.index - b.g.sl.index })
	var gs []group
	var run []*stepReq
	for _, r := range reqs {
		if r.parents != nil {
			if err := m.reorder(r.g.sl, r.parents, r.g.past); err != nil {
				r.err = err
				continue
			}
		}
		gs = append(gs, r.g)
		run = append(run, r)
	}
	if len(gs) == 0 {
		return
	}
	start := time.Now()
	m.stats.steps.Add(1)
	data, err := m.decode(gs, 1, []int{0})
	m.stats.add(&m.stats.decode, start)

	if err != nil {
		for _, r := range run {
			r.err = err
		}
		return
	}
	B := 0
	for _, g := range gs {
		B += g.B
	}
	all := splitLogits(data, m.hp.NVocab, 1, B)
	off := 0
	for _, r := range run {
		r.out = make([][]float32, r.g.B)
		for i := range r.g.B {
			r.out[i] = all[off+i][0]
		}
		off += r.g.B
	}
}

// errClosed is returned for work on a closed model.
var errClosed = errors.New("asr: model closed")

// acquire takes the free slot with the lowest index, waiting while every
// slot is in use. Low slots first keep the running ones together: a
// batched cross attention runs over every slot between the lowest and the
// highest in the batch.
func (m *Model) acquire(ctx context.Context) (*slot, error) {
	select {
	case m.free <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if m.closed.Load() {
		<-m.free
		return nil, errClosed
	}
	m.slotMu.Lock()
	defer m.slotMu.Unlock()
	for _, sl := range m.caches.slots {
		if !m.inUse[sl.index] {
			m.inUse[sl.index] = true
			return sl, nil
		}
	}
	panic("asr: no free slot under the semaphore")
}

func (m *Model) release(sl *slot) {
	m.slotMu.Lock()
	m.inUse[sl.index] = false
	m.slotMu.Unlock()
	<-m.free
}

// reorderAlone reorders a slot's beams outside a step.
func (m *Model) reorderAlone(sl *slot, parents []int32, past int) error {
	m.exec.Lock()
	defer m.exec.Unlock()
	return m.reorder(sl, parents, past)
}

// execLock is the backend's one-graph-at-a-time lock as a channel, so that
// a step can wait for it and for its request's result at once.
type execLock chan struct{}

func (l execLock) Lock()   { l <- struct{}{} }
func (l execLock) Unlock() { <-l }
