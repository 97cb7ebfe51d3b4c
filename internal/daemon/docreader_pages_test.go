package daemon

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"boxd/configs"
	"boxd/pipelines/docreader"
	"boxd/pipelines/docreader/samples"
	"boxd/web"
)

// TestDocreaderMaxPagesSetting: an 11-page PDF is 413 on a box with the
// hosted limit (10), the message naming docreader.max_pages; a box whose
// operator set docreader.max_pages: 12 reads it, and /docreader/info says
// 12.
func TestDocreaderMaxPagesSetting(t *testing.T) {
	p := samples.NewPDF()
	for i := range 11 {
		p.AddPage()
		p.SetFont("Helvetica", "", 12)
		p.Text(72, 72, "Page "+string(rune('A'+i)))
	}
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"file_b64": base64.StdEncoding.EncodeToString(b.Bytes()), "synthetic": true}

	hosted := start(t, nil, web.Probes{}, nil)
	r := hosted.do(t, call{method: "POST", path: "/docreader/read", token: session(t, hosted, "clinical"), body: body})
	if r.status != 413 || !strings.Contains(r.errMsg(t), "11 pages; at most 10") || !strings.Contains(r.errMsg(t), "docreader.max_pages") {
		t.Errorf("11 pages on the hosted limit: %d %s", r.status, r.body)
	}

	cfg := configs.Defaults()
	cfg.DocReader.MaxPages = 12
	raised := start(t, cfg, web.Probes{}, nil)
	var in docreader.Info
	decodeInto(t, raised.do(t, call{method: "GET", path: "/docreader/info"}), &in)
	if in.Limits["pages"] != 12 {
		t.Errorf("info's pages limit: %d, want 12", in.Limits["pages"])
	}
	r = raised.do(t, call{method: "POST", path: "/docreader/read", token: session(t, raised, "clinical"), body: body})
	var d docreader.Document
	decodeInto(t, r, &d)
	if r.status != 200 || len(d.Pages) != 11 {
		t.Errorf("11 pages with docreader.max_pages 12: %d, %d pages %.300s", r.status, len(d.Pages), r.body)
	}
}
