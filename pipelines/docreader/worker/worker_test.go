//go:build !boxd_noocr

package worker

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"boxd/engine/raster"
	"boxd/pipelines/docreader/ocr"
	"boxd/pipelines/docreader/samples"

	"github.com/otiai10/gosseract/v2"
)

// The test binary is its own worker: this op, registered (before any
// init function, the worker's included) in both the
// parent and the child, hands a raster to Tesseract with no guard, as
// the reader did before the worker (a side of 32,768 pixels or more
// crashed the process with SIGSEGV).
var _ = func() bool {
	extraOps["raw-tesseract"] = func(req *request) *response {
		c := gosseract.NewClient()
		defer c.Close()
		_ = c.SetLanguage("eng")
		if err := c.SetImageFromBytes(req.Img.PPM()); err != nil {
			return fail("", err)
		}
		if _, err := c.GetBoundingBoxesVerbose(); err != nil {
			return fail("", err)
		}
		return &response{}
	}
	return true
}()

func white(w, h int) *raster.Image {
	return &raster.Image{W: w, H: h, Pix: bytes.Repeat([]byte{0xff}, w*h*3)}
}

func newWorker(t *testing.T, lim Limits) *Worker {
	t.Helper()
	w := &Worker{Limits: lim}
	t.Cleanup(w.Close)
	if _, err := w.Versions(context.Background()); err != nil {
		t.Fatal(err)
	}
	return w
}

func lines(t *testing.T) *raster.Image {
	t.Helper()
	g, err := samples.RenderLines([]string{"First line of the note", "Second line here"}, 1000, 300, 34, 60)
	if err != nil {
		t.Fatal(err)
	}
	return raster.FromImage(g)
}

// TestWorkerReads: the worker reports both engines and reads a raster
// and a PDF's page as the engines in this process do.
func TestWorkerReads(t *testing.T) {
	w := newWorker(t, Limits{})
	v, _ := w.Versions(context.Background())
	if v.MuPDF == "" || v.Tesseract == "" {
		t.Fatalf("versions %+v", v)
	}
	o, err := w.NewOCR(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	img := lines(t)
	remote, err := o.Read(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	local, err := ocr.New()
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	here, err := local.Read(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	if len(remote) < 6 || len(remote) != len(here) || remote[0] != here[0] {
		t.Fatalf("worker read %d words, this process %d: %v vs %v", len(remote), len(here), remote, here)
	}
	pdf, err := samples.Get(samples.BornDigital)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := w.Open(context.Background(), pdf, "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Close()
	layer, pix, err := doc.Page(context.Background(), 0, 2, 40_000_000)
	if err != nil || pix == nil || len(layer.Chars) < 50 || len(pix.Pix) != pix.W*pix.H*3 {
		t.Fatalf("page: %v, %d chars", err, len(layer.Chars))
	}
	if _, err := w.Open(context.Background(), []byte("%PDF-1.4 not really"), "application/pdf"); err == nil {
		t.Error("a broken PDF opened")
	}
	if w.Restarts() != 0 {
		t.Errorf("%d restarts", w.Restarts())
	}
}

// TestCrashEndsOneCall: a raster 33,000 pixels tall crashes Tesseract
// itself (SIGSEGV): in the worker the call fails with a CrashError, this
// process lives on, a document opened before the crash says it is gone,
// and the next call gets a fresh worker. Through the reader's OCR the
// same raster never reaches Tesseract.
func TestCrashEndsOneCall(t *testing.T) {
	w := newWorker(t, Limits{})
	pdf, err := samples.Get(samples.BornDigital)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := w.Open(context.Background(), pdf, "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	tall := white(1200, 33000)
	_, _, err = w.call(context.Background(), "raw", request{Op: "raw-tesseract", Img: tall}, 0)
	var crash *CrashError
	if !errors.As(err, &crash) {
		t.Fatalf("raw Tesseract on a 33,000-pixel raster: %v; want a CrashError", err)
	}
	t.Logf("crash: %v", err)
	if w.Restarts() != 1 {
		t.Errorf("%d restarts, want 1", w.Restarts())
	}
	if _, _, err := doc.Page(context.Background(), 0, 2, 0); !errors.As(err, &crash) {
		t.Errorf("a page of a document from the dead worker: %v", err)
	}
	o, err := w.NewOCR(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Read(context.Background(), tall)
	var big *ocr.TooLargeError
	if !errors.As(err, &big) {
		t.Errorf("the guarded read: %v; want TooLargeError", err)
	}
	if ws, err := o.Read(context.Background(), lines(t)); err != nil || len(ws) < 6 {
		t.Errorf("after the crash: %v, %d words", err, len(ws))
	}
	if w.Restarts() != 1 {
		t.Errorf("%d restarts, want 1", w.Restarts())
	}
}

// TestCallDeadline: a call past Limits.Call kills the worker and fails
// with a TimeoutError; so does a caller that leaves (its context's
// error); the worker after either reads again.
func TestCallDeadline(t *testing.T) {
	w := newWorker(t, Limits{})
	o, err := w.NewOCR(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w.Limits.Call = 50 * time.Millisecond
	big := lines(t)
	// A page of four of the sample's rasters side by side, rotated:
	// far more than 50 ms of Tesseract.
	page := white(big.W*3, big.H*6)
	_, err = o.Read(context.Background(), page)
	var slow *TimeoutError
	if !errors.As(err, &slow) {
		t.Fatalf("a slow read: %v; want TimeoutError", err)
	}
	w.Limits.Call = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := o.Read(ctx, page); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a caller that left: %v", err)
	}
	if w.Restarts() != 2 {
		t.Errorf("%d restarts, want 2", w.Restarts())
	}
	if ws, err := o.Read(context.Background(), lines(t)); err != nil || len(ws) < 6 {
		t.Errorf("after: %v, %d words", err, len(ws))
	}
}

// TestMemoryLimit: the child's memory is bounded: a raster that
// needs more than the limit fails alone (an error or a crash of the
// worker), and the worker after it reads again.
func TestMemoryLimit(t *testing.T) {
	w := newWorker(t, Limits{Memory: 512 << 20})
	o, err := w.NewOCR(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 14,000 × 14,000 RGB is 588 MB: over the limit before Tesseract
	// starts (the child cannot hold the request).
	_, err = o.Read(context.Background(), white(14000, 14000))
	if err == nil {
		t.Fatal("a 588 MB raster was read under a 512 MiB limit")
	}
	t.Logf("over the limit: %v", err)
	if ws, err := o.Read(context.Background(), lines(t)); err != nil || len(ws) < 6 {
		t.Errorf("after: %v, %d words", err, len(ws))
	}
	if os.Getenv(EnvVar) != "" {
		t.Error("the parent runs as a worker")
	}
}
