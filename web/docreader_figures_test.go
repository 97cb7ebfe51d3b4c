package web

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/go-pdf/fpdf"

	"boxd/pipelines/docreader/samples"
)

// TestDocreaderFigureByModelRoute: POST /docreader/read with charts: true
// on a PDF whose one figure has no axes to calibrate, on a box whose chat
// model sees images: the model's reading of the figure is a typed model
// call on the run path (its receipt event streams before done and is
// served at /receipts/{id}), the document says what it did
// (charts_by_model), binds the call (model_calls kind chart) and
// verifies. Without charts no call is made.
func TestDocreaderFigureByModelRoute(t *testing.T) {
	env := visionServer(t)
	tok := session(t, env.testServer, "clinical")
	// A figure of 400 × 300 pixels: a grey frame, no labels.
	img := image.NewRGBA(image.Rect(0, 0, 400, 300))
	for y := range 300 {
		for x := range 400 {
			c := color.RGBA{255, 255, 255, 255}
			if x == 40 || y == 260 {
				c = color.RGBA{90, 90, 90, 255}
			}
			img.Set(x, y, c)
		}
	}
	var pngb bytes.Buffer
	if err := png.Encode(&pngb, img); err != nil {
		t.Fatal(err)
	}
	p := samples.NewPDF()
	p.AddPage()
	p.SetFont("Helvetica", "", 10)
	p.Text(54, 40, "Figure 1. A drawing.")
	p.RegisterImageOptionsReader("fig", fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(pngb.Bytes()))
	p.ImageOptions("fig", 60, 60, 200, 150, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	var pdf bytes.Buffer
	if err := p.Output(&pdf); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"file_b64": base64.StdEncoding.EncodeToString(pdf.Bytes()), "synthetic": true, "charts": true, "stream": true}
	r := env.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: body})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var types []string
	var receipt string
	var done json.RawMessage
	for _, line := range strings.Split(string(r.body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		types = append(types, ev["type"].(string))
		switch ev["type"] {
		case "receipt":
			receipt, _ = ev["id"].(string)
		case "done":
			done = json.RawMessage(data)
		}
	}
	if strings.Join(types, " ") != "receipt page done" {
		t.Fatalf("events %v", types)
	}
	var doc struct {
		ChartsByModel *struct{ Read, Skipped int } `json:"charts_by_model"`
		Receipt       struct {
			ModelCalls []struct{ ID, Kind string } `json:"model_calls"`
		} `json:"receipt"`
		Charts []struct{ Method string } `json:"charts"`
	}
	if err := json.Unmarshal(done, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ChartsByModel == nil || doc.ChartsByModel.Read != 1 || len(doc.Receipt.ModelCalls) != 1 || doc.Receipt.ModelCalls[0].Kind != "chart" {
		t.Fatalf("charts_by_model %+v, model calls %+v", doc.ChartsByModel, doc.Receipt.ModelCalls)
	}
	for _, c := range doc.Charts {
		if c.Method != "model" {
			t.Errorf("a chart with method %q from a figure with no axes", c.Method)
		}
	}
	if receipt == "" || receipt != doc.Receipt.ModelCalls[0].ID {
		t.Errorf("the receipt event %q is not the call the document binds (%+v)", receipt, doc.Receipt.ModelCalls)
	}
	if rc := env.do(t, call{method: "GET", path: "/receipts/" + doc.Receipt.ModelCalls[0].ID}); rc.status != 200 {
		t.Errorf("the figure reading's receipt: %d", rc.status)
	}
	if v := env.do(t, call{method: "POST", path: "/docreader/verify", body: map[string]any{"document": done}}); v.status != 200 || v.json(t)["ok"] != true {
		t.Errorf("verify: %d %s", v.status, v.body)
	}
	delete(body, "charts")
	delete(body, "stream")
	plain := env.do(t, call{method: "POST", path: "/docreader/read", token: tok, body: body})
	if plain.status != 200 || strings.Contains(string(plain.body), "charts_by_model") || strings.Contains(string(plain.body), `"kind":"chart"`) {
		t.Errorf("without charts: %d %s", plain.status, plain.body[:min(len(plain.body), 300)])
	}
}
