package chart

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestModelReadingToChart: the model's JSON becomes a chart: steps in
// time order within 0 to 1, rows matched to curves by name, a row whose
// times and counts differ in number flagged, the hazard ratio's text.
func TestModelReadingToChart(t *testing.T) {
	raw := `{"series":[{"name":"Drug","median":14.5,"points":[{"t":12,"s":0.4},{"t":0,"s":1.2},{"t":6,"s":-0.1}]},{"name":"Placebo","median":null,"points":[]}],
"numbers_at_risk":[{"label":"drug","times":[0,6,12],"counts":[100,80]},{"label":"Other","times":[0],"counts":[5]}],
"hazard_ratio":{"value":0.62,"ci_low":0.45,"ci_high":0.85}}`
	var r modelReading
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	c := r.chart()
	s := c.Series[0]
	if len(s.Steps) != 3 || s.Steps[0] != (Step{0, 1}) || s.Steps[1] != (Step{6, 0}) || s.Steps[2] != (Step{12, 0.4}) || *s.Median != 14.5 {
		t.Errorf("series %+v", s)
	}
	if c.Series[1].Median != nil || len(c.Series[1].Steps) != 0 {
		t.Errorf("placebo %+v", c.Series[1])
	}
	if row := c.AtRisk[0]; row.Series != "Drug" || len(row.Times) != 2 || row.Flag == "" || c.AtRisk[1].Series != "" || c.AtRisk[1].Flag != "" || c.Flagged != 1 {
		t.Errorf("rows %+v, flagged %d", c.AtRisk, c.Flagged)
	}
	if c.HazardRatio == nil || c.HazardRatio.Text != "HR 0.62 (0.45–0.85)" || *c.HazardRatio.Low != 0.45 {
		t.Errorf("hazard ratio %+v", c.HazardRatio)
	}
	var none modelReading
	_ = json.Unmarshal([]byte(`{"series":[],"numbers_at_risk":[],"hazard_ratio":null}`), &none)
	if c := none.chart(); c.HazardRatio != nil || c.Series == nil || c.AtRisk == nil || c.X.Ticks == nil {
		t.Errorf("empty reading %+v", c)
	}
}

// TestModelGrammarBounded: the reading's grammar is llama.cpp's for the
// schema with every number bounded and no free whitespace (each bound
// found in the converter's output, else the grammar is refused).
func TestModelGrammarBounded(t *testing.T) {
	g, err := grammar()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"{0,15}", "{1,16}", "[eE]", "{0,20}"} {
		if strings.Contains(g, bad) {
			t.Errorf("grammar still holds %s", bad)
		}
	}
}

// TestFigureReading: a figure reading is either {"chart":false} (no
// chart) or a survival chart's reading with "chart":true; anything else
// is an upstream error. Its grammar is bounded as the chart reading's,
// and the schema takes both answers.
func TestFigureReading(t *testing.T) {
	if c, ok, err := figureReading(`{"chart":false}`); c != nil || ok || err != nil {
		t.Errorf("not a chart: %v %v %v", c, ok, err)
	}
	c, ok, err := figureReading(`{"chart":true,"series":[{"name":"A","median":7,"points":[{"t":0,"s":1},{"t":7,"s":0.5}]}],"numbers_at_risk":[],"hazard_ratio":null}`)
	if err != nil || !ok || len(c.Series) != 1 || *c.Series[0].Median != 7 || c.Type != "kaplan_meier" {
		t.Errorf("a chart: %+v %v %v", c, ok, err)
	}
	for _, bad := range []string{`{"series":[]}`, `not json`, ``} {
		if _, ok, err := figureReading(bad); ok || err == nil {
			t.Errorf("%q: ok %v err %v", bad, ok, err)
		}
	}
	var schema struct {
		AnyOf []struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		} `json:"anyOf"`
	}
	if err := json.Unmarshal([]byte(figureSchema), &schema); err != nil || len(schema.AnyOf) != 2 {
		t.Fatalf("figure schema: %v", err)
	}
	if yes := schema.AnyOf[1]; string(yes.Properties["chart"]) != `{"const":true}` || len(yes.Required) != 4 || yes.Properties["series"] == nil {
		t.Errorf("the chart branch: %+v", yes)
	}
	g, err := boundedGrammar(figureSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"{0,15}", "{1,16}", "[eE]", "{0,20}"} {
		if strings.Contains(g, bad) {
			t.Errorf("figure grammar still holds %s", bad)
		}
	}
}
