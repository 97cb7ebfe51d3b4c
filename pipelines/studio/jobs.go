package studio

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"boxd/internal/ids"
	"boxd/internal/problem"
)

// Status is a job's state.
type Status string

// Job statuses. Transitions: queued → running (Start: the head of the
// queue, only when no job runs and no live session is open) → done
// (Finish) or failed (Fail). Nothing else moves a job.
const (
	Queued  Status = "queued"
	Running Status = "running"
	Done    Status = "done"
	Failed  Status = "failed"
)

// Queue defaults.
const (
	// Retention is how long a job is kept after it was submitted (or,
	// once finished, after it finished); then it is forgotten (404).
	Retention = 24 * time.Hour
	// MaxJobs bounds the jobs held in memory.
	MaxJobs = 1000
	// JobsPerNetwork bounds the jobs held for one client network (as
	// platform.Network groups addresses), so that one client holding many
	// demo sessions cannot fill the queue for everyone.
	JobsPerNetwork = 30
)

// NoWorkerNote is a job's note when no render worker runs.
const NoWorkerNote = "no render worker runs on this box (this version of boxd renders no music, images or video); the job was accepted and stays queued"

// DoneNotice is a finished job's notice when the worker gives none.
const DoneNotice = "AI-generated media, made on this box; show this notice wherever the file is shown"

// Job is one studio job.
type Job struct {
	ID       string
	Owner    string // the submitting token's log id (never the token)
	Network  string // the submitting client's network (platform.Network)
	Spec     Spec
	Status   Status
	Created  time.Time
	Finished time.Time
	URL      string // done
	Notice   string // done or failed
}

// View is the job object of the contract.
type View struct {
	JobID     string `json:"job_id"`
	Status    Status `json:"status"`
	Position  int    `json:"position"`
	URL       string `json:"url,omitempty"`
	Note      string `json:"note,omitempty"`
	Paused    bool   `json:"paused"`
	Notice    string `json:"notice,omitempty"`
	ReportURL string `json:"report_url"`
}

// Errors of the queue.
var (
	ErrJobLimit   = errors.New("studio: job limit of the token reached")
	ErrNetLimit   = errors.New("studio: job limit of the client network reached")
	ErrQueueFull  = errors.New("studio: queue full")
	ErrTransition = errors.New("studio: transition not allowed")
	ErrUnknownJob = errors.New("studio: unknown job")
)

// FullError says when the oldest held job will be forgotten.
type FullError struct{ RetryAfter time.Duration }

func (e *FullError) Error() string { return ErrQueueFull.Error() }

// Unwrap makes errors.Is(err, ErrQueueFull) true.
func (e *FullError) Unwrap() error { return ErrQueueFull }

// Queue holds the jobs in memory, in submission order. It is safe for
// concurrent use.
type Queue struct {
	// Live reports the live sessions open (nil: none). While one is open,
	// no job starts and a running job is reported paused.
	Live func() int
	// Worker reports whether a render worker runs (nil: none). Without
	// one, jobs carry NoWorkerNote.
	Worker func() bool
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// PerOwner is the jobs one owner may have held (0: JobsPerToken).
	PerOwner int
	// Max is the jobs held at most (0: MaxJobs).
	Max int
	// PerNetwork is the jobs one client network may have held (0:
	// JobsPerNetwork).
	PerNetwork int

	mu    sync.Mutex
	jobs  map[string]*Job
	order []*Job // every held job, oldest first
}

func (q *Queue) now() time.Time {
	if q.Now == nil {
		return time.Now()
	}
	return q.Now()
}

// Room reports whether owner, from network, may submit another job: nil,
// ErrJobLimit or ErrNetLimit (wrapped). Submit checks again.
func (q *Queue) Room(owner, network string) error {
	now := q.now()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sweepLocked(now)
	return q.roomLocked(now, owner, network)
}

func (q *Queue) roomLocked(now time.Time, owner, network string) error {
	per := q.PerOwner
	if per <= 0 {
		per = JobsPerToken
	}
	perNet := q.PerNetwork
	if perNet <= 0 {
		perNet = JobsPerNetwork
	}
	n, nn := 0, 0
	var first time.Time // when the network's first job that can expire does
	for _, j := range q.order {
		if j.Owner == owner {
			n++
		}
		if j.Network == network {
			nn++
			if j.Status != Running && (first.IsZero() || j.expires().Before(first)) {
				first = j.expires()
			}
		}
	}
	if n >= per {
		return problem.Wrap(problem.RateLimited, fmt.Errorf("%w: %d of %d", ErrJobLimit, n, per),
			"this studio token has submitted %d jobs, the limit per token; create a new studio session for more", per)
	}
	if nn >= perNet {
		nl := &NetLimitError{Held: nn, RetryAfter: first.Sub(now)}
		return problem.Wrap(problem.RateLimited, nl, "this network holds %d studio jobs, the limit per client network; retry after the time in Retry-After, when the oldest is forgotten (24 hours after it was submitted)", perNet).Retry(nl.RetryAfter)
	}
	return nil
}

// NetLimitError says how many jobs the network holds and when the first of
// them will be forgotten.
type NetLimitError struct {
	Held       int
	RetryAfter time.Duration
}

func (e *NetLimitError) Error() string {
	return fmt.Sprintf("%v: %d held", ErrNetLimit, e.Held)
}

// Unwrap makes errors.Is(err, ErrNetLimit) true.
func (e *NetLimitError) Unwrap() error { return ErrNetLimit }

// Submit queues a job for owner from network. Its refusals are
// *problem.Error wrapping ErrJobLimit when the owner already has PerOwner
// jobs held, a *NetLimitError (ErrNetLimit) when the network has
// PerNetwork, a *FullError when the queue holds Max jobs.
func (q *Queue) Submit(owner, network string, sp Spec) (View, error) {
	now := q.now()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sweepLocked(now)
	if err := q.roomLocked(now, owner, network); err != nil {
		return View{}, err
	}
	max := q.Max
	if max <= 0 {
		max = MaxJobs
	}
	if len(q.order) >= max {
		full := &FullError{RetryAfter: q.order[0].expires().Sub(now)}
		return View{}, problem.Wrap(problem.Busy, full, "the studio queue holds %d jobs, its limit; retry after the time in Retry-After", max).Retry(full.RetryAfter)
	}
	if q.jobs == nil {
		q.jobs = map[string]*Job{}
	}
	j := &Job{ID: newJobID(), Owner: owner, Network: network, Spec: sp, Status: Queued, Created: now}
	q.jobs[j.ID] = j
	q.order = append(q.order, j)
	return q.viewLocked(j), nil
}

func (j *Job) expires() time.Time {
	if !j.Finished.IsZero() {
		return j.Finished.Add(Retention)
	}
	return j.Created.Add(Retention)
}

// sweepLocked forgets jobs past their retention; a running job is kept.
func (q *Queue) sweepLocked(now time.Time) {
	kept := q.order[:0]
	for _, j := range q.order {
		if j.Status != Running && !now.Before(j.expires()) {
			delete(q.jobs, j.ID)
			continue
		}
		kept = append(kept, j)
	}
	clear(q.order[len(kept):])
	q.order = kept
}

// Get returns the job object of id.
func (q *Queue) Get(id string) (View, bool) {
	now := q.now()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sweepLocked(now)
	j, ok := q.jobs[id]
	if !ok {
		return View{}, false
	}
	return q.viewLocked(j), true
}

// Has reports whether a job id is held.
func (q *Queue) Has(id string) bool {
	_, ok := q.Get(id)
	return ok
}

func (q *Queue) live() bool { return q.Live != nil && q.Live() > 0 }

func (q *Queue) viewLocked(j *Job) View {
	v := View{JobID: j.ID, Status: j.Status, ReportURL: JobReportURL(j.ID)}
	switch j.Status {
	case Queued:
		v.Position = 1
		for _, o := range q.order {
			if o == j {
				break
			}
			if o.Status == Queued {
				v.Position++
			}
		}
		v.Paused = q.live()
	case Running:
		v.Paused = q.live()
	case Done:
		v.URL, v.Notice = j.URL, j.Notice
	case Failed:
		v.Notice = j.Notice
	}
	if (j.Status == Queued || j.Status == Running) && (q.Worker == nil || !q.Worker()) {
		v.Note = NoWorkerNote
	}
	return v
}

// JobReportURL is the report form of a job.
func JobReportURL(id string) string { return "/studio/report?job=" + id }

// Start moves the oldest queued job to running and returns a copy of it,
// for the render worker. It returns nil when nothing may start: the queue
// is empty, a job is running (one at a time), or a live session is open.
func (q *Queue) Start() *Job {
	if q.live() {
		return nil
	}
	now := q.now()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sweepLocked(now)
	var head *Job
	for _, j := range q.order {
		if j.Status == Running {
			return nil
		}
		if head == nil && j.Status == Queued {
			head = j
		}
	}
	if head == nil {
		return nil
	}
	head.Status = Running
	c := *head
	return &c
}

// Finish moves a running job to done with the URL of its file under
// /studio/media/ and its notice ("" for DoneNotice).
func (q *Queue) Finish(id, url, notice string) error {
	if notice == "" {
		notice = DoneNotice
	}
	return q.end(id, Done, url, notice)
}

// Fail moves a running job to failed; reason becomes its notice.
func (q *Queue) Fail(id, reason string) error { return q.end(id, Failed, "", reason) }

func (q *Queue) end(id string, to Status, url, notice string) error {
	now := q.now()
	q.mu.Lock()
	defer q.mu.Unlock()
	j, ok := q.jobs[id]
	if !ok {
		return fmt.Errorf("%w %s", ErrUnknownJob, id)
	}
	if j.Status != Running {
		return fmt.Errorf("%w: %s is %s, not running", ErrTransition, id, j.Status)
	}
	j.Status, j.URL, j.Notice, j.Finished = to, url, notice, now
	return nil
}

func newJobID() string { return ids.New("job_", 12) }
