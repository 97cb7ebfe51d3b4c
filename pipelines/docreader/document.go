// Package docreader reads PDFs and images into citable elements: text in
// reading order with each element's page and box, from the PDF's text
// layer where there is one and from Tesseract where there is not, under
// a signed receipt (service.docreader-receipt.v1) anyone can check
// (contract 3, sections 2 and 4).
package docreader

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"math"
	"sync"
	"unicode"

	"boxd/engine/mupdf"
	"boxd/pipelines/docreader/forms"
	"boxd/pipelines/docreader/layout"
	"boxd/pipelines/docreader/ocr"

	"boxd/engine/raster"
	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/docreader/reread"
	"boxd/pipelines/docreader/worker"

	"boxd/internal/problem"
	"boxd/internal/run"
)

// Scale is the raster scale of PDF pages: 144 DPI, two pixels a point.
const Scale = 2.0

// LayoutRevision names the layout rules (kinds, reading order:
// layout.Revision); receipts carry it.
const LayoutRevision = layout.Revision

// Limits (contract 3, section 8, hosted): the file and its pages.
const (
	MaxFileBytes = 12 << 20
	MaxPages     = 10
	// MaxPagePixels bounds a page's raster: a 12 MB PNG can decode to
	// gigabytes, and a PDF page can be 200 inches square.
	MaxPagePixels = 40_000_000
	// MaxPageChars bounds a page's text layer, and MaxPageElements the
	// elements a page is read into: the signed receipt holds a hash per
	// element and the answer every element's text, so a 12 MB PDF of a
	// million tiny text runs would otherwise sign a receipt of megabytes.
	// A dense page of 8-point type holds about 10,000 characters and a
	// few hundred elements.
	MaxPageChars    = 200_000
	MaxPageElements = 5_000
)

// File types the reader takes.
const (
	TypePDF  = "application/pdf"
	TypePNG  = "image/png"
	TypeJPEG = "image/jpeg"
	TypeWebP = "image/webp"
	TypeTIFF = "image/tiff"
)

// sniff names a file's type from its first bytes ("" when it is none the
// reader takes).
func sniff(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("%PDF-")):
		return TypePDF
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return TypePNG
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return TypeJPEG
	case len(b) >= 12 && bytes.Equal(b[:4], []byte("RIFF")) && bytes.Equal(b[8:12], []byte("WEBP")):
		return TypeWebP
	case bytes.HasPrefix(b, []byte("II*\x00")) || bytes.HasPrefix(b, []byte("MM\x00*")):
		return TypeTIFF
	}
	// A PDF may start with a little junk before its header (the format
	// allows 1,024 bytes).
	if i := bytes.Index(b[:min(len(b), 1024)], []byte("%PDF-")); i >= 0 {
		return TypePDF
	}
	return ""
}

// reader reads one file: its pages as rasters, text layers and, where
// there is no text layer, OCR.
type reader struct {
	engines   *worker.Worker // MuPDF in a supervised child process
	ocr       *ocr.OCR       // nil: no OCR (pages without a text layer are refused)
	maxPixels int64          // a page raster's most pixels (0: MaxPagePixels)
	// forms: read form fields into fields (AcroForm widgets and printed
	// "Label: value" lines).
	forms  bool
	fields []Field
	// charts: read charts on figures (and scanned pages) into charts.
	charts    []DocChart
	wantChart bool
	// figures, when set, reads figures whose axes do not calibrate with
	// the model (charts: true, hybrid).
	figures *chart.Figures
	// events, when set, receives a page event as each page is read.
	events interface{ Emit(typ string, body any) }
	// rereader, when set, re-reads regions read from pixels with low
	// confidence (the re-read rule).
	rereader *reread.Reader
	// scan is the page last read by OCR: its upright raster and words
	// (check boxes are found in them).
	scan *ocr.Page
}

// PageEvent is the page event of a streamed read: a page as it is read.
type PageEvent struct {
	Page        int     `json:"page"`
	Source      string  `json:"source"`
	Rotation    int     `json:"rotation"`
	Deskew      float64 `json:"deskew"`
	Width       int     `json:"width"`
	Height      int     `json:"height"`
	PixelSHA256 string  `json:"pixel_sha256"`
	Elements    int     `json:"elements"`
	Tables      int     `json:"tables"`
}

// pageRead emits a page's event.
func (rd *reader) pageRead(p *Page) {
	if rd.events == nil {
		return
	}
	ev := PageEvent{Page: p.Page, Source: p.Source, Rotation: p.Rotation, Deskew: p.Deskew, Width: p.Width, Height: p.Height, PixelSHA256: p.PixelSHA256, Elements: len(p.Elements)}
	for _, e := range p.Elements {
		if e.Kind == KindTable {
			ev.Tables++
		}
	}
	rd.events.Emit("page", ev)
}

// readFile reads data into pages. The errors are problems: 415 for a
// type the reader does not take, 413 over the page or pixel limits, 400
// for a file that does not open, 503 when a page needs OCR and there is
// none.
func (rd *reader) readFile(ctx context.Context, data []byte, maxPages int) (FileInfo, []Page, error) {
	sum := sha256.Sum256(data)
	info := FileInfo{SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data)), Type: sniff(data)}
	switch info.Type {
	case "":
		return info, nil, problem.New(problem.Unsupported, "file_b64 is not a PDF, PNG, JPEG, WebP or TIFF file (its first bytes say none of these)")
	case TypePDF:
		return rd.readPDF(ctx, data, info, maxPages)
	default:
		return rd.readImage(ctx, data, info)
	}
}

func (rd *reader) readPDF(ctx context.Context, data []byte, info FileInfo, maxPages int) (FileInfo, []Page, error) {
	eng := rd.engines
	if eng == nil {
		eng = sharedEngines()
	}
	doc, err := eng.Open(ctx, data, "application/pdf")
	if errors.Is(err, mupdf.ErrPassword) {
		return info, nil, problem.New(problem.Invalid, "file_b64 is a PDF encrypted with a password: send it without the password protection")
	}
	if err := engineProblem(0, err); err != nil {
		return info, nil, err
	}
	if err != nil {
		return info, nil, problem.Wrap(problem.Invalid, err, "file_b64 is not a PDF that opens: %v", err)
	}
	defer doc.Close()
	info.Pages = doc.Pages()
	if info.Pages == 0 {
		return info, nil, problem.New(problem.Invalid, "file_b64 is a PDF with no pages")
	}
	if info.Pages > maxPages {
		return info, nil, problem.New(problem.TooLarge, "the PDF has %d pages; at most %d pages are read per call: split it, or, on a self-hosted box, the operator raises docreader.max_pages (now %d)", info.Pages, maxPages, maxPages)
	}
	pages := make([]Page, 0, info.Pages)
	prog := run.ProgressOf(rd.events)
	prog.Stage("pages")
	for n := range info.Pages {
		if err := ctx.Err(); err != nil {
			return info, nil, err
		}
		prog.Units("pages", n, info.Pages)
		layer, img, err := doc.Page(ctx, n, Scale, rd.pixelLimit())
		if err := engineProblem(n+1, err); err != nil {
			return info, nil, err
		}
		if err != nil {
			return info, nil, problem.Wrap(problem.Invalid, err, "page %d does not read: %v", n+1, err)
		}
		if img == nil { // the raster is drawn only within the limit
			return info, nil, problem.New(problem.TooLarge, "page %d is %.0f × %.0f points, %d × %d pixels at 144 DPI; at most %d pixels a page are read", n+1,
				float64(layer.W)/Scale, float64(layer.H)/Scale, layer.W, layer.H, rd.pixelLimit())
		}
		if len(layer.Chars) > MaxPageChars {
			return info, nil, problem.New(problem.TooLarge, "page %d's text layer holds %d characters; at most %d a page are read: split the page", n+1, len(layer.Chars), MaxPageChars)
		}
		if img.W > ocr.MaxSide || img.H > ocr.MaxSide {
			return info, nil, problem.New(problem.TooLarge, "page %d is %d × %d pixels at 144 DPI; at most %d pixels a side are read: split the page", n+1, img.W, img.H, ocr.MaxSide)
		}
		p := Page{Page: n + 1, Width: img.W, Height: img.H, PixelSHA256: img.PixelHash()}
		// The page's form widgets: its fields (forms), and its reading
		// order, which keeps a widget's label and value together whether
		// or not fields are asked for (a form that does not read is an
		// error only when they are).
		ws, err := doc.Fields(ctx, n, Scale)
		if err := engineProblem(n+1, err); err != nil {
			return info, nil, err
		}
		if err != nil && rd.forms {
			return info, nil, problem.Wrap(problem.Invalid, err, "page %d's form fields do not read: %v", n+1, err)
		}
		if usableLayer(layer) {
			p.Source = PageTextLayer
			// Tables and unmapped glyphs are OCRed at 288 DPI, from the
			// page drawn again (once, when first needed).
			var hi *raster.Image
			hiRes := func() (*raster.Image, error) {
				if hi != nil {
					return hi, nil
				}
				_, h, err := doc.Page(ctx, n, Scale*ocr.RegionScale, rd.pixelLimit()*ocr.RegionScale*ocr.RegionScale)
				if perr := engineProblem(n+1, err); perr != nil {
					return nil, perr
				} else if err != nil {
					return nil, problem.Wrap(problem.Invalid, err, "page %d does not read: %v", n+1, err)
				}
				hi = h
				return hi, nil
			}
			rs := layout.FromLayer(layer)
			if _, err := layout.ReadUnmapped(ctx, rd.pixelReader(), img, hiRes, Scale*72, rs); err != nil {
				return info, nil, pageError(p.Page, err)
			}
			rs, trs := layout.FindTables(img, rs, SourceParser)
			rs = layout.SplitAtWidgets(rs, forms.OrderWidgets(ws, img.W, img.H))
			if len(trs) > 0 && rd.ocr != nil {
				if _, err := hiRes(); err != nil {
					return info, nil, err
				}
			}
			if err := layout.CheckTables(ctx, rd.pixelReader(), img, hi, Scale*72, trs); err != nil {
				return info, nil, pageError(p.Page, err)
			}
			p.Elements = layout.Elements(p.Page, rs, trs, img.W, img.H)
			if err := rd.reread(ctx, &p, img); err != nil {
				return info, nil, err
			}
		} else if err := rd.ocrPage(ctx, &p, img); err != nil {
			return info, nil, err
		}
		if rd.wantChart && p.Source == PageTextLayer {
			if err := rd.pageCharts(ctx, &p, img); err != nil {
				return info, nil, err
			}
		}
		if rd.forms {
			if p.Rotation != 0 {
				ws = nil // widgets sit on the page as drawn, not on the turned scan
			}
			rd.fields = append(rd.fields, forms.AcroForm(&p, ws)...)
			rd.fields = append(rd.fields, rd.scannedFields(ctx, &p, forms.Layout(&p, ws))...)
		}
		if err := elementBound(&p); err != nil {
			return info, nil, err
		}
		rd.pageRead(&p)
		prog.Units("pages", n+1, info.Pages)
		pages = append(pages, p)
	}
	forms.Number(rd.fields)
	return info, pages, nil
}

// pixelReader is the OCR the layout stage reads pixels with: nil (not
// a nil *ocr.OCR) when there is none.
func (rd *reader) pixelReader() layout.OCR {
	if rd.ocr == nil {
		return nil
	}
	return rd.ocr
}

func (rd *reader) pixelLimit() int64 {
	if rd.maxPixels > 0 {
		return rd.maxPixels
	}
	return MaxPagePixels
}

// usableLayer says whether a page's text layer holds text to read: at
// least one word of two letters or digits. A scan with no text layer, or
// one holding only stray marks, is OCRed instead.
func usableLayer(t *mupdf.TextLayer) bool {
	run := 0
	for _, c := range t.Chars {
		if unicode.IsLetter(c.R) || unicode.IsDigit(c.R) {
			run++
			if run >= 2 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func (rd *reader) readImage(ctx context.Context, data []byte, info FileInfo) (FileInfo, []Page, error) {
	if info.Type == TypeTIFF {
		if n := tiffPages(data); n > 1 {
			return info, nil, problem.New(problem.Unsupported, "file_b64 is a TIFF of %d pages, and only one-page TIFFs are read (the rest would be lost): send the pages as a PDF", n)
		}
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return info, nil, problem.Wrap(problem.Invalid, err, "file_b64 is not a %s image that decodes: %v", info.Type, err)
	}
	limit := rd.pixelLimit()
	if px := int64(cfg.Width) * int64(cfg.Height); px > limit {
		return info, nil, problem.New(problem.TooLarge, "the image is %d × %d pixels; at most %d pixels are read: scale it down", cfg.Width, cfg.Height, limit)
	}
	if cfg.Width > ocr.MaxSide || cfg.Height > ocr.MaxSide {
		return info, nil, problem.New(problem.TooLarge, "the image is %d × %d pixels; at most %d pixels a side are read: cut it into pages", cfg.Width, cfg.Height, ocr.MaxSide)
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return info, nil, problem.Wrap(problem.Invalid, err, "file_b64 is not a %s image that decodes: %v", info.Type, err)
	}
	img := raster.FromImage(src)
	info.Pages = 1
	prog := run.ProgressOf(rd.events)
	prog.Stage("pages")
	prog.Units("pages", 0, 1)
	p := Page{Page: 1, Width: img.W, Height: img.H, PixelSHA256: img.PixelHash()}
	if err := rd.ocrPage(ctx, &p, img); err != nil {
		return info, nil, err
	}
	if rd.forms {
		rd.fields = rd.scannedFields(ctx, &p, forms.Layout(&p, nil))
		forms.Number(rd.fields)
	}
	if err := elementBound(&p); err != nil {
		return info, nil, err
	}
	rd.pageRead(&p)
	prog.Units("pages", 1, 1)
	return info, []Page{p}, nil
}

// ocrPage reads a page without a text layer with Tesseract, turned
// upright.
func (rd *reader) ocrPage(ctx context.Context, p *Page, img *raster.Image) error {
	p.Source = PageOCR
	if rd.ocr == nil {
		return problem.New(problem.Unavailable, "page %d has no text layer and this box has no OCR (the operator should install tesseract-ocr-eng)", p.Page)
	}
	op, err := rd.ocr.ReadUpright(ctx, img)
	if err != nil {
		return pageError(p.Page, err)
	}
	// A scan fed in at a slant: straightened and read again, so that its
	// rules run along the rows the table finder walks.
	if skew := op.Upright.Skew(); math.Abs(skew) >= raster.MinSkew {
		straight := op.Upright.Turn(-skew)
		words, err := rd.ocr.Read(ctx, straight)
		if err != nil {
			return pageError(p.Page, err)
		}
		op.Upright, op.Words, p.Deskew = straight, words, -skew
	}
	rd.scan = op
	p.Rotation = op.Rotation
	p.Width, p.Height = op.Upright.W, op.Upright.H
	rs, trs := layout.FindTables(op.Upright, layout.FromOCR(op.Words), SourceOCR)
	p.Elements = layout.Elements(p.Page, rs, trs, op.Upright.W, op.Upright.H)
	if err := rd.reread(ctx, p, op.Upright); err != nil {
		return err
	}
	if rd.wantChart {
		return rd.pageCharts(ctx, p, op.Upright)
	}
	return nil
}

// tiffPages counts a TIFF's images (its chain of IFDs; at most 1,000
// followed). The decoder reads only the first.
func tiffPages(b []byte) int {
	if len(b) < 8 {
		return 0
	}
	var u16 func([]byte) uint16
	var u32 func([]byte) uint32
	if b[0] == 'I' {
		u16, u32 = binary.LittleEndian.Uint16, binary.LittleEndian.Uint32
	} else {
		u16, u32 = binary.BigEndian.Uint16, binary.BigEndian.Uint32
	}
	n := 0
	seen := map[uint32]bool{}
	for off := u32(b[4:8]); off != 0 && n < 1000 && !seen[off]; n++ {
		seen[off] = true
		if int64(off)+2 > int64(len(b)) {
			break
		}
		entries := int64(u16(b[off : off+2]))
		next := int64(off) + 2 + 12*entries
		if next+4 > int64(len(b)) {
			n++
			break
		}
		off = u32(b[next : next+4])
	}
	return n
}

// rereadable says whether an element's text is a reading the re-read rule
// covers: read from pixels (OCR, or a text-layer element with words read
// from pixels), a region of text, under the threshold.
// A table's own text is its cells', which are re-read one by one.
func rereadable(e *Element) bool {
	return (e.Source == SourceOCR || e.Source == SourceParserOCR) && e.Kind != KindTable && e.Kind != KindFigure && reread.Due(e.Text, e.ConfBP)
}

// reread applies the re-read rule to a page read from img.
func (rd *reader) reread(ctx context.Context, p *Page, img *raster.Image) error {
	if rd.rereader == nil {
		return nil
	}
	var targets []reread.Target
	for _, e := range p.Elements {
		if rereadable(&e) {
			targets = append(targets, reread.Target{ID: e.ID, BBox: e.BBox, Text: e.Text, ConfBP: e.ConfBP})
		}
	}
	if len(targets) == 0 {
		return nil
	}
	got, err := rd.rereader.Page(ctx, img, targets)
	if err != nil {
		return err
	}
	for i := range p.Elements {
		if r, ok := got[p.Elements[i].ID]; ok {
			p.Elements[i].Reread = &r
		}
	}
	return nil
}

// rereadSummary says what the re-read rule did; without a rereader it
// counts the elements it would have re-read and says why it did not.
func rereadSummary(r *reread.Reader, pages []Page, note string) *reread.Summary {
	if r != nil {
		s := r.Summary()
		return &s
	}
	s := reread.Summary{BelowBP: reread.BelowBP, Note: note}
	for _, p := range pages {
		for _, e := range p.Elements {
			if rereadable(&e) {
				s.Candidates++
				s.Skipped++
			}
		}
	}
	return &s
}

// elementBound refuses a page read into more than MaxPageElements
// elements (413).
func elementBound(p *Page) error {
	if len(p.Elements) > MaxPageElements {
		return problem.New(problem.TooLarge, "page %d reads as %d elements; at most %d a page are returned: split the page", p.Page, len(p.Elements), MaxPageElements)
	}
	return nil
}

// sharedEngines serves readers built without a worker of their own.
var sharedEngines = sync.OnceValue(func() *worker.Worker { return &worker.Worker{} })

// engineProblem maps the engines' failures on page (0: the file) to the
// contract's statuses: a raster over OCR's side limit is 413; an engine
// that crashed or ran past its time on this file is 422 (the box is
// unharmed: the engine ran in its own process, and the next request gets
// a fresh one). Other errors, and nil, are returned as they are, except
// a stopped MuPDF, which is its context's error.
func engineProblem(page int, err error) error {
	if err == nil {
		return nil
	}
	where := "the file"
	if page > 0 {
		where = fmt.Sprintf("page %d", page)
	}
	var crash *worker.CrashError
	var slow *worker.TimeoutError
	var big *ocr.TooLargeError
	switch {
	case errors.As(err, &crash):
		return problem.Wrap(problem.Unprocessable, err, "%s could not be read: %v. The box is unharmed; the file may be damaged or built to break readers: check it, or send the page alone", where, err)
	case errors.As(err, &slow):
		return problem.Wrap(problem.Unprocessable, err, "%s could not be read in time: %v (the reader's limit for one page): simplify or split it", where, err)
	case errors.As(err, &big):
		return problem.Wrap(problem.TooLarge, err, "%s: %v: scale it down or split it", where, err)
	case errors.Is(err, mupdf.ErrStopped), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return nil
}

// pageError is an error on page: a problem when the engines failed,
// else the error with the page named.
func pageError(page int, err error) error {
	if p := engineProblem(page, err); p != nil {
		return p
	}
	return fmt.Errorf("page %d: %w", page, err)
}
