package scoring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaKeywords are the JSON Schema keywords a json task's schema may use
// (GET /migration/info lists them); a schema with any other keyword is
// refused rather than half understood. Validation itself is
// santhosh-tekuri/jsonschema's (draft 2020-12).
var SchemaKeywords = []string{
	"$schema", "additionalProperties", "const", "description", "enum", "exclusiveMaximum", "exclusiveMinimum",
	"items", "maxItems", "maxLength", "maximum", "minItems", "minLength", "minimum", "pattern", "properties",
	"required", "title", "type",
}

// SchemaTypes are the type names a schema may use.
var SchemaTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// Schema is a json task's schema, checked to be within the subset and
// compiled.
type Schema struct {
	doc      map[string]any
	compiled *jsonschema.Schema
}

// maxSchemaDepth bounds nested properties and items.
const maxSchemaDepth = 16

// ParseSchema reads a schema and refuses keywords outside the subset
// (naming the keyword and where it is).
func ParseSchema(raw json.RawMessage) (*Schema, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("must be a JSON object")
	}
	if err := checkSubset(m, "", 0); err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("task.json", doc); err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	s, err := c.Compile("task.json")
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	return &Schema{doc: m, compiled: s}, nil
}

func checkSubset(m map[string]any, at string, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("%s: nested deeper than %d levels", where(at), maxSchemaDepth)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(SchemaKeywords, k) {
			return fmt.Errorf("%s: keyword %q is outside the supported subset (%s)", where(at), k, strings.Join(SchemaKeywords, ", "))
		}
		v := m[k]
		switch k {
		case "type":
			types := []any{v}
			if list, ok := v.([]any); ok {
				types = list
			}
			for _, t := range types {
				s, ok := t.(string)
				if !ok || !slices.Contains(SchemaTypes, s) {
					return fmt.Errorf("%s: type must be one of %s (or a list of them)", where(at), strings.Join(SchemaTypes, ", "))
				}
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: properties must be an object of schemas", where(at))
			}
			for name, p := range props {
				pm, ok := p.(map[string]any)
				if !ok {
					return fmt.Errorf("%s: property %q must be a schema object", where(at), name)
				}
				if err := checkSubset(pm, at+".properties."+name, depth+1); err != nil {
					return err
				}
			}
		case "items":
			im, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: items must be one schema object", where(at))
			}
			if err := checkSubset(im, at+".items", depth+1); err != nil {
				return err
			}
		case "additionalProperties":
			if _, ok := v.(bool); !ok {
				return fmt.Errorf("%s: additionalProperties must be true or false", where(at))
			}
		case "pattern":
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("%s: pattern must be a string", where(at))
			}
			if _, err := regexp.Compile(s); err != nil {
				return fmt.Errorf("%s: pattern: %v", where(at), err)
			}
		}
	}
	return nil
}

func where(at string) string {
	if at == "" {
		return "the schema's root"
	}
	return "schema" + at
}

// TopLevel is the schema's top-level property names, sorted.
func (s *Schema) TopLevel() []string {
	props, _ := s.doc["properties"].(map[string]any)
	out := make([]string, 0, len(props))
	for k := range props {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Validate checks a value read with ParseJSON; the error names the first
// place that breaks the schema.
func (s *Schema) Validate(v any) error {
	err := s.compiled.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return errors.New(firstCause(ve))
	}
	return err
}

// english prints validation messages.
var english = message.NewPrinter(language.English)

// firstCause is the deepest first cause of a validation error, as
// "/path: message".
func firstCause(ve *jsonschema.ValidationError) string {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	loc := "/" + strings.Join(ve.InstanceLocation, "/")
	return loc + ": " + ve.ErrorKind.LocalizedString(english)
}
