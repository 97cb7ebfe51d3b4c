// Package worker runs the document reader's C engines, MuPDF and
// Tesseract, in a supervised child process, so that a fault in either
// ends one request and never the box.
//
// The child is boxd's own executable started again (a test binary, in
// tests) with BOXD_DOCREADER_WORKER in its environment: this package's
// init sees it and serves requests on two pipes instead of running the
// program, so every binary that links the document reader can be its
// own worker. The child sets its own data limit (Limits.Memory, as
// RLIMIT_DATA: the memory it can allocate, not the address space Go and
// glibc reserve without using) before it reads anything, and dies with
// its parent (PR_SET_PDEATHSIG).
//
// The parent sends one request at a time and waits for its answer under
// a deadline (Limits.Call). When the child dies (a SIGSEGV in Tesseract,
// an abort on a failed allocation) the call fails with *CrashError; when
// the deadline passes or the caller's context ends, the child is killed
// and the call fails with *TimeoutError or the context's error. The next
// call starts a fresh child. Documents opened in a child that has since
// died fail with *CrashError.
//
// Requests and answers are gob values on fds 3 (to the child) and 4
// (from it); the child's stdout and stderr are the parent's stderr, for
// what MuPDF and Tesseract print.
package worker

import (
	"bufio"
	"cmp"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"boxd/engine/mupdf"
	"boxd/engine/raster"
	"boxd/pipelines/docreader/ocr"
)

// EnvVar, set in a process's environment, makes it a worker; its value
// is the data limit in bytes (0: none).
const EnvVar = "BOXD_DOCREADER_WORKER"

// Limits bound one worker.
type Limits struct {
	// Memory is the child's data limit in bytes (RLIMIT_DATA; 0:
	// DefaultMemory). A page that needs more fails, alone.
	Memory int64
	// Call is the longest one engine call may take (0: DefaultCall):
	// drawing one page, or one OCR of a raster.
	Call time.Duration
}

// The default limits: 3 GiB holds the largest page the reader takes
// (40 megapixels, drawn again at twice the scale for tables: 160
// megapixels of RGB, 480 MB, plus MuPDF's own copy) with Tesseract's
// model; a minute is ten times the slowest legitimate page measured.
const (
	DefaultMemory = 3 << 30
	DefaultCall   = 60 * time.Second
)

// CrashError is a child that died during a call.
type CrashError struct {
	Op    string
	State string // how it ended: "signal: segmentation fault", "exit status 2"
}

func (e *CrashError) Error() string {
	return fmt.Sprintf("the document engine failed during %s and was restarted (%s)", e.Op, e.State)
}

// TimeoutError is a call that took longer than Limits.Call.
type TimeoutError struct {
	Op    string
	Limit time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s took longer than %s", e.Op, e.Limit)
}

// RemoteError is an error the child reported (MuPDF's or Tesseract's
// own message); Kind names the errors the parent maps back.
type RemoteError struct {
	Kind string // "password", "noocr", "toolarge" or ""
	Msg  string
}

func (e *RemoteError) Error() string { return e.Msg }

// Is makes errors.Is(err, mupdf.ErrPassword) hold for a password error.
func (e *RemoteError) Is(target error) bool {
	return e.Kind == "password" && target == mupdf.ErrPassword
}

// Worker is one supervised child process. Its methods are safe for
// concurrent use; calls run one at a time.
type Worker struct {
	Limits Limits
	Log    *slog.Logger
	// Exe is the executable started as the child ("": os.Executable()).
	Exe string

	mu       sync.Mutex
	p        *proc
	gen      int // incremented for each child started
	restarts int // children that died or were killed
}

type proc struct {
	cmd  *exec.Cmd
	enc  *gob.Encoder
	bw   *bufio.Writer
	dec  *gob.Decoder
	in   io.Closer // our end of the child's fd 3
	out  io.Closer // our end of the child's fd 4
	gen  int
	done chan struct{} // closed once the child has been waited for
	err  error         // the child's end, once done
}

// request is one call; op names it.
type request struct {
	Op        string // "ocr", "open", "page", "fields", "close", "versions"
	Img       *raster.Image
	Mode      ocr.Mode
	DPI       int
	Data      []byte
	Magic     string
	Doc       int
	N         int
	Scale     float64
	MaxPixels int64
}

type response struct {
	Err      *RemoteError
	Words    []ocr.Word
	Doc      int
	Pages    int
	Layer    *mupdf.TextLayer
	Img      *raster.Image
	Fields   []mupdf.Field
	Versions Versions
}

// Versions are the engines' versions as the child reports them.
type Versions struct {
	MuPDF     string
	Tesseract string // "": no OCR in the child
	OCRErr    string // why there is none
}

// Restarts is how many children have died or been killed.
func (w *Worker) Restarts() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.restarts
}

// Close stops the child.
func (w *Worker) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.p != nil {
		w.stop(w.p)
		w.p = nil
	}
}

func (w *Worker) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

// start starts a child (w.mu held).
func (w *Worker) start() (*proc, error) {
	exe := w.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("docreader worker: the executable: %w", err)
		}
	}
	toChild, childIn, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("docreader worker: pipe: %w", err)
	}
	childOut, fromChild, err := os.Pipe()
	if err != nil {
		toChild.Close()
		childIn.Close()
		return nil, fmt.Errorf("docreader worker: pipe: %w", err)
	}
	// toChild is the child's fd 3 (it reads requests); fromChild its fd 4.
	cmd := exec.Command(exe)
	// GOTRACEBACK=single: a child that dies prints the failing
	// goroutine, not all of them, to the journal.
	cmd.Env = append(os.Environ(), EnvVar+"="+strconv.FormatInt(cmp.Or(w.Limits.Memory, DefaultMemory), 10), "GOTRACEBACK=single")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.ExtraFiles = []*os.File{toChild, fromChild}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{toChild, childIn, childOut, fromChild} {
			f.Close()
		}
		return nil, fmt.Errorf("docreader worker: start %s: %w", exe, err)
	}
	toChild.Close()
	fromChild.Close()
	w.gen++
	bw := bufio.NewWriterSize(childIn, 1<<20)
	p := &proc{cmd: cmd, enc: gob.NewEncoder(bw), bw: bw, dec: gob.NewDecoder(bufio.NewReaderSize(childOut, 1<<20)),
		in: childIn, out: childOut, gen: w.gen, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	w.log().Info("docreader worker started", "pid", cmd.Process.Pid, "generation", p.gen)
	return p, nil
}

// stop kills a child and waits for it (w.mu held).
func (w *Worker) stop(p *proc) {
	_ = p.cmd.Process.Kill()
	p.in.Close()
	<-p.done
	p.out.Close()
}

// state describes how a child ended.
func (p *proc) state() string {
	<-p.done
	if p.err == nil {
		return "it exited"
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by " + ws.Signal().String()
		}
	}
	return p.err.Error()
}

// call sends one request and waits for its answer. gen, when not 0, is
// the generation the request's document lives in.
func (w *Worker) call(ctx context.Context, op string, req request, gen int) (*response, int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if gen != 0 && (w.p == nil || w.p.gen != gen) {
		return nil, 0, &CrashError{Op: op, State: "the document was open in an engine that has since stopped"}
	}
	if w.p == nil {
		p, err := w.start()
		if err != nil {
			return nil, 0, err
		}
		w.p = p
	}
	p := w.p
	limit := cmp.Or(w.Limits.Call, DefaultCall)
	type result struct {
		resp *response
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		var resp response
		err := p.enc.Encode(&req)
		if err == nil {
			err = p.bw.Flush()
		}
		if err == nil {
			err = p.dec.Decode(&resp)
		}
		ch <- result{&resp, err}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-ch:
		if r.err != nil {
			// The pipe broke: the child died. Wait for it and say how.
			_ = p.cmd.Process.Kill()
			state := p.state()
			w.p = nil
			w.restarts++
			p.in.Close()
			p.out.Close()
			w.log().Warn("docreader worker died", "op", op, "state", state, "generation", p.gen)
			return nil, 0, &CrashError{Op: op, State: state}
		}
		if r.resp.Err != nil {
			return nil, p.gen, r.resp.Err
		}
		return r.resp, p.gen, nil
	case <-timer.C:
		w.kill(p, op, "deadline")
		<-ch
		return nil, 0, &TimeoutError{Op: op, Limit: limit}
	case <-ctx.Done():
		w.kill(p, op, "caller left")
		<-ch
		return nil, 0, ctx.Err()
	}
}

// kill ends a child in the middle of a call (w.mu held).
func (w *Worker) kill(p *proc, op, why string) {
	w.stop(p)
	w.p = nil
	w.restarts++
	w.log().Warn("docreader worker killed", "op", op, "why", why, "generation", p.gen)
}

// Versions starts the child if needed and reports its engines.
func (w *Worker) Versions(ctx context.Context) (Versions, error) {
	resp, _, err := w.call(ctx, "versions", request{Op: "versions"}, 0)
	if err != nil {
		return Versions{}, err
	}
	return resp.Versions, nil
}

// OCR is Tesseract in the worker, as an ocr.Engine.
type OCR struct {
	W       *Worker
	version string
}

// NewOCR checks that the worker's Tesseract starts and returns it as
// an engine.
func (w *Worker) NewOCR(ctx context.Context) (*ocr.OCR, error) {
	v, err := w.Versions(ctx)
	if err != nil {
		return nil, err
	}
	if v.Tesseract == "" {
		return nil, errors.New(v.OCRErr)
	}
	return ocr.With(&OCR{W: w, version: v.Tesseract}), nil
}

// Recognize OCRs one raster in the worker.
func (o *OCR) Recognize(ctx context.Context, img *raster.Image, mode ocr.Mode, dpi int) ([]ocr.Word, error) {
	resp, _, err := o.W.call(ctx, "OCR", request{Op: "ocr", Img: img, Mode: mode, DPI: dpi}, 0)
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) && re.Kind == "toolarge" {
			return nil, &ocr.TooLargeError{W: img.W, H: img.H}
		}
		return nil, err
	}
	return resp.Words, nil
}

// Version is Tesseract's version.
func (o *OCR) Version() string { return o.version }

// Close does nothing: the worker outlives its engines.
func (o *OCR) Close() {}

// Doc is a document open in the worker.
type Doc struct {
	w     *Worker
	id    int
	gen   int
	pages int
}

// Open opens a document in the worker; magic names its type for MuPDF.
func (w *Worker) Open(ctx context.Context, data []byte, magic string) (*Doc, error) {
	resp, gen, err := w.call(ctx, "opening the document", request{Op: "open", Data: data, Magic: magic}, 0)
	if err != nil {
		return nil, err
	}
	return &Doc{w: w, id: resp.Doc, gen: gen, pages: resp.Pages}, nil
}

// Pages is the document's page count.
func (d *Doc) Pages() int { return d.pages }

// Page reads page n (0-based) at scale: its text layer and, within
// maxPixels, its raster (mupdf.Doc.Page).
func (d *Doc) Page(ctx context.Context, n int, scale float64, maxPixels int64) (*mupdf.TextLayer, *raster.Image, error) {
	resp, _, err := d.w.call(ctx, fmt.Sprintf("drawing page %d", n+1), request{Op: "page", Doc: d.id, N: n, Scale: scale, MaxPixels: maxPixels}, d.gen)
	if err != nil {
		return nil, nil, err
	}
	return resp.Layer, resp.Img, nil
}

// Fields lists page n's form widgets at scale.
func (d *Doc) Fields(ctx context.Context, n int, scale float64) ([]mupdf.Field, error) {
	resp, _, err := d.w.call(ctx, fmt.Sprintf("reading page %d's form fields", n+1), request{Op: "fields", Doc: d.id, N: n, Scale: scale}, d.gen)
	if err != nil {
		return nil, err
	}
	return resp.Fields, nil
}

// Close closes the document in the worker (nothing, when the worker that
// held it has stopped).
func (d *Doc) Close() {
	_, _, _ = d.w.call(context.Background(), "closing the document", request{Op: "close", Doc: d.id}, d.gen)
}
