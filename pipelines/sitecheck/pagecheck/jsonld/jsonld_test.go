package jsonld

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseJSONErrors(t *testing.T) {
	cases := []struct {
		in       string
		msg      string
		line     int
		col, off int
	}{
		{"", "unexpected end of input", 1, 1, 0},
		{"  ", "unexpected end of input", 1, 3, 2},
		{"{", "unexpected end of input", 1, 2, 1},
		{`{"a"`, "unexpected end of input", 1, 5, 4},
		{`{"a" 1}`, "expected ':' after object key, found '1'", 1, 6, 5},
		{`{'a': 1}`, "expected string key, found '''", 1, 2, 1},
		{`{"a": 1,}`, "expected string key, found '}'", 1, 9, 8},
		{`[1,]`, "expected value, found ']'", 1, 4, 3},
		{`[1 2]`, "expected ',' or ']' after array element, found '2'", 1, 4, 3},
		{`{"a":1 "b":2}`, "expected ',' or '}' after object member, found '\"'", 1, 8, 7},
		{"{}\n x", "unexpected 'x' after JSON value", 2, 2, 4},
		{"\ufeff{}", "expected value, found U+FEFF", 1, 1, 0},
		{"{\"a\":\"\x01\"}", "control character in string", 1, 7, 6},
		{`"\x"`, "invalid escape sequence", 1, 2, 1},
		{`"\u12G4"`, "invalid escape sequence", 1, 2, 1},
		{`"\u12`, "unexpected end of input", 1, 6, 5},
		{`tru`, "unexpected end of input", 1, 4, 3},
		{`trUe`, "invalid literal", 1, 3, 2},
		{`-`, "unexpected end of input", 1, 2, 1},
		{`-a`, "invalid number", 1, 2, 1},
		{`1.e5`, "invalid number", 1, 3, 2},
		{`01`, "unexpected '1' after JSON value", 1, 2, 1},
		{"\"\u00e9\u00e9\" x", "unexpected 'x' after JSON value", 1, 6, 7},
		{strings.Repeat("[", MaxJSONDepth+1), "nesting too deep", 1, MaxJSONDepth + 1, MaxJSONDepth},
	}
	for _, c := range cases {
		_, err := ParseJSON(c.in)
		if err == nil {
			t.Errorf("ParseJSON(%q): no error", c.in)
			continue
		}
		if err.Message != c.msg || err.Line != c.line || err.Column != c.col || err.Offset != c.off {
			t.Errorf("ParseJSON(%q) = %q at %d:%d (%d), want %q at %d:%d (%d)",
				c.in, err.Message, err.Line, err.Column, err.Offset, c.msg, c.line, c.col, c.off)
		}
	}
	if _, err := ParseJSON(strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth)); err != nil {
		t.Errorf("nesting %d rejected: %v", MaxJSONDepth, err)
	}
}

func TestParseJSONValues(t *testing.T) {
	cases := []struct {
		in   string
		want any
	}{
		{` {"a": [1, -0.5e+3, true, false, null], "a": "last"} `, map[string]any{"a": "last"}},
		{`"\u00e9\ud83d\ude00\/\b\f\n\r\t"`, "\u00e9\U0001f600/\b\f\n\r\t"},
		{`"\ud800x\udc00"`, "\ufffdx\ufffd"},
		{`"\ud800\u0041"`, "\ufffdA"},
		{"\"\xff\"", "\ufffd"},
		{`123456789012345678901234567890`, json.Number("123456789012345678901234567890")},
		{`[]`, []any{}},
		{`{}`, map[string]any{}},
	}
	for _, c := range cases {
		got, err := ParseJSON(c.in)
		if err != nil {
			t.Errorf("ParseJSON(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseJSON(%q) = %#v, want %#v", c.in, got, c.want)
		}
	}
}

func TestJSONQuoteAndSnippet(t *testing.T) {
	if got, want := Quote("a\"\\\b\f\n\r\t\x01\x7f\u2028</&é"), `"a\"\\\b\f\n\r\t\u0001`+"\x7f\u2028</&é"+`"`; got != want {
		t.Errorf("Quote = %s, want %s", got, want)
	}
	got := Snippet(Obj("a", 1, "b", []any{}, "c", Object{}, "d", []string{"x", "y"}, "e", Obj("f", nil, "g", true)))
	want := "{\n  \"a\": 1,\n  \"b\": [],\n  \"c\": {},\n  \"d\": [\n    \"x\",\n    \"y\"\n  ],\n  \"e\": {\n    \"f\": null,\n    \"g\": true\n  }\n}"
	if got != want {
		t.Errorf("snippet:\n%s\nwant\n%s", got, want)
	}
}
