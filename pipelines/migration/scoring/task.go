// Package scoring scores a migration check's answers in code: the task
// types and their validation, the exact task's normalisation, label
// extraction, the JSON Schema subset and field comparison, each example's
// outcome and kind, and the rule over a freetext judge's two judgments.
// It calls no model.
package scoring

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"boxd/internal/problem"
)

// Task types (contract: task.type).
const (
	TaskExact    = "exact"
	TaskLabel    = "label"
	TaskJSON     = "json"
	TaskFreetext = "freetext"
)

// Label extraction rules (task.extract).
const (
	ExtractWhole         = "whole"
	ExtractFirst         = "first"
	ExtractLast          = "last"
	ExtractDoubleBracket = "double_bracket"
)

// Limits of a task.
const (
	MaxLabels     = 100
	MaxLabelChars = 200
	MaxFields     = 50
	MaxRubric     = 4000
	MaxSchemaSize = 32 << 10
)

// Task is the body's task: how a candidate's output is scored against the
// current model's logged output.
type Task struct {
	Type    string          `json:"type"`
	Labels  []string        `json:"labels,omitempty"`
	Extract string          `json:"extract,omitempty"`
	Schema  json.RawMessage `json:"schema,omitempty"`
	Fields  []string        `json:"fields,omitempty"`
	Rubric  string          `json:"rubric,omitempty"`

	schema *Schema
}

// Validate checks the task and prepares its schema and fields.
func (t *Task) Validate() error {
	bad := func(format string, a ...any) error { return problem.New(problem.Invalid, "task: "+format, a...) }
	switch t.Type {
	case TaskExact:
	case TaskLabel:
		if len(t.Labels) < 2 || len(t.Labels) > MaxLabels {
			return bad("a label task needs labels: a list of 2 to %d labels", MaxLabels)
		}
		seen := map[string]bool{}
		for i, l := range t.Labels {
			n := Normalize(l)
			if n == "" || len(l) > MaxLabelChars {
				return bad("labels[%d] must be 1 to %d characters", i, MaxLabelChars)
			}
			if seen[n] {
				return bad("labels[%d] (%q) is the same label as an earlier one once normalised", i, l)
			}
			seen[n] = true
		}
		switch t.Extract {
		case "":
			t.Extract = ExtractWhole
		case ExtractWhole, ExtractFirst, ExtractLast, ExtractDoubleBracket:
		default:
			return bad("extract must be whole, first, last or double_bracket (for [[X]]), not %q", t.Extract)
		}
	case TaskJSON:
		if len(t.Schema) == 0 || string(t.Schema) == "null" {
			return bad("a json task needs schema: a JSON Schema object (GET /migration/info lists the keywords supported)")
		}
		if len(t.Schema) > MaxSchemaSize {
			return problem.New(problem.TooLarge, "task.schema is over %d bytes", MaxSchemaSize)
		}
		s, err := ParseSchema(t.Schema)
		if err != nil {
			return bad("schema: %v", err)
		}
		t.schema = s
		if len(t.Fields) == 0 {
			t.Fields = s.TopLevel()
		}
		if len(t.Fields) == 0 {
			return bad("fields: the schema has no top-level properties; name the dotted paths to compare")
		}
		if len(t.Fields) > MaxFields {
			return bad("at most %d fields", MaxFields)
		}
		for i, f := range t.Fields {
			if !validPath(f) {
				return bad("fields[%d] (%q) must be a dotted path of property names or array indexes, like order.total or items.0.sku", i, f)
			}
		}
	case TaskFreetext:
		if strings.TrimSpace(t.Rubric) == "" {
			return bad("a freetext task needs rubric: what matters in an answer, for the judge")
		}
		if len(t.Rubric) > MaxRubric {
			return problem.New(problem.TooLarge, "task.rubric is over %d characters", MaxRubric)
		}
	case "":
		return bad("type is required: exact, label, json or freetext")
	default:
		return bad("unknown type %q: use exact, label, json or freetext", t.Type)
	}
	if t.Type != TaskLabel && (len(t.Labels) > 0 || t.Extract != "") {
		return bad("labels and extract belong to a label task")
	}
	if t.Type != TaskJSON && (len(t.Schema) > 0 || len(t.Fields) > 0) {
		return bad("schema and fields belong to a json task")
	}
	if t.Type != TaskFreetext && t.Rubric != "" {
		return bad("rubric belongs to a freetext task")
	}
	return nil
}

var pathPart = regexp.MustCompile(`^[A-Za-z0-9_$@-]+$`)

func validPath(p string) bool {
	if p == "" || len(p) > 200 {
		return false
	}
	for _, part := range strings.Split(p, ".") {
		if !pathPart.MatchString(part) {
			return false
		}
	}
	return true
}

// Normalize is the exact task's normalisation, applied to both answers:
// code fences removed (the text inside the outermost ``` fence), curly
// quotes made straight and quotes around the whole answer removed, every
// run of white space one space, trimmed, lower case, and one trailing full
// stop dropped.
func Normalize(s string) string {
	s = Unfence(s)
	s = strings.Map(func(r rune) rune {
		switch r {
		case '\u2018', '\u2019', '\u201a', '\u2032':
			return '\''
		case '\u201c', '\u201d', '\u201e', '\u2033', '\u00ab', '\u00bb':
			return '"'
		}
		return r
	}, s)
	s = strings.ToLower(strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " "))
	s = unquote(s)
	// One trailing full stop, inside the quotes or outside them.
	if t, ok := strings.CutSuffix(s, "."); ok {
		s = unquote(strings.TrimSpace(t))
	}
	return s
}

// unquote removes quotes that wrap the whole text (any depth).
func unquote(s string) string {
	for len(s) >= 2 && (s[0] == '"' || s[0] == '\'' || s[0] == '`') && s[len(s)-1] == s[0] {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

var fence = regexp.MustCompile("(?s)^\\s*```[A-Za-z0-9_+-]*[ \t]*\n?(.*?)\n?```\\s*$")

// Unfence returns the text inside a code fence that wraps the whole
// answer (```json ... ```), else the answer.
func Unfence(s string) string {
	if m := fence.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return s
}

var doubleBracket = regexp.MustCompile(`\[\[([^\[\]]{1,200})\]\]`)

// Extract finds the label an answer gives (its index in labels) by the
// task's rule, -1 when it gives none: whole (the normalised answer is a
// label), first or last (the label found first or last in the answer,
// whole words, case-insensitive; at one position the longest label wins),
// double_bracket (the last [[X]] in the answer, X a label).
func Extract(answer string, labels []string, rule string) int {
	norm := make([]string, len(labels))
	for i, l := range labels {
		norm[i] = Normalize(l)
	}
	switch rule {
	case ExtractWhole, "":
		return slices.Index(norm, Normalize(answer))
	case ExtractDoubleBracket:
		m := doubleBracket.FindAllStringSubmatch(answer, -1)
		if len(m) == 0 {
			return -1
		}
		return slices.Index(norm, Normalize(m[len(m)-1][1]))
	}
	text := " " + wordsOnly(answer) + " "
	best, bestAt, bestLen := -1, -1, 0
	for i, l := range norm {
		w := " " + wordsOnly(l) + " "
		if strings.TrimSpace(w) == "" {
			continue
		}
		var at int
		if rule == ExtractLast {
			at = strings.LastIndex(text, w)
		} else {
			at = strings.Index(text, w)
		}
		if at < 0 {
			continue
		}
		better := best < 0 || (rule == ExtractLast && at+len(w) > bestAt+bestLen) || (rule != ExtractLast && at < bestAt) ||
			(at == bestAt && len(w) > bestLen)
		if better {
			best, bestAt, bestLen = i, at, len(w)
		}
	}
	return best
}

// wordsOnly lower-cases s and turns every run of characters that are not
// letters or digits into one space.
func wordsOnly(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}

// ParseJSON reads an answer as JSON: the text inside a code fence that
// wraps it, else the answer, trimmed.
func ParseJSON(answer string) (any, error) {
	d := json.NewDecoder(bytes.NewReader([]byte(strings.TrimSpace(Unfence(answer)))))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("text after the JSON value")
	}
	return v, nil
}

// At is the value at a dotted path (object keys, array indexes).
func At(v any, path string) (any, bool) {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[part]; !ok {
				return nil, false
			}
		case []any:
			i := 0
			if _, err := fmt.Sscanf(part, "%d", &i); err != nil || i < 0 || i >= len(x) || fmt.Sprint(i) != part {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// SameJSON compares two JSON values: numbers by value, strings exactly,
// objects by keys, arrays in order.
func SameJSON(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		if e1 != nil || e2 != nil {
			return x == y
		}
		return fx == fy
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !SameJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !SameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}
