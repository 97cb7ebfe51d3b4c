// Package layout is the document reader's layout stage: it groups a
// page's words, from a PDF's text layer or from Tesseract, into regions
// (paragraphs, titles, figures), reads from the page's pixels the words
// whose glyphs the text layer maps to no character (unmapped.go), finds
// the page's tables (package table) and checks their numbers against the
// pixels (tables.go), gives each region its kind, puts the page in
// reading order (package order) and turns it into the page's elements
// (package doc). pipelines/docreader runs these steps on each page;
// Revision names their rules.
package layout

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"boxd/engine/mupdf"
	"boxd/pipelines/docreader/doc"
	"boxd/pipelines/docreader/forms"
	"boxd/pipelines/docreader/ocr"
	"boxd/pipelines/docreader/order"

	"boxd/engine/raster"
)

// Revision names the rules below (kinds, reading order); receipts
// carry it, and it changes whenever the rules change what they produce.
const Revision = "boxd-layout-6" // 3: tables of dot leaders; 4: a form widget's label and value read together, and issue 35's tables (unruled bodies, no rules, kept apart, tight boxes); 5: printed rows read across a gutter (Label: value, a reference's number, a contents entry's page number), and a lone block on one side no longer joins a band on the other; 6: words whose glyphs the text layer maps to no character (U+FFFD) read from the page's pixels (source parser+ocr)

// OCR reads a box of a page's raster img (at dpi; hi, when not nil, the
// page drawn at twice the scale): ReadRegion as sparse text, ReadBlock
// as one block of text. *ocr.OCR is one.
type OCR interface {
	ReadRegion(ctx context.Context, img, hi *raster.Image, r raster.Box, dpi int) ([]ocr.Word, error)
	ReadBlock(ctx context.Context, img, hi *raster.Image, r raster.Box, dpi int) ([]ocr.Word, error)
}

// word is one word with its box.
type word struct {
	text string
	box  raster.Box
	conf float64 // 0 to 100
	size float64 // font size in pixels (text layer)
	// ocr: a text-layer word read from the page's pixels (its glyphs
	// map to no character in the layer); conf is then Tesseract's.
	ocr bool
	// type3: some of its glyphs are a Type3 font's, whose codes may name
	// no letters: the word is checked against the pixels (unmapped.go).
	type3 bool
}

// line is a run of words on one baseline.
type line struct {
	words []word
	box   raster.Box
}

func (l *line) text() string {
	parts := make([]string, len(l.words))
	for i, w := range l.words {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

// Region is a block of lines (a paragraph, a title, an image) before it
// becomes an element.
type Region struct {
	lines  []line
	box    raster.Box
	size   float64 // median character height (text layer: font size)
	image  bool
	source string
	kind   string
	table  *tableRegion // a table (kind table)
	row    int          // the form widget whose row it is read in, plus one (0: none)
}

// text joins the region's lines with spaces, except where a line ends in
// a hyphen after a letter and the next starts with a lower-case letter:
// a word broken across lines ("eir-" "mod") is joined again ("eirmod").
// The lines keep the printed text, hyphen and all.
func (r *Region) text() string {
	var b strings.Builder
	for i := range r.lines {
		t := r.lines[i].text()
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			prev := []rune(b.String())
			next, _ := utf8.DecodeRuneInString(t)
			if n := len(prev); n >= 2 && prev[n-1] == '-' && unicode.IsLetter(prev[n-2]) && unicode.IsLower(next) {
				s := string(prev[:n-1])
				b.Reset()
				b.WriteString(s)
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(t)
	}
	return b.String()
}

// confBP is the mean word confidence in basis points (text layer: 10000).
func (r *Region) confBP() int {
	if r.source == doc.SourceParser && !r.readFromPixels() {
		return 10000
	}
	n, s := 0, 0.0
	for _, l := range r.lines {
		for _, w := range l.words {
			s += w.conf
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return int(s/float64(n)*100 + 0.5)
}

// FromLayer groups a text layer's characters into words (split at
// spaces), lines and MuPDF's blocks; image blocks become figure regions.
func FromLayer(t *mupdf.TextLayer) []*Region {
	byBlock := map[int]*Region{}
	var out []*Region
	for i, b := range t.Blocks {
		r := &Region{box: b.Box, image: b.Image, source: doc.SourceParser}
		byBlock[i] = r
		out = append(out, r)
	}
	var cur *word
	var curLine *line
	lastBlock, lastLine := -1, -1
	var sizes = map[*Region][]float64{}
	flush := func() {
		if cur != nil && cur.text != "" && curLine != nil {
			curLine.words = append(curLine.words, *cur)
			curLine.box = curLine.box.Union(cur.box)
		}
		cur = nil
	}
	endLine := func() {
		flush()
		if curLine != nil && len(curLine.words) > 0 {
			r := byBlock[lastBlock]
			r.lines = append(r.lines, *curLine)
		}
		curLine = nil
	}
	for _, c := range t.Chars {
		if c.Block != lastBlock || c.Line != lastLine {
			endLine()
			lastBlock, lastLine = c.Block, c.Line
			curLine = &line{}
		}
		if unicode.IsSpace(c.R) || c.R == 0 {
			flush()
			continue
		}
		if cur == nil {
			cur = &word{conf: 100}
		}
		cur.text += string(c.R)
		cur.type3 = cur.type3 || c.Type3
		cur.box = cur.box.Union(c.Box)
		cur.size = max(cur.size, c.Size)
		if r := byBlock[c.Block]; r != nil {
			sizes[r] = append(sizes[r], c.Size)
		}
	}
	endLine()
	var kept, images []*Region
	for _, r := range out {
		if r.image {
			images = append(images, r)
			continue
		}
		for _, part := range splitColumns(r.lines) {
			nr := &Region{lines: part, source: doc.SourceParser, size: median(sizes[r])}
			for _, l := range part {
				nr.box = nr.box.Union(l.box)
			}
			kept = append(kept, nr)
		}
	}
	return append(kept, mergeFigures(images)...)
}

// mergeFigures joins image blocks that overlap or touch (within 4
// pixels) into one figure: a drawing placed as many image pieces is one
// figure, not dozens.
func mergeFigures(rs []*Region) []*Region {
	near := func(a, b raster.Box) bool {
		const slack = 4
		return a.X0 <= b.X1+slack && b.X0 <= a.X1+slack && a.Y0 <= b.Y1+slack && b.Y0 <= a.Y1+slack
	}
	out := slices.Clone(rs)
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(out) && !merged; i++ {
			for j := i + 1; j < len(out); j++ {
				if near(out[i].box, out[j].box) {
					out[i].box = out[i].box.Union(out[j].box)
					out = slices.Delete(out, j, j+1)
					merged = true
					break
				}
			}
		}
	}
	return out
}

// splitColumns cuts a block's lines where words stand further apart than
// twice their font size (MuPDF may join text on one baseline into one
// line across a column gutter, and keeps side-by-side lines in one
// block), then groups the pieces into columns:
// pieces whose x extents overlap belong together, top to bottom.
func splitColumns(lines []line) [][]line {
	var pieces []line
	for _, l := range lines {
		cur := line{}
		for i, w := range l.words {
			if i > 0 && w.box.X0-l.words[i-1].box.X1 > 2*max(w.size, l.words[i-1].size, 1) {
				pieces = append(pieces, cur)
				cur = line{}
			}
			cur.words = append(cur.words, w)
			cur.box = cur.box.Union(w.box)
		}
		if len(cur.words) > 0 {
			pieces = append(pieces, cur)
		}
	}
	var cols [][]line
	var spans []raster.Box
	for _, pc := range pieces {
		placed := false
		for i, sp := range spans {
			if min(sp.X1, pc.box.X1) > max(sp.X0, pc.box.X0) {
				cols[i] = append(cols[i], pc)
				spans[i] = sp.Union(pc.box)
				placed = true
				break
			}
		}
		if !placed {
			cols = append(cols, []line{pc})
			spans = append(spans, pc.box)
		}
	}
	for _, c := range cols {
		sort.SliceStable(c, func(i, j int) bool { return c[i].box.Y0 < c[j].box.Y0 })
	}
	return cols
}

// FromOCR groups Tesseract's words by its blocks and paragraphs
// into regions, and by its lines into lines.
func FromOCR(words []ocr.Word) []*Region {
	type key struct{ block, para int }
	byKey := map[key]*Region{}
	var out []*Region
	lineOf := map[*Region]map[int]int{}
	var heights = map[*Region][]float64{}
	for _, w := range words {
		k := key{w.Block, w.Para}
		r := byKey[k]
		if r == nil {
			r = &Region{source: doc.SourceOCR}
			byKey[k] = r
			out = append(out, r)
			lineOf[r] = map[int]int{}
		}
		li, ok := lineOf[r][w.Line]
		if !ok {
			li = len(r.lines)
			lineOf[r][w.Line] = li
			r.lines = append(r.lines, line{})
		}
		l := &r.lines[li]
		l.words = append(l.words, word{text: w.Text, box: w.Box, conf: w.Conf})
		l.box = l.box.Union(w.Box)
		r.box = r.box.Union(w.Box)
	}
	for _, r := range out {
		for _, l := range r.lines {
			heights[r] = append(heights[r], l.box.Y1-l.box.Y0)
		}
		r.size = median(heights[r])
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

var (
	captionRE  = regexp.MustCompile(`^(?i)(figure|fig\.|table|chart|graph)\s*[0-9ivx]+[.:]?(\s|$)`)
	listItemRE = regexp.MustCompile(`^([•◦▪‣●○■□\-–—*·]|\(?[0-9]{1,2}[.)]|\(?[a-zA-Z][.)])\s`)
)

// classify gives each region its kind, by these rules in order:
//   - an image block is a figure;
//   - a region wholly in the top or bottom 6% of the page, of at most two
//     lines and 120 characters, is a page header or footer;
//   - text starting "Figure 3", "Fig. 2", "Table 1", "Chart 4" is a caption;
//   - text starting with a bullet or "1.", "2)", "a)" is a list item;
//   - a region of at most three lines whose characters are at least 1.25
//     times the page's median size, not ending in a full stop, is a title;
//   - anything else is text.
func classify(rs []*Region, pageH int) {
	var sizes []float64
	for _, r := range rs {
		if !r.image && r.table == nil {
			for range r.lines {
				sizes = append(sizes, r.size)
			}
		}
	}
	body := median(sizes)
	margin := 0.06 * float64(pageH)
	for _, r := range rs {
		if r.table != nil {
			continue
		}
		t := r.text()
		switch {
		case r.image:
			r.kind = doc.KindFigure
		case r.box.Y1 <= margin && len(r.lines) <= 2 && len(t) <= 120:
			r.kind = doc.KindHeader
		case r.box.Y0 >= float64(pageH)-margin && len(r.lines) <= 2 && len(t) <= 120:
			r.kind = doc.KindFooter
		case captionRE.MatchString(t):
			r.kind = doc.KindCaption
		case listItemRE.MatchString(t):
			r.kind = doc.KindListItem
		case body > 0 && r.size >= 1.25*body && len(r.lines) <= 3 && !strings.HasSuffix(t, "."):
			r.kind = doc.KindTitle
		default:
			r.kind = doc.KindText
		}
	}
}

// readingOrder orders a page's regions (pipelines/docreader/order: page
// headers first and footers last, the body by an XY-cut that keeps
// columns apart; right to left on a page whose letters mostly are).
func readingOrder(rs []*Region, pageW int) []*Region {
	rs = splitAtPairs(rs)
	bs := make([]order.Block, len(rs))
	for i, r := range rs {
		bs[i] = order.Block{Box: r.box, Size: r.size, Group: r.row}
		switch r.kind {
		case doc.KindHeader:
			bs[i].Place = order.Header
		case doc.KindFooter:
			bs[i].Place = order.Footer
		}
	}
	out := make([]*Region, 0, len(rs))
	for _, i := range order.Order(bs, pageW, rightToLeft(rs)) {
		out = append(out, rs[i])
	}
	return out
}

// SplitAtWidgets cuts text regions where their lines belong to different
// form widgets' rows (forms.Rows: a widget's value, the label printed
// beside it), and marks each piece with its widget, so that reading
// order keeps a label and its value together.
func SplitAtWidgets(rs []*Region, ws []raster.Box) []*Region {
	if len(ws) == 0 {
		return rs
	}
	var lines []forms.Line
	for i, r := range rs {
		if r.table == nil && !r.image {
			for _, l := range r.lines {
				lines = append(lines, forms.Line{Box: l.box, Region: i})
			}
		}
	}
	rows := forms.Rows(lines, ws, rightToLeft(rs))
	var out []*Region
	k := 0
	for _, r := range rs {
		if r.table != nil || r.image || len(r.lines) == 0 {
			out = append(out, r)
			continue
		}
		if same := rows[k : k+len(r.lines)]; !slices.ContainsFunc(same, func(w int) bool { return w != same[0] }) {
			r.row = same[0] + 1
			out = append(out, r)
			k += len(r.lines)
			continue
		}
		var cur *Region
		for _, l := range r.lines {
			if row := rows[k] + 1; cur == nil || cur.row != row {
				cur = &Region{source: r.source, size: r.size, row: row}
				out = append(out, cur)
			}
			k++
			cur.lines = append(cur.lines, l)
			cur.box = cur.box.Union(l.box)
		}
	}
	return out
}

// splitAtPairs cuts text regions into the rows that forms.Pairs reads
// across a gutter (a printed "Label:" and its value, a reference's
// number and its text, a contents entry and its page number), and ties
// the two sides of each row together as one reading unit, as
// SplitAtWidgets does for a widget's label and value. A line that pairs
// with nothing stays with the row above it in its region (a value that
// wraps). Regions read in a widget's row, titles, headers, footers,
// captions, tables and figures are left alone.
func splitAtPairs(rs []*Region) []*Region {
	var lines []forms.TextLine
	next := 1
	for i, r := range rs {
		next = max(next, r.row+1)
		if r.table != nil || r.image || r.row != 0 || (r.kind != doc.KindText && r.kind != doc.KindListItem) {
			continue
		}
		for _, l := range r.lines {
			lines = append(lines, forms.TextLine{Box: l.box, Text: l.text(), Region: i})
		}
	}
	if len(lines) < 2 {
		return rs
	}
	pairs := forms.Pairs(lines, rightToLeft(rs))
	if !slices.ContainsFunc(pairs, func(p int) bool { return p >= 0 }) {
		return rs
	}
	var out []*Region
	k := 0
	for i, r := range rs {
		if k >= len(lines) || lines[k].Region != i {
			out = append(out, r)
			continue
		}
		mine := pairs[k : k+len(r.lines)]
		k += len(r.lines)
		if !slices.ContainsFunc(mine, func(p int) bool { return p >= 0 }) {
			out = append(out, r)
			continue
		}
		var cur *Region
		for j, l := range r.lines {
			if cur == nil || mine[j] >= 0 {
				cur = &Region{source: r.source, size: r.size, kind: r.kind}
				if mine[j] >= 0 {
					cur.row = next + mine[j]
				}
				out = append(out, cur)
			}
			cur.lines = append(cur.lines, l)
			cur.box = cur.box.Union(l.box)
		}
	}
	return out
}

// rightToLeft says whether most of the regions' letters are of a
// right-to-left script.
func rightToLeft(rs []*Region) bool {
	n, r2l := 0, 0
	for _, r := range rs {
		for _, l := range r.lines {
			for _, w := range l.words {
				for _, c := range w.text {
					if !unicode.IsLetter(c) {
						continue
					}
					n++
					if unicode.In(c, unicode.Arabic, unicode.Hebrew, unicode.Syriac, unicode.Thaana) {
						r2l++
					}
				}
			}
		}
	}
	return 2*r2l > n
}

// Elements turns a page's regions and tables (FindTables) into its
// elements: the regions' kinds given (classify), all put in reading
// order (readingOrder), and numbered p<page>-e<n> in that order.
func Elements(page int, rs, tables []*Region, pageW, pageH int) []doc.Element {
	classify(rs, pageH)
	return elements(page, readingOrder(append(rs, tables...), pageW))
}

// elements turns a page's ordered regions into its elements.
func elements(page int, rs []*Region) []doc.Element {
	out := make([]doc.Element, 0, len(rs))
	for _, r := range rs {
		if r.table != nil {
			out = append(out, tableElements(page, len(out)+1, r)...)
			continue
		}
		e := doc.Element{ID: fmt.Sprintf("p%d-e%d", page, len(out)+1), Page: page, Kind: r.kind, BBox: r.box.BBox(),
			Text: r.text(), Source: r.sourceName(), ConfBP: r.confBP(), Lines: []doc.Line{}}
		if r.image {
			e.ConfBP = 10000
		}
		for _, l := range r.lines {
			e.Lines = append(e.Lines, doc.Line{BBox: l.box.BBox(), Text: l.text()})
		}
		out = append(out, e)
	}
	for i := range out {
		out[i].Order = i + 1
	}
	return out
}
