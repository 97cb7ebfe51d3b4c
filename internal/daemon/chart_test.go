package daemon

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"testing"

	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/docreader/samples"
	"boxd/web"
)

// TestDocreaderChartRoutes: the chart sample and the same image uploaded
// read into survival data with a signed receipt that verifies; a changed
// median fails the table check; every refusal has its status.
func TestDocreaderChartRoutes(t *testing.T) {
	ts := start(t, nil, web.Probes{}, nil)
	tok := session(t, ts, "clinical")
	r := ts.do(t, call{method: "POST", path: "/docreader/chart", token: tok, body: map[string]any{"sample": "km-survival"}})
	if r.status != 200 {
		t.Fatalf("chart sample: %d %s", r.status, r.body)
	}
	var res chart.Result
	decodeInto(t, r, &res)
	spec := samples.ChartSpec()
	if res.Method != "geometry" || res.Note == "" || res.Chart == nil || len(res.Chart.Series) != 2 || len(res.Chart.AtRisk) != 2 || res.Receipt.Sig == "" || res.ConfBP < 9000 {
		t.Fatalf("result: %s", r.body)
	}
	for _, s := range res.Chart.Series {
		arm := spec.Arms[0]
		if s.Name == "Arm B" {
			arm = spec.Arms[1]
		}
		if s.Median == nil || *s.Median < arm.Median()-1 || *s.Median > arm.Median()+1 || s.Flag != "" {
			t.Errorf("%s: median %v (true %.1f), flag %q", s.Name, s.Median, arm.Median(), s.Flag)
		}
	}
	chartPNG, err := samples.ChartPNG()
	if err != nil {
		t.Fatal(err)
	}
	up := ts.do(t, call{method: "POST", path: "/docreader/chart", token: tok, body: map[string]any{"image_b64": base64.StdEncoding.EncodeToString(chartPNG), "synthetic": true, "method": "geometry"}})
	var res2 chart.Result
	decodeInto(t, up, &res2)
	if up.status != 200 || res2.Image.PixelSHA256 != res.Image.PixelSHA256 || res2.Note != "" {
		t.Fatalf("upload: %d %s", up.status, up.body)
	}
	v := ts.do(t, call{method: "POST", path: "/docreader/chart/verify", body: map[string]any{"chart": json.RawMessage(r.body)}})
	if v.status != 200 || v.json(t)["ok"] != true {
		t.Fatalf("verify: %d %s", v.status, v.body)
	}
	fr := ts.do(t, call{method: "POST", path: "/docreader/chart", token: tok, body: map[string]any{"sample": "forest-plot"}})
	var fres chart.Result
	decodeInto(t, fr, &fres)
	if fr.status != 200 || fres.Chart == nil || fres.Chart.Type != "forest" || len(fres.Chart.Rows) != len(samples.ForestSpec().Rows) {
		t.Fatalf("forest sample: %d %s", fr.status, fr.body)
	}
	br := ts.do(t, call{method: "POST", path: "/docreader/chart", token: tok, body: map[string]any{"sample": "bar-chart"}})
	if br.status != 200 || !strings.Contains(string(br.body), `"type":"bar"`) {
		t.Fatalf("bar sample: %d %s", br.status, br.body)
	}
	m := *res.Chart.Series[0].Median + 5
	res.Chart.Series[0].Median = &m
	if v := ts.do(t, call{method: "POST", path: "/docreader/chart/verify", body: map[string]any{"chart": res}}); v.status != 200 || v.json(t)["ok"] != false || !strings.Contains(string(v.body), "table") {
		t.Errorf("tampered chart: %d %s", v.status, v.body)
	}
	for _, c := range []struct {
		name   string
		token  string
		body   any
		status int
		says   string
	}{
		{"no token", "", map[string]any{"sample": "km-survival"}, 401, "Bearer"},
		{"bad base64", tok, `{"image_b64": "!!!", "synthetic": true}`, 400, "image_b64"},
		{"a PDF", tok, map[string]any{"image_b64": base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 x")), "synthetic": true}, 415, "PNG, JPEG or WebP"},
		{"unknown method", tok, map[string]any{"sample": "km-survival", "method": "guess"}, 400, "hybrid, model or geometry"},
		{"model method", tok, map[string]any{"sample": "km-survival", "method": "model"}, 503, "vision model"},
		{"unknown sample", tok, map[string]any{"sample": "nope"}, 404, "km-survival"},
		{"over 12 MB", tok, map[string]any{"image_b64": base64.StdEncoding.EncodeToString(make([]byte, 12<<20+1)), "synthetic": true}, 413, "image_b64"},
		{"no axes", tok, map[string]any{"image_b64": base64.StdEncoding.EncodeToString(blankPNG(t)), "synthetic": true, "method": "geometry"}, 422, "could not be calibrated"},
	} {
		if r := ts.do(t, call{method: "POST", path: "/docreader/chart", token: c.token, body: c.body}); r.status != c.status || !strings.Contains(string(r.body), c.says) {
			t.Errorf("%s: %d %s; want %d saying %q", c.name, r.status, r.body, c.status, c.says)
		}
	}
}

// blankPNG is a white 300 × 200 PNG.
func blankPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 300, 200))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
