package worker

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"boxd/engine/mupdf"
	"boxd/pipelines/docreader/ocr"
)

// A process started as a worker serves and exits before main (or a test
// binary's TestMain) runs: nothing else of the program starts in it.
func init() {
	v, ok := os.LookupEnv(EnvVar)
	if !ok {
		return
	}
	os.Exit(serveChild(v))
}

// serveChild is the child's life: limit its memory, then answer requests
// until the parent closes fd 3.
func serveChild(limit string) int {
	if n, err := strconv.ParseInt(limit, 10, 64); err == nil && n > 0 {
		lim := unix.Rlimit{Cur: uint64(n), Max: uint64(n)}
		if err := unix.Setrlimit(unix.RLIMIT_DATA, &lim); err != nil {
			fmt.Fprintf(os.Stderr, "docreader worker: RLIMIT_DATA: %v\n", err)
			return 2
		}
	}
	// Nothing but the protocol may reach fd 4: MuPDF and Tesseract print
	// to stdout and stderr, which are the parent's stderr.
	in, out := os.NewFile(3, "requests"), os.NewFile(4, "answers")
	if in == nil || out == nil {
		fmt.Fprintln(os.Stderr, "docreader worker: started without its pipes")
		return 2
	}
	c := &child{docs: map[int]*mupdf.Doc{}}
	defer c.close()
	dec := gob.NewDecoder(bufio.NewReaderSize(in, 1<<20))
	bw := bufio.NewWriterSize(out, 1<<20)
	enc := gob.NewEncoder(bw)
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintf(os.Stderr, "docreader worker: %v\n", err)
			return 2
		}
		resp := c.serve(&req)
		if err := enc.Encode(resp); err != nil {
			return 2
		}
		if err := bw.Flush(); err != nil {
			return 2
		}
	}
}

type child struct {
	docs   map[int]*mupdf.Doc
	next   int
	ocr    *ocr.Local
	ocrErr error
	tried  bool
}

func (c *child) close() {
	for _, d := range c.docs {
		d.Close()
	}
	if c.ocr != nil {
		c.ocr.Close()
	}
}

// tesseract starts Tesseract on first use.
func (c *child) tesseract() (*ocr.Local, error) {
	if !c.tried {
		c.tried = true
		c.ocr, c.ocrErr = ocr.NewLocal()
	}
	return c.ocr, c.ocrErr
}

func fail(kind string, err error) *response {
	return &response{Err: &RemoteError{Kind: kind, Msg: err.Error()}}
}

func (c *child) serve(req *request) *response {
	ctx := context.Background()
	switch req.Op {
	case "versions":
		v := Versions{MuPDF: mupdf.Version}
		if o, err := c.tesseract(); err != nil {
			v.OCRErr = err.Error()
		} else {
			v.Tesseract = o.Version()
		}
		return &response{Versions: v}
	case "ocr":
		o, err := c.tesseract()
		if err != nil {
			return fail("noocr", err)
		}
		if req.Img == nil {
			return fail("", errors.New("no raster"))
		}
		ws, err := o.Recognize(ctx, req.Img, req.Mode, req.DPI)
		var tl *ocr.TooLargeError
		if errors.As(err, &tl) {
			return fail("toolarge", err)
		}
		if err != nil {
			return fail("", err)
		}
		return &response{Words: ws}
	case "open":
		d, err := mupdf.Open(req.Data, req.Magic)
		if errors.Is(err, mupdf.ErrPassword) {
			return fail("password", err)
		}
		if err != nil {
			return fail("", err)
		}
		c.next++
		c.docs[c.next] = d
		return &response{Doc: c.next, Pages: d.Pages()}
	case "page":
		d := c.docs[req.Doc]
		if d == nil {
			return fail("", fmt.Errorf("no open document %d", req.Doc))
		}
		layer, img, err := d.Page(ctx, req.N, req.Scale, req.MaxPixels)
		if err != nil {
			return fail("", err)
		}
		return &response{Layer: layer, Img: img}
	case "fields":
		d := c.docs[req.Doc]
		if d == nil {
			return fail("", fmt.Errorf("no open document %d", req.Doc))
		}
		fs, err := d.Fields(req.N, req.Scale)
		if err != nil {
			return fail("", err)
		}
		return &response{Fields: fs}
	case "close":
		if d := c.docs[req.Doc]; d != nil {
			d.Close()
			delete(c.docs, req.Doc)
		}
		return &response{}
	}
	if op := extraOps[req.Op]; op != nil {
		return op(req)
	}
	return fail("", fmt.Errorf("unknown request %q", req.Op))
}

// extraOps are requests only tests add (in a test binary, which is its
// own worker): a raw engine call without the guards, to prove that a
// real crash ends the call and not the parent.
var extraOps = map[string]func(*request) *response{}
