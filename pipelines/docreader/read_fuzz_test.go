package docreader

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"reflect"
	"strings"
	"testing"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/pipelines/docreader/chart"
)

// fuzzPixels bounds the fuzzed images' rasters, so that an exec stays
// fast; the checks are the same as at MaxPagePixels.
const fuzzPixels = 1 << 16

// FuzzReadFile: what the reader does with a file's bytes before MuPDF
// or Tesseract sees them (the type sniffed from the first bytes, a
// TIFF's page count, an image's header and its pixel limit, the decode)
// never panics. PDFs stop at the sniff: past it is MuPDF. An image is
// decoded only when its header is under the pixel limit, and with no
// OCR on the box every image ends in 415, 400, 413 or 503 (no OCR).
func FuzzReadFile(f *testing.F) {
	img := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.NRGBA{R: 200, A: 255})
	var p, j bytes.Buffer
	if err := png.Encode(&p, img); err != nil {
		f.Fatal(err)
	}
	if err := jpeg.Encode(&j, img, nil); err != nil {
		f.Fatal(err)
	}
	f.Add(p.Bytes())
	f.Add(j.Bytes())
	// A PNG header claiming 100000 × 100000 pixels.
	big := bytes.Clone(p.Bytes())
	copy(big[16:24], []byte{0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0})
	f.Add(big)
	f.Add([]byte("II*\x00\x08\x00\x00\x00\x01\x00\x00\x01\x03\x00\x01\x00\x00\x00\x02\x00\x00\x00\x08\x00\x00\x00"))
	f.Add([]byte("MM\x00*\x00\x00\x00\x08\x00\x00\x00\x00\x00\x08"))
	f.Add([]byte("RIFF\x10\x00\x00\x00WEBPVP8 \x04\x00\x00\x00abcd"))
	f.Add([]byte("%PDF-1.7\n1 0 obj<<>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF"))
	f.Add([]byte("junk before the header %PDF-1.4"))
	f.Add([]byte("GIF89a"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		typ := sniff(data)
		if typ != sniff(data) {
			t.Fatal("sniff is not deterministic")
		}
		switch typ {
		case "", TypePDF, TypePNG, TypeJPEG, TypeWebP, TypeTIFF:
		default:
			t.Fatalf("sniff gave %q", typ)
		}
		if typ == TypeTIFF {
			if n := tiffPages(data); n < 0 || n > 1001 {
				t.Fatalf("a TIFF of %d pages", n)
			}
		}
		if typ == TypePDF {
			return // MuPDF's
		}
		rd := &reader{maxPixels: fuzzPixels}
		info, pages, err := rd.readFile(context.Background(), data, MaxPages)
		if err == nil || pages != nil {
			t.Fatalf("read %d pages with no OCR (err %v)", len(pages), err)
		}
		if info.Type != typ || info.Bytes != int64(len(data)) {
			t.Fatalf("file info %+v for %d bytes of %q", info, len(data), typ)
		}
		pr, ok := problem.As(err)
		if !ok {
			t.Fatalf("error %v (%T) is not a problem", err, err)
		}
		switch pr.Kind {
		case problem.Unsupported, problem.Invalid, problem.TooLarge:
		case problem.Unavailable:
			// Decoded: the header was under the limit.
			cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
			if err != nil || int64(cfg.Width)*int64(cfg.Height) > fuzzPixels {
				t.Fatalf("decoded an image whose header says %d × %d (%v)", cfg.Width, cfg.Height, err)
			}
		default:
			t.Fatalf("problem %s: %s", pr.Kind, pr.Message)
		}
	})
}

// fuzzSigned is a signed document and a signed chart result.
func fuzzSigned(f *testing.F, k *attest.Key) (*Document, *chart.Result) {
	d := &Document{ID: "doc_1", File: FileInfo{SHA256: strings.Repeat("a", 64), Type: TypePDF, Bytes: 10, Pages: 1},
		Pages: []Page{{Page: 1, Width: 10, Height: 10, Source: PageTextLayer, PixelSHA256: strings.Repeat("b", 64),
			Elements: []Element{
				{ID: "p1-e1", Page: 1, Kind: KindTitle, BBox: [4]int{1, 1, 5, 2}, Text: "Intake", Source: SourceParser, ConfBP: 10000},
				{ID: "p1-e2", Page: 1, Kind: KindText, BBox: [4]int{1, 3, 5, 2}, Order: 1, Text: "Name: Ana", Source: SourceOCR, ConfBP: 8100,
					Lines: []Line{{BBox: [4]int{1, 3, 5, 2}, Text: "Name: Ana"}}},
			}}},
		Fields: []Field{{ID: "p1-f1", Name: "Name", Type: "label_value", Value: "Ana", Page: 1, BBox: [4]int{1, 3, 5, 2}, Element: "p1-e2", Source: FieldLayout, ValueIn: ValueInElement}},
		Models: []ModelRef{}}
	if err := sign(k, d, Revisions{Parser: "mupdf-1", Layout: "1", OCR: "none"}, nil, true); err != nil {
		f.Fatal(err)
	}
	c := &chart.Result{ID: "ch_1", Image: chart.Image{SHA256: strings.Repeat("c", 64), Type: TypePNG, Width: 4, Height: 4, PixelSHA256: strings.Repeat("d", 64)},
		Method: MethodGeometry, ConfBP: 9000, Chart: &chart.Chart{}, Models: []any{}, Receipts: []chart.ModelCallRef{}}
	if err := chart.Sign(k, c, chart.Revisions{Chart: "1", OCR: "none"}, true); err != nil {
		f.Fatal(err)
	}
	return d, c
}

// FuzzVerify: POST /docreader/verify's and /docreader/chart/verify's
// verifiers, anyone's to call, never panic, answer ok exactly when every
// check holds, refuse with a 400 problem, and accept under the box's key
// only the document or chart result the box signed.
func FuzzVerify(f *testing.F) {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 9
	k := attest.NewKey(ed25519.NewKeyFromSeed(seed))
	d, c := fuzzSigned(f, k)
	dj, err := json.Marshal(d)
	if err != nil {
		f.Fatal(err)
	}
	cj, err := json.Marshal(c)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(false, dj)
	f.Add(true, cj)
	f.Add(false, bytes.Replace(dj, []byte(`"Ana"`), []byte(`"Bob"`), 1))
	f.Add(true, bytes.Replace(cj, []byte(`9000`), []byte(`9999`), 1))
	f.Add(false, []byte(`{"receipt":{"v":"service.docreader-receipt.v1"}}`))
	f.Add(true, []byte(`{"receipt":{"v":"service.docreader-chart-receipt.v1","sig":"00"}}`))
	f.Add(false, []byte(`null`))
	f.Add(true, []byte(`[]`))
	s := &Service{Key: k}
	f.Fuzz(func(t *testing.T, isChart bool, raw []byte) {
		var resp *VerifyResponse
		var err error
		if isChart {
			resp, err = s.ChartVerify(ChartVerifyRequest{Chart: raw})
		} else {
			resp, err = s.Verify(VerifyRequest{Document: raw})
		}
		if err != nil {
			if p, ok := problem.As(err); !ok || p.Kind != problem.Invalid || p.Message == "" {
				t.Fatalf("error %v (%T), want a 400 problem", err, err)
			}
			return
		}
		ok := len(resp.Checks) > 0
		for _, ch := range resp.Checks {
			if ch.Name == "" || ch.Detail == "" {
				t.Fatalf("incomplete check %+v", ch)
			}
			ok = ok && ch.OK
		}
		if resp.OK != ok {
			t.Fatalf("ok %v with checks %+v", resp.OK, resp.Checks)
		}
		if !resp.OK {
			return
		}
		if isChart {
			var got chart.Result
			if err := json.Unmarshal(raw, &got); err != nil || !sameSigned(&got, c, chartReceipt) {
				t.Fatalf("accepted a chart result the box did not sign:\n%s", raw)
			}
			return
		}
		var got Document
		if err := json.Unmarshal(raw, &got); err != nil || !sameSigned(&got, d, docReceipt) {
			t.Fatalf("accepted a document the box did not sign:\n%s", raw)
		}
	})
}

// sameSigned reports whether got is want but for the receipt's id and
// signature: every fuzz worker signs the seeds again, under the same key
// but with a fresh receipt id, so a seed from another worker carries
// another id and signature; both are covered by the signature checks.
func sameSigned[T any](got, want *T, receipt func(*T) (*string, *string)) bool {
	g, w := *got, *want
	gid, gsig := receipt(&g)
	wid, wsig := receipt(&w)
	*gid, *gsig = *wid, *wsig
	return reflect.DeepEqual(&g, &w)
}

func docReceipt(d *Document) (*string, *string) { return &d.Receipt.ID, &d.Receipt.Sig }

func chartReceipt(r *chart.Result) (*string, *string) { return &r.Receipt.ID, &r.Receipt.Sig }
