package page

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// fixtureDir holds the kits' shared fixtures.
const fixtureDir = "../../../../testdata/sitecheck"

// fixtureInputs returns the raw "input" objects of a fixture file; it is
// used to seed the fuzz corpora.
func fixtureInputs(f *testing.F, file string) []map[string]json.RawMessage {
	f.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, file))
	if err != nil {
		f.Fatal(err)
	}
	var fx []struct {
		Input map[string]json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(data, &fx); err != nil {
		f.Fatalf("%s: %v", file, err)
	}
	out := make([]map[string]json.RawMessage, len(fx))
	for i, c := range fx {
		out[i] = c.Input
	}
	return out
}

func inputString(f *testing.F, in map[string]json.RawMessage, key string) string {
	f.Helper()
	raw, ok := in[key]
	if !ok {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		f.Fatalf("input %q: %v", key, err)
	}
	return s
}

// FuzzAltAndLLMsTxt checks that MeaningfulAlt and CheckLLMsTxt never panic,
// are deterministic and give complete problems.
func FuzzAltAndLLMsTxt(f *testing.F) {
	alts := fixtureInputs(f, "meaningful_alt.json")
	llms := fixtureInputs(f, "llms_txt.json")
	for i := 0; i < len(alts) || i < len(llms); i++ {
		alt, src, ct, body, status := "", "", "", "", 200
		if i < len(alts) {
			alt, src = inputString(f, alts[i], "alt"), inputString(f, alts[i], "src")
		}
		if i < len(llms) {
			ct, body = inputString(f, llms[i], "content_type"), inputString(f, llms[i], "body")
			_ = json.Unmarshal(llms[i]["status"], &status)
		}
		f.Add(alt, src, status, ct, body)
	}
	f.Fuzz(func(t *testing.T, alt, src string, status int, ct, body string) {
		first := MeaningfulAlt(&alt, src)
		if again := MeaningfulAlt(&alt, src); first != again {
			t.Fatal("MeaningfulAlt is not deterministic")
		}
		if MeaningfulAlt(nil, src) {
			t.Fatal("missing alt is meaningful")
		}
		r := CheckLLMsTxt(status, ct, body)
		if !reflect.DeepEqual(r, CheckLLMsTxt(status, ct, body)) {
			t.Fatal("CheckLLMsTxt is not deterministic")
		}
		if r.OK != (len(r.Problems) == 0) {
			t.Fatalf("ok %v with problems %+v", r.OK, r.Problems)
		}
		for _, p := range r.Problems {
			if p.Code == "" || p.Message == "" || p.Fix == "" {
				t.Fatalf("incomplete problem %+v", p)
			}
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
	})
}
