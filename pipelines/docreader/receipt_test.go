package docreader

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/docreader/ocr"

	"github.com/go-pdf/fpdf"
)

func testKey(seed byte) *attest.Key {
	s := make([]byte, ed25519.SeedSize)
	s[0] = seed
	return attest.NewKey(ed25519.NewKeyFromSeed(s))
}

// TestVerifyRejectsEveryTamperedField: a read document verifies; changing
// any bound field (an element's text, box, kind, order or confidence, a
// page's pixel hash or size, the file hash, the document id, the
// signature, an element removed or moved) fails the check that names it,
// and a document another key signed fails "signer".
func TestVerifyRejectsEveryTamperedField(t *testing.T) {
	k := testKey(1)
	s := &Service{Key: k}
	d, err := s.Read(context.Background(), run.Env{}, ReadRequest{Sample: SampleBornDigital})
	if err != nil {
		t.Fatal(err)
	}
	if d.Receipt.V != ReceiptFormat || !strings.HasPrefix(d.Receipt.ID, "drr-") || len(d.Receipt.Elements) != len(d.Pages[0].Elements) ||
		d.Receipt.Revisions.Layout != LayoutRevision || !strings.HasPrefix(d.Receipt.Revisions.Parser, "mupdf-1.24") {
		t.Fatalf("receipt %+v", d.Receipt)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	fresh := func() *Document {
		var c Document
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		return &c
	}
	failed := func(d *Document, pinned ed25519.PublicKey) map[string]string {
		cs, err := Verify(d, pinned)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, c := range cs {
			if !c.OK {
				out[c.Name] = c.Detail
			}
		}
		return out
	}
	if f := failed(fresh(), k.PublicKey()); len(f) != 0 {
		t.Fatalf("untouched document fails: %v", f)
	}
	for _, c := range []struct {
		name   string
		tamper func(d *Document)
		check  string
		says   string
	}{
		{"element text", func(d *Document) { d.Pages[0].Elements[2].Text += " not" }, "elements", "p1-e3"},
		{"element box", func(d *Document) { d.Pages[0].Elements[1].BBox[0]++ }, "elements", "p1-e2"},
		{"element kind", func(d *Document) { d.Pages[0].Elements[0].Kind = KindText }, "elements", "p1-e1"},
		{"element order", func(d *Document) { d.Pages[0].Elements[3].Order = 99 }, "elements", "p1-e4"},
		{"element confidence", func(d *Document) { d.Pages[0].Elements[4].ConfBP = 9000 }, "elements", "p1-e5"},
		{"element line", func(d *Document) { d.Pages[0].Elements[2].Lines[0].Text = "x" }, "elements", "p1-e3"},
		{"element removed", func(d *Document) { d.Pages[0].Elements = d.Pages[0].Elements[1:] }, "elements", "p1-e1"},
		{"elements swapped", func(d *Document) {
			e := d.Pages[0].Elements
			e[0], e[1] = e[1], e[0]
		}, "elements", "order"},
		{"element added", func(d *Document) {
			d.Pages[0].Elements = append(d.Pages[0].Elements, Element{ID: "p1-e99", Page: 1, Kind: KindText, Text: "extra"})
		}, "elements", "p1-e99"},
		{"element twice", func(d *Document) { d.Pages[0].Elements = append(d.Pages[0].Elements, d.Pages[0].Elements[0]) }, "elements", "listed twice"},
		{"pixel hash", func(d *Document) { d.Pages[0].PixelSHA256 = strings.Repeat("0", 64) }, "pages", "page 1"},
		{"page size", func(d *Document) { d.Pages[0].Width++ }, "pages", "page 1"},
		{"page source", func(d *Document) { d.Pages[0].Source = PageOCR }, "pages", "page 1"},
		{"page deskew", func(d *Document) { d.Pages[0].Deskew = 1.5 }, "pages", "page 1"},
		{"model added", func(d *Document) {
			d.Models = append(d.Models, ModelRef{Role: "reread", Repo: "other", Revision: strings.Repeat("e", 64)})
		}, "models", "not the ones the receipt binds"},
		{"file hash", func(d *Document) { d.File.SHA256 = strings.Repeat("1", 64) }, "document", "file"},
		{"document id", func(d *Document) { d.ID = "doc-other" }, "document", "doc-other"},
		{"field added", func(d *Document) { d.Fields = append(d.Fields, Field{ID: "p1-f9", Name: "x", Value: "y"}) }, "fields", "field p1-f9"},
		{"signature", func(d *Document) {
			b := []byte(d.Receipt.Sig)
			b[0] ^= 1
			if b[0] > 'f' || (b[0] > '9' && b[0] < 'a') {
				b[0] = '0'
			}
			d.Receipt.Sig = string(b)
		}, "signature", ""},
		{"receipt element hash", func(d *Document) { d.Receipt.Elements[0].SHA256 = strings.Repeat("2", 64) }, "signature", ""},
	} {
		d := fresh()
		c.tamper(d)
		f := failed(d, k.PublicKey())
		detail, ok := f[c.check]
		if !ok || !strings.Contains(detail, c.says) {
			t.Errorf("%s: failed checks %v; want %q naming %q", c.name, f, c.check, c.says)
		}
	}
	if f := failed(fresh(), testKey(2).PublicKey()); len(f) != 1 || f["signer"] == "" {
		t.Errorf("another box's key: failed %v, want signer only", f)
	}
	if _, err := Verify(&Document{}, k.PublicKey()); err == nil {
		t.Error("a document without a receipt verified")
	}
}

// TestReadRequestValidation: the body's rules, each with its status.
func TestReadRequestValidation(t *testing.T) {
	yes, no := true, false
	const f = "/tmp/upload"
	for _, c := range []struct {
		name string
		r    ReadRequest
		kind problem.Kind
		says string
	}{
		{"nothing", ReadRequest{}, problem.Invalid, "send file_b64"},
		{"both", ReadRequest{File: f, Sample: SampleBornDigital}, problem.Invalid, "not both"},
		{"unknown sample", ReadRequest{Sample: "nope"}, problem.NotFound, "no sample"},
		{"schema not an object", ReadRequest{File: f, Synthetic: &yes, Schema: json.RawMessage(`["name"]`)}, problem.Invalid, "schema must be a JSON schema object"},
		{"schema too large", ReadRequest{File: f, Synthetic: &yes, Schema: json.RawMessage(`{"description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`)}, problem.Invalid, "at most"},
	} {
		if err := c.r.Validate(); !problem.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %v saying %q", c.name, err, c.kind, c.says)
		}
	}
	// synthetic is the operator's rule (limits.require_synthetic),
	// applied at admission: the body itself is valid either way.
	for _, r := range []ReadRequest{{File: f, Synthetic: &yes}, {File: f, Synthetic: &no}, {File: f}, {Sample: SampleScanned}} {
		if err := r.Validate(); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
	for _, c := range []struct {
		r     ReadRequest
		field string
		flag  *bool
	}{
		{ReadRequest{File: f, Synthetic: &yes}, "file_b64", &yes},
		{ReadRequest{File: f}, "file_b64", nil},
		{ReadRequest{Sample: SampleScanned}, "", nil},
		{ReadRequest{File: f, ForRoute: "fill"}, "", nil},
	} {
		if field, flag := c.r.SyntheticClaim(); field != c.field || flag != c.flag {
			t.Errorf("%+v: claim %q %v, want %q %v", c.r, field, flag, c.field, c.flag)
		}
	}
}

// TestReceiptRecordsSynthetic: the signed receipt says what the caller
// said of the file (a sample is synthetic; a file sent without
// synthetic: true is recorded false), and the value is signed.
func TestReceiptRecordsSynthetic(t *testing.T) {
	k := testKey(1)
	s := &Service{Key: k}
	data := pdfBytes(t, func() *fpdf.Fpdf {
		p := fpdf.New("P", "pt", "Letter", "")
		p.AddPage()
		p.SetFont("Helvetica", "", 12)
		p.Text(72, 100, "A clinic's own letter")
		return p
	}())
	file := filepath.Join(t.TempDir(), "upload")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	for _, c := range []struct {
		r    ReadRequest
		want bool
	}{
		{ReadRequest{Sample: SampleBornDigital}, true},
		{ReadRequest{File: file, Synthetic: &yes}, true},
		{ReadRequest{File: file, Synthetic: &no}, false},
		{ReadRequest{File: file}, false},
	} {
		d, err := s.Read(context.Background(), run.Env{}, c.r)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Receipt.Synthetic; got == nil || *got != c.want {
			t.Errorf("%+v: receipt synthetic %v, want %v", c.r, got, c.want)
		}
		if bad := failedChecks(t, d, k.PublicKey()); len(bad) != 0 {
			t.Errorf("%+v: %v", c.r, bad)
		}
		tampered := *d
		flip := !c.want
		tampered.Receipt.Synthetic = &flip
		if bad := failedChecks(t, &tampered, k.PublicKey()); len(bad) == 0 {
			t.Errorf("synthetic flipped in the receipt still verifies")
		}
	}
}

// TestReadOneAtATime: while a document is being read, another read is
// refused with 503 Busy and a Retry-After, not queued behind it.
func TestReadOneAtATime(t *testing.T) {
	s := &Service{Key: testKey(1)}
	s.init()
	s.gate <- struct{}{} // a read in progress
	_, err := s.Read(context.Background(), run.Env{}, ReadRequest{Sample: SampleBornDigital})
	pe, ok := problem.As(err)
	if !ok || pe.Kind != problem.Busy || pe.RetryAfter <= 0 || !strings.Contains(err.Error(), "one document or chart at a time") {
		t.Fatalf("second read: %v", err)
	}
	<-s.gate
	if _, err := s.Read(context.Background(), run.Env{}, ReadRequest{Sample: SampleBornDigital}); err != nil {
		t.Fatalf("after the first finished: %v", err)
	}
}

// TestOCRStartRetried: a Tesseract start that failed is remembered for a
// while (no new attempt per request), then tried again, and a start that
// works is kept.
func TestOCRStartRetried(t *testing.T) {
	calls := 0
	fail := true
	defer func(f func(*Service) (*ocr.OCR, error)) { newOCR = f }(newOCR)
	real := newOCR
	newOCR = func(s *Service) (*ocr.OCR, error) {
		calls++
		if fail {
			return nil, errors.New("no eng.traineddata")
		}
		return real(s)
	}
	s := &Service{ocrRetry: 50 * time.Millisecond}
	defer s.Close()
	if _, err := s.tesseract(); err == nil {
		t.Fatal("the failing start succeeded")
	}
	if _, err := s.tesseract(); err == nil || calls != 1 {
		t.Fatalf("second call: %v after %d starts; want the remembered failure", err, calls)
	}
	time.Sleep(60 * time.Millisecond)
	fail = false
	o, err := s.tesseract()
	if err != nil || o == nil || calls != 2 {
		t.Fatalf("after the wait: %v, %d starts", err, calls)
	}
	if o2, _ := s.tesseract(); o2 != o || calls != 2 {
		t.Errorf("a working start was not kept (%d starts)", calls)
	}
}

// failedChecks are the names of the checks d fails.
func failedChecks(t *testing.T, d *Document, pinned ed25519.PublicKey) []string {
	t.Helper()
	cs, err := Verify(d, pinned)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		if !c.OK {
			out = append(out, c.Name)
		}
	}
	return out
}
