package docreader

import (
	"crypto/ed25519"

	"boxd/engine/attest"
	"boxd/pipelines/docreader/doc"
)

// The document's types live in pipelines/docreader/doc; these names keep
// the reader's code and its callers as they were.
type (
	Element      = doc.Element
	Line         = doc.Line
	Page         = doc.Page
	FileInfo     = doc.FileInfo
	Table        = doc.Table
	Cell         = doc.Cell
	Field        = doc.Field
	Mapped       = doc.Mapped
	MappedSource = doc.MappedSource
	DocChart     = doc.DocChart
	Document     = doc.Document
	ModelRef     = doc.ModelRef
	ModelCallRef = doc.ModelCallRef
	Revisions    = doc.Revisions
	Receipt      = doc.Receipt
	ReceiptPage  = doc.ReceiptPage
	HashRef      = doc.HashRef
	Check        = doc.Check
)

// Page sources, field sources and where a field's value was read.
const (
	PageTextLayer   = doc.PageTextLayer
	PageOCR         = doc.PageOCR
	FieldAcroForm   = doc.FieldAcroForm
	FieldLayout     = doc.FieldLayout
	ValueInElement  = doc.ValueInElement
	ValueInFormData = doc.ValueInFormData
	ValueInImage    = doc.ValueInImage
	ReceiptFormat   = doc.ReceiptFormat

	KindText     = doc.KindText
	KindTitle    = doc.KindTitle
	KindListItem = doc.KindListItem
	KindCaption  = doc.KindCaption
	KindFigure   = doc.KindFigure
	KindHeader   = doc.KindHeader
	KindFooter   = doc.KindFooter
	KindTable    = doc.KindTable
	KindCell     = doc.KindCell
	SourceParser = doc.SourceParser
	SourceOCR    = doc.SourceOCR
	// SourceParserOCR: the text layer, some words read from pixels.
	SourceParserOCR = doc.SourceParserOCR
)

// DecodeDocument reads a document exactly as the reader wrote it, every
// field and no other (doc.Decode): what the verifiers check.
func DecodeDocument(raw []byte) (*Document, error) { return doc.Decode(raw) }

// Verify checks a document against its receipt (doc.Verify).
func Verify(d *Document, pinned ed25519.PublicKey) ([]Check, error) { return doc.Verify(d, pinned) }

func sign(k *attest.Key, d *Document, rev Revisions, calls []ModelCallRef, synthetic bool) error {
	return doc.Sign(k, d, rev, calls, synthetic)
}

func receiptPages(ps []Page) []ReceiptPage { return doc.ReceiptPages(ps) }
