package browser

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"

	"boxd/internal/problem"
)

// The browser's memory bound. --max-old-space-size bounds a page's
// JavaScript heap only: ArrayBuffers, canvases, images, WebAssembly
// memories and the DOM live outside it, and a pasted page that makes them
// grew the browser without bound. Each chromium is therefore started
// under RLIMIT_DATA (setrlimit(2) through util-linux's prlimit, which
// then runs chromium in its own process; every process chromium starts,
// the renderer included, inherits it). RLIMIT_DATA counts a process's
// private writable memory (heap, anonymous mappings: since Linux 4.7),
// not the address space it only reserves: chromium reserves terabytes
// (V8's pointer cage, PartitionAlloc's pools), so RLIMIT_AS, which counts
// those, would stop it from starting at any useful bound. Measured with
// Debian's chromium 14x: under a 512 MiB bound a page still runs;
// ArrayBuffers over it fail in the page (RangeError), canvases over it
// are not allocated, and a DOM that outgrows it ends the renderer, which
// the tab reports as a crash (ErrCrashed, 422 through problem).
//
// The bound is per process, not for the whole tree (a cgroup would be,
// and needs a delegated hierarchy the box may not have); the page drives
// one renderer (renderer-process-limit 1), and the unit's MemoryMax
// bounds the daemon and its children together.

// DefaultMemoryMB is each browser process's bound when Options.MemoryMB is
// 0: four times the JavaScript heap bound, room for the DOM, images and
// layout of any page an audit or a form fill meets.
const DefaultMemoryMB = 1024

// ErrNoPrlimit: the memory bound needs util-linux's prlimit (Debian's
// util-linux is essential, so it is there on every Debian system).
var ErrNoPrlimit = errors.New("browser: prlimit (util-linux) is not installed; it bounds the browser's memory (apt-get install util-linux), or set the pool's MemoryMB to -1")

// memoryLimit starts chromium under RLIMIT_DATA.
type memoryLimit struct {
	prlimit string
	bytes   int64
}

func newMemoryLimit(mb int) (*memoryLimit, error) {
	p, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoPrlimit, err)
	}
	return &memoryLimit{prlimit: p, bytes: int64(mb) << 20}, nil
}

// apply is the allocator's ModifyCmdFunc: chromedp's own (the browser is
// killed when the thread that started it ends) and, with a bound, the
// command run through prlimit with soft and hard RLIMIT_DATA set (the
// page cannot raise it). prlimit execs chromium: the process, and so
// every process chromedp watches and kills, is the same.
func (l *memoryLimit) apply(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = new(syscall.SysProcAttr)
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if l == nil {
		return
	}
	n := strconv.FormatInt(l.bytes, 10)
	args := append([]string{l.prlimit, "--data=" + n + ":" + n, "--", cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = l.prlimit, args
}

// crashError is what a tab whose page or browser died answers: the run
// fails with 422 (problem.Unprocessable: the page is more than this box's
// browser runs), holding ErrCrashed for errors.Is.
func (t *Tab) crashError(cause error) error {
	bound := "no memory bound"
	if t.memoryMB > 0 {
		bound = fmt.Sprintf("%d MiB per browser process, the box's bound", t.memoryMB)
	}
	if cause != nil {
		cause = errors.Join(ErrCrashed, cause)
	} else {
		cause = ErrCrashed
	}
	return problem.Wrap(problem.Unprocessable, cause, "the page crashed the browser: it needed more memory than the browser may use (%s) or hit a renderer fault; nothing of it was kept", bound)
}

func (t *Tab) isCrashed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.crashed
}

// Err returns err as the tab's crash when the page crashed or its browser
// process died (a problem.Unprocessable holding ErrCrashed), else err.
// Callers that run chromedp actions on Context themselves pass their
// errors through it; Do and LoadHTML do.
func (t *Tab) Err(err error) error {
	var exit *exec.ExitError
	switch {
	case t.isCrashed():
		return t.crashError(err)
	case err != nil && errors.As(err, &exit): // the browser process died
		return t.crashError(err)
	}
	return err
}
