package pagecheck

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the want values of the fixture files")

const fixtureDir = "../../../testdata/sitecheck"

// fixtureFiles maps each kit function to its fixture file and minimum count.
var fixtureFiles = []struct {
	fn, file string
	min      int
}{
	{"checkPageJsonLd", "check_page_jsonld.json", 20},
	{"validateSchemaLocally", "validate_schema.json", 40},
	{"checkLiveMeta", "check_live_meta.json", 20},
	{"hasMeaningfulAltText", "meaningful_alt.json", 25},
	{"llmsTxtCheck", "llms_txt.json", 15},
	{"generateSchemaMarkup", "generate_schema_markup.json", 10},
}

type fixture struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	Want  json.RawMessage `json:"want"`
}

func loadFixtures(t *testing.T, file string) []fixture {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, file))
	if err != nil {
		t.Fatal(err)
	}
	var fx []fixture
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return fx
}

// decodeAny decodes JSON keeping numbers as json.Number.
func decodeAny(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}

func TestFixtures(t *testing.T) {
	kit := KitFunctions()
	total := 0
	for _, ff := range fixtureFiles {
		fx := loadFixtures(t, ff.file)
		if len(fx) < ff.min {
			t.Errorf("%s: %d cases, want at least %d", ff.file, len(fx), ff.min)
		}
		if ff.fn == "checkPageJsonLd" || ff.fn == "validateSchemaLocally" {
			total += len(fx)
		}
		fn := kit[ff.fn]
		seen := map[string]bool{}
		changed := false
		for i := range fx {
			c := &fx[i]
			if seen[c.Name] {
				t.Errorf("%s: duplicate case name %q", ff.file, c.Name)
			}
			seen[c.Name] = true
			got, err := fn(c.Input)
			if err != nil {
				t.Errorf("%s/%s: %v", ff.file, c.Name, err)
				continue
			}
			gotJSON, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				c.Want = gotJSON
				changed = true
				continue
			}
			if len(c.Want) == 0 {
				t.Errorf("%s/%s: no want", ff.file, c.Name)
				continue
			}
			if g, w := decodeAny(t, gotJSON), decodeAny(t, c.Want); !reflect.DeepEqual(g, w) {
				t.Errorf("%s/%s:\n got %s\nwant %s", ff.file, c.Name, gotJSON, c.Want)
			}
		}
		if changed {
			writeFixtures(t, ff.file, fx)
		}
	}
	if total < 60 {
		t.Errorf("%d JSON-LD cases, want at least 60", total)
	}
}

// writeFixtures rewrites a fixture file with one-space indentation.
func writeFixtures(t *testing.T, file string, fx []fixture) {
	t.Helper()
	type item struct {
		Name  string `json:"name"`
		Input any    `json:"input"`
		Want  any    `json:"want"`
	}
	var items []item
	for _, c := range fx {
		items = append(items, item{c.Name, decodeAny(t, c.Input), decodeAny(t, c.Want)})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(items); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fixtureDir, file), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFixturesMarkupValidates checks that every generated markup passes
// Validate without errors.
func TestFixturesMarkupValidates(t *testing.T) {
	for _, c := range loadFixtures(t, "generate_schema_markup.json") {
		got, err := generateMarkupKit(c.Input)
		if err != nil {
			t.Fatal(err)
		}
		o, ok := got.(Object)
		if !ok {
			continue
		}
		v := Validate(o)
		if len(v.Errors) > 0 {
			t.Errorf("%s: generated markup has errors: %+v", c.Name, v.Errors)
		}
		// The same through JSON, as a port sees it.
		data, _ := json.Marshal(o)
		pv, perr := ParseJSON(string(data))
		if perr != nil {
			t.Fatalf("%s: %v", c.Name, perr)
		}
		if v2 := Validate(pv); !reflect.DeepEqual(v, v2) {
			t.Errorf("%s: Validate differs after a JSON round trip", c.Name)
		}
	}
}

func TestKitRejectsBadInput(t *testing.T) {
	kit := KitFunctions()
	cases := []struct{ fn, in, want string }{
		{"checkPageJsonLd", `{"html": "", "extra": 1}`, `unknown field "extra"`},
		{"checkPageJsonLd", `{"url": "https://a.example/"}`, `field "html" is required`},
		{"checkPageJsonLd", `{"html": 3}`, `field "html" must be a string`},
		{"checkPageJsonLd", `{"html": null}`, `not null`},
		{"checkPageJsonLd", `[]`, `want one JSON object`},
		{"checkPageJsonLd", `{"html": ""} {}`, `unexpected data`},
		{"validateSchemaLocally", `{}`, `field "object" is required`},
		{"checkLiveMeta", `{"html": "", "lang": "en"}`, `unknown field "lang"`},
		{"hasMeaningfulAltText", `{"alt": 3}`, `field "alt" must be a string or null`},
		{"hasMeaningfulAltText", `{"alt": "x", "title": "y"}`, `unknown field "title"`},
		{"llmsTxtCheck", `{"body": ""}`, `field "status" is required`},
		{"llmsTxtCheck", `{"status": "200"}`, `field "status" must be an integer`},
		{"generateSchemaMarkup", `{"facts": {"name": "A", "phone": "1"}}`, `unknown field "phone"`},
		{"generateSchemaMarkup", `{}`, `field "facts" is required`},
	}
	for _, c := range cases {
		_, err := kit[c.fn](json.RawMessage(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s(%s): error %v, want it to contain %q", c.fn, c.in, err, c.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), c.fn+": ") {
			t.Errorf("%s: error %q does not start with the function name", c.fn, err)
		}
	}
	if _, err := kit["hasMeaningfulAltText"](json.RawMessage(`{"alt": null}`)); err != nil {
		t.Errorf("alt null rejected: %v", err)
	}
}
