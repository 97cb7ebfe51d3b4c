package chart

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"slices"

	"boxd/engine/attest"
	"boxd/internal/ids"
	"boxd/pipelines/docreader/exact"
)

// ReceiptFormat is the chart receipt's format (contract 3, section 2:
// "signed chart receipt").
const ReceiptFormat = "service.docreader-chart-receipt.v1"

// Image is the image a chart was read from.
type Image struct {
	SHA256      string `json:"sha256"` // the file's bytes
	Type        string `json:"type"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	PixelSHA256 string `json:"pixel_sha256"` // the raster as a binary PPM (as the document reader's pages)
}

// ModelCallRef names a model-call receipt the reading made.
type ModelCallRef struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
}

type receiptBody struct {
	V          string         `json:"v"`
	ID         string         `json:"id"`
	Result     string         `json:"result"`
	Image      Image          `json:"image"`
	Method     string         `json:"method"`
	Revisions  Revisions      `json:"revisions"`
	Chart      string         `json:"chart_sha256"` // canonical JSON of the chart
	ModelCalls []ModelCallRef `json:"model_calls"`
	// ConfBP, Note and Models bind the result's conf_bp, note and the
	// sha256 of its models' canonical JSON ("" for none). They are left
	// out when empty so that receipts signed before them keep their
	// signatures; such a receipt binds no conf_bp, and Verify refuses it.
	ConfBP *int   `json:"conf_bp,omitempty"`
	Note   string `json:"note,omitempty"`
	Models string `json:"models_sha256,omitempty"`
	// Synthetic is what the caller said of the image: true when it sent
	// synthetic: true or read a built-in sample, false otherwise; left
	// out of receipts signed before it was recorded.
	Synthetic *bool         `json:"synthetic,omitempty"`
	Signer    attest.Signer `json:"signer"`
}

// Revisions name what read the chart.
type Revisions struct {
	Chart string `json:"chart"`
	OCR   string `json:"ocr"`
}

// SignedBy names the key that signed the receipt (attest.SignedBody).
func (b receiptBody) SignedBy() attest.Signer { return b.Signer }

// Receipt is the signed chart receipt: its body's fields and sig, flat
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

// Result is POST /docreader/chart's answer: the chart as data, how it was
// read, its confidence and the signed receipt binding them to the image.
type Result struct {
	ID     string `json:"id"`
	Image  Image  `json:"image"`
	Method string `json:"method"` // geometry (measured from the drawing) or model (the vision model's reading)
	// Note says how the method asked for was served ("" when as asked).
	Note string `json:"note,omitempty"`
	// ConfBP is the reading's confidence in basis points: 10000 less the
	// calibration's worst label residual as a share of each axis's range.
	ConfBP   int            `json:"conf_bp"`
	Chart    *Chart         `json:"chart"`
	Models   []any          `json:"models"`
	Receipts []ModelCallRef `json:"receipts"`
	Receipt  Receipt        `json:"receipt"`
}

// Sign binds the result to its image and signs it; synthetic is what the
// caller said of the image.
func Sign(k *attest.Key, r *Result, rev Revisions, synthetic bool) error {
	h, err := chartHash(r.Chart)
	if err != nil {
		return err
	}
	mh, err := modelsHash(r.Models)
	if err != nil {
		return err
	}
	conf := r.ConfBP
	b := receiptBody{V: ReceiptFormat, ID: ids.New("dcr-", 12), Result: r.ID, Image: r.Image, Method: r.Method, Revisions: rev,
		Chart: h, ModelCalls: append([]ModelCallRef{}, r.Receipts...), ConfBP: &conf, Note: r.Note, Models: mh, Synthetic: &synthetic, Signer: k.Signer()}
	s, err := attest.Sign(k, ReceiptFormat, b)
	if err != nil {
		return err
	}
	r.Receipt = Receipt{receiptBody: s.Body, Sig: s.Sig}
	return nil
}

// modelsHash is the sha256 of the models' canonical JSON ("" for none).
func modelsHash(ms []any) (string, error) {
	if len(ms) == 0 {
		return "", nil
	}
	j, err := attest.Canonical(ms)
	if err != nil {
		return "", err
	}
	return attest.HashText(string(j)), nil
}

// DecodeResult reads a chart result as the verifiers take it back: exactly
// as POST /docreader/chart wrote it, every field there and no other
// (exact.Decode), so that every field of it is one Verify checks against
// the receipt. Errors name the first field that differs.
func DecodeResult(raw []byte) (*Result, error) {
	var peek struct {
		Receipt struct {
			V string `json:"v"`
		} `json:"receipt"`
	}
	if json.Unmarshal(raw, &peek) == nil && peek.Receipt.V != ReceiptFormat {
		return nil, fmt.Errorf("the receipt's v is %q, want %s", peek.Receipt.V, ReceiptFormat)
	}
	var r Result
	if err := exact.Decode(raw, &r, "chart"); err != nil {
		return nil, err
	}
	return &r, nil
}

func chartHash(c *Chart) (string, error) {
	j, err := attest.Canonical(c)
	if err != nil {
		return "", err
	}
	return attest.HashText(string(j)), nil
}

// Check is one verification step.
type Check = attest.Check

// Verify checks a chart result: the receipt's signature, that this box
// (pinned) signed it, the chart (table) and the image it binds, the
// result id and the method.
func Verify(r *Result, pinned ed25519.PublicKey) ([]Check, error) {
	rc := r.Receipt
	if rc.V != ReceiptFormat {
		return nil, fmt.Errorf("the receipt's v is %q, want %s", rc.V, ReceiptFormat)
	}
	out, err := rc.signed().Verify(ReceiptFormat, pinned)
	if err != nil {
		return nil, err
	}
	add := func(name string, ok bool, detail string) {
		out = append(out, Check{Name: name, OK: ok, Detail: detail})
	}
	h, err := chartHash(r.Chart)
	if err != nil {
		return nil, err
	}
	if h == rc.Chart {
		add("table", true, "the chart's data hash to the receipt's chart_sha256")
	} else {
		add("table", false, "the chart's data (series, medians, numbers at risk, hazard ratio, axes) differ from what the receipt binds")
	}
	if r.Image == rc.Image {
		add("image", true, "the image's file and pixel hashes and size are the receipt's")
	} else {
		add("image", false, "the image (its hashes or size) is not the one the receipt binds")
	}
	if r.ID == rc.Result && r.Method == rc.Method {
		add("result", true, "the result id and method are the receipt's")
	} else {
		add("result", false, "the result id or method is not the receipt's")
	}
	mh, err := modelsHash(r.Models)
	if err != nil {
		return nil, err
	}
	switch {
	case rc.ConfBP == nil:
		add("reading", false, "the receipt binds no conf_bp (it was signed before receipts bound the confidence, note and models): read the chart again")
	case *rc.ConfBP != r.ConfBP:
		add("reading", false, fmt.Sprintf("conf_bp is %d; the receipt binds %d", r.ConfBP, *rc.ConfBP))
	case r.Note != rc.Note:
		add("reading", false, "the note is not the one the receipt binds")
	case mh != rc.Models:
		add("reading", false, "the models listed are not the ones the receipt binds (their hash does not match)")
	default:
		add("reading", true, "the confidence, note and models are the receipt's")
	}
	if slices.Equal(r.Receipts, rc.ModelCalls) {
		add("receipts", true, fmt.Sprintf("%d model-call receipts, as the receipt lists them", len(rc.ModelCalls)))
	} else {
		add("receipts", false, "the model-call receipts listed are not the ones the receipt binds")
	}
	return out, nil
}
