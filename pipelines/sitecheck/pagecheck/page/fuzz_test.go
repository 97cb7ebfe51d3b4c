package page

import (
	"encoding/json"
	"reflect"
	"testing"

	"boxd/pipelines/sitecheck/pagecheck/internal/fixtures"
)

// FuzzAltAndLLMsTxt checks that MeaningfulAlt and CheckLLMsTxt never panic,
// are deterministic and give complete problems.
func FuzzAltAndLLMsTxt(f *testing.F) {
	alts := fixtures.Inputs(f, "meaningful_alt.json")
	llms := fixtures.Inputs(f, "llms_txt.json")
	for i := 0; i < len(alts) || i < len(llms); i++ {
		alt, src, ct, body, status := "", "", "", "", 200
		if i < len(alts) {
			alt, src = fixtures.String(f, alts[i], "alt"), fixtures.String(f, alts[i], "src")
		}
		if i < len(llms) {
			ct, body = fixtures.String(f, llms[i], "content_type"), fixtures.String(f, llms[i], "body")
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
