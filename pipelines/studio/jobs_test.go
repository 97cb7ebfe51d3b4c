package studio

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

type tclock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *tclock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *tclock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
func newTClock() *tclock              { return &tclock{t: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)} }
func spec(prompt string) Spec {
	return Spec{Kind: Image, Prompt: prompt, Aspect: "square", Engine: "default"}
}
func mustSubmit(t *testing.T, q *Queue, owner string) View {
	t.Helper()
	v, err := q.Submit(owner, "net", spec("a red kite"))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestQueueSubmitPositionsAndLimit(t *testing.T) {
	q := &Queue{}
	a1 := mustSubmit(t, q, "session:a")
	b1 := mustSubmit(t, q, "session:b")
	a2 := mustSubmit(t, q, "session:a")
	a3 := mustSubmit(t, q, "session:a")
	for i, v := range []View{a1, b1, a2, a3} {
		if v.Status != Queued || v.Position != i+1 || v.ReportURL != "/studio/report?job="+v.JobID || !strings.HasPrefix(v.JobID, "job_") {
			t.Errorf("job %d = %+v", i, v)
		}
		if v.Note != NoWorkerNote || v.URL != "" || v.Notice != "" || v.Paused {
			t.Errorf("job %d without a worker = %+v", i, v)
		}
	}
	if _, err := q.Submit("session:a", "net", spec("x")); !errors.Is(err, ErrJobLimit) {
		t.Errorf("4th job of a token: %v", err)
	}
	if err := q.Room("session:a", "net"); !errors.Is(err, ErrJobLimit) {
		t.Errorf("Room: %v", err)
	}
	if err := q.Room("session:b", "net"); err != nil {
		t.Errorf("Room b: %v", err)
	}
	if a1.JobID == a2.JobID {
		t.Error("repeated job id")
	}
	if _, ok := q.Get("job_unknown"); ok {
		t.Error("unknown id found")
	}
}

func TestQueueStateMachine(t *testing.T) {
	live := 0
	var mu sync.Mutex
	working := true
	q := &Queue{Live: func() int { mu.Lock(); defer mu.Unlock(); return live }, Worker: func() bool { return working }}
	setLive := func(n int) { mu.Lock(); live = n; mu.Unlock() }
	j1 := mustSubmit(t, q, "o1")
	j2 := mustSubmit(t, q, "o2")
	if v, _ := q.Get(j1.JobID); v.Note != "" {
		t.Errorf("note with a worker: %+v", v)
	}

	setLive(1)
	if v, _ := q.Get(j1.JobID); !v.Paused {
		t.Error("a queued job is paused while a live session is open")
	}
	if j := q.Start(); j != nil {
		t.Fatalf("a job started during a live session: %+v", j)
	}
	setLive(0)
	started := q.Start()
	if started == nil || started.ID != j1.JobID || started.Status != Running {
		t.Fatalf("Start = %+v", started)
	}
	if j := q.Start(); j != nil {
		t.Fatalf("a second job started while one runs: %+v", j)
	}
	v, _ := q.Get(j1.JobID)
	if v.Status != Running || v.Position != 0 || v.Paused {
		t.Errorf("running = %+v", v)
	}
	if v, _ := q.Get(j2.JobID); v.Position != 1 {
		t.Errorf("next in line = %+v", v)
	}
	setLive(2)
	if v, _ := q.Get(j1.JobID); !v.Paused {
		t.Error("a running render is paused during a live session")
	}
	setLive(0)
	if err := q.Fail(j2.JobID, "x"); !errors.Is(err, ErrTransition) {
		t.Errorf("queued → failed: %v", err)
	}
	if err := q.Finish("job_nope", "/studio/media/a.png", ""); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("unknown: %v", err)
	}
	if err := q.Finish(j1.JobID, "/studio/media/a.png", ""); err != nil {
		t.Fatal(err)
	}
	setLive(1)
	v, _ = q.Get(j1.JobID)
	if v.Status != Done || v.URL != "/studio/media/a.png" || v.Notice != DoneNotice || v.Paused || v.Note != "" {
		t.Errorf("done = %+v", v)
	}
	if err := q.Finish(j1.JobID, "/x", ""); !errors.Is(err, ErrTransition) {
		t.Errorf("done → done: %v", err)
	}
	setLive(0)
	if s := q.Start(); s == nil || s.ID != j2.JobID {
		t.Fatalf("second Start = %+v", s)
	}
	if err := q.Fail(j2.JobID, "the renderer ran out of memory"); err != nil {
		t.Fatal(err)
	}
	if v, _ := q.Get(j2.JobID); v.Status != Failed || v.Notice != "the renderer ran out of memory" || v.URL != "" {
		t.Errorf("failed = %+v", v)
	}
	if q.Start() != nil {
		t.Error("Start on an empty queue")
	}
	working = false
	if v, _ := q.Get(j2.JobID); v.Note != "" {
		t.Errorf("a finished job carries no note: %+v", v)
	}
}

func TestQueueRetentionAndCap(t *testing.T) {
	clk := newTClock()
	q := &Queue{Now: clk.now, Max: 2}
	j1 := mustSubmit(t, q, "a")
	clk.add(time.Hour)
	mustSubmit(t, q, "b")
	_, err := q.Submit("c", "net", spec("x"))
	var full *FullError
	if !errors.As(err, &full) || !errors.Is(err, ErrQueueFull) || full.RetryAfter != Retention-time.Hour {
		t.Fatalf("over the cap: %v %+v", err, full)
	}
	clk.add(Retention - time.Hour)
	if _, ok := q.Get(j1.JobID); ok {
		t.Error("a job past its retention is forgotten")
	}
	if err := q.Room("a", "net"); err != nil {
		t.Errorf("a forgotten job no longer counts: %v", err)
	}
	mustSubmit(t, q, "c")
}

// TestQueueNetworkLimit: one client network holds at most PerNetwork jobs,
// whatever tokens it uses; other networks are not held up.
func TestQueueNetworkLimit(t *testing.T) {
	q := &Queue{PerNetwork: 2}
	for _, owner := range []string{"session:a", "session:b"} {
		if _, err := q.Submit(owner, "10.0.0.1", spec("a red kite")); err != nil {
			t.Fatal(err)
		}
	}
	var nl *NetLimitError
	if _, err := q.Submit("session:c", "10.0.0.1", spec("a red kite")); !errors.Is(err, ErrNetLimit) || !errors.As(err, &nl) || nl.Held != 2 || nl.RetryAfter <= 0 || nl.RetryAfter > Retention {
		t.Errorf("third job from one network: %v", err)
	}
	if err := q.Room("session:c", "10.0.0.1"); !errors.Is(err, ErrNetLimit) {
		t.Errorf("Room: %v", err)
	}
	if _, err := q.Submit("session:c", "10.0.0.2", spec("a red kite")); err != nil {
		t.Errorf("another network: %v", err)
	}
	if JobsPerNetwork >= MaxJobs/10 {
		t.Errorf("JobsPerNetwork %d lets ten networks fill the %d-job queue", JobsPerNetwork, MaxJobs)
	}
}
