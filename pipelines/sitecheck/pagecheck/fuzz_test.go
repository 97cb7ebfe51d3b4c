package pagecheck

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

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

// seedHTML adds the pages of the JSON-LD and meta fixtures.
func seedHTML(f *testing.F) {
	for _, file := range []string{"check_page_jsonld.json", "check_live_meta.json"} {
		for _, in := range fixtureInputs(f, file) {
			f.Add(inputString(f, in, "html"), inputString(f, in, "url"))
		}
	}
	for _, s := range []string{
		"<script type=application/ld+json>{}</script>",
		"<!--<script type=application/ld+json>{\"@type\":1}</script>-->",
		"<script type=\"application/ld+json\"><!-- {} --></script>",
		"<script type=\"application/ld+json\">{&quot;a&quot;:1}</script>",
		"<script type=\"application/ld+json\">",
		"<script type=\"application/ld+json\"></script",
		"<!--", "<!-->", "<!--->", "</", "</x", "<a b='", "<a b=", "<title>", "<svg><title>x",
		"&#x110000;&#0;&#xD800;&#65;&amp;lt;&nbsp",
		"<script a b c d e f g h i j k l m n o p q r s t TYPE=x type=application/ld+json a>{}</script>\n<script type=application/ld+json>[]</script>",
	} {
		f.Add(s, "https://a.example/x/y?q#f")
	}
}

// FuzzExtractJSONLD checks that ExtractJSONLD and CheckPageJSONLD (and the
// other page checks built on Scan) never panic, that block offsets and
// JSON error offsets are in bounds, that the results are deterministic and
// that the reports marshal to JSON.
func FuzzExtractJSONLD(f *testing.F) {
	seedHTML(f)
	f.Fuzz(func(t *testing.T, html, url string) {
		blocks := ExtractJSONLD(html)
		if !reflect.DeepEqual(blocks, ExtractJSONLD(html)) {
			t.Fatal("ExtractJSONLD is not deterministic")
		}
		for i, b := range blocks {
			if b.Index != i {
				t.Fatalf("block %d has index %d", i, b.Index)
			}
			if !(0 <= b.TagStart && b.TagStart < b.ContentStart && b.ContentStart <= b.ContentEnd && b.ContentEnd <= len(html)) {
				t.Fatalf("block %d: offsets %d %d %d out of bounds (len %d)", i, b.TagStart, b.ContentStart, b.ContentEnd, len(html))
			}
			if !strings.HasPrefix(asciiLower(html[b.TagStart:]), "<script") {
				t.Fatalf("block %d: TagStart %d is not at <script", i, b.TagStart)
			}
			if want := 1 + strings.Count(html[:b.TagStart], "\n"); b.Line != want {
				t.Fatalf("block %d: line %d, want %d", i, b.Line, want)
			}
			if i > 0 && b.TagStart <= blocks[i-1].TagStart {
				t.Fatalf("block %d is not in document order", i)
			}
			if b.OK != (b.Error == nil) || (!b.OK && b.Value != nil) {
				t.Fatalf("block %d: OK %v with error %v", i, b.OK, b.Error)
			}
			if b.Error != nil {
				checkJSONError(t, b.Text, b.Error)
			}
			switch b.Source {
			case SourceScript, SourceComment, SourceEntity:
			default:
				t.Fatalf("block %d: source %q", i, b.Source)
			}
		}

		r := CheckPageJSONLD(html, url)
		if !reflect.DeepEqual(r, CheckPageJSONLD(html, url)) {
			t.Fatal("CheckPageJSONLD is not deterministic")
		}
		errs, warns := 0, 0
		for _, b := range r.Blocks {
			if !b.OK {
				errs++
			}
		}
		for _, o := range r.Objects {
			errs += len(o.Errors)
			warns += len(o.Warnings)
			checkFindings(t, o.Errors, o.Warnings)
		}
		if r.ErrorCount != errs || r.WarningCount != warns {
			t.Fatalf("counts %d/%d, findings %d/%d", r.ErrorCount, r.WarningCount, errs, warns)
		}
		if utf8.RuneCountInString(r.Text) > MaxTextChars {
			t.Fatalf("text has %d code points", utf8.RuneCountInString(r.Text))
		}
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		data2, _ := json.Marshal(CheckPageJSONLD(html, url))
		if !bytes.Equal(data, data2) {
			t.Fatal("CheckPageJSONLD JSON is not deterministic")
		}

		m := CheckMeta(html, url)
		if !reflect.DeepEqual(m, CheckMeta(html, url)) {
			t.Fatal("CheckMeta is not deterministic")
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		for _, p := range m.Problems {
			if p.Code == "" || p.Message == "" || p.Fix == "" {
				t.Fatalf("incomplete problem %+v", p)
			}
		}
	})
}

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
	for _, in := range fixtureInputs(f, "validate_schema.json") {
		f.Add(string(in["object"]))
	}
	for _, in := range fixtureInputs(f, "check_page_jsonld.json") {
		for _, b := range ExtractJSONLD(inputString(f, in, "html")) {
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

// FuzzValidate checks that Validate never panics on parsed JSON, that its
// findings are complete and deterministic, and that it reads numbers decoded
// by encoding/json as float64 the same way as ParseJSON's json.Number.
func FuzzValidate(f *testing.F) {
	seedJSON(f)
	f.Fuzz(func(t *testing.T, s string) {
		v, perr := ParseJSON(s)
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
		if !strings.Contains(asciiLower(s), "</script") {
			r := CheckPageJSONLD(`<script type="application/ld+json">`+s+`</script>`, "https://a.example/p/")
			for _, o := range r.Objects {
				checkFindings(t, o.Errors, o.Warnings)
			}
		}
	})
}

// FuzzGenerateMarkup checks that GenerateMarkup never panics and that
// markup it generates passes Validate without errors, also after a JSON
// round trip. Lists (opening_hours, same_as) are given one entry a line.
func FuzzGenerateMarkup(f *testing.F) {
	str := func(in map[string]json.RawMessage, k string) string {
		var s string
		_ = json.Unmarshal(in[k], &s)
		return s
	}
	list := func(in map[string]json.RawMessage, k string) string {
		var l []string
		_ = json.Unmarshal(in[k], &l)
		return strings.Join(l, "\n")
	}
	for _, in := range fixtureInputs(f, "generate_schema_markup.json") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(in["facts"], &m); err != nil {
			f.Fatal(err)
		}
		f.Add(str(m, "name"), str(m, "type"), str(m, "url"), str(m, "telephone"), str(m, "email"),
			str(m, "street"), str(m, "city"), str(m, "region"), str(m, "postal_code"), str(m, "country"),
			list(m, "opening_hours"), str(m, "price_range"), list(m, "same_as"), str(m, "description"),
			str(m, "logo"), str(m, "latitude"), str(m, "longitude"))
	}
	f.Fuzz(func(t *testing.T, name, typ, url, tel, email, street, city, region, postal, country, hours, price, same, desc, logo, lat, lon string) {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, "\n")
		}
		facts := Facts{name, typ, url, tel, email, street, city, region, postal, country, split(hours), price, split(same), desc, logo, lat, lon}
		o, err := GenerateMarkup(facts)
		o2, err2 := GenerateMarkup(facts)
		if !reflect.DeepEqual(o, o2) || (err == nil) != (err2 == nil) {
			t.Fatal("GenerateMarkup is not deterministic")
		}
		if err != nil {
			if o != nil || !strings.HasPrefix(err.Error(), "facts.") {
				t.Fatalf("error %q with markup %v", err, o)
			}
			return
		}
		v := Validate(o)
		if len(v.Errors) > 0 {
			t.Fatalf("markup for %+v has errors: %+v", facts, v.Errors)
		}
		data, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		pv, perr := ParseJSON(string(data))
		if perr != nil {
			t.Fatalf("markup %s does not parse: %v", data, perr)
		}
		if v2 := Validate(pv); !reflect.DeepEqual(v, v2) {
			t.Fatalf("Validate differs after a JSON round trip of %s", data)
		}
	})
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
