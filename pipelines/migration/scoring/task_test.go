package scoring

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNormalize: each of the exact task's rules on its own, then together.
func TestNormalize(t *testing.T) {
	for _, c := range []struct{ rule, a, b string }{
		{"whitespace runs", "New   York\tCity\n", "New York City"},
		{"leading and trailing space", "  Paris ", "Paris"},
		{"case", "PARIS", "paris"},
		{"straight double quotes around", `"Paris"`, "Paris"},
		{"single quotes around", "'Paris'", "Paris"},
		{"curly quotes around", "\u201cParis\u201d", "Paris"},
		{"curly apostrophe inside", "Don\u2019t", "Don't"},
		{"code fence with language", "```text\nParis\n```", "Paris"},
		{"code fence without language", "```\n144\n```", "144"},
		{"trailing full stop", "Paris.", "Paris"},
		{"trailing full stop after quotes", `"Paris".`, "Paris"},
		{"trailing full stop inside quotes", `"Paris."`, "paris"},
		{"all at once", "```\n  \u201cThe  Pacific OCEAN.\u201d \n```", "the pacific ocean"},
	} {
		if Normalize(c.a) != Normalize(c.b) {
			t.Errorf("%s: %q → %q, %q → %q: want equal", c.rule, c.a, Normalize(c.a), c.b, Normalize(c.b))
		}
	}
	for _, c := range []struct{ why, a, b string }{
		{"one trailing stop only", "etc..", "etc"},
		{"inner quotes kept", `say "hi" now`, "say hi now"},
		{"words differ", "Paris", "Lyon"},
		{"a stop inside", "3.5", "35"},
	} {
		if Normalize(c.a) == Normalize(c.b) {
			t.Errorf("%s: %q and %q normalise alike (%q)", c.why, c.a, c.b, Normalize(c.a))
		}
	}
}

func TestExtract(t *testing.T) {
	labels := []string{"billing", "bug", "feature", "bug report"}
	for _, c := range []struct {
		answer, rule string
		want         int
	}{
		{"Billing.", ExtractWhole, 0},
		{"It is billing", ExtractWhole, -1},
		{"It is billing, not a bug", ExtractFirst, 0},
		{"It is billing, not a bug", ExtractLast, 1},
		{"a bug report about billing", ExtractFirst, 3}, // longest at the same place
		{"debugging", ExtractFirst, -1},                 // whole words only
		{"FEATURE request", ExtractFirst, 2},
		{"Answer: [[bug]] — or [[feature]]", ExtractDoubleBracket, 2},
		{"[[ Billing ]]", ExtractDoubleBracket, 0},
		{"[[refund]]", ExtractDoubleBracket, -1},
		{"bug", ExtractDoubleBracket, -1},
	} {
		if got := Extract(c.answer, labels, c.rule); got != c.want {
			t.Errorf("Extract(%q, %s) = %d, want %d", c.answer, c.rule, got, c.want)
		}
	}
}

func TestSchemaSubset(t *testing.T) {
	good := `{"type":"object","properties":{"a":{"type":"string","maxLength":5},"n":{"type":["number","null"],"minimum":0},"items":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string","pattern":"^[A-Z]+$"}},"required":["sku"]}}},"required":["a"],"additionalProperties":false}`
	s, err := ParseSchema(json.RawMessage(good))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.TopLevel(), ","); got != "a,items,n" {
		t.Errorf("top level %s", got)
	}
	for _, c := range []struct {
		doc   string
		valid bool
		place string
	}{
		{`{"a":"x"}`, true, ""},
		{`{"a":"toolong"}`, false, "/a"},
		{`{"n":1}`, false, "/"},
		{`{"a":"x","extra":1}`, false, "/"},
		{`{"a":"x","items":[{"sku":"AB"},{"sku":"ab"}]}`, false, "/items/1/sku"},
	} {
		v, err := ParseJSON(c.doc)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Validate(v)
		if (err == nil) != c.valid {
			t.Errorf("%s: valid %v, want %v", c.doc, err == nil, c.valid)
		}
		if err != nil && c.place != "" && schemaPlace(err.Error()) != c.place {
			t.Errorf("%s: place %q, want %q (%v)", c.doc, schemaPlace(err.Error()), c.place, err)
		}
	}
	for _, bad := range []string{
		`{"type":"object","oneOf":[{}]}`,
		`{"type":"object","properties":{"a":{"$ref":"#/x"}}}`,
		`{"type":"object","properties":{"a":{"type":"date"}}}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","properties":{"a":{"type":"string","pattern":"(?<=x)"}}}`,
		`[1]`,
		`{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`,
	} {
		if _, err := ParseSchema(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestParseJSONAndFields(t *testing.T) {
	v, err := ParseJSON("```json\n{\"order\": {\"total\": 12.50, \"items\": [{\"sku\": \"A\"}]}}\n```")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := ParseJSON(`{"order": {"total": 12.5, "items": [{"sku": "A"}]}}`)
	for _, p := range []string{"order.total", "order.items.0.sku", "order"} {
		a, okA := At(v, p)
		b, okB := At(w, p)
		if !okA || !okB || !SameJSON(a, b) {
			t.Errorf("%s: %v %v", p, a, b)
		}
	}
	if _, ok := At(v, "order.items.1.sku"); ok {
		t.Error("index past the end found")
	}
	if _, ok := At(v, "order.items.01.sku"); ok {
		t.Error("a padded index found")
	}
	if _, err := ParseJSON(`{"a":1} trailing`); err == nil {
		t.Error("text after JSON accepted")
	}
	x, _ := ParseJSON(`"12"`)
	y, _ := ParseJSON(`12`)
	if SameJSON(x, y) {
		t.Error("a string and a number compare equal")
	}
}

func TestScoreCode(t *testing.T) {
	label := &Task{Type: TaskLabel, Labels: []string{"yes", "no"}, Extract: ExtractFirst}
	js := &Task{Type: TaskJSON, Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a","b"]}`)}
	for _, tk := range []*Task{label, js} {
		if err := tk.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	no := "no"
	for _, c := range []struct {
		name                 string
		task                 *Task
		logged               string
		ref                  *string
		answer               string
		failed               bool
		outcome, kind, extra string
	}{
		{"exact match", &Task{Type: TaskExact}, "Paris.", nil, "paris", false, Pass, KindMatch, ""},
		{"exact extra text", &Task{Type: TaskExact}, "Paris", nil, "The answer is Paris", false, Fail, KindMismatch, "extra_text"},
		{"exact empty answer", &Task{Type: TaskExact}, "Paris", nil, "", false, Fail, KindMismatch, "empty"},
		{"exact truncated", &Task{Type: TaskExact}, "New York City", nil, "New York", false, Fail, KindMismatch, "truncated"},
		{"exact empty logged", &Task{Type: TaskExact}, " ", nil, "x", false, Unscorable, KindNoReference, ""},
		{"exact failed call", &Task{Type: TaskExact}, "Paris", nil, "", true, Fail, KindModelError, ""},
		{"label same", label, "Yes, it is", nil, "yes", false, Pass, KindSameLabel, ""},
		{"label given ref wins", label, "yes", &no, "no", false, Pass, KindSameLabel, ""},
		{"label wrong", label, "yes", nil, "no", false, Fail, KindWrongLabel, "yes->no"},
		{"label none in answer", label, "yes", nil, "maybe", false, Fail, KindNoLabel, ""},
		{"label none logged", label, "maybe", nil, "yes", false, Unscorable, KindNoReference, ""},
		{"json agree", js, `{"a":"x","b":2}`, nil, "```json\n{\"b\": 2.0, \"a\": \"x\"}\n```", false, Pass, KindFieldsAgree, ""},
		{"json field", js, `{"a":"x","b":2}`, nil, `{"a":"y","b":2}`, false, Fail, KindFieldDiffers, "a"},
		{"json invalid", js, `{"a":"x","b":2}`, nil, `{"a":`, false, Fail, KindInvalidJSON, ""},
		{"json schema", js, `{"a":"x","b":2}`, nil, `{"a":"x"}`, false, Fail, KindSchema, "/"},
		{"json logged invalid", js, `not json`, nil, `{"a":"x","b":2}`, false, Unscorable, KindNoReference, ""},
	} {
		var sc Score
		Code(c.task, c.logged, c.ref, c.answer, c.failed, &sc)
		if sc.Outcome != c.outcome || sc.Kind != c.kind || sc.Detail != c.extra {
			t.Errorf("%s: %s %s %q, want %s %s %q", c.name, sc.Outcome, sc.Kind, sc.Detail, c.outcome, c.kind, c.extra)
		}
	}
}

func TestJudgeOutcome(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"same", "same", JudgeAgree}, {"different", "different", JudgeDisagree},
		{"same", "different", JudgePositionBiased}, {"different", "same", JudgePositionBiased},
		{"", "same", JudgeError}, {"same", "", JudgeError},
	} {
		if got := JudgeOutcome(c.a, c.b); got != c.want {
			t.Errorf("%s/%s: %s, want %s", c.a, c.b, got, c.want)
		}
	}
}
