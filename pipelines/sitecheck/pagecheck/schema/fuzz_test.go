package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"boxd/pipelines/sitecheck/pagecheck/internal/fixtures"
	"boxd/pipelines/sitecheck/pagecheck/jsonld"
	"boxd/pipelines/sitecheck/pagecheck/text"
)

// checkFindings checks the invariants of a validation's findings.
func checkFindings(t *testing.T, errs, warns []Finding) {
	t.Helper()
	for _, list := range []struct {
		sev string
		fs  []Finding
	}{{SeverityError, errs}, {SeverityWarning, warns}} {
		if list.fs == nil {
			t.Fatalf("nil %s list", list.sev)
		}
		for _, x := range list.fs {
			if x.Severity != list.sev || x.Code == "" || x.Message == "" || x.Fix == "" || x.Snippet == "" || !strings.HasPrefix(x.Path, "$") {
				t.Fatalf("bad %s finding %+v", list.sev, x)
			}
		}
	}
}

// seedJSON adds the objects of the validation fixtures and the block texts
// of the page fixtures.
func seedJSON(f *testing.F) {
	for _, in := range fixtures.Inputs(f, "validate_schema.json") {
		f.Add(string(in["object"]))
	}
	for _, in := range fixtures.Inputs(f, "check_page_jsonld.json") {
		for _, b := range jsonld.ExtractJSONLD(fixtures.String(f, in, "html")) {
			f.Add(b.Text)
		}
	}
	for _, s := range []string{
		``, ` `, `null`, `-`, `-0`, `01`, `1.`, `1e`, `1e+`, `.5`, `1E400`, `-0.0e-0`, `[1,]`, `{"a":1,}`,
		`{"a" 1}`, `{1:2}`, `[`, `{`, `"`, `"\`, `"\u12`, `"\u12G4"`, `"\x"`, `"\uD800"`, `"\uDC00\uD800"`,
		`"\uD800\uDC00"`, `"\uD800\u0041"`, `"\uD800\uD800\uDC00"`, "\"\xff\xfe\"", "\"\t\"", "\ufeff{}",
		`tru`, `trUe`, `nul`, `[] []`, "{\"a\":1}\n\n x", `{"a":1,"a":2}`,
		strings.Repeat("[", jsonld.MaxJSONDepth) + strings.Repeat("]", jsonld.MaxJSONDepth),
		strings.Repeat("[", jsonld.MaxJSONDepth+1) + strings.Repeat("]", jsonld.MaxJSONDepth+1),
	} {
		f.Add(s)
	}
}

// FuzzValidate checks that Validate never panics on parsed JSON, that its
// findings are complete and deterministic, and that it reads numbers decoded
// by encoding/json as float64 the same way as ParseJSON's json.Number.
func FuzzValidate(f *testing.F) {
	seedJSON(f)
	f.Fuzz(func(t *testing.T, s string) {
		v, perr := jsonld.ParseJSON(s)
		if perr != nil {
			return
		}
		got := Validate(v)
		checkFindings(t, got.Errors, got.Warnings)
		if !reflect.DeepEqual(got, Validate(v)) {
			t.Fatal("Validate is not deterministic")
		}
		if _, err := json.Marshal(got); err != nil {
			t.Fatal(err)
		}
		var fv any
		if err := json.Unmarshal([]byte(s), &fv); err != nil {
			return // a number out of float64 range
		}
		if fgot := Validate(fv); !reflect.DeepEqual(got, fgot) {
			t.Fatalf("Validate differs with float64 numbers:\n json.Number %+v\n float64     %+v", got, fgot)
		}
		// The same object in a page.
		if !strings.Contains(text.ASCIILower(s), "</script") {
			r := CheckPageJSONLD(`<script type="application/ld+json">`+s+`</script>`, "https://a.example/p/")
			for _, o := range r.Objects {
				checkFindings(t, o.Errors, o.Warnings)
			}
		}
	})
}
