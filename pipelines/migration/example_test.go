package migration

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestExampleNeedsOutput(t *testing.T) {
	s, _ := service(t)
	r := sample(t, "faq-exact")
	raw, _ := json.Marshal(r)
	raw = []byte(strings.Replace(string(raw), `"output":"Paris."`, `"outputs":"Paris."`, 1))
	if err := json.Unmarshal(raw, &r); err == nil || !strings.Contains(err.Error(), "outputs") {
		t.Errorf("an unknown field in an example: %v", err)
	}
	raw = []byte(strings.Replace(string(raw), `"outputs":"Paris.",`, ``, 1))
	var r2 Request
	if err := json.Unmarshal(raw, &r2); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(&r2); err == nil || !strings.Contains(err.Error(), "examples[0].output is required") {
		t.Errorf("an example without output: %v", err)
	}
}
