package schema_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"boxd/engine/llm"
	"boxd/pipelines/live"
	"boxd/pipelines/live/clinical"
	"boxd/pipelines/live/field"
	"boxd/pipelines/live/sales"
	"boxd/pipelines/live/translate"
)

// sbSpace is llama.cpp's space rule at its longest: "\n"{1,2} [ \t]{0,20}.
const sbSpace = 22

// sbPatterns are the string forms the lanes of every vertical use, and the
// most bytes a match of each takes given the numbers in it: none needs a
// JSON escape.
var sbPatterns = []struct {
	re    *regexp.Regexp
	bytes func(n []int) int
}{
	// printable ASCII without " or \: one byte a character
	{regexp.MustCompile(`^\^\[ !#-\\\[\\\]-~\]\{0,(\d+)\}\$$`), func(n []int) int { return n[0] }},
	// a citation: [n] or [n,m], a space and the words
	{regexp.MustCompile(`^\^\\\[\[0-9\]\{1,4\}\(,\[0-9\]\{1,4\}\)\?\\\] \[ !#-\\\[\\\]-~\]\{1,(\d+)\}\$$`), func(n []int) int { return 12 + n[0] }},
	// a labelled citation: [n] label: words
	{regexp.MustCompile(`^\^\\\[\[0-9\]\{1,4\}\(,\[0-9\]\{1,4\}\)\?\\\] \[ !#-9;-\\\[\\\]-~\]\{1,(\d+)\}: \[ !#-\\\[\\\]-~\]\{1,(\d+)\}\$$`), func(n []int) int { return 12 + n[0] + 2 + n[1] }},
	// any script within the Basic Multilingual Plane, no " \ or controls: at most 3 bytes a character
	{regexp.MustCompile(`^\^\[\^"\\\\\\x00-\\x1F\\x7F\\U00010000-\\U0010FFFF\]\{0,(\d+)\}\$$`), func(n []int) int { return 3 * n[0] }},
	// an ICD-10-CM code: letter, two characters, optional dot and up to four more
	{regexp.MustCompile(`^\^\[A-Za-z\]\[0-9A-Za-z\]\{2\}\(\\\.\?\[0-9A-Za-z\]\{1,4\}\)\?\$$`), func([]int) int { return 8 }},
}

// sbMaxBytes checks that a schema bounds everything (strings by a known
// escape-free pattern that agrees with maxLength when one is given, arrays
// by maxItems, objects closed with every property required) and returns
// the most bytes a grammar-constrained answer can take, whitespace
// included, derived here independently of the lane builder.
func sbMaxBytes(t *testing.T, where string, s map[string]any) int {
	t.Helper()
	if vals, ok := s["enum"].([]any); ok {
		longest := 0
		for _, v := range vals {
			b, _ := json.Marshal(v)
			longest = max(longest, len(b))
		}
		return longest + sbSpace
	}
	switch s["type"] {
	case "string":
		pat, _ := s["pattern"].(string)
		for k, p := range sbPatterns {
			if m := p.re.FindStringSubmatch(pat); m != nil {
				var ns []int
				for _, g := range m[1:] {
					n, _ := strconv.Atoi(g)
					ns = append(ns, n)
				}
				if ml, ok := s["maxLength"].(float64); ok && k == 0 && ns[0] != int(ml) {
					t.Errorf("%s: pattern allows %d characters, maxLength %v", where, ns[0], ml)
				}
				return 1 + p.bytes(ns) + 1 + sbSpace
			}
		}
		t.Errorf("%s: string pattern %q is not a known escape-free form", where, pat)
		return 0
	case "array":
		n, ok := s["maxItems"].(float64)
		if !ok {
			t.Errorf("%s: an array without maxItems", where)
			return 0
		}
		item := sbMaxBytes(t, where+"[]", s["items"].(map[string]any))
		return 1 + sbSpace + int(n)*item + (int(n)-1)*(1+sbSpace) + 1 + sbSpace
	case "object":
		props, _ := s["properties"].(map[string]any)
		if s["additionalProperties"] != false {
			t.Errorf("%s: an object open to other properties", where)
		}
		var req []string
		for _, r := range s["required"].([]any) {
			req = append(req, r.(string))
		}
		size := 1 + sbSpace + 1 + sbSpace
		for k, v := range props {
			if !slices.Contains(req, k) {
				t.Errorf("%s.%s: optional property", where, k)
			}
			size += len(k) + 2 + sbSpace + 1 + sbSpace + sbMaxBytes(t, where+"."+k, v.(map[string]any))
		}
		return size + (len(props)-1)*(1+sbSpace)
	}
	t.Errorf("%s: unexpected schema %v", where, s)
	return 0
}

// TestLaneSchemasBoundTheAnswer: every model lane of every vertical has a
// schema that bounds every string and array, so the longest answer the
// grammar allows fits MaxTokens (every token is at least one byte, and one
// more ends the generation); MaxTokens stays within the default stop
// reserve (limits.stop_reserve_tokens, 2000), and the grammar never falls
// back to llama.cpp's free string rule (escapes, any code point).
// Clinical's code tables are only used by Prompt and Finish, so nil does.
func TestLaneSchemasBoundTheAnswer(t *testing.T) {
	lanes := 0
	for _, v := range []*live.Vertical{clinical.New(nil), sales.New(), field.New(), translate.New()} {
		for _, l := range append(append([]*live.LaneSpec{}, v.Live...), v.Final...) {
			if l.Local {
				continue
			}
			lanes++
			where := v.ID + "/" + l.ID
			var s map[string]any
			if err := json.Unmarshal(l.Schema, &s); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			bound := sbMaxBytes(t, where, s)
			if l.MaxTokens < bound+1 {
				t.Errorf("%s: MaxTokens %d < %d, the longest answer the grammar allows", where, l.MaxTokens, bound+1)
			}
			if l.MaxTokens > 2000 {
				t.Errorf("%s: MaxTokens %d is over the default stop reserve of 2000", where, l.MaxTokens)
			}
			g, err := llm.SchemaGrammar(l.Schema)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if strings.Contains(g, "char ::=") {
				t.Errorf("%s: the grammar has a free string:\n%s", where, g)
			}
			t.Logf("%s: MaxTokens %d, bound %d", where, l.MaxTokens, bound)
		}
	}
	if lanes < 12 {
		t.Errorf("only %d model lanes checked", lanes)
	}
}
