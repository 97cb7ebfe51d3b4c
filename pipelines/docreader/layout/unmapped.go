package layout

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"boxd/engine/raster"
	"boxd/pipelines/docreader/doc"

	"github.com/agnivade/levenshtein"
)

// Unmapped glyphs. A PDF font without a usable ToUnicode map (a CID font
// with Identity-H encoding and no map, a simple font whose glyph names
// are not standard) leaves MuPDF no character for its glyphs: it writes
// U+FFFD. MuPDF's FZ_STEXT_USE_CID_FOR_UNKNOWN_UNICODE would give the
// character code instead, which is the letter for some simple fonts and
// a glyph number (wrong letters, signed as read) for CID fonts, and
// nothing in the file says which. So the words holding U+FFFD are read
// from the page's pixels, as Ghostscript's and PyMuPDF's users route
// unmapped text to OCR; the element says so (source parser+ocr, its
// conf_bp the mean over its words with Tesseract's confidence for those).
// Two more cases name no letters though they are not U+FFFD: a ToUnicode
// map into the Private Use Area (read from pixels as U+FFFD is), and a
// Type3 font (glyphs drawn by procedures, their names often "a1", "g12"),
// whose codes MuPDF passes on as letters: a Type3 word is read from the
// pixels too, and the layer's text stands only when the two agree (as
// TeX's bitmap fonts do); otherwise the pixels' reading replaces it.

// hasUnmapped says whether a word holds a glyph the text layer maps to
// no character: U+FFFD, or a private-use code point (a ToUnicode map
// into the Private Use Area names no character either).
func hasUnmapped(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || unicode.In(r, unicode.Co) {
			return true
		}
	}
	return false
}

// needsPixels says whether a word is read from, or checked against, the
// page's pixels: it holds an unmapped glyph, or a Type3 font drew it.
func needsPixels(w word) bool { return w.type3 || hasUnmapped(w.text) }

// agreeMin is how alike (1 - edit distance / length, letters and digits
// only, any case) a Type3 word's layer text and Tesseract's reading must
// be for the layer's text to stand.
const agreeMin = 0.5

// agree says whether the layer's text and the pixels' reading of a Type3
// word are the same text, give or take OCR's slips.
func agree(layer, pixels string) bool {
	norm := func(s string) []rune {
		var out []rune
		for _, r := range strings.ToLower(s) {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				out = append(out, r)
			}
		}
		return out
	}
	a, b := norm(layer), norm(pixels)
	n := max(len(a), len(b))
	if n == 0 {
		return true
	}
	return 1-float64(levenshtein.ComputeDistance(string(a), string(b)))/float64(n) >= agreeMin
}

// readFromPixels says whether any of the region's words was read from
// the page's pixels.
func (r *Region) readFromPixels() bool {
	for _, l := range r.lines {
		for _, w := range l.words {
			if w.ocr {
				return true
			}
		}
	}
	return false
}

// sourceName is the region's source as elements name it: the text
// layer's with some words read from pixels is parser+ocr.
func (r *Region) sourceName() string {
	if r.source == doc.SourceParser && r.readFromPixels() {
		return doc.SourceParserOCR
	}
	return r.source
}

// unmappedPad is the margin (page-raster pixels) a word's box is widened
// by when Tesseract's words are matched to it.
const unmappedPad = 3

// ReadUnmapped reads from the page's pixels the text-layer words that
// hold U+FFFD: one Tesseract reading (one block of text, at twice the
// page's scale from hi) of each region's lines that hold such words;
// each such word takes the words Tesseract found within its box, joined
// by spaces (an unmapped space glyph is U+FFFD too, so one layer word
// can be several), and their mean confidence. A word Tesseract finds
// nothing in keeps its U+FFFD with confidence 0. Without OCR on the box
// the words are left as the layer has them. It returns how many words
// were read. img is the page raster at dpi; rd nil is no OCR.
func ReadUnmapped(ctx context.Context, rd OCR, img *raster.Image, hi func() (*raster.Image, error), dpi int, rs []*Region) (int, error) {
	if rd == nil {
		return 0, nil
	}
	n := 0
	for _, r := range rs {
		if r.image {
			continue
		}
		var box raster.Box
		for _, l := range r.lines {
			for _, w := range l.words {
				if needsPixels(w) {
					box = box.Union(l.box)
					break
				}
			}
		}
		if box.Empty() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		h, err := hi()
		if err != nil {
			return n, err
		}
		ws, err := rd.ReadBlock(ctx, img, h, box, dpi)
		if err != nil {
			return n, err
		}
		for li := range r.lines {
			l := &r.lines[li]
			for wi := range l.words {
				w := &l.words[wi]
				if !needsPixels(*w) {
					continue
				}
				in := raster.Box{X0: w.box.X0 - unmappedPad, Y0: w.box.Y0 - unmappedPad, X1: w.box.X1 + unmappedPad, Y1: w.box.Y1 + unmappedPad}
				var parts []string
				conf := 0.0
				for _, o := range ws {
					cx, cy := (o.Box.X0+o.Box.X1)/2, (o.Box.Y0+o.Box.Y1)/2
					if cx >= in.X0 && cx <= in.X1 && cy >= in.Y0 && cy <= in.Y1 && strings.TrimSpace(o.Text) != "" {
						parts = append(parts, o.Text)
						conf += o.Conf
					}
				}
				read := strings.Join(parts, " ")
				if !hasUnmapped(w.text) && (len(parts) == 0 || agree(w.text, read)) {
					continue // a Type3 word the pixels confirm (or cannot read): the layer's text stands
				}
				w.ocr = true
				n++
				if len(parts) == 0 {
					w.conf = 0
					continue
				}
				w.text = digitsAsRead(read)
				w.conf = conf / float64(len(parts))
			}
		}
	}
	return n, nil
}

// digitsAsRead mends Tesseract's commonest slip in a number: a token of
// digits with an O, o, l or I among them ("1O", "2O24", "l5") is read as
// the digits it stands for. A token with any other letter ("B12", "IO")
// is left as read.
func digitsAsRead(s string) string {
	fields := strings.Split(s, " ")
	for i, f := range fields {
		core := strings.TrimRight(strings.TrimLeft(f, "([\"'"), ".,;:)]\"'%")
		digits, confusable := 0, 0
		for _, r := range core {
			switch {
			case r >= '0' && r <= '9':
				digits++
			case r == 'O' || r == 'o' || r == 'l' || r == 'I':
				confusable++
			case r == '.' || r == ',' || r == '/' || r == '-' || r == ':':
			default:
				confusable = -1 << 30
			}
		}
		if digits == 0 || confusable <= 0 {
			continue
		}
		fields[i] = strings.NewReplacer("O", "0", "o", "0", "l", "1", "I", "1").Replace(f)
	}
	return strings.Join(fields, " ")
}
