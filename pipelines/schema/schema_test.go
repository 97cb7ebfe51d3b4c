package schema_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"boxd/pipelines/schema"
)

// pattern is the node's string pattern, compiled.
func pattern(t *testing.T, n schema.Node) *regexp.Regexp {
	t.Helper()
	var s struct {
		Type      string `json:"type"`
		MaxLength int    `json:"maxLength"`
		Pattern   string `json:"pattern"`
	}
	if err := json.Unmarshal(n.JSON(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "string" || s.Pattern == "" {
		t.Fatalf("not a string with a pattern: %s", n.JSON())
	}
	// llama.cpp's \U escapes, as Go's regexp writes them.
	return regexp.MustCompile(strings.NewReplacer(`\U00010000`, `\x{10000}`, `\U0010FFFF`, `\x{10FFFF}`).Replace(s.Pattern))
}

func TestLeaves(t *testing.T) {
	sp := schema.Space
	for _, c := range []struct {
		name string
		node schema.Node
		raw  string
		max  int
	}{
		{"text", schema.Text(5), `{"type":"string","maxLength":5,"pattern":"^[ !#-\\[\\]-~]{0,5}$"}`, 1 + 5 + 1 + sp},
		{"pattern", schema.Pattern(`[0-9]{2}`, 2), `{"type":"string","maxLength":2,"pattern":"^[0-9]{2}$"}`, 1 + 2 + 1 + sp},
		{"enum", schema.Enum("no", "maybe"), `{"type":"string","enum":["no","maybe"]}`, len(`"maybe"`) + sp},
		{"utext", schema.UText(4), `{"type":"string","maxLength":4,"pattern":"^[^\"\\\\\\x00-\\x1F\\x7F\\U00010000-\\U0010FFFF]{0,4}$"}`, 1 + 3*4 + 1 + sp},
		{"cite", schema.Cite(10), "", 1 + 12 + 10 + 1 + sp},
		{"labeled cite", schema.LabeledCite(6, 10), "", 1 + 12 + 6 + 2 + 10 + 1 + sp},
	} {
		if c.raw != "" && string(c.node.JSON()) != c.raw {
			t.Errorf("%s: %s\nwant %s", c.name, c.node.JSON(), c.raw)
		}
		if !json.Valid(c.node.JSON()) {
			t.Errorf("%s: not JSON: %s", c.name, c.node.JSON())
		}
		if c.node.MaxBytes() != c.max {
			t.Errorf("%s: MaxBytes %d, want %d", c.name, c.node.MaxBytes(), c.max)
		}
	}
}

func TestTextPatternHasNoEscapes(t *testing.T) {
	re := pattern(t, schema.Text(8))
	for s, want := range map[string]bool{"": true, "a b-c~!": true, "12345678": true, "123456789": false, `a"b`: false, `a\b`: false, "a\nb": false, "é": false} {
		if re.MatchString(s) != want {
			t.Errorf("Text(8) matches %q: %v, want %v", s, !want, want)
		}
	}
	re = pattern(t, schema.UText(3))
	for s, want := range map[string]bool{"añ字": true, "four": false, `"`: false, "\\": false, "\t": false, "😀": false} {
		if re.MatchString(s) != want {
			t.Errorf("UText(3) matches %q: %v, want %v", s, !want, want)
		}
	}
}

func TestCitePatterns(t *testing.T) {
	re := pattern(t, schema.Cite(12))
	for s, want := range map[string]bool{"[3] the flashing": true, "[3,4] the flashing": true, "[12345] x": false, "[3]words": false,
		"[3] ": false, "[3] 1234567890123": false, `[3] say "x"`: false, "the flashing": false} {
		if re.MatchString(s) != want {
			t.Errorf("Cite(12) matches %q: %v, want %v", s, !want, want)
		}
	}
	re = pattern(t, schema.LabeledCite(8, 12))
	for s, want := range map[string]bool{"[1] address: 12 Elm St": true, "[1,2] owner: Priya": true, "[1] a:b: c": false, "[1] address 12 Elm": false} {
		if re.MatchString(s) != want {
			t.Errorf("LabeledCite(8, 12) matches %q: %v, want %v", s, !want, want)
		}
	}
}

func TestArraysAndObjects(t *testing.T) {
	sp := schema.Space
	item := schema.Text(5) // 1+5+1+sp bytes
	a := schema.Array(item, 3)
	if want := `{"type":"array","maxItems":3,"items":` + string(item.JSON()) + `}`; string(a.JSON()) != want {
		t.Errorf("array %s", a.JSON())
	}
	// "[" space, three items, two "," space, "]" space.
	if want := 1 + sp + 3*item.MaxBytes() + 2*(1+sp) + 1 + sp; a.MaxBytes() != want {
		t.Errorf("array MaxBytes %d, want %d", a.MaxBytes(), want)
	}
	e := schema.ExactArray(item, 3)
	if !strings.Contains(string(e.JSON()), `"minItems":3,"maxItems":3`) || e.MaxBytes() != a.MaxBytes() {
		t.Errorf("exact array %s, MaxBytes %d", e.JSON(), e.MaxBytes())
	}

	o := schema.Object(schema.Prop("b", item), schema.Prop("a", schema.Enum("x")))
	want := `{"type":"object","additionalProperties":false,"properties":{"b":` + string(item.JSON()) + `,"a":{"type":"string","enum":["x"]}},"required":["b","a"]}`
	if string(o.JSON()) != want {
		t.Errorf("object %s\nwant %s", o.JSON(), want)
	}
	// "{" space "}" space, each `"key"` space ":" space value, one "," space.
	wantMax := 1 + sp + 1 + sp + (3 + sp + 1 + sp + item.MaxBytes()) + (1 + sp) + (3 + sp + 1 + sp + 3 + sp)
	if o.MaxBytes() != wantMax {
		t.Errorf("object MaxBytes %d, want %d", o.MaxBytes(), wantMax)
	}
	raw, maxTok := schema.Lane(o)
	if string(raw) != want || maxTok != wantMax+1 {
		t.Errorf("Lane: %s, %d tokens; want the object's schema and %d", raw, maxTok, wantMax+1)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
}

// TestLongestAnswerFits: the longest answer the grammar allows, written out
// with the most whitespace everywhere, takes exactly MaxBytes.
func TestLongestAnswerFits(t *testing.T) {
	ws := "\n\n" + strings.Repeat(" ", 20)
	if len(ws) != schema.Space {
		t.Fatalf("whitespace of %d bytes", len(ws))
	}
	str := func(n int) string { return `"` + strings.Repeat("x", n) + `"` + ws }
	item := str(4)
	arr := "[" + ws + item + "," + ws + item + "]" + ws
	answer := "{" + ws + `"k"` + ws + ":" + ws + arr + "," + ws + `"e"` + ws + ":" + ws + `"yes"` + ws + "}" + ws
	o := schema.Object(schema.Prop("k", schema.Array(schema.Text(4), 2)), schema.Prop("e", schema.Enum("no", "yes")))
	if len(answer) != o.MaxBytes() {
		t.Errorf("the longest answer has %d bytes, MaxBytes %d", len(answer), o.MaxBytes())
	}
	var v struct {
		K []string `json:"k"`
		E string   `json:"e"`
	}
	if err := json.Unmarshal([]byte(answer), &v); err != nil || len(v.K) != 2 || v.E != "yes" {
		t.Errorf("%v %+v", err, v)
	}
}
