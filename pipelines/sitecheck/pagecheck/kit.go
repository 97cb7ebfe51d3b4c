package pagecheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"boxd/pipelines/sitecheck/pagecheck/schema"
)

// KitFunctions are this package's kit functions by name. Each takes one JSON
// object; unknown fields, fields of the wrong JSON type, missing required
// fields and input that is not one JSON object are errors.
func KitFunctions() map[string]func(json.RawMessage) (any, error) {
	return map[string]func(json.RawMessage) (any, error){
		"checkPageJsonLd":       checkPageJSONLDKit,
		"validateSchemaLocally": validateSchemaKit,
		"checkLiveMeta":         checkLiveMetaKit,
		"hasMeaningfulAltText":  meaningfulAltKit,
		"llmsTxtCheck":          llmsTxtKit,
		"generateSchemaMarkup":  generateMarkupKit,
	}
}

// field describes one accepted input field.
type field struct {
	name     string
	required bool
	dst      any // pointer decoded into with encoding/json
	what     string
}

// decodeInput decodes raw strictly into the fields.
func decodeInput(fn string, raw json.RawMessage, fields []field) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("%s: bad input: want one JSON object", fn)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: bad input: unexpected data after the input object", fn)
	}
	var names []string
	for _, f := range fields {
		names = append(names, f.name)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(names, k) {
			return nil, fmt.Errorf("%s: bad input: unknown field %q (allowed: %s)", fn, k, strings.Join(names, ", "))
		}
	}
	for _, f := range fields {
		v, ok := m[f.name]
		if !ok {
			if f.required {
				return nil, fmt.Errorf("%s: bad input: field %q is required (%s)", fn, f.name, f.what)
			}
			continue
		}
		if f.dst == nil {
			continue
		}
		if string(bytes.TrimSpace(v)) == "null" && f.name != "alt" {
			return nil, fmt.Errorf("%s: bad input: field %q must be %s, not null", fn, f.name, f.what)
		}
		if err := strictUnmarshal(v, f.dst); err != nil {
			return nil, fmt.Errorf("%s: bad input: %s", fn, fieldError(f, err))
		}
	}
	return m, nil
}

// fieldError words a field's decoding error the same way in every kit
// language: what is wrong, in JSON terms.
func fieldError(f field, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		// Inside an object field (the facts of generateSchemaMarkup).
		want := "a string"
		if te.Type != nil && te.Type.Kind() == reflect.Slice {
			want = "a list of strings"
		}
		return fmt.Sprintf("field %q: %q must be %s, not %s", f.name, te.Field, want, kindPhrase(te.Value))
	}
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q must be %s, not %s", f.name, f.what, kindPhrase(te.Value))
	}
	if rest, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Sprintf("field %q has an unknown field %s; it must be %s", f.name, rest, f.what)
	}
	return fmt.Sprintf("field %q must be %s", f.name, f.what)
}

// kindPhrase names the JSON kind of an UnmarshalTypeError value.
func kindPhrase(v string) string {
	switch {
	case v == "bool":
		return "a JSON boolean"
	case strings.HasPrefix(v, "number "):
		return "a number with a fraction or exponent"
	}
	return "a JSON " + v
}

func strictUnmarshal(raw json.RawMessage, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}

func checkPageJSONLDKit(raw json.RawMessage) (any, error) {
	var html, url string
	if _, err := decodeInput("checkPageJsonLd", raw, []field{
		{"html", true, &html, "a string"},
		{"url", false, &url, "a string"},
	}); err != nil {
		return nil, err
	}
	return CheckPageJSONLD(html, url), nil
}

func validateSchemaKit(raw json.RawMessage) (any, error) {
	m, err := decodeInput("validateSchemaLocally", raw, []field{{"object", true, nil, "any JSON value"}})
	if err != nil {
		return nil, err
	}
	v, perr := ParseJSON(string(m["object"]))
	if perr != nil {
		return nil, fmt.Errorf("validateSchemaLocally: bad input: %v", perr)
	}
	return schema.ValidateParsed(v), nil
}

func checkLiveMetaKit(raw json.RawMessage) (any, error) {
	var html, url string
	if _, err := decodeInput("checkLiveMeta", raw, []field{
		{"html", true, &html, "a string"},
		{"url", false, &url, "a string"},
	}); err != nil {
		return nil, err
	}
	return CheckMeta(html, url), nil
}

func meaningfulAltKit(raw json.RawMessage) (any, error) {
	var alt *string
	var src string
	if _, err := decodeInput("hasMeaningfulAltText", raw, []field{
		{"alt", false, &alt, "a string or null"},
		{"src", false, &src, "a string"},
	}); err != nil {
		return nil, err
	}
	return MeaningfulAlt(alt, src), nil
}

func llmsTxtKit(raw json.RawMessage) (any, error) {
	var status int
	var ct, body string
	if _, err := decodeInput("llmsTxtCheck", raw, []field{
		{"status", true, &status, "an integer (the HTTP status of the /llms.txt fetch)"},
		{"content_type", false, &ct, "a string"},
		{"body", false, &body, "a string"},
	}); err != nil {
		return nil, err
	}
	return CheckLLMsTxt(status, ct, body), nil
}

func generateMarkupKit(raw json.RawMessage) (any, error) {
	var f Facts
	if _, err := decodeInput("generateSchemaMarkup", raw, []field{
		{"facts", true, &f, "an object of business facts (name, type, url, telephone, email, street, city, region, postal_code, country, opening_hours, price_range, same_as, description, logo, latitude, longitude)"},
	}); err != nil {
		return nil, err
	}
	o, err := GenerateMarkup(f)
	if err != nil {
		return map[string]string{"error": err.Error()}, nil
	}
	return o, nil
}
