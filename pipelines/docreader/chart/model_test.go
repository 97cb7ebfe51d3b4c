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
