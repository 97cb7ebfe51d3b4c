package chart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/raster"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/llmcall"
)

// ModelSide is the largest side of the picture the model reads a chart
// from (Gemma 3's projector reads 896 × 896).
const ModelSide = 1792

// modelSchema is the shape of a model's reading of a Kaplan–Meier chart,
// bounded so a reading always ends.
const modelSchema = `{"type":"object","properties":{
"series":{"type":"array","maxItems":4,"items":{"type":"object","properties":{
  "name":{"type":"string","maxLength":40},
  "median":{"type":["number","null"]},
  "points":{"type":"array","maxItems":12,"items":{"type":"object","properties":{"t":{"type":"number"},"s":{"type":"number"}},"required":["t","s"],"additionalProperties":false}}
 },"required":["name","median","points"],"additionalProperties":false}},
"numbers_at_risk":{"type":"array","maxItems":4,"items":{"type":"object","properties":{
  "label":{"type":"string","maxLength":40},
  "times":{"type":"array","maxItems":12,"items":{"type":"number"}},
  "counts":{"type":"array","maxItems":12,"items":{"type":"integer","minimum":0}}
 },"required":["label","times","counts"],"additionalProperties":false}},
"hazard_ratio":{"anyOf":[{"type":"null"},{"type":"object","properties":{
  "value":{"type":"number"},"ci_low":{"type":["number","null"]},"ci_high":{"type":["number","null"]}
 },"required":["value","ci_low","ci_high"],"additionalProperties":false}]}
},"required":["series","numbers_at_risk","hazard_ratio"],"additionalProperties":false}`

const modelPrompt = "This image is a Kaplan-Meier survival chart. Read it as JSON: for each curve, its name from the legend, " +
	"its survival probability (0 to 1) at each time marked on the x axis, and its median survival time (null when the curve stays above 0.5); " +
	"the numbers-at-risk table under the plot, one row per curve, if it is printed; and the hazard ratio with its confidence interval if it is printed (else null). " +
	"Read only what the image shows."

// grammar is modelSchema's grammar with its numbers bounded: at most 5
// digits before the point and 3 after, no exponent, and no whitespace
// between tokens, so that the longest reading the schema allows fits
// maxTokens even when every character is a token (llama.cpp's converter
// bounds numbers only at 16 digits a part).
func grammar() (string, error) { return boundedGrammar(modelSchema) }

// boundedGrammar is schema's grammar with its numbers bounded (grammar).
func boundedGrammar(schema string) (string, error) {
	g, err := llm.SchemaGrammar(json.RawMessage(schema))
	if err != nil {
		return "", err
	}
	for _, r := range [][2]string{
		{`number ::= ("-"? integral-part) ("." decimal-part)? ([eE] [-+]? integral-part)? space`, `number ::= ("-"? integral-part) ("." decimal-part)? space`},
		{`[0-9]{0,15}`, `[0-9]{0,4}`},
		{`decimal-part ::= [0-9]{1,16}`, `decimal-part ::= [0-9]{1,3}`},
		{`space ::= | " " | "\n"{1,2} [ \t]{0,20}`, `space ::= ""`},
	} {
		if !strings.Contains(g, r[0]) {
			return "", fmt.Errorf("chart: llama.cpp's grammar for the reading has no %q to bound", r[0])
		}
		g = strings.ReplaceAll(g, r[0], r[1])
	}
	return g, nil
}

// figureSchema is modelSchema for a figure found in a document, which
// may be no survival chart at all: either {"chart":false} or the
// reading with "chart":true first.
var figureSchema = `{"anyOf":[{"type":"object","properties":{"chart":{"const":false}},"required":["chart"],"additionalProperties":false},` +
	strings.Replace(strings.Replace(modelSchema, `"properties":{
"series"`, `"properties":{"chart":{"const":true},
"series"`, 1), `"required":["series","numbers_at_risk","hazard_ratio"],"additionalProperties":false}`, `"required":["chart","series","numbers_at_risk","hazard_ratio"],"additionalProperties":false}`, 1) + `]}`

const figurePrompt = "This image is a figure from a document. If it is a Kaplan-Meier survival chart, answer {\"chart\":true, ...} and read it as JSON: for each curve, its name from the legend, " +
	"its survival probability (0 to 1) at each time marked on the x axis, and its median survival time (null when the curve stays above 0.5); " +
	"the numbers-at-risk table under the plot, one row per curve, if it is printed; and the hazard ratio with its confidence interval if it is printed (else null). " +
	"If it is anything else, answer {\"chart\":false}. Read only what the image shows."

// maxTokens bounds a reading: the longest the grammar allows is about
// 2,300 characters.
const maxTokens = 3072

// modelReading is the model's answer (modelSchema).
type modelReading struct {
	Series []struct {
		Name   string   `json:"name"`
		Median *float64 `json:"median"`
		Points []struct {
			T float64 `json:"t"`
			S float64 `json:"s"`
		} `json:"points"`
	} `json:"series"`
	AtRisk []struct {
		Label  string    `json:"label"`
		Times  []float64 `json:"times"`
		Counts []int     `json:"counts"`
	} `json:"numbers_at_risk"`
	HazardRatio *struct {
		Value float64  `json:"value"`
		Low   *float64 `json:"ci_low"`
		High  *float64 `json:"ci_high"`
	} `json:"hazard_ratio"`
}

// Model reads charts with the box's vision model.
type Model struct {
	Chat   *llmcall.Model // must see images
	Budget run.Budget
	Events llmcall.Events
}

// Read is the model's reading of the chart in img: nothing in it is
// measured from the drawing (no axes, no plot box, nothing flagged), so
// a result built on it must say so. hint is the caller's, passed on.
func (m *Model) Read(ctx context.Context, img *raster.Image, hint string) (*Chart, *llmcall.Result, error) {
	sq := img.Square(raster.Box{X1: float64(img.W), Y1: float64(img.H)}, 32, ModelSide)
	text := llm.ImageMarker + "\n" + modelPrompt
	if h := strings.TrimSpace(hint); h != "" {
		text += "\nThe sender adds: " + h
	}
	g, err := grammar()
	if err != nil {
		return nil, nil, problem.Wrap(problem.Internal, err, "%v", err)
	}
	res, err := m.Chat.Text(ctx, m.Budget, llmcall.Request{
		Messages:  []llmcall.Message{{Role: "user", Content: text, Images: []llm.Picture{{Width: sq.W, Height: sq.H, RGB: sq.Pix}}}},
		MaxTokens: maxTokens, Grammar: g, Events: m.Events,
		Params: map[string]string{"task": "docreader-chart", "response_format": "json_schema", "schema_sha256": attest.HashText(modelSchema)},
	})
	if err != nil {
		return nil, res, err
	}
	if res.FinishReason == string(llm.FinishLength) {
		return nil, res, problem.New(problem.Upstream, "the model's chart reading was cut at %d tokens", res.Usage.CompletionTokens)
	}
	var r modelReading
	if err := json.Unmarshal([]byte(res.Text), &r); err != nil {
		return nil, res, problem.Wrap(problem.Upstream, err, "the model's chart reading does not parse: %v", err)
	}
	return r.chart(), res, nil
}

// ReadFigure is the model's reading of a figure from a document, which
// may not be a survival chart: ok is false when the model says it is
// not one (the call was still made, and res holds its receipt). As
// Read, nothing in the chart is measured from the drawing.
func (m *Model) ReadFigure(ctx context.Context, img *raster.Image) (c *Chart, ok bool, res *llmcall.Result, err error) {
	sq := img.Square(raster.Box{X1: float64(img.W), Y1: float64(img.H)}, 32, ModelSide)
	g, err := boundedGrammar(figureSchema)
	if err != nil {
		return nil, false, nil, problem.Wrap(problem.Internal, err, "%v", err)
	}
	res, err = m.Chat.Text(ctx, m.Budget, llmcall.Request{
		Messages:  []llmcall.Message{{Role: "user", Content: llm.ImageMarker + "\n" + figurePrompt, Images: []llm.Picture{{Width: sq.W, Height: sq.H, RGB: sq.Pix}}}},
		MaxTokens: maxTokens, Grammar: g, Events: m.Events,
		Params: map[string]string{"task": "docreader-figure", "response_format": "json_schema", "schema_sha256": attest.HashText(figureSchema)},
	})
	if err != nil {
		return nil, false, res, err
	}
	if res.FinishReason == string(llm.FinishLength) {
		return nil, false, res, problem.New(problem.Upstream, "the model's figure reading was cut at %d tokens", res.Usage.CompletionTokens)
	}
	c, ok, err = figureReading(res.Text)
	return c, ok, res, err
}

// figureReading parses a figure reading (figureSchema).
func figureReading(text string) (*Chart, bool, error) {
	var r struct {
		Chart *bool `json:"chart"`
		modelReading
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil || r.Chart == nil {
		if err == nil {
			err = errors.New(`no "chart" in it`)
		}
		return nil, false, problem.Wrap(problem.Upstream, err, "the model's figure reading does not parse: %v", err)
	}
	if !*r.Chart {
		return nil, false, nil
	}
	return r.chart(), true, nil
}

// chart turns a reading into a Chart: steps in time order with survival
// kept within 0 to 1, numbers at risk matched to the curves by name.
func (r modelReading) chart() *Chart {
	c := &Chart{Type: "kaplan_meier", Series: []Series{}, AtRisk: []RiskRow{}, X: Axis{Ticks: []Tick{}}, Y: Axis{Ticks: []Tick{}}}
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	for _, s := range r.Series {
		out := Series{Name: strings.TrimSpace(s.Name), Steps: []Step{}}
		if s.Median != nil && finite(*s.Median) {
			v := *s.Median
			out.Median = &v
		}
		for _, p := range s.Points {
			if finite(p.T) && finite(p.S) {
				out.Steps = append(out.Steps, Step{T: p.T, S: min(1, max(0, p.S))})
			}
		}
		slices.SortStableFunc(out.Steps, func(a, b Step) int {
			switch {
			case a.T < b.T:
				return -1
			case a.T > b.T:
				return 1
			}
			return 0
		})
		c.Series = append(c.Series, out)
	}
	for _, row := range r.AtRisk {
		out := RiskRow{Label: strings.TrimSpace(row.Label), Times: []float64{}, Counts: []int{}}
		n := min(len(row.Times), len(row.Counts))
		for i := range n {
			if finite(row.Times[i]) {
				out.Times = append(out.Times, row.Times[i])
				out.Counts = append(out.Counts, row.Counts[i])
			}
		}
		if n != len(row.Times) || n != len(row.Counts) {
			out.Flag = fmt.Sprintf("the model read %d times and %d counts; %d pairs kept", len(row.Times), len(row.Counts), n)
		}
		for _, s := range c.Series {
			if s.Name != "" && strings.EqualFold(s.Name, out.Label) {
				out.Series = s.Name
			}
		}
		if out.Flag != "" {
			c.Flagged++
		}
		c.AtRisk = append(c.AtRisk, out)
	}
	if hr := r.HazardRatio; hr != nil && finite(hr.Value) {
		h := &HazardRatio{Value: hr.Value, Low: hr.Low, High: hr.High}
		h.Text = fmt.Sprintf("HR %g", hr.Value)
		if hr.Low != nil && hr.High != nil {
			h.Text += fmt.Sprintf(" (%g–%g)", *hr.Low, *hr.High)
		}
		c.HazardRatio = h
	}
	return c
}

// Unnamed is how geometry names a series it found no label for.
func Unnamed(name string) bool { return name == "" || strings.HasPrefix(name, "series ") }

// Labels asks the model for the names of the chart's series the
// geometry could not name (no legend words read in their colours): the
// series' colours are given, and the answer is exactly one name per
// series (a grammar), at most 60 characters each. Each name it gives is
// set with NameFrom "model"; the drawing's numbers are not touched.
func (m *Model) Labels(ctx context.Context, img *raster.Image, c *Chart) (*llmcall.Result, error) {
	var idx []int
	for i, s := range c.Series {
		if Unnamed(s.Name) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString(llm.ImageMarker + "\nThis chart draws its series in these colours (red, green, blue from 0 to 255):\n")
	for k, i := range idx {
		col := c.Series[i].Color
		fmt.Fprintf(&b, "%d. rgb(%d, %d, %d)\n", k+1, col[0], col[1], col[2])
	}
	b.WriteString("Give each series's name as its legend or label shows it, in this order, as JSON. Use an empty string where the chart shows none.")
	schema := fmt.Sprintf(`{"type":"object","properties":{"names":{"type":"array","minItems":%d,"maxItems":%d,"items":{"type":"string","maxLength":60}}},"required":["names"],"additionalProperties":false}`, len(idx), len(idx))
	sq := img.Square(raster.Box{X1: float64(img.W), Y1: float64(img.H)}, 32, ModelSide)
	raw, res, err := m.Chat.JSON(ctx, m.Budget, json.RawMessage(schema), llmcall.Request{
		Messages:  []llmcall.Message{{Role: "user", Content: b.String(), Images: []llm.Picture{{Width: sq.W, Height: sq.H, RGB: sq.Pix}}}},
		MaxTokens: 64 + 40*len(idx), Params: map[string]string{"task": "docreader-chart-labels"}, Events: m.Events,
	})
	if err != nil {
		return res, err
	}
	var out struct {
		Names []string `json:"names"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Names) != len(idx) {
		return res, problem.New(problem.Upstream, "the model's series names do not parse")
	}
	for k, i := range idx {
		if n := strings.TrimSpace(out.Names[k]); n != "" {
			c.Series[i].Name, c.Series[i].NameFrom = n, "model"
		}
	}
	return res, nil
}

// MaxModelFigures is the most figures of one document the model reads.
const MaxModelFigures = 4

// Figures reads, with the model, the figures of one document whose axes
// could not be calibrated: at most MaxModelFigures, each a charged,
// receipted call. A budget used up or a call that fails stops the rest;
// the summary says why.
type Figures struct {
	Model   *Model
	sum     FiguresSummary
	stopped bool
	calls   []string
}

// FiguresSummary is what the model's figure readings did in a document.
type FiguresSummary struct {
	Read    int    `json:"read"`    // figures the model read
	Charts  int    `json:"charts"`  // of them, survival charts by its reading
	Skipped int    `json:"skipped"` // figures left unread (the cap, the budget, a failure)
	Note    string `json:"note,omitempty"`
}

// Read is the model's reading of one figure; ok is false when the model
// says it is no survival chart or the figure was skipped. Only the
// caller's context ending is an error.
func (f *Figures) Read(ctx context.Context, img *raster.Image) (*Chart, bool, error) {
	if f.stopped || f.sum.Read >= MaxModelFigures {
		if !f.stopped && f.sum.Note == "" {
			f.sum.Note = fmt.Sprintf("at most %d figures are read by the model per document", MaxModelFigures)
		}
		f.sum.Skipped++
		return nil, false, nil
	}
	c, ok, res, err := f.Model.ReadFigure(ctx, img)
	if res != nil && res.Receipt != nil {
		f.calls = append(f.calls, res.Receipt.ID)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		f.stopped = true
		f.sum.Skipped++
		if f.sum.Note == "" {
			f.sum.Note = "the model did not answer (" + err.Error() + "); the rest were not read"
			if problem.Is(err, problem.Budget) {
				f.sum.Note = "the token budget ran out; the rest were not read"
			}
		}
		return nil, false, nil
	}
	f.sum.Read++
	if ok {
		f.sum.Charts++
	}
	return c, ok, nil
}

// Summary is what the readings did so far.
func (f *Figures) Summary() FiguresSummary { return f.sum }

// Receipts are the calls' model-call receipt ids, in order.
func (f *Figures) Receipts() []string { return append([]string(nil), f.calls...) }
