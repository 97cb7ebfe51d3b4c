package docreader

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"boxd/engine/mupdf"
	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/docreader/ocr"
	"boxd/pipelines/docreader/reread"
	"boxd/pipelines/docreader/samples"
	"boxd/pipelines/docreader/worker"

	"boxd/engine/attest"
	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/llmcall"
)

// ReadRequest is POST /docreader/read's body. file_b64 arrives as an
// upload: File is the temporary file it was decoded into ("" when absent).
type ReadRequest struct {
	File      string          `json:"-"`
	Synthetic *bool           `json:"synthetic"`
	Sample    string          `json:"sample"`
	Forms     bool            `json:"forms"`
	Schema    json.RawMessage `json:"schema"`
	Stream    bool            `json:"stream"`
	Charts    bool            `json:"charts"`
	// Reread applies the re-read rule (regions read under 0.90 mean
	// confidence are read again by the vision model); nil: when the box's
	// model sees images. true without such a model is 503.
	Reread *bool `json:"reread"`
	// ForRoute is set when another route reads a document its caller
	// sent under that route's own terms (the form filler's sources): the
	// reader's synthetic confirmation is the docreader route's, not
	// asked again.
	ForRoute string `json:"-"`
}

func (r *ReadRequest) hasSchema() bool { return len(r.Schema) > 0 && string(r.Schema) != "null" }

// SyntheticClaim names the caller's own data the body carries (file_b64;
// none for a sample, or for a file another route read under its own
// terms) and its synthetic flag, for the operator's rule
// (limits.require_synthetic, applied at admission).
func (r *ReadRequest) SyntheticClaim() (string, *bool) {
	if r.File == "" || r.ForRoute != "" {
		return "", nil
	}
	return "file_b64", r.Synthetic
}

// confirmedSynthetic is what the receipt records: a sample is synthetic;
// a file is when its caller said so.
func (r *ReadRequest) confirmedSynthetic() bool {
	return r.File == "" || (r.Synthetic != nil && *r.Synthetic)
}

// Streaming reports the body's stream flag (read by admission).
func (r *ReadRequest) Streaming() bool { return r.Stream }

// Validate checks what can be checked before the file is read.
func (r *ReadRequest) Validate() error {
	hasFile := r.File != ""
	switch {
	case hasFile && r.Sample != "":
		return problem.New(problem.Invalid, "send file_b64 or sample, not both")
	case !hasFile && r.Sample == "":
		return problem.New(problem.Invalid, "send file_b64 (a base64 PDF, PNG, JPEG, WebP or TIFF file) or sample (one of %s)", strings.Join(SampleIDs, ", "))
	case r.Sample != "" && !slices.Contains(SampleIDs, r.Sample):
		return problem.New(problem.NotFound, "no sample %q; the samples are %s", r.Sample, strings.Join(SampleIDs, ", "))
	case r.hasSchema():
		return validSchema(r.Schema)
	}
	return nil
}

// Service reads documents one at a time (MuPDF and Tesseract hold one
// page's rasters; several at once would multiply the memory) and signs
// what it read.
type Service struct {
	Key *attest.Key
	Log *slog.Logger
	// Chat maps fields to a caller's schema (nil or not ready: a request
	// with a schema is 503).
	Chat *llmcall.Model
	// MaxPages per call (0: MaxPages).
	MaxPages int
	// Engines runs MuPDF and Tesseract in a supervised child process
	// (nil: one with the default limits, started on first use).
	Engines *worker.Worker

	gate     chan struct{}
	once     sync.Once
	ocrMu    sync.Mutex
	ocr      *ocr.OCR
	ocrErr   error
	ocrTried time.Time
	ocrRetry time.Duration // 0: ocrRetryAfter
}

// ocrRetryAfter is how long a failed Tesseract start is remembered before
// the next request tries again (an operator installing tesseract-ocr-eng
// on a running box should not need a restart).
const ocrRetryAfter = 30 * time.Second

func (s *Service) init() {
	s.once.Do(func() {
		s.gate = make(chan struct{}, 1)
		if s.Log == nil {
			s.Log = slog.New(slog.DiscardHandler)
		}
		if s.Engines == nil {
			s.Engines = &worker.Worker{Log: s.Log}
		}
	})
}

// tesseract starts Tesseract on first use; a start that failed is tried
// again once ocrRetryAfter has passed.
func (s *Service) tesseract() (*ocr.OCR, error) {
	s.init()
	s.ocrMu.Lock()
	defer s.ocrMu.Unlock()
	if s.ocr != nil {
		return s.ocr, nil
	}
	retry := cmp.Or(s.ocrRetry, ocrRetryAfter)
	if s.ocrErr != nil && time.Since(s.ocrTried) < retry {
		return nil, s.ocrErr
	}
	s.ocrTried = time.Now()
	s.ocr, s.ocrErr = newOCR(s)
	return s.ocr, s.ocrErr
}

// newOCR starts Tesseract in the service's worker (a variable: tests
// make it fail).
var newOCR = func(s *Service) (*ocr.OCR, error) {
	return s.Engines.NewOCR(context.Background())
}

// Close stops Tesseract and the engines' worker.
func (s *Service) Close() {
	s.ocrMu.Lock()
	defer s.ocrMu.Unlock()
	if s.ocr != nil {
		s.ocr.Close()
		s.ocr = nil
	}
	if s.Engines != nil {
		s.Engines.Close()
	}
}

func (s *Service) revisions() Revisions {
	r := Revisions{Parser: "mupdf-" + mupdf.Version, Layout: LayoutRevision, OCR: "none"}
	if o, err := s.tesseract(); err == nil {
		r.OCR = "tesseract-" + o.Version() + " eng"
	}
	return r
}

// Serve is POST /docreader/read's run: Read, then done with the document
// (the run's last event).
func (s *Service) Serve(ctx context.Context, env run.Env, req ReadRequest) (*Document, error) {
	out, err := s.Read(ctx, env, req)
	if err != nil {
		return nil, err
	}
	env.Events.End(run.TypeDone, out)
	return out, nil
}

// Read reads the request's file (a decoded upload) or sample, and signs
// the result. env.Events (nil: none), when set, receives a page event as
// each page is read and the model calls' receipt events; env.Budget is
// the caller's (nil: no model calls, so nothing is re-read and no chart
// read by the model; a schema mapping spends it). Read sends no done: a
// pipeline reading a document for its own run (hcc, fill) goes on after.
func (s *Service) Read(ctx context.Context, env run.Env, req ReadRequest) (*Document, error) {
	s.init()
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var data []byte
	var err error
	if req.File != "" {
		data, err = os.ReadFile(req.File)
		if err != nil {
			return nil, fmt.Errorf("docreader: the upload: %w", err)
		}
	} else if data, err = Sample(req.Sample); err != nil {
		return nil, fmt.Errorf("docreader: sample %s: %w", req.Sample, err)
	}
	if len(data) == 0 {
		return nil, problem.New(problem.Invalid, "file_b64 is empty: send the file's bytes in base64")
	}
	if len(data) > MaxFileBytes {
		return nil, problem.New(problem.TooLarge, "file_b64 decodes to %d bytes; at most %d (12 MB) are read per call", len(data), MaxFileBytes)
	}
	if req.hasSchema() && !s.Chat.Ready() {
		return nil, problem.New(problem.Unavailable, "schema: mapping fields to a schema needs the chat model, and this box has none loaded (the operator sets models.llm); leave schema out to read the fields alone")
	}
	sees := s.Chat.Sees()
	if req.Reread != nil && *req.Reread && !sees {
		return nil, problem.New(problem.Unavailable, "reread: re-reading low-confidence regions needs a chat model that sees images, and this box has none (the operator sets models.llm.projector); leave reread out or false")
	}
	release, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	ocr, ocrErr := s.tesseract()
	if ocrErr != nil {
		s.Log.Warn("docreader: no OCR", "err", ocrErr)
	}
	maxPages := s.MaxPages
	if maxPages <= 0 {
		maxPages = MaxPages
	}
	start := time.Now()
	if req.Charts && ocr == nil {
		return nil, problem.Wrap(problem.Unavailable, ocrErr, "charts: the chart reader needs OCR for the axes' labels, and this box has none (the operator should install tesseract-ocr-eng)")
	}
	rd := &reader{engines: s.Engines, ocr: ocr, forms: req.Forms || req.hasSchema(), wantChart: req.Charts, events: env.Events}
	rereadNote := ""
	switch {
	case req.Reread != nil && !*req.Reread:
		rereadNote = "reread: false; nothing was re-read"
	case !sees:
		rereadNote = "this box's chat model does not see images (models.llm.projector); nothing was re-read"
	case env.Budget == nil:
		rereadNote = "this reading may not make model calls; nothing was re-read"
	default:
		rd.rereader = &reread.Reader{Chat: s.Chat, Budget: env.Budget, Events: env.Events}
	}
	if req.Charts && sees && env.Budget != nil {
		rd.figures = &chart.Figures{Model: &chart.Model{Chat: s.Chat, Budget: env.Budget, Events: env.Events}}
	}
	info, pages, err := rd.readFile(ctx, data, maxPages)
	if err != nil {
		return nil, err
	}
	fields := rd.fields
	if fields == nil {
		fields = []Field{}
	}
	d := &Document{ID: ids.New("doc-", 12), File: info, Pages: pages, Fields: fields, Models: []ModelRef{}, Charts: rd.charts}
	var calls []ModelCallRef
	d.Reread = rereadSummary(rd.rereader, pages, rereadNote)
	if rd.rereader != nil && len(rd.rereader.Receipts()) > 0 {
		for _, id := range rd.rereader.Receipts() {
			calls = append(calls, ModelCallRef{ID: id, Kind: "reread"})
		}
		d.Models = append(d.Models, ModelRef{Role: "reread", Repo: s.Chat.ModelID, Revision: s.Chat.WeightsRoot})
	}
	if f := rd.figures; f != nil && (f.Summary().Read > 0 || f.Summary().Skipped > 0) {
		sum := f.Summary()
		d.ChartsByModel = &sum
		for _, id := range f.Receipts() {
			calls = append(calls, ModelCallRef{ID: id, Kind: "chart"})
		}
		if len(f.Receipts()) > 0 {
			d.Models = append(d.Models, ModelRef{Role: "chart", Repo: s.Chat.ModelID, Revision: s.Chat.WeightsRoot})
		}
	}
	if req.hasSchema() {
		run.ProgressOf(env.Events).Stage("schema")
		m, res, err := mapSchema(ctx, s.Chat, env.Budget, req.Schema, fields, env.Events)
		if res != nil && res.Receipt != nil {
			calls = append(calls, ModelCallRef{ID: res.Receipt.ID, Kind: "schema"})
		}
		if err != nil {
			return nil, err
		}
		d.Mapped = m
		d.Models = append(d.Models, ModelRef{Role: "schema", Repo: s.Chat.ModelID, Revision: s.Chat.WeightsRoot})
	}
	if err := sign(s.Key, d, s.revisions(), calls, req.confirmedSynthetic()); err != nil {
		return nil, fmt.Errorf("docreader: sign: %w", err)
	}
	n := 0
	for _, p := range pages {
		n += len(p.Elements)
	}
	s.Log.Info("docreader read", "document", d.ID, "file_sha256", info.SHA256, "type", info.Type, "pages", info.Pages, "elements", n,
		"receipt", d.Receipt.ID, "elapsed_ms", time.Since(start).Milliseconds())
	return d, nil
}

// VerifyRequest is POST /docreader/verify's body.
type VerifyRequest struct {
	Document json.RawMessage `json:"document"`
}

// VerifyResponse says whether every check holds, and each check.
type VerifyResponse struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// Verify checks a document POST /docreader/read returned.
func (s *Service) Verify(req VerifyRequest) (*VerifyResponse, error) {
	if len(req.Document) == 0 || string(req.Document) == "null" {
		return nil, problem.New(problem.Invalid, "document is missing: send the document POST /docreader/read returned")
	}
	d, err := DecodeDocument(req.Document)
	if err != nil {
		return nil, problem.Wrap(problem.Invalid, err, "document is not a document as POST /docreader/read returned it: %v", err)
	}
	var pub ed25519.PublicKey
	if s.Key != nil {
		pub = s.Key.PublicKey()
	}
	cs, err := Verify(d, pub)
	if err != nil {
		return nil, problem.Wrap(problem.Invalid, err, "document.receipt is not a %s receipt: %v", ReceiptFormat, err)
	}
	ok := true
	for _, c := range cs {
		ok = ok && c.OK
	}
	return &VerifyResponse{OK: ok, Checks: cs}, nil
}

// Info is GET /docreader/info.
type Info struct {
	Parser    InfoPart       `json:"parser"`
	OCR       InfoPart       `json:"ocr"`
	Layout    string         `json:"layout"`
	Receipt   string         `json:"receipt"`
	Models    []ModelRef     `json:"models"`
	Samples   []string       `json:"samples"`
	Types     []string       `json:"types"`
	Limits    map[string]int `json:"limits"`
	Raster    string         `json:"raster"`
	NotInThis []string       `json:"not_in_this_version"`
}

// InfoPart is one engine: whether it runs here and its version.
type InfoPart struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Reachable bool   `json:"reachable"`
	Detail    string `json:"detail,omitempty"`
}

// Info reports the engines, revisions and limits.
func (s *Service) Info() Info {
	s.init()
	maxPages := s.MaxPages
	if maxPages <= 0 {
		maxPages = MaxPages
	}
	in := Info{
		Parser:  InfoPart{Name: "mupdf", Version: mupdf.Version, Reachable: true},
		Layout:  LayoutRevision,
		Receipt: ReceiptFormat,
		Models:  []ModelRef{},
		Samples: SampleIDs,
		Types:   []string{TypePDF, TypePNG, TypeJPEG, TypeWebP, TypeTIFF},
		Limits:  map[string]int{"file_bytes": MaxFileBytes, "pages": maxPages, "page_pixels": MaxPagePixels, "page_side_pixels": ocr.MaxSide, "page_chars": MaxPageChars, "page_elements": MaxPageElements},
		Raster:  "PDF pages at 144 DPI (bbox pixels = PDF points × 2); images at their own pixels",
		NotInThis: []string{"charts drawn as vectors that touch the page's text (a drawing is found only where no element lies)",
			"horizontal and stacked bar charts"},
	}
	in.Limits["reread_below_bp"] = reread.BelowBP
	in.Limits["rereads_per_document"] = reread.MaxPerDocument
	in.Limits["model_figures_per_document"] = chart.MaxModelFigures
	if s.Chat.Ready() {
		in.Models = append(in.Models, ModelRef{Role: "schema", Repo: s.Chat.ModelID, Revision: s.Chat.WeightsRoot})
	} else {
		in.NotInThis = append(in.NotInThis, "schema mapping (no chat model is loaded)")
	}
	if s.Chat.Sees() {
		in.Models = append(in.Models, ModelRef{Role: "reread", Repo: s.Chat.ModelID, Revision: s.Chat.WeightsRoot})
	} else {
		in.NotInThis = append(in.NotInThis, "the re-read rule (the chat model does not see images: models.llm.projector)")
	}
	if o, err := s.tesseract(); err != nil {
		in.OCR = InfoPart{Name: "tesseract", Detail: err.Error()}
	} else {
		in.OCR = InfoPart{Name: "tesseract", Version: o.Version() + " eng", Reachable: true}
	}
	return in
}

// The samples (contract 3: born-digital and scanned-chart).
const (
	SampleBornDigital = samples.BornDigital
	SampleScanned     = samples.Scanned
)

// SampleIDs lists the samples.
var SampleIDs = samples.IDs

// Sample returns a sample PDF's bytes (nil for an unknown id).
func Sample(id string) ([]byte, error) { return samples.Get(id) }

// Checked reads a document sent back to the box and returns it when
// every check holds (its receipt's signature, this box as signer, its
// file, pages, elements and fields); the error names the first that
// fails.
func (s *Service) Checked(raw json.RawMessage) (*Document, error) {
	v, err := s.Verify(VerifyRequest{Document: raw})
	if err != nil {
		return nil, err
	}
	for _, c := range v.Checks {
		if !c.OK {
			return nil, fmt.Errorf("its %s check fails: %s", c.Name, c.Detail)
		}
	}
	var d Document
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// enter takes the reader's one slot (documents and charts are read one
// at a time: MuPDF and Tesseract hold a page's rasters), or says Busy.
func (s *Service) enter(ctx context.Context) (func(), error) {
	select {
	case s.gate <- struct{}{}:
		return func() { <-s.gate }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
		return nil, problem.New(problem.Busy, "the document reader reads one document or chart at a time and is reading another; retry after the time in Retry-After").Retry(2 * time.Second)
	}
}
