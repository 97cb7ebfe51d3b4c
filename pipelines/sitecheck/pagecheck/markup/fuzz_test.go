package markup

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"boxd/pipelines/sitecheck/pagecheck/internal/fixtures"
	"boxd/pipelines/sitecheck/pagecheck/jsonld"
	"boxd/pipelines/sitecheck/pagecheck/schema"
)

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
	for _, in := range fixtures.Inputs(f, "generate_schema_markup.json") {
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
		v := schema.Validate(o)
		if len(v.Errors) > 0 {
			t.Fatalf("markup for %+v has errors: %+v", facts, v.Errors)
		}
		data, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		pv, perr := jsonld.ParseJSON(string(data))
		if perr != nil {
			t.Fatalf("markup %s does not parse: %v", data, perr)
		}
		if v2 := schema.Validate(pv); !reflect.DeepEqual(v, v2) {
			t.Fatalf("Validate differs after a JSON round trip of %s", data)
		}
	})
}
