package docreader

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-pdf/fpdf"

	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/docreader/samples"
	"boxd/pipelines/llmcall/llmcalltest"
)

// blankChart is a PNG with nothing to calibrate (samples.BlankChartPNG),
// as a file.
func blankChart(t *testing.T) string {
	t.Helper()
	b, err := samples.BlankChartPNG()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "blank.png")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func chartVerifies(t *testing.T, s *Service, r *chart.Result) bool {
	t.Helper()
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.ChartVerify(ChartVerifyRequest{Chart: raw})
	if err != nil {
		t.Fatal(err)
	}
	return v.OK
}

// TestChartModelMethods: with a model that sees images, method model is
// the model's reading (the tiny random model's numbers are noise; the
// path, the grammar's shape, the receipt and the marking are real),
// hybrid measures a chart whose axes calibrate and falls back to the
// model's reading, marked so, where they do not; geometry refuses that
// one with 422. Each model reading is a charged, receipted call the
// chart receipt lists.
func TestChartModelMethods(t *testing.T) {
	chat, iss := seeingChat(t, true)
	s := &Service{Key: testKey(6), Chat: chat}
	yes := true
	ctx := context.Background()

	b := &llmcalltest.Budget{}
	r, err := s.Chart(ctx, run.Env{Budget: b}, ChartRequest{Sample: SampleChart, Method: MethodModel, Hint: "two arms"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != MethodModel || r.ConfBP != 0 || !strings.Contains(r.Note, "nothing in it is measured") || r.Chart.Type != "kaplan_meier" ||
		len(r.Receipts) != 1 || r.Receipts[0].Kind != "chart" || len(b.Committed()) != 1 || len(r.Models) != 1 {
		t.Fatalf("model: method %s conf %d note %q receipts %+v models %v", r.Method, r.ConfBP, r.Note, r.Receipts, r.Models)
	}
	calls := iss.Calls()
	if len(calls) != 1 || calls[0].ID != r.Receipts[0].ID || calls[0].Params["task"] != "docreader-chart" || calls[0].Params["response_format"] != "json_schema" {
		t.Fatalf("model call %+v", calls)
	}
	if len(r.Receipt.ModelCalls) != 1 || r.Receipt.ModelCalls[0] != r.Receipts[0] || r.Receipt.Revisions.OCR != "none" || !chartVerifies(t, s, r) {
		t.Errorf("receipt %+v", r.Receipt)
	}
	for _, st := range r.Chart.Series {
		for i, p := range st.Steps {
			if p.S < 0 || p.S > 1 || (i > 0 && p.T < st.Steps[i-1].T) {
				t.Errorf("series %q steps %+v: out of order or range", st.Name, st.Steps)
			}
		}
	}

	h, err := s.Chart(ctx, run.Env{Budget: &llmcalltest.Budget{}}, ChartRequest{Sample: SampleChart})
	if err != nil || h.Method != MethodGeometry || !strings.Contains(h.Note, "axes calibrated") || len(h.Receipts) != 0 {
		t.Fatalf("hybrid on the sample: %+v %v", h, err)
	}

	blank := blankChart(t)
	fb, err := s.Chart(ctx, run.Env{Budget: &llmcalltest.Budget{}}, ChartRequest{File: blank, Synthetic: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if fb.Method != MethodModel || !strings.HasPrefix(fb.Note, "hybrid: the axes could not be calibrated") || len(fb.Receipts) != 1 || !chartVerifies(t, s, fb) {
		t.Errorf("hybrid fallback: method %s note %q receipts %+v", fb.Method, fb.Note, fb.Receipts)
	}
	_, err = s.Chart(ctx, run.Env{Budget: &llmcalltest.Budget{}}, ChartRequest{File: blank, Synthetic: &yes, Method: MethodGeometry})
	if !problem.Is(err, problem.Unprocessable) {
		t.Errorf("geometry on a chart without axes: %v", err)
	}
	// A blind model: model is 503, hybrid on the blank chart 503 too.
	blind, _ := seeingChat(t, false)
	sb := &Service{Key: testKey(6), Chat: blind}
	if _, err := sb.Chart(ctx, run.Env{Budget: &llmcalltest.Budget{}}, ChartRequest{Sample: SampleChart, Method: MethodModel}); !problem.Is(err, problem.Unavailable) {
		t.Errorf("model, blind: %v", err)
	}
	if _, err := sb.Chart(ctx, run.Env{Budget: &llmcalltest.Budget{}}, ChartRequest{File: blank, Synthetic: &yes}); !problem.Is(err, problem.Unavailable) || !strings.Contains(err.Error(), "models.llm.projector") {
		t.Errorf("hybrid, blind, no axes: %v", err)
	}
}

// TestChartLabelsByModel: hybrid on a line chart whose legend has no
// names: the geometry measures it and the model, given the series'
// colours, names the series it could not (name_from: model), in one
// charged, receipted call the chart receipt lists; the numbers are the
// geometry's. A chart whose series are named makes no such call.
func TestChartLabelsByModel(t *testing.T) {
	chat, iss := seeingChat(t, true)
	s := &Service{Key: testKey(8), Chat: chat}
	spec := samples.LineSpec()
	for i := range spec.Series {
		spec.Series[i].Name = ""
	}
	g, err := samples.DrawLine(spec)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, g); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "line.png")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	yes := true
	r, err := s.Chart(context.Background(), run.Env{Budget: &llmcalltest.Budget{}}, ChartRequest{File: path, Synthetic: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != MethodGeometry || r.Chart.Type != "line" || len(r.Receipts) != 1 || r.Receipts[0].Kind != "chart-labels" || !strings.Contains(r.Note, "named by the model") {
		t.Fatalf("method %s type %s receipts %+v note %q", r.Method, r.Chart.Type, r.Receipts, r.Note)
	}
	for i, se := range r.Chart.Series {
		named := se.NameFrom == "model" && se.Name != ""
		if !named && !strings.HasPrefix(se.Name, "series ") {
			t.Errorf("series %d: %q from %q", i, se.Name, se.NameFrom)
		}
		if math.Abs(se.Steps[0].S-spec.Series[0].Values[0]) > 1 && math.Abs(se.Steps[0].S-spec.Series[1].Values[0]) > 1 {
			t.Errorf("series %d's first value %v is not the drawing's", i, se.Steps[0].S)
		}
	}
	calls := iss.Calls()
	if len(calls) != 1 || calls[0].Params["task"] != "docreader-chart-labels" || !chartVerifies(t, s, r) {
		t.Errorf("calls %+v", calls)
	}
	km, err := s.Chart(context.Background(), run.Env{Budget: &llmcalltest.Budget{}}, ChartRequest{Sample: SampleChart})
	if err != nil || len(km.Receipts) != 0 || len(iss.Calls()) != 1 {
		t.Errorf("a named chart: receipts %+v, %d calls (%v)", km.Receipts, len(iss.Calls()), err)
	}
}

// figuresPDF is a born-digital page holding n figures that no axes
// calibrate (blankChart's frame, 400 × 300 pixels each), under a line
// of text, and, when km, the Kaplan–Meier sample's chart below them.
func figuresPDF(t *testing.T, n int, km bool) []byte {
	t.Helper()
	blank, err := os.ReadFile(blankChart(t))
	if err != nil {
		t.Fatal(err)
	}
	p := samples.NewPDF()
	p.AddPage()
	p.SetFont("Helvetica", "", 10)
	p.Text(54, 40, "Figures from the trial report.")
	p.RegisterImageOptionsReader("blank", fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(blank))
	for i := range n {
		// 400 × 300 pixels at 144 DPI: 200 × 150 points; two a row.
		p.ImageOptions("blank", 40+float64(i%2)*260, 60+float64(i/2)*170, 200, 150, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	}
	if km {
		img, err := samples.DrawKM(samples.ChartSpec())
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		p.AddPage()
		p.RegisterImageOptionsReader("km", fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(b.Bytes()))
		p.ImageOptions("km", 30, 80, 550, 450, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	}
	var out bytes.Buffer
	if err := p.Output(&out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestFiguresReadByModel: charts: true with a model that sees images
// (hybrid): a figure whose axes do not calibrate is read by the model
// (one charged, receipted call the document receipt binds; the tiny
// random model's verdict is noise, so either answer is taken, but a
// chart it gives is marked method model with conf_bp 0 and the reason),
// while the Kaplan–Meier figure is measured (method geometry, no call);
// at most MaxModelFigures figures are read, the rest counted as skipped
// with the cap named; a spent budget reads none and says so; a blind
// model or no budget makes no call and leaves charts_by_model out.
func TestFiguresReadByModel(t *testing.T) {
	chat, iss := seeingChat(t, true)
	s := &Service{Key: testKey(9), Chat: chat}
	yes := true
	ctx := context.Background()
	write := func(data []byte) string {
		p := filepath.Join(t.TempDir(), "f.pdf")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := write(figuresPDF(t, 1, true))
	b := &llmcalltest.Budget{}
	d, err := s.Read(ctx, run.Env{Budget: b}, ReadRequest{File: one, Synthetic: &yes, Charts: true})
	if err != nil {
		t.Fatal(err)
	}
	calls := iss.Calls()
	if len(calls) != 1 || calls[0].Params["task"] != "docreader-figure" || len(b.Committed()) != 1 {
		t.Fatalf("calls %+v, commits %v", calls, b.Committed())
	}
	if m := d.ChartsByModel; m == nil || m.Read != 1 || m.Skipped != 0 {
		t.Fatalf("charts_by_model %+v", d.ChartsByModel)
	}
	var geometry, model int
	for _, c := range d.Charts {
		switch c.Method {
		case MethodGeometry:
			geometry++
			if c.Page != 2 || c.ConfBP < 9000 {
				t.Errorf("the measured chart: page %d conf %d", c.Page, c.ConfBP)
			}
		case MethodModel:
			model++
			if c.Page != 1 || c.ConfBP != 0 || c.Element == "" || !strings.Contains(c.Note, "the model's reading, not measured") || c.Chart.Type != "kaplan_meier" {
				t.Errorf("the model's chart: %+v", c)
			}
		default:
			t.Errorf("chart with method %q", c.Method)
		}
	}
	if geometry != 1 || model != d.ChartsByModel.Charts {
		t.Errorf("%d measured, %d by the model (summary %+v)", geometry, model, d.ChartsByModel)
	}
	rc := d.Receipt.ModelCalls
	if len(rc) != 1 || rc[0].ID != calls[0].ID || rc[0].Kind != "chart" || len(d.Models) != 1 || d.Models[0].Role != "chart" {
		t.Errorf("receipt calls %+v models %+v", rc, d.Models)
	}
	if !verifies(t, s, d) {
		t.Error("the document does not verify")
	}
	// A chart's method or note changed breaks the charts check.
	if len(d.Charts) > 0 {
		d.Charts[0].Method = MethodModel + "x"
		if verifies(t, s, d) {
			t.Error("a changed chart method verifies")
		}
	}

	five := write(figuresPDF(t, chart.MaxModelFigures+1, false))
	d, err = s.Read(ctx, run.Env{Budget: &llmcalltest.Budget{}}, ReadRequest{File: five, Synthetic: &yes, Charts: true})
	if err != nil {
		t.Fatal(err)
	}
	if m := d.ChartsByModel; m == nil || m.Read != chart.MaxModelFigures || m.Skipped != 1 || !strings.Contains(m.Note, "at most 4 figures") ||
		len(d.Receipt.ModelCalls) != chart.MaxModelFigures {
		t.Errorf("over the cap: %+v, %d calls", d.ChartsByModel, len(d.Receipt.ModelCalls))
	}

	d, err = s.Read(ctx, run.Env{Budget: &spent{}}, ReadRequest{File: one, Synthetic: &yes, Charts: true})
	if err != nil {
		t.Fatal(err)
	}
	if m := d.ChartsByModel; m == nil || m.Read != 0 || m.Skipped != 1 || !strings.Contains(m.Note, "budget ran out") || len(d.Receipt.ModelCalls) != 0 {
		t.Errorf("spent budget: %+v", d.ChartsByModel)
	}

	blind, biss := seeingChat(t, false)
	sb := &Service{Key: testKey(9), Chat: blind}
	for _, c := range []struct {
		env run.Env
		req ReadRequest
	}{
		{run.Env{Budget: &llmcalltest.Budget{}}, ReadRequest{File: one, Synthetic: &yes, Charts: true}},
	} {
		d, err := sb.Read(ctx, c.env, c.req)
		if err != nil || d.ChartsByModel != nil || len(d.Charts) != 1 || d.Charts[0].Method != MethodGeometry || len(biss.Calls()) != 0 {
			t.Errorf("blind: %v %+v", err, d)
		}
	}
	before := len(iss.Calls())
	if d, err := s.Read(ctx, run.Env{}, ReadRequest{File: one, Synthetic: &yes, Charts: true}); err != nil || d.ChartsByModel != nil || len(iss.Calls()) != before {
		t.Errorf("no budget: %v, %d calls", err, len(iss.Calls())-before)
	}
}

// verifies says whether POST /docreader/verify passes d.
func verifies(t *testing.T, s *Service, d *Document) bool {
	t.Helper()
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Verify(VerifyRequest{Document: raw})
	if err != nil {
		t.Fatal(err)
	}
	return v.OK
}
