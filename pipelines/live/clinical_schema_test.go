package live_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"boxd/engine/llm"
	"boxd/pipelines/live"
)

// csAllLanes are the clinical and sales lanes (Clinical's tables are only
// used by Prompt and Finish, so nil does for schemas).
func csAllLanes() []*live.LaneSpec {
	var out []*live.LaneSpec
	for _, v := range []*live.Vertical{live.Clinical(nil), live.Sales()} {
		out = append(append(out, v.Live...), v.Final...)
	}
	return out
}

// csSpace is llama.cpp's space rule at its longest: "\n"{1,2} [ \t]{0,20}.
const csSpace = 22

// csTextPattern is the one free-text string form: printable ASCII without
// " or \, so a character is one byte and needs no escape.
var csTextPattern = regexp.MustCompile(`^\^\[ !#-\\\[\\\]-~\]\{0,(\d+)\}\$$`)

// csOtherPatterns are the other string patterns and their longest match.
var csOtherPatterns = map[string]int{
	`^[A-Za-z][0-9A-Za-z]{2}(\.?[0-9A-Za-z]{1,4})?$`: 8,
}

// csMaxBytes checks that a schema bounds everything (strings by maxLength
// and an escape-free pattern, arrays by maxItems, objects closed with every
// property required) and returns the most bytes a grammar-constrained
// answer can take, whitespace included, derived here independently of the
// lane builder.
func csMaxBytes(t *testing.T, where string, s map[string]any) int {
	t.Helper()
	if vals, ok := s["enum"].([]any); ok {
		longest := 0
		for _, v := range vals {
			b, _ := json.Marshal(v)
			longest = max(longest, len(b))
		}
		return longest + csSpace
	}
	switch s["type"] {
	case "string":
		ml, ok := s["maxLength"].(float64)
		pat, _ := s["pattern"].(string)
		if !ok || pat == "" {
			t.Errorf("%s: a string without maxLength and pattern", where)
			return 0
		}
		if m := csTextPattern.FindStringSubmatch(pat); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != int(ml) {
				t.Errorf("%s: pattern allows %d characters, maxLength %v", where, n, ml)
			}
		} else if n, ok := csOtherPatterns[pat]; !ok || n > int(ml) {
			t.Errorf("%s: pattern %q is not a known escape-free form within maxLength", where, pat)
		}
		return 1 + int(ml) + 1 + csSpace
	case "array":
		n, ok := s["maxItems"].(float64)
		if !ok {
			t.Errorf("%s: an array without maxItems", where)
			return 0
		}
		item := csMaxBytes(t, where+"[]", s["items"].(map[string]any))
		return 1 + csSpace + int(n)*item + (int(n)-1)*(1+csSpace) + 1 + csSpace
	case "object":
		props, _ := s["properties"].(map[string]any)
		if s["additionalProperties"] != false {
			t.Errorf("%s: an object open to other properties", where)
		}
		var req []string
		for _, r := range s["required"].([]any) {
			req = append(req, r.(string))
		}
		size := 1 + csSpace + 1 + csSpace
		for k, v := range props {
			if !slices.Contains(req, k) {
				t.Errorf("%s.%s: optional property", where, k)
			}
			size += len(k) + 2 + csSpace + 1 + csSpace + csMaxBytes(t, where+"."+k, v.(map[string]any))
		}
		return size + (len(props)-1)*(1+csSpace)
	}
	t.Errorf("%s: unexpected schema %v", where, s)
	return 0
}

func TestLaneSchemasBoundTheAnswer(t *testing.T) {
	for _, l := range csAllLanes() {
		var s map[string]any
		if err := json.Unmarshal(l.Schema, &s); err != nil {
			t.Fatalf("%s: %v", l.ID, err)
		}
		bound := csMaxBytes(t, l.ID, s)
		// Every token the grammar accepts is at least one byte, and one
		// more token ends the generation.
		if l.MaxTokens < bound+1 {
			t.Errorf("%s: MaxTokens %d < %d, the longest answer the grammar allows", l.ID, l.MaxTokens, bound+1)
		}
		// Within the default stop reserve (limits.stop_reserve_tokens, 2000):
		// the followup fits in it, and no live lane's reservation can take
		// the whole budget left above it.
		if l.MaxTokens > 2000 {
			t.Errorf("%s: MaxTokens %d is over the default stop reserve of 2000", l.ID, l.MaxTokens)
		}
		g, err := llm.SchemaGrammar(l.Schema)
		if err != nil {
			t.Errorf("%s: %v", l.ID, err)
			continue
		}
		// llama.cpp's generic char rule (escapes, any code point) is never used.
		if strings.Contains(g, "char ::=") {
			t.Errorf("%s: the grammar has a free string:\n%s", l.ID, g)
		}
		t.Logf("%s: MaxTokens %d, bound %d", l.ID, l.MaxTokens, bound)
	}
}
