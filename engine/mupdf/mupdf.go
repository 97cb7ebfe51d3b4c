// Package mupdf reads PDFs through MuPDF (cgo): each page's text layer
// with every character's box, its raster, and its form widgets.
package mupdf

// MuPDF through cgo: the static library github.com/gen2brain/go-fitz
// bundles (linked by its import below), its headers copied by make headers
// into the cgo include directory. go-fitz's own API gives a page's text as
// a string or HTML lines; the reader needs every character's box, so it
// walks MuPDF's structured text itself.

/*
#cgo CFLAGS: -O2
#include <mupdf/fitz.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

typedef struct {
	fz_context *ctx;
	fz_buffer *buf;
	fz_stream *stm;
	fz_document *doc;
	int pages;
	int needs_password;
	char err[256];
} bx_doc;

typedef struct {
	int block, line, c;
	float x0, y0, x1, y1, size;
	int t3; // drawn by a Type3 font (glyphs as procedures: its codes may name no letters)
} bx_char;

typedef struct {
	int type;
	float x0, y0, x1, y1;
} bx_block;

typedef struct {
	bx_char *chars;
	int nchars, capchars;
	bx_block *blocks;
	int nblocks, capblocks;
	int w, h;
	char err[256];
} bx_text;

static void bx_quiet(void *user, const char *message) { (void)user; (void)message; }

static void bx_msg(char *dst, fz_context *ctx) {
	snprintf(dst, 256, "%s", fz_caught_message(ctx));
}

static bx_doc *bx_open(const unsigned char *data, size_t n, const char *magic) {
	bx_doc *d = calloc(1, sizeof *d);
	if (!d) return NULL;
	d->ctx = fz_new_context(NULL, NULL, 32 << 20);
	if (!d->ctx) {
		snprintf(d->err, sizeof d->err, "MuPDF could not start (out of memory)");
		return d;
	}
	fz_context *ctx = d->ctx;
	// Warnings about repaired files go nowhere: errors come back as values.
	fz_set_warning_callback(ctx, bx_quiet, NULL);
	fz_set_error_callback(ctx, bx_quiet, NULL);
	// No ICC colour management: building its transforms cost more than
	// reading a page, and the reader needs text and a faithful-enough
	// raster, not calibrated colour.
	fz_disable_icc(ctx);
	fz_try(ctx) {
		fz_register_document_handlers(ctx);
		d->buf = fz_new_buffer_from_copied_data(ctx, data, n);
		d->stm = fz_open_buffer(ctx, d->buf);
		d->doc = fz_open_document_with_stream(ctx, magic, d->stm);
		d->needs_password = fz_needs_password(ctx, d->doc);
		if (!d->needs_password)
			d->pages = fz_count_pages(ctx, d->doc);
	}
	fz_catch(ctx) {
		bx_msg(d->err, ctx);
		if (d->doc) { fz_drop_document(ctx, d->doc); d->doc = NULL; }
	}
	return d;
}

// bx_abort tells MuPDF, working on another thread, to stop.
static void bx_abort(fz_cookie *c) { c->abort = 1; }

static void bx_close(bx_doc *d) {
	if (!d) return;
	if (d->ctx) {
		fz_drop_document(d->ctx, d->doc);
		fz_drop_stream(d->ctx, d->stm);
		fz_drop_buffer(d->ctx, d->buf);
		fz_drop_context(d->ctx);
	}
	free(d);
}

static int bx_push_char(bx_text *t, bx_char c) {
	if (t->nchars == t->capchars) {
		int cap = t->capchars ? 2 * t->capchars : 1024;
		bx_char *p = realloc(t->chars, cap * sizeof *p);
		if (!p) return 0;
		t->chars = p; t->capchars = cap;
	}
	t->chars[t->nchars++] = c;
	return 1;
}

static int bx_push_block(bx_text *t, bx_block b) {
	if (t->nblocks == t->capblocks) {
		int cap = t->capblocks ? 2 * t->capblocks : 64;
		bx_block *p = realloc(t->blocks, cap * sizeof *p);
		if (!p) return 0;
		t->blocks = p; t->capblocks = cap;
	}
	t->blocks[t->nblocks++] = b;
	return 1;
}

// bx_page reads page pn once into a display list, fills t with its blocks
// and characters in raster pixels at scale (2: 144 DPI), relative to the
// raster's top left, and, when the raster holds at most max_pixels,
// renders it from the same list as 8-bit RGB rows into *pix (the caller
// frees it; NULL when over the limit).
//
// cookie, when set, lets another thread stop the work: with cookie->abort
// set, MuPDF stops interpreting and drawing, and bx_page fails.
static int bx_page(bx_doc *d, int pn, float scale, long long max_pixels, bx_text *t, unsigned char **pix, fz_cookie *cookie) {
	fz_context *ctx = d->ctx;
	fz_page *page = NULL;
	fz_display_list *list = NULL;
	fz_stext_page *text = NULL;
	fz_device *dev = NULL;
	fz_pixmap *pm = NULL;
	unsigned char *out = NULL;
	int ok = 1;
	*pix = NULL;
	fz_var(page); fz_var(list); fz_var(text); fz_var(dev); fz_var(pm); fz_var(out);
	fz_try(ctx) {
		page = fz_load_page(ctx, d->doc, pn);
		fz_matrix ctm = fz_scale(scale, scale);
		fz_rect bounds = fz_transform_rect(fz_bound_page(ctx, page), ctm);
		fz_irect ib = fz_round_rect(bounds);
		t->w = ib.x1 - ib.x0;
		t->h = ib.y1 - ib.y0;
		list = fz_new_display_list(ctx, fz_bound_page(ctx, page));
		dev = fz_new_list_device(ctx, list);
		fz_run_page(ctx, page, dev, fz_identity, cookie);
		fz_close_device(ctx, dev);
		fz_drop_device(ctx, dev);
		dev = NULL;
		if (cookie && cookie->abort) fz_throw(ctx, FZ_ERROR_GENERIC, "stopped: the request's time ran out");
		fz_stext_options opts;
		memset(&opts, 0, sizeof opts);
		opts.flags = FZ_STEXT_PRESERVE_IMAGES | FZ_STEXT_MEDIABOX_CLIP;
		text = fz_new_stext_page(ctx, bounds);
		dev = fz_new_stext_device(ctx, text, &opts);
		fz_run_display_list(ctx, list, dev, ctm, fz_infinite_rect, cookie);
		fz_close_device(ctx, dev);
		if (cookie && cookie->abort) fz_throw(ctx, FZ_ERROR_GENERIC, "stopped: the request's time ran out");
		float ox = ib.x0, oy = ib.y0;
		int bi = 0;
		for (fz_stext_block *b = text->first_block; b; b = b->next, bi++) {
			bx_block bb = { b->type, b->bbox.x0 - ox, b->bbox.y0 - oy, b->bbox.x1 - ox, b->bbox.y1 - oy };
			if (!bx_push_block(t, bb)) fz_throw(ctx, FZ_ERROR_GENERIC, "out of memory");
			if (b->type != FZ_STEXT_BLOCK_TEXT) continue;
			int li = 0;
			for (fz_stext_line *l = b->u.t.first_line; l; l = l->next, li++) {
				for (fz_stext_char *ch = l->first_char; ch; ch = ch->next) {
					fz_rect r = fz_rect_from_quad(ch->quad);
					bx_char c = { bi, li, ch->c, r.x0 - ox, r.y0 - oy, r.x1 - ox, r.y1 - oy, ch->size, // size: already in device space
						ch->font && fz_font_t3_procs(ctx, ch->font) != NULL };
					if (!bx_push_char(t, c)) fz_throw(ctx, FZ_ERROR_GENERIC, "out of memory");
				}
			}
		}
		if ((long long)t->w * t->h <= max_pixels) {
			pm = fz_new_pixmap_with_bbox(ctx, fz_device_rgb(ctx), ib, NULL, 0);
			fz_clear_pixmap_with_value(ctx, pm, 255);
			fz_drop_device(ctx, dev);
			dev = NULL;
			dev = fz_new_draw_device(ctx, fz_identity, pm);
			fz_run_display_list(ctx, list, dev, ctm, fz_infinite_rect, cookie);
			fz_close_device(ctx, dev);
			if (cookie && cookie->abort) fz_throw(ctx, FZ_ERROR_GENERIC, "stopped: the request's time ran out");
			int pw = fz_pixmap_width(ctx, pm), ph = fz_pixmap_height(ctx, pm), n = fz_pixmap_components(ctx, pm);
			ptrdiff_t stride = fz_pixmap_stride(ctx, pm);
			unsigned char *s = fz_pixmap_samples(ctx, pm);
			if (pw != t->w || ph != t->h) fz_throw(ctx, FZ_ERROR_GENERIC, "raster %dx%d, page bounds %dx%d", pw, ph, t->w, t->h);
			out = malloc((size_t)pw * ph * 3);
			if (!out) fz_throw(ctx, FZ_ERROR_GENERIC, "out of memory");
			for (int y = 0; y < ph; y++) {
				unsigned char *row = s + y * stride;
				unsigned char *dst = out + (size_t)y * pw * 3;
				if (n == 3) {
					memcpy(dst, row, (size_t)pw * 3);
				} else {
					for (int x = 0; x < pw; x++) {
						dst[3*x] = row[n*x]; dst[3*x+1] = row[n*x+1]; dst[3*x+2] = row[n*x+2];
					}
				}
			}
			*pix = out;
		}
	}
	fz_always(ctx) {
		fz_drop_pixmap(ctx, pm);
		fz_drop_device(ctx, dev);
		fz_drop_stext_page(ctx, text);
		fz_drop_display_list(ctx, list);
		fz_drop_page(ctx, page);
	}
	fz_catch(ctx) {
		bx_msg(t->err, ctx);
		free(out);
		*pix = NULL;
		ok = 0;
	}
	return ok;
}

static void bx_text_free(bx_text *t) {
	free(t->chars);
	free(t->blocks);
}

static const char *bx_version(void) { return FZ_VERSION; }

// MuPDF's PDF layer: the headers go-fitz ships are fitz's alone, so the
// few form functions used are declared here, as MuPDF 1.24 defines them
// (include/mupdf/pdf/form.h, annot.h, page.h, document.h).
typedef struct pdf_document pdf_document;
typedef struct pdf_page pdf_page;
typedef struct pdf_annot pdf_annot;
typedef struct pdf_obj pdf_obj;
pdf_document *pdf_specifics(fz_context *ctx, fz_document *doc);
pdf_page *pdf_load_page(fz_context *ctx, pdf_document *doc, int number);
void pdf_drop_page(fz_context *ctx, pdf_page *page);
pdf_annot *pdf_first_widget(fz_context *ctx, pdf_page *page);
pdf_annot *pdf_next_widget(fz_context *ctx, pdf_annot *previous);
int pdf_widget_type(fz_context *ctx, pdf_annot *widget); // enum pdf_widget_type
fz_rect pdf_bound_widget(fz_context *ctx, pdf_annot *widget);
pdf_obj *pdf_annot_obj(fz_context *ctx, pdf_annot *annot);
char *pdf_load_field_name(fz_context *ctx, pdf_obj *field);
const char *pdf_field_value(fz_context *ctx, pdf_obj *field);
int pdf_field_flags(fz_context *ctx, pdf_obj *field);
const char *pdf_field_label(fz_context *ctx, pdf_obj *field);

typedef struct {
	int type, flags;
	float x0, y0, x1, y1;
	char *name, *label, *value; // malloc'd copies
} bx_field;

typedef struct {
	bx_field *f;
	int n, cap;
	char err[256];
} bx_fields;

static char *bx_strdup(const char *s) {
	if (!s) s = "";
	size_t n = strlen(s);
	char *p = malloc(n + 1);
	if (p) memcpy(p, s, n + 1);
	return p;
}

// bx_page_fields lists page pn's form widgets (an AcroForm's fields as
// they sit on the page): type, flags, box in raster pixels at scale,
// fully qualified name, alternate name (the label a reader is shown) and
// value. A page of a document that is not a PDF has none.
static int bx_page_fields(bx_doc *d, int pn, float scale, bx_fields *out) {
	fz_context *ctx = d->ctx;
	pdf_document *pdf = pdf_specifics(ctx, d->doc);
	if (!pdf) return 1;
	fz_page *fpage = NULL;
	char *name = NULL;
	int ok = 1;
	fz_var(fpage); fz_var(name);
	fz_try(ctx) {
		fpage = fz_load_page(ctx, d->doc, pn);
		fz_rect pb = fz_transform_rect(fz_bound_page(ctx, fpage), fz_scale(scale, scale));
		fz_irect ib = fz_round_rect(pb);
		// A PDF document's fz_page is its pdf_page.
		for (pdf_annot *w = pdf_first_widget(ctx, (pdf_page *)fpage); w; w = pdf_next_widget(ctx, w)) {
			pdf_obj *obj = pdf_annot_obj(ctx, w);
			fz_rect r = fz_transform_rect(pdf_bound_widget(ctx, w), fz_scale(scale, scale));
			if (out->n == out->cap) {
				int cap = out->cap ? 2 * out->cap : 16;
				bx_field *p = realloc(out->f, cap * sizeof *p);
				if (!p) fz_throw(ctx, FZ_ERROR_GENERIC, "out of memory");
				out->f = p; out->cap = cap;
			}
			name = pdf_load_field_name(ctx, obj);
			bx_field f = { pdf_widget_type(ctx, w), pdf_field_flags(ctx, obj),
				r.x0 - ib.x0, r.y0 - ib.y0, r.x1 - ib.x0, r.y1 - ib.y0,
				bx_strdup(name), bx_strdup(pdf_field_label(ctx, obj)), bx_strdup(pdf_field_value(ctx, obj)) };
			fz_free(ctx, name);
			name = NULL;
			out->f[out->n++] = f;
		}
	}
	fz_always(ctx) {
		fz_drop_page(ctx, fpage);
	}
	fz_catch(ctx) {
		fz_free(ctx, name);
		bx_msg(out->err, ctx);
		ok = 0;
	}
	return ok;
}

static void bx_fields_free(bx_fields *fs) {
	for (int i = 0; i < fs->n; i++) {
		free(fs->f[i].name); free(fs->f[i].label); free(fs->f[i].value);
	}
	free(fs->f);
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"boxd/engine/raster"

	_ "github.com/gen2brain/go-fitz" // links MuPDF (static) for the code above
)

// Version is the MuPDF release linked in.
var Version = C.GoString(C.bx_version())

// Doc is an open document in MuPDF. Its methods are not safe for
// concurrent use (one MuPDF context).
type Doc struct {
	mu sync.Mutex
	d  *C.bx_doc
}

var ErrPassword = errors.New("the PDF is encrypted with a password")

// Open opens a document from memory; magic names its type for MuPDF
// (a MIME type or an extension).
func Open(data []byte, magic string) (*Doc, error) {
	if len(data) == 0 {
		return nil, errors.New("empty file")
	}
	cm := C.CString(magic)
	defer C.free(unsafe.Pointer(cm))
	d := C.bx_open((*C.uchar)(unsafe.Pointer(&data[0])), C.size_t(len(data)), cm)
	if d == nil {
		return nil, errors.New("MuPDF: out of memory")
	}
	if d.doc == nil {
		msg := C.GoString(&d.err[0])
		C.bx_close(d)
		return nil, fmt.Errorf("MuPDF cannot open it: %s", msg)
	}
	if d.needs_password != 0 {
		C.bx_close(d)
		return nil, ErrPassword
	}
	return &Doc{d: d}, nil
}

func (p *Doc) Pages() int { return int(p.d.pages) }

func (p *Doc) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.d != nil {
		C.bx_close(p.d)
		p.d = nil
	}
}

// Char is one character of a page's text layer, in raster pixels.
type Char struct {
	Block, Line int
	R           rune
	Box         raster.Box
	Size        float64 // font size in pixels
	// Type3: drawn by a Type3 font, whose glyphs are drawing procedures:
	// its character codes and glyph names may stand for no letters at all
	// (the reader checks such words against the pixels).
	Type3 bool
}

// Block is one of MuPDF's blocks: text (a paragraph, roughly) or an
// image.
type Block struct {
	Image bool
	Box   raster.Box
}

// TextLayer is a page's text layer.
type TextLayer struct {
	W, H   int
	Chars  []Char
	Blocks []Block
}

// ErrStopped is a page read stopped because its context ended.
var ErrStopped = errors.New("MuPDF: stopped")

// Page reads page n (0-based) at scale: its text layer and, when it
// holds at most maxPixels, its raster (nil when over). When ctx ends
// MuPDF is told to stop (its cookie's abort flag), and the read fails
// with ErrStopped and ctx's error: a page built to take minutes to draw
// does not hold the reader past the request.
func (p *Doc) Page(ctx context.Context, n int, scale float64, maxPixels int64) (*TextLayer, *raster.Image, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var t C.bx_text
	defer C.bx_text_free(&t)
	var px *C.uchar
	cookie := (*C.fz_cookie)(C.calloc(1, C.size_t(unsafe.Sizeof(C.fz_cookie{}))))
	if cookie == nil {
		return nil, nil, errors.New("MuPDF: out of memory")
	}
	defer C.free(unsafe.Pointer(cookie))
	if ctx.Err() != nil {
		cookie.abort = 1
	}
	// The abort runs on its own goroutine; once the read is over the
	// cookie is no longer live and is freed (a late abort does nothing).
	var mu sync.Mutex
	live := true
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if live {
			C.bx_abort(cookie)
		}
	})
	ok := C.bx_page(p.d, C.int(n), C.float(scale), C.longlong(maxPixels), &t, &px, cookie)
	stop()
	mu.Lock()
	live = false
	mu.Unlock()
	if ok == 0 {
		if err := ctx.Err(); err != nil {
			if px != nil {
				C.free(unsafe.Pointer(px))
			}
			return nil, nil, fmt.Errorf("%w on page %d: %w", ErrStopped, n+1, err)
		}
		return nil, nil, fmt.Errorf("MuPDF: page %d: %s", n+1, C.GoString(&t.err[0]))
	}
	out := &TextLayer{W: int(t.w), H: int(t.h)}
	if t.nchars > 0 {
		for _, c := range unsafe.Slice(t.chars, int(t.nchars)) {
			out.Chars = append(out.Chars, Char{Block: int(c.block), Line: int(c.line), R: rune(c.c),
				Box: raster.Box{X0: float64(c.x0), Y0: float64(c.y0), X1: float64(c.x1), Y1: float64(c.y1)}, Size: float64(c.size), Type3: c.t3 != 0})
		}
	}
	if t.nblocks > 0 {
		for _, b := range unsafe.Slice(t.blocks, int(t.nblocks)) {
			out.Blocks = append(out.Blocks, Block{Image: b._type == C.FZ_STEXT_BLOCK_IMAGE,
				Box: raster.Box{X0: float64(b.x0), Y0: float64(b.y0), X1: float64(b.x1), Y1: float64(b.y1)}})
		}
	}
	if px == nil {
		return out, nil, nil
	}
	defer C.free(unsafe.Pointer(px))
	img := &raster.Image{W: out.W, H: out.H, Pix: C.GoBytes(unsafe.Pointer(px), C.int(out.W*out.H*3))}
	return out, img, nil
}

// Text reads page n's text layer alone.
func (p *Doc) Text(ctx context.Context, n int, scale float64) (*TextLayer, error) {
	t, _, err := p.Page(ctx, n, scale, 0)
	return t, err
}

// Widget types (MuPDF's enum pdf_widget_type).
var widgetTypes = map[int]string{1: "button", 2: "checkbox", 3: "choice", 4: "choice", 5: "radio", 6: "signature", 7: "text"}

// Field flags (MuPDF's PDF_FIELD_IS_*, the PDF's /Ff bits).
const (
	FieldReadOnly = 1
	FieldRequired = 1 << 1
	FieldPassword = 1 << 13
)

// Field is one form widget of a page.
type Field struct {
	Type        string // text, checkbox, radio, choice, signature, button or unknown
	Flags       int    // the PDF's /Ff bits (FieldReadOnly, FieldRequired, FieldPassword)
	Box         raster.Box
	Name, Label string // the fully qualified name; the label a reader is shown (/TU, else the name)
	Value       string
}

// Fields lists page n's form widgets at scale.
func (p *Doc) Fields(n int, scale float64) ([]Field, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var fs C.bx_fields
	defer C.bx_fields_free(&fs)
	if C.bx_page_fields(p.d, C.int(n), C.float(scale), &fs) == 0 {
		return nil, fmt.Errorf("MuPDF: page %d form fields: %s", n+1, C.GoString(&fs.err[0]))
	}
	if fs.n == 0 {
		return nil, nil
	}
	out := make([]Field, 0, int(fs.n))
	for _, f := range unsafe.Slice(fs.f, int(fs.n)) {
		typ := widgetTypes[int(f._type)]
		if typ == "" {
			typ = "unknown"
		}
		out = append(out, Field{Type: typ, Flags: int(f.flags),
			Box:  raster.Box{X0: float64(f.x0), Y0: float64(f.y0), X1: float64(f.x1), Y1: float64(f.y1)},
			Name: C.GoString(f.name), Label: C.GoString(f.label), Value: C.GoString(f.value)})
	}
	return out, nil
}
