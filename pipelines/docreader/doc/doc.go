// Package doc is what the document reader returns and signs: a document's
// pages of citable elements, its form fields, tables, charts and schema
// mapping, and the service.docreader-receipt.v1 receipt that binds them
// (contract 3, section 2), with the checks POST /docreader/verify and
// boxd verify run. It knows no PDF, pixels or OCR: pipelines/docreader
// reads documents into it.
package doc

import (
	"encoding/json"

	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/docreader/reread"
)

// Element is one citable piece of a page (contract 3, section 2).
type Element struct {
	ID     string `json:"id"`   // p<page>-e<n>
	Page   int    `json:"page"` // from 1
	Kind   string `json:"kind"`
	BBox   [4]int `json:"bbox"` // [x, y, width, height] in page-raster pixels
	Order  int    `json:"order"`
	Text   string `json:"text"`
	Source string `json:"source"`  // parser, ocr or parser+ocr
	ConfBP int    `json:"conf_bp"` // mean confidence, basis points
	// Lines are the element's lines with their boxes (beyond the
	// contract's fields: a citation can point at one line).
	Lines []Line `json:"lines"`
	// Table describes a table (kind table); Cell places a table cell
	// (kind table_cell) in its table.
	Table *Table `json:"table,omitempty"`
	Cell  *Cell  `json:"cell,omitempty"`
	// Reread is the vision model's reading of the element's region, kept
	// beside Text when the re-read rule applied (conf_bp under 9000).
	Reread *reread.Reading `json:"reread,omitempty"`
}

// Line is one line of an element.
type Line struct {
	BBox [4]int `json:"bbox"`
	Text string `json:"text"`
}

// Page is one page read.
type Page struct {
	Page   int `json:"page"`
	Width  int `json:"width"`  // raster pixels
	Height int `json:"height"` // raster pixels
	// Rotation is how far the page raster was turned clockwise before it
	// was read (scans come in sideways); boxes are in the turned raster.
	Rotation int `json:"rotation"`
	// Deskew is the small turn (degrees clockwise, within ±5) applied
	// after Rotation to straighten a skewed scan; 0 when none was.
	Deskew float64 `json:"deskew"`
	// Source is text_layer (a born-digital page, read from the PDF's text
	// layer, never OCRed) or ocr (no usable text layer).
	Source      string    `json:"source"`
	PixelSHA256 string    `json:"pixel_sha256"` // the raster as a binary PPM, before any turn
	Elements    []Element `json:"elements"`
}

// Page sources.
const (
	PageTextLayer = "text_layer"
	PageOCR       = "ocr"
)

// FileInfo describes the file read.
type FileInfo struct {
	SHA256 string `json:"sha256"`
	Type   string `json:"type"`
	Bytes  int64  `json:"bytes"`
	Pages  int    `json:"pages"`
}

// Table describes a table element (kind table).
type Table struct {
	Rows   int    `json:"rows"`
	Cols   int    `json:"cols"`
	Method string `json:"method"` // lattice (ruling lines) or stream (whitespace too)
	// NumbersChecked says the cells' numbers (from the text layer of a
	// born-digital page) were compared with the table read from its
	// pixels; Flagged counts the cells whose numbers differ.
	NumbersChecked bool `json:"numbers_checked"`
	Flagged        int  `json:"flagged"`
}

// Cell places a table cell (kind table_cell) in its table.
type Cell struct {
	Table   string `json:"table"` // the table element's id
	Row     int    `json:"row"`   // from 0
	Col     int    `json:"col"`
	RowSpan int    `json:"row_span"`
	ColSpan int    `json:"col_span"`
	// PixelText is the cell as read from the pixels, on a born-digital
	// page (whose Text is the text layer's); "" where nothing was read.
	PixelText string `json:"pixel_text,omitempty"`
	// Flag says what differs when the numbers of the text layer and of
	// the pixels disagree ("" when they agree or were not compared).
	Flag string `json:"flag,omitempty"`
}

// Field is one form field read.
type Field struct {
	ID       string `json:"id"`              // p<page>-f<n>
	Name     string `json:"name"`            // the form's field name, or the printed label
	Label    string `json:"label,omitempty"` // the label the form shows a reader (AcroForm /TU)
	Type     string `json:"type"`            // text, checkbox, radio, choice, signature, button; label_value
	Value    string `json:"value"`
	Page     int    `json:"page"`
	BBox     [4]int `json:"bbox"`    // the widget's box, or the line's
	Element  string `json:"element"` // the element the value is tied to ("" when none is under it)
	Source   string `json:"source"`  // acroform or layout
	ValueIn  string `json:"value_from"`
	Required bool   `json:"required,omitempty"`
	ReadOnly bool   `json:"read_only,omitempty"`
	// Redacted: a password field, whose value is not returned.
	Redacted bool `json:"redacted,omitempty"`
}

// Field sources and where a value was read.
const (
	FieldAcroForm = "acroform"
	FieldLayout   = "layout"

	ValueInElement  = "element"
	ValueInFormData = "form_data"
	ValueInImage    = "image"
)

// Mapped is the fields mapped to the caller's schema.
type Mapped struct {
	Object json.RawMessage `json:"object"`
	// Sources: each string in Object, by JSON pointer, and the field
	// holding that value ("" when no field does).
	Sources []MappedSource `json:"sources"`
	// Unsupported counts the strings no field holds.
	Unsupported int `json:"unsupported"`
	// Receipt is the model call's receipt id.
	Receipt string `json:"receipt"`
}

// MappedSource ties one value of the mapped object to a field.
type MappedSource struct {
	Path  string `json:"path"` // JSON pointer
	Value string `json:"value"`
	Field string `json:"field"` // the field's id, "" when no field holds the value
}

// DocChart is a chart read from a document (charts: true): from a figure
// element, or from a whole scanned page.
type DocChart struct {
	Element string       `json:"element"` // the figure's id ("" for a whole page)
	Page    int          `json:"page"`
	BBox    [4]int       `json:"bbox"` // the region read, page-raster pixels
	ConfBP  int          `json:"conf_bp"`
	Chart   *chart.Chart `json:"chart"` // pixel positions in the page raster
	// Method is geometry (measured from the drawing) or model (the
	// model's reading of a figure whose axes could not be calibrated:
	// nothing in it is measured, conf_bp 0, no pixel positions). Left
	// out by readings made before it was added, which were all geometry.
	Method string `json:"method,omitempty"`
	Note   string `json:"note,omitempty"`
}

// Element kinds.
const (
	KindTable    = "table"
	KindCell     = "table_cell"
	KindText     = "text"
	KindTitle    = "title"
	KindListItem = "list_item"
	KindCaption  = "caption"
	KindFigure   = "figure"
	KindHeader   = "page_header"
	KindFooter   = "page_footer"
)

// Sources of an element's text.
const (
	SourceParser = "parser" // the PDF's text layer
	SourceOCR    = "ocr"    // Tesseract over the page raster
	// SourceParserOCR is text from the PDF's text layer in which some
	// words were read from the page's pixels: their glyphs map to no
	// character in the layer (a font without a usable ToUnicode map),
	// which MuPDF writes as U+FFFD.
	SourceParserOCR = "parser+ocr"
)
