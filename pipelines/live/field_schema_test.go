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

// fldSpace is llama.cpp's space rule at its longest: "\n"{1,2} [ \t]{0,20}.
const fldSpace = 22

// fldPatterns are the string forms the field and translate lanes use, and
// the most bytes a match of each takes given the numbers in it: none needs
// a JSON escape.
var fldPatterns = []struct {
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
}

// fldMaxBytes checks that a schema bounds everything (strings by a known
// escape-free pattern, arrays by maxItems, objects closed with every
// property required) and returns the most bytes a grammar-constrained
// answer can take, whitespace included.
func fldMaxBytes(t *testing.T, where string, s map[string]any) int {
	t.Helper()
	if vals, ok := s["enum"].([]any); ok {
		longest := 0
		for _, v := range vals {
			b, _ := json.Marshal(v)
			longest = max(longest, len(b))
		}
		return longest + fldSpace
	}
	switch s["type"] {
	case "string":
		pat, _ := s["pattern"].(string)
		for _, p := range fldPatterns {
			if m := p.re.FindStringSubmatch(pat); m != nil {
				var ns []int
				for _, g := range m[1:] {
					n, _ := strconv.Atoi(g)
					ns = append(ns, n)
				}
				return 1 + p.bytes(ns) + 1 + fldSpace
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
		item := fldMaxBytes(t, where+"[]", s["items"].(map[string]any))
		return 1 + fldSpace + int(n)*item + (int(n)-1)*(1+fldSpace) + 1 + fldSpace
	case "object":
		props, _ := s["properties"].(map[string]any)
		if s["additionalProperties"] != false {
			t.Errorf("%s: an object open to other properties", where)
		}
		var req []string
		for _, r := range s["required"].([]any) {
			req = append(req, r.(string))
		}
		size := 1 + fldSpace + 1 + fldSpace
		for k, v := range props {
			if !slices.Contains(req, k) {
				t.Errorf("%s.%s: optional property", where, k)
			}
			size += len(k) + 2 + fldSpace + 1 + fldSpace + fldMaxBytes(t, where+"."+k, v.(map[string]any))
		}
		return size + (len(props)-1)*(1+fldSpace)
	}
	t.Errorf("%s: unexpected schema %v", where, s)
	return 0
}

// The field and translate lanes' schemas bound every string and array, so
// the longest answer the grammar allows fits MaxTokens (every token is at
// least one byte), and MaxTokens stays within the default stop reserve.
func TestFieldTranslateSchemasBoundTheAnswer(t *testing.T) {
	for _, v := range []*live.Vertical{live.Field(), live.Translate()} {
		for _, l := range append(append([]*live.LaneSpec{}, v.Live...), v.Final...) {
			if l.Local {
				continue
			}
			var s map[string]any
			if err := json.Unmarshal(l.Schema, &s); err != nil {
				t.Fatalf("%s/%s: %v", v.ID, l.ID, err)
			}
			bound := fldMaxBytes(t, v.ID+"/"+l.ID, s)
			if l.MaxTokens < bound+1 {
				t.Errorf("%s/%s: MaxTokens %d < %d, the longest answer the grammar allows", v.ID, l.ID, l.MaxTokens, bound+1)
			}
			if l.MaxTokens > 2000 {
				t.Errorf("%s/%s: MaxTokens %d is over the default stop reserve of 2000", v.ID, l.ID, l.MaxTokens)
			}
			g, err := llm.SchemaGrammar(l.Schema)
			if err != nil {
				t.Errorf("%s/%s: %v", v.ID, l.ID, err)
				continue
			}
			if strings.Contains(g, "char ::=") {
				t.Errorf("%s/%s: the grammar has a free string:\n%s", v.ID, l.ID, g)
			}
			t.Logf("%s/%s: MaxTokens %d, bound %d", v.ID, l.ID, l.MaxTokens, bound)
		}
	}
}
