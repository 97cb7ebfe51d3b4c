package daemon

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"boxd/web"
)

// TestDocreaderOversideScan: a realistic long scan, 1,200 × 33,000
// pixels (under the 40-megapixel limit, but with a side Tesseract
// cannot take: it crashed the whole box with SIGSEGV), is refused with
// 413 naming the side limit on the read and chart routes, and the box
// reads the next document.
func TestDocreaderOversideScan(t *testing.T) {
	ts := start(t, nil, web.Probes{}, nil)
	tok := session(t, ts, "clinical")
	g := image.NewGray(image.Rect(0, 0, 1200, 33000))
	for i := range g.Pix {
		g.Pix[i] = 0xff
	}
	g.SetGray(10, 10, color.Gray{})
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, g); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(buf.Bytes())
	for _, c := range []struct{ path, field string }{{"/docreader/read", "file_b64"}, {"/docreader/chart", "image_b64"}} {
		r := ts.do(t, call{method: "POST", path: c.path, token: tok, body: map[string]any{c.field: b64, "synthetic": true}})
		if r.status != 413 || !strings.Contains(string(r.body), "32000 pixels a side") {
			t.Errorf("%s: %d %s", c.path, r.status, r.body)
		}
	}
	if r := ts.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: map[string]any{"sample": "born-digital"}}); r.status != 200 {
		t.Fatalf("the next read: %d %s", r.status, r.body)
	}
}
