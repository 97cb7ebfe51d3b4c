package daemon

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
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
	blank, err := samples.BlankChartPNG() // 400 × 300 pixels: a frame, no labels
	if err != nil {
		t.Fatal(err)
	}
	p := samples.NewPDF()
	p.AddPage()
	p.SetFont("Helvetica", "", 10)
	p.Text(54, 40, "Figure 1. A drawing.")
	p.RegisterImageOptionsReader("fig", fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(blank))
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
	for _, ev := range readEvents(t, r.body) {
		if ev.m["type"] != "progress" { // sent when the run is silent (a slow machine)
			types = append(types, ev.m["type"].(string))
		}
		switch ev.m["type"] {
		case "receipt":
			receipt, _ = ev.m["id"].(string)
		case "done":
			done = json.RawMessage(ev.raw)
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
