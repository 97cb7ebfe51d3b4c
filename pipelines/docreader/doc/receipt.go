package doc

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"

	"boxd/engine/attest"
	"boxd/internal/ids"
	"boxd/internal/strictjson"
	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/docreader/exact"
	"boxd/pipelines/docreader/reread"
)

// ReceiptFormat is the document receipt's format (contract 3, section 2).
const ReceiptFormat = "service.docreader-receipt.v1"

// ReceiptPage is a page as the receipt binds it.
type ReceiptPage struct {
	Page     int `json:"page"`
	Width    int `json:"width"`
	Height   int `json:"height"`
	Rotation int `json:"rotation"`
	// Deskew is left out at 0, so receipts of straight pages read as they
	// did before deskewing was built.
	Deskew      float64 `json:"deskew,omitempty"`
	Source      string  `json:"source"`
	PixelSHA256 string  `json:"pixel_sha256"`
}

// HashRef binds one element or field by id to the sha256 of its
// canonical JSON.
type HashRef struct {
	ID     string `json:"id"`
	SHA256 string `json:"sha256"`
}

// Revisions name what read the document: the PDF parser, the OCR engine
// and its model, and the layout rules.
type Revisions struct {
	Parser string `json:"parser"`
	OCR    string `json:"ocr"`
	Layout string `json:"layout"`
}

// ModelCallRef names a model-call receipt the reading made.
type ModelCallRef struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
}

type receiptBody struct {
	V          string         `json:"v"`
	ID         string         `json:"id"`
	Document   string         `json:"document"`
	File       FileInfo       `json:"file"`
	Pages      []ReceiptPage  `json:"pages"`
	Revisions  Revisions      `json:"revisions"`
	Elements   []HashRef      `json:"elements"`
	Fields     []HashRef      `json:"fields"`
	ModelCalls []ModelCallRef `json:"model_calls"`
	// Mapped is the sha256 of the schema mapping's canonical JSON, when
	// the read mapped its fields to a schema.
	Mapped string `json:"mapped_sha256,omitempty"`
	// Charts is the sha256 of the charts' canonical JSON, when the read
	// read charts (charts: true).
	Charts string `json:"charts_sha256,omitempty"`
	// Models are the models the reading used (left out when none were,
	// so receipts of readings without models read as before).
	Models []ModelRef `json:"models,omitempty"`
	// Reread and ChartsByModel are the sha256 of the document's reread
	// and charts_by_model summaries' canonical JSON, when it has them
	// (left out otherwise, so receipts of documents without them read as
	// before). Receipts signed before they were bound do not verify a
	// document that has either: nothing in a document is left unsigned.
	Reread        string `json:"reread_sha256,omitempty"`
	ChartsByModel string `json:"charts_by_model_sha256,omitempty"`
	// Synthetic is what the caller said of the file: true when it sent
	// synthetic: true or read a built-in sample, false when it sent its
	// own file without (a self-hosted box takes real documents unless
	// its operator sets limits.require_synthetic). Left out of receipts
	// signed before it was recorded, which verify as they did.
	Synthetic *bool         `json:"synthetic,omitempty"`
	Signer    attest.Signer `json:"signer"`
}

// SignedBy names the key that signed the receipt (attest.SignedBody).
func (b receiptBody) SignedBy() attest.Signer { return b.Signer }

// Receipt is the signed document receipt: its body's fields and sig, flat
// (attest.Signed).
type Receipt struct {
	receiptBody
	Sig string `json:"sig"`
}

// signed is the receipt as its envelope.
func (r Receipt) signed() attest.Signed[receiptBody] {
	return attest.Signed[receiptBody]{Body: r.receiptBody, Sig: r.Sig}
}

// MarshalJSON writes the receipt's fields flat.
func (r Receipt) MarshalJSON() ([]byte, error) { return r.signed().MarshalJSON() }

// UnmarshalJSON reads them.
func (r *Receipt) UnmarshalJSON(b []byte) error {
	var s attest.Signed[receiptBody]
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	*r = Receipt{receiptBody: s.Body, Sig: s.Sig}
	return nil
}

// Field is a form field read from the document (AcroForm or a label and
// value on a scan): not read in this version, so always empty.

// ModelRef names a model the reading used.
type ModelRef struct {
	Role     string `json:"role"`
	Repo     string `json:"repo"`
	Revision string `json:"revision"`
}

// Document is what POST /docreader/read returns and /docreader/verify
// checks: the pages of elements, the fields, the models, and the signed
// receipt that binds them.
type Document struct {
	ID     string     `json:"id"`
	File   FileInfo   `json:"file"`
	Pages  []Page     `json:"pages"`
	Fields []Field    `json:"fields"`
	Models []ModelRef `json:"models"`
	// Mapped is the fields mapped to the caller's schema (schema given).
	Mapped *Mapped `json:"mapped,omitempty"`
	// Charts are the charts read from figures (charts: true).
	Charts []DocChart `json:"charts,omitempty"`
	// ChartsByModel says what the model's readings of figures whose axes
	// could not be calibrated did (charts: true with a model that sees
	// images; left out when no figure needed one).
	ChartsByModel *chart.FiguresSummary `json:"charts_by_model,omitempty"`
	// Reread says what the re-read rule did (elements carry the readings).
	Reread  *reread.Summary `json:"reread,omitempty"`
	Receipt Receipt         `json:"receipt"`
}

// hashOf is the sha256 of v's canonical JSON.
func hashOf(v any) (string, error) {
	c, err := attest.Canonical(v)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(c)
	return hex.EncodeToString(s[:]), nil
}

// ReceiptPages are the pages as a receipt binds them.
func ReceiptPages(ps []Page) []ReceiptPage {
	out := make([]ReceiptPage, len(ps))
	for i, p := range ps {
		out[i] = ReceiptPage{Page: p.Page, Width: p.Width, Height: p.Height, Rotation: p.Rotation, Deskew: p.Deskew, Source: p.Source, PixelSHA256: p.PixelSHA256}
	}
	return out
}

func elementHashes(ps []Page) ([]HashRef, error) {
	out := []HashRef{}
	for _, p := range ps {
		for _, e := range p.Elements {
			h, err := hashOf(e)
			if err != nil {
				return nil, err
			}
			out = append(out, HashRef{ID: e.ID, SHA256: h})
		}
	}
	return out, nil
}

func fieldHashes(fs []Field) ([]HashRef, error) {
	out := []HashRef{}
	for _, f := range fs {
		h, err := hashOf(f)
		if err != nil {
			return nil, err
		}
		out = append(out, HashRef{ID: f.ID, SHA256: h})
	}
	return out, nil
}

// Sign builds and signs d's receipt; synthetic is what the caller said
// of the file (see receiptBody.Synthetic).
func Sign(k *attest.Key, d *Document, rev Revisions, calls []ModelCallRef, synthetic bool) error {
	els, err := elementHashes(d.Pages)
	if err != nil {
		return err
	}
	fs, err := fieldHashes(d.Fields)
	if err != nil {
		return err
	}
	mh, err := mappedHash(d.Mapped)
	if err != nil {
		return err
	}
	ch, err := chartsHash(d.Charts)
	if err != nil {
		return err
	}
	rh, err := optionalHash(d.Reread)
	if err != nil {
		return err
	}
	bh, err := optionalHash(d.ChartsByModel)
	if err != nil {
		return err
	}
	b := receiptBody{V: ReceiptFormat, ID: ids.New("drr-", 12), Document: d.ID, File: d.File, Pages: ReceiptPages(d.Pages),
		Revisions: rev, Elements: els, Fields: fs, ModelCalls: append([]ModelCallRef{}, calls...), Mapped: mh, Charts: ch,
		Reread: rh, ChartsByModel: bh, Synthetic: &synthetic, Signer: k.Signer()}
	if len(d.Models) > 0 {
		b.Models = append([]ModelRef{}, d.Models...)
	}
	s, err := attest.Sign(k, ReceiptFormat, b)
	if err != nil {
		return err
	}
	d.Receipt = Receipt{receiptBody: s.Body, Sig: s.Sig}
	return nil
}

// Check is one verification step.
type Check = attest.Check

// Decode reads a document as the verifiers take it back: exactly as POST
// /docreader/read wrote it, every field there and no other (exact.Decode),
// so that every field of it is one Verify checks against the receipt.
// Errors name the first field that differs.
func Decode(raw []byte) (*Document, error) {
	var peek struct {
		Receipt struct {
			V string `json:"v"`
		} `json:"receipt"`
	}
	if json.Unmarshal(raw, &peek) == nil && peek.Receipt.V != ReceiptFormat {
		return nil, fmt.Errorf("the receipt's v is %q, want %s", peek.Receipt.V, ReceiptFormat)
	}
	raw, err := withoutDoneEnvelope(raw)
	if err != nil {
		return nil, err
	}
	var d Document
	if err := exact.Decode(raw, &d, "document"); err != nil {
		return nil, err
	}
	// The receipt binds a page's deskew by value and leaves it out at 0,
	// so -0 (which exact.Decode writes again as -0) would verify in
	// place of the 0 the box wrote: the box never writes -0 (a page not
	// turned has 0, a turned one at least raster.MinSkew).
	for i, p := range d.Pages {
		if p.Deskew == 0 && math.Signbit(p.Deskew) {
			return nil, &exact.Error{Path: fmt.Sprintf("document.pages[%d].deskew", i), Problem: "is written -0 where the box writes 0 (send numbers exactly as the box wrote them)"}
		}
	}
	return &d, nil
}

// withoutDoneEnvelope is raw without the envelope of the stream's done
// event ("type": "done" and "at_ms"), which carries the document with its
// fields beside them, so that the event verifies as it was received;
// raw itself when it is not one. Keys twice are refused first (the
// envelope is taken off a map, which would keep one of them).
func withoutDoneEnvelope(raw []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil || string(top["type"]) != `"done"` {
		return raw, nil
	}
	var at uint64
	if json.Unmarshal(top["at_ms"], &at) != nil {
		return raw, nil // not the envelope: exact.Decode names "type"
	}
	if e := strictjson.Duplicate(raw); e != nil {
		p := "document"
		if e.Path != "" {
			p += "." + e.Path
		}
		return nil, &exact.Error{Path: p + "." + e.Key, Problem: "appears twice (send each key once)"}
	}
	delete(top, "type")
	delete(top, "at_ms")
	return json.Marshal(top)
}

// Verify checks a document: the receipt's signature, that this box
// (pinned) signed it, and that the document's file, pages, elements and
// fields are the ones it binds. Each check names what failed.
func Verify(d *Document, pinned ed25519.PublicKey) ([]Check, error) {
	r := d.Receipt
	if r.V != ReceiptFormat {
		return nil, fmt.Errorf("the receipt's v is %q, want %s", r.V, ReceiptFormat)
	}
	out, err := r.signed().Verify(ReceiptFormat, pinned)
	if err != nil {
		return nil, err
	}
	add := func(name string, ok bool, detail string) {
		out = append(out, Check{Name: name, OK: ok, Detail: detail})
	}
	switch {
	case d.ID != r.Document:
		add("document", false, fmt.Sprintf("the document id is %q; the receipt names %q", d.ID, r.Document))
	case d.File != r.File:
		add("document", false, "the document's file (sha256, type, bytes, pages) is not the receipt's")
	default:
		add("document", true, "the document id and file are the receipt's")
	}
	add(pagesCheck(d.Pages, r.Pages))
	got, err := elementHashes(d.Pages)
	if err != nil {
		return nil, err
	}
	add(listCheck("elements", "element", got, r.Elements))
	for _, p := range d.Pages {
		for _, e := range p.Elements {
			if e.Page != p.Page {
				add("elements", false, fmt.Sprintf("element %s says page %d but is listed under page %d", e.ID, e.Page, p.Page))
			}
		}
	}
	fs, err := fieldHashes(d.Fields)
	if err != nil {
		return nil, err
	}
	add(listCheck("fields", "field", fs, r.Fields))
	mh, err := mappedHash(d.Mapped)
	if err != nil {
		return nil, err
	}
	switch {
	case mh != r.Mapped && r.Mapped == "":
		add("mapped", false, "the document has a schema mapping the receipt does not bind")
	case mh != r.Mapped && mh == "":
		add("mapped", false, "the receipt binds a schema mapping the document lacks")
	case mh != r.Mapped:
		add("mapped", false, "the schema mapping differs from what the receipt binds (its hash does not match)")
	case mh != "":
		add("mapped", true, "the schema mapping hashes to the receipt's")
	}
	if slices.Equal(d.Models, r.Models) {
		if len(r.Models) > 0 {
			add("models", true, fmt.Sprintf("%d models (role, repository, weights root) are the receipt's", len(r.Models)))
		}
	} else {
		add("models", false, "the models listed (their roles, repositories or weights roots) are not the ones the receipt binds")
	}
	ch, err := chartsHash(d.Charts)
	if err != nil {
		return nil, err
	}
	switch {
	case ch != r.Charts:
		add("charts", false, "the charts differ from what the receipt binds (their hash does not match)")
	case ch != "":
		add("charts", true, "the charts hash to the receipt's")
	}
	for _, b := range []struct {
		name, what string
		v          any
		bound      string
	}{{"reread", "re-read summary (reread)", d.Reread, r.Reread}, {"charts_by_model", "summary of the model's chart readings (charts_by_model)", d.ChartsByModel, r.ChartsByModel}} {
		h, err := optionalHash(b.v)
		if err != nil {
			return nil, err
		}
		switch {
		case h != b.bound && b.bound == "":
			add(b.name, false, "the document has a "+b.what+" the receipt does not bind")
		case h != b.bound && h == "":
			add(b.name, false, "the receipt binds a "+b.what+" the document lacks")
		case h != b.bound:
			add(b.name, false, "the "+b.what+" differs from what the receipt binds (its hash does not match)")
		case h != "":
			add(b.name, true, "the "+b.what+" hashes to the receipt's")
		}
	}
	return out, nil
}

// optionalHash is the sha256 of v's canonical JSON, "" when v is a nil
// pointer.
func optionalHash(v any) (string, error) {
	if rv := reflect.ValueOf(v); !rv.IsValid() || rv.Kind() == reflect.Pointer && rv.IsNil() {
		return "", nil
	}
	c, err := attest.Canonical(v)
	if err != nil {
		return "", err
	}
	return attest.HashText(string(c)), nil
}

// chartsHash is the sha256 of the charts' canonical JSON ("" for none).
func chartsHash(cs []DocChart) (string, error) {
	if len(cs) == 0 {
		return "", nil
	}
	c, err := attest.Canonical(cs)
	if err != nil {
		return "", err
	}
	return attest.HashText(string(c)), nil
}

func pagesCheck(ps []Page, rp []ReceiptPage) (string, bool, string) {
	got := ReceiptPages(ps)
	if len(got) != len(rp) {
		return "pages", false, fmt.Sprintf("the document has %d pages; the receipt binds %d", len(got), len(rp))
	}
	for i := range got {
		if got[i] != rp[i] {
			return "pages", false, fmt.Sprintf("page %d (its size, rotation, source or pixel hash) is not the receipt's", rp[i].Page)
		}
	}
	return "pages", true, fmt.Sprintf("%d pages with the receipt's sizes, sources and pixel hashes", len(rp))
}

func listCheck(name, what string, got, want []HashRef) (string, bool, string) {
	wantBy := map[string]string{}
	for _, h := range want {
		wantBy[h.ID] = h.SHA256
	}
	gotBy := map[string]bool{}
	for _, h := range got {
		gotBy[h.ID] = true
		w, ok := wantBy[h.ID]
		switch {
		case !ok:
			return name, false, fmt.Sprintf("%s %s is not in the receipt", what, h.ID)
		case w != h.SHA256:
			return name, false, fmt.Sprintf("%s %s differs from what the receipt binds (its hash does not match)", what, h.ID)
		}
	}
	for _, h := range want {
		if !gotBy[h.ID] {
			return name, false, fmt.Sprintf("%s %s of the receipt is missing from the document", what, h.ID)
		}
	}
	if len(got) != len(want) {
		return name, false, fmt.Sprintf("the document has %d %ss; the receipt binds %d (one is listed twice)", len(got), what, len(want))
	}
	for i, h := range got {
		if want[i].ID != h.ID {
			return name, false, fmt.Sprintf("%s %s is out of the receipt's order", what, h.ID)
		}
	}
	return name, true, fmt.Sprintf("%d %ss hash to the receipt's", len(got), what)
}

// mappedHash is the sha256 of the mapped object's canonical JSON ("" for
// none): the receipt binds it.
func mappedHash(m *Mapped) (string, error) {
	if m == nil {
		return "", nil
	}
	c, err := attest.Canonical(m)
	if err != nil {
		return "", err
	}
	return attest.HashText(string(c)), nil
}
