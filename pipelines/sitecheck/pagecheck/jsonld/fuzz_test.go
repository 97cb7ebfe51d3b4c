package jsonld

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"boxd/pipelines/sitecheck/pagecheck/internal/fixtures"
)

// checkJSONError checks a ParseJSON error against its input.
func checkJSONError(t *testing.T, s string, e *JSONError) {
	t.Helper()
	if e.Message == "" {
		t.Fatal("empty error message")
	}
	if e.Offset < 0 || e.Offset > len(s) {
		t.Fatalf("error offset %d outside the input (len %d)", e.Offset, len(s))
	}
	line, col := lineCol(s, e.Offset)
	if e.Line != line || e.Column != col || e.Line < 1 || e.Column < 1 {
		t.Fatalf("error at line %d column %d, offset %d is line %d column %d", e.Line, e.Column, e.Offset, line, col)
	}
}

// maxNesting is the deepest array/object nesting of a JSON text (strings
// skipped; meaningful for valid JSON).
func maxNesting(s string) int {
	depth, max, inStr := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr && c == '\\':
			i++
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
			if depth > max {
				max = depth
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return max
}

// seedJSON adds the objects of the validation fixtures and the block texts
// of the page fixtures.
func seedJSON(f *testing.F) {
	for _, in := range fixtures.Inputs(f, "validate_schema.json") {
		f.Add(string(in["object"]))
	}
	for _, in := range fixtures.Inputs(f, "check_page_jsonld.json") {
		for _, b := range ExtractJSONLD(fixtures.String(f, in, "html")) {
			f.Add(b.Text)
		}
	}
	for _, s := range []string{
		``, ` `, `null`, `-`, `-0`, `01`, `1.`, `1e`, `1e+`, `.5`, `1E400`, `-0.0e-0`, `[1,]`, `{"a":1,}`,
		`{"a" 1}`, `{1:2}`, `[`, `{`, `"`, `"\`, `"\u12`, `"\u12G4"`, `"\x"`, `"\uD800"`, `"\uDC00\uD800"`,
		`"\uD800\uDC00"`, `"\uD800\u0041"`, `"\uD800\uD800\uDC00"`, "\"\xff\xfe\"", "\"\t\"", "\ufeff{}",
		`tru`, `trUe`, `nul`, `[] []`, "{\"a\":1}\n\n x", `{"a":1,"a":2}`,
		strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth),
		strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1),
	} {
		f.Add(s)
	}
}

// FuzzParseJSON checks ParseJSON against encoding/json: both accept the
// same texts and build the same values, except that ParseJSON rejects
// nesting deeper than MaxJSONDepth ("nesting too deep") where encoding/json
// allows 10000 levels. Error positions must lie within the input.
func FuzzParseJSON(f *testing.F) {
	seedJSON(f)
	f.Fuzz(func(t *testing.T, s string) {
		v, perr := ParseJSON(s)
		valid := json.Valid([]byte(s))
		if perr != nil {
			checkJSONError(t, s, perr)
			if valid {
				if perr.Message != "nesting too deep" || maxNesting(s) <= MaxJSONDepth {
					t.Fatalf("ParseJSON rejects valid JSON %q: %v", s, perr)
				}
			}
			return
		}
		if !valid {
			t.Fatalf("ParseJSON accepts invalid JSON %q", s)
		}
		if maxNesting(s) > MaxJSONDepth {
			t.Fatalf("ParseJSON accepts nesting %d", maxNesting(s))
		}
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("ParseJSON(%q) = %#v, encoding/json gives %#v", s, v, want)
		}
		v2, perr := ParseJSON(s)
		if perr != nil || !reflect.DeepEqual(v, v2) {
			t.Fatal("ParseJSON is not deterministic")
		}
		// A round trip through encoding/json gives the same value.
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		v3, perr := ParseJSON(string(data))
		if perr != nil || !reflect.DeepEqual(v, v3) {
			t.Fatalf("round trip of %q through %s: %v", s, data, perr)
		}
	})
}
