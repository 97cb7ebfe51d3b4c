package audit

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// QualityScores are the quality lane's figures (decimal strings): the
// share of arithmetic answers right, the JSON answers' schema accuracy
// and field agreement, and the tool probes scored as K2-Vendor-Verifier
// scores vendors — tool-call trigger F1 (a call made when one is expected,
// none when none is), schema accuracy of the calls made, and the share of
// expected calls whose arguments are right.
type QualityScores struct {
	Arithmetic     string `json:"arithmetic"`
	JSONSchema     string `json:"json_schema_accuracy"`
	JSONFields     string `json:"json_field_agreement"`
	ToolF1         string `json:"tool_call_f1"`
	ToolSchema     string `json:"tool_schema_accuracy"`
	ToolArguments  string `json:"tool_arguments_correct"`
	Answered       int    `json:"answered"`
	ProbesWithErrs int    `json:"errors"`
}

// scoreQuality scores the quality probes of s from answers (by probe id).
func scoreQuality(s *Suite, answers map[string]answer) QualityScores {
	var q QualityScores
	var arithOK, arithN, jsonValid, jsonN, fieldsOK, fieldsN int
	var tp, fp, fn, callsValid, callsN, argsOK, argsN int
	for _, p := range s.Probes {
		a, ok := answers[p.ID]
		switch p.Kind {
		case KindArithmetic, KindJSON, KindTool:
		default:
			continue
		}
		if !ok || a.err != nil {
			q.ProbesWithErrs++
			// A failed probe scores as a wrong answer.
		} else {
			q.Answered++
		}
		text := a.rep.Text
		switch p.Kind {
		case KindArithmetic:
			arithN++
			if a.err == nil && firstNumber(text) == strings.TrimSpace(string(p.Expect)) {
				arithOK++
			}
		case KindJSON:
			jsonN++
			var want map[string]any
			_ = json.Unmarshal(p.Expect, &want)
			fieldsN += len(want)
			obj, ok := firstObject(text)
			if a.err != nil || !ok {
				continue
			}
			if validate(p.Schema, obj) {
				jsonValid++
			}
			for k, v := range want {
				if same(obj[k], v) {
					fieldsOK++
				}
			}
		case KindTool:
			var want struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			}
			expectCall := json.Unmarshal(p.Expect, &want) == nil && want.Name != ""
			made := a.err == nil && len(a.rep.ToolCalls) > 0
			switch {
			case expectCall && made:
				tp++
			case expectCall && !made:
				fn++
			case !expectCall && made:
				fp++
			}
			if expectCall {
				argsN++
			}
			if !made {
				continue
			}
			for _, tc := range a.rep.ToolCalls {
				callsN++
				var args map[string]any
				if json.Unmarshal([]byte(tc.Arguments), &args) != nil {
					continue
				}
				if schema := toolSchema(p.Tools, tc.Name); schema != nil && validate(schema, args) {
					callsValid++
				}
			}
			tc := a.rep.ToolCalls[0]
			var args map[string]any
			if expectCall && tc.Name == want.Name && json.Unmarshal([]byte(tc.Arguments), &args) == nil {
				right := true
				for k, v := range want.Arguments {
					if !same(args[k], v) {
						right = false
					}
				}
				if right {
					argsOK++
				}
			}
		}
	}
	q.Arithmetic = ratio(arithOK, arithN)
	q.JSONSchema = ratio(jsonValid, jsonN)
	q.JSONFields = ratio(fieldsOK, fieldsN)
	if tp+fp+fn == 0 {
		q.ToolF1 = "1"
	} else {
		q.ToolF1 = fig(2 * float64(tp) / float64(2*tp+fp+fn))
	}
	q.ToolSchema = ratio(callsValid, callsN)
	q.ToolArguments = ratio(argsOK, argsN)
	return q
}

func ratio(k, n int) string {
	if n == 0 {
		return ""
	}
	return fig(float64(k) / float64(n))
}

var numberRe = regexp.MustCompile(`-?\d[\d,]*(\.\d+)?`)

// firstNumber is the first number of text, thousands separators dropped
// and a whole decimal written as an integer ("391.0" is 391).
func firstNumber(text string) string {
	m := numberRe.FindString(text)
	m = strings.ReplaceAll(m, ",", "")
	if f, err := strconv.ParseFloat(m, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return m
}

// firstObject is the first JSON object in text (code fences and prose
// around it allowed).
func firstObject(text string) (map[string]any, bool) {
	for i := strings.IndexByte(text, '{'); i >= 0 && i < len(text); {
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var m map[string]any
		if dec.Decode(&m) == nil && m != nil {
			return m, true
		}
		j := strings.IndexByte(text[i+1:], '{')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return nil, false
}

// same compares JSON values, strings case- and space-insensitively and
// numbers by value.
func same(got, want any) bool {
	switch w := want.(type) {
	case string:
		g, ok := got.(string)
		return ok && strings.EqualFold(strings.TrimSpace(g), strings.TrimSpace(w))
	case float64:
		g, ok := got.(float64)
		return ok && math.Abs(g-w) < 1e-9
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	}
	return false
}

func toolSchema(tools []Tool, name string) json.RawMessage {
	for _, t := range tools {
		if t.Function.Name == name {
			return t.Function.Parameters
		}
	}
	return nil
}

// schemaNode is the JSON-schema subset the suite uses: type (object,
// string, integer, number, boolean, array), required, properties, enum.
type schemaNode struct {
	Type       string                     `json:"type"`
	Required   []string                   `json:"required"`
	Properties map[string]json.RawMessage `json:"properties"`
	Enum       []any                      `json:"enum"`
}

// validate reports whether v satisfies schema (the subset above).
func validate(schema json.RawMessage, v any) bool {
	var s schemaNode
	if json.Unmarshal(schema, &s) != nil {
		return false
	}
	if len(s.Enum) > 0 {
		found := false
		for _, e := range s.Enum {
			if e == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, r := range s.Required {
			if _, ok := m[r]; !ok {
				return false
			}
		}
		for k, sub := range s.Properties {
			if x, ok := m[k]; ok && !validate(sub, x) {
				return false
			}
		}
		return true
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "number":
		_, ok := v.(float64)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "":
		return true
	}
	return false
}
