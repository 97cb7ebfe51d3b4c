package strictjson

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	Role string `json:"role"`
	Text string `json:"text,omitempty"`
}

type Embedded struct {
	Promoted string `json:"promoted"`
}

type custom struct{ v string }

func (c *custom) UnmarshalJSON(b []byte) error { c.v = string(b); return nil }

type body struct {
	Embedded
	Model    string            `json:"model"`
	Messages []inner           `json:"messages"`
	Meta     map[string]string `json:"meta"`
	Ptr      *inner            `json:"ptr"`
	Raw      json.RawMessage   `json:"raw"`
	Any      any               `json:"any"`
	Custom   custom            `json:"custom"`
	Skipped  string            `json:"-"`
	NoTag    string
	_        string // unexported fields have no key
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name, data string
		path, key  string // "" key: no error
		want       string // for case errors
	}{
		{name: "clean", data: `{"model":"m","messages":[{"role":"user"}],"meta":{"a":"1","A":"2"},"NoTag":"x","promoted":"p"}`},
		{name: "top duplicate", data: `{"model":"a","model":"b"}`, key: "model"},
		{name: "escaped duplicate", data: `{"model":"a","\u006dodel":"b"}`, key: "model"},
		{name: "nested duplicate", data: `{"messages":[{"role":"user"},{"role":"a","text":"","role":"b"}]}`, path: "messages[1]", key: "role"},
		{name: "map duplicate", data: `{"meta":{"x":"1","x":"2"}}`, path: "meta", key: "x"},
		{name: "raw message duplicate", data: `{"raw":{"a":{"b":1,"b":2}}}`, path: "raw.a", key: "b"},
		{name: "any duplicate", data: `{"any":[{"k":1,"k":1}]}`, path: "any[0]", key: "k"},
		{name: "unknown key's value duplicate", data: `{"extra":{"q":1,"q":2}}`, path: "extra", key: "q"},
		{name: "custom unmarshaler duplicate", data: `{"custom":{"z":1,"z":1}}`, path: "custom", key: "z"},
		{name: "odd key in path", data: `{"meta":{"a b":"1"},"any":{"a b":{"c":1,"c":2}}}`, path: `any["a b"]`, key: "c"},
		{name: "many keys duplicate", data: `{` + manyKeysJSON(40) + `,"k7":0}`, key: "k7"},
		{name: "wrong case top", data: `{"Model":"m"}`, key: "Model", want: "model"},
		{name: "wrong case nested", data: `{"messages":[{"ROLE":"user"}]}`, path: "messages[0]", key: "ROLE", want: "role"},
		{name: "wrong case pointer", data: `{"ptr":{"Text":"x"}}`, path: "ptr", key: "Text", want: "text"},
		{name: "wrong case promoted", data: `{"Promoted":"x"}`, key: "Promoted", want: "promoted"},
		{name: "wrong case no tag", data: `{"notag":"x"}`, key: "notag", want: "NoTag"},
		{name: "map keys keep their case", data: `{"meta":{"Model":"1"}}`},
		{name: "custom unmarshaler keys unchecked", data: `{"custom":{"Model":1}}`},
		{name: "malformed is not this check's", data: `{"model":"a","model"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := Check([]byte(tc.data), &body{})
			if tc.key == "" {
				if e != nil {
					t.Fatalf("refused: %v", e)
				}
				return
			}
			if e == nil {
				t.Fatal("accepted")
			}
			if e.Path != tc.path || e.Key != tc.key || e.Want != tc.want {
				t.Errorf("got path %q key %q want %q (%v)", e.Path, e.Key, e.Want, e)
			}
		})
	}
}

func manyKeysJSON(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return strings.Join(parts, ",")
}

// shapedDecoding decodes itself and tells Check its keys (Shaped).
type shapedDecoding struct{ custom }

type shapedDecodingShape struct {
	Kind string `json:"kind"`
	Rec  Opaque `json:"rec"`
}

func (shapedDecoding) StrictShape() any { return shapedDecodingShape{} }

func TestShapesAndOpaque(t *testing.T) {
	st := reflect.TypeFor[shapedDecoding]()
	if e := Check([]byte(`{"KIND":"x"}`), st); e == nil || e.Want != "kind" {
		t.Errorf("shape not used: %v", e)
	}
	if e := Check([]byte(`{"kind":"x","rec":{"a":1,"a":2}}`), st); e != nil {
		t.Errorf("opaque value checked: %v", e)
	}
	if e := Check([]byte(`{"kind":"x","rec":{"a":1},"kind":"y"}`), st); e == nil || e.Key != "kind" {
		t.Errorf("duplicate after opaque value: %v", e)
	}
}

func TestExtraKeysAndDuplicate(t *testing.T) {
	if e := Check([]byte(`{"Video_b64":"x"}`), &body{}, "video_b64"); e == nil || e.Want != "video_b64" {
		t.Errorf("extra key case: %v", e)
	}
	if e := Check([]byte(`{"video_b64":"x"}`), &body{}, "video_b64"); e != nil {
		t.Errorf("extra key: %v", e)
	}
	e := Duplicate([]byte(`{"entries":[{"n":"1"},{"n":"2","data":{"x":"1","x":"2"}}]}`))
	if e == nil || e.Path != "entries[1].data" || e.Key != "x" {
		t.Fatalf("Duplicate: %+v", e)
	}
	if got := e.Error(); got != `key "x" appears twice in entries[1].data; send each key once` {
		t.Errorf("message %q", got)
	}
	if e := Duplicate([]byte(`"{\"a\":1,\"a\":2}"`)); e != nil {
		t.Errorf("a string is one value: %v", e)
	}
	if e := Duplicate([]byte(` [1, "x", {"a": [ {}, [] ]}, null, true] `)); e != nil {
		t.Errorf("clean: %v", e)
	}
}

// FuzzCheck: Check never panics, and on valid JSON Duplicate finds a
// duplicate exactly when a reader built on json.Decoder's tokens does.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":{"b":[1,{"c":2,"c":3}]}}`, `[{"\u0061":1,"a":2}]`, `{"model":"x","Model":"y"}`, `"x"`, `{`, `{"a":"\"}`, `{"a":{},"b":{"a":1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = Check(data, &body{})
		if !json.Valid(data) {
			return
		}
		if got, want := Duplicate(data) != nil, tokenDuplicate(data); got != want {
			t.Fatalf("Duplicate found one: %v, the token reader: %v, in %q", got, want, data)
		}
	})
}

// tokenDuplicate is the slow reference: json.Decoder tokens and a set of
// keys per open object.
func tokenDuplicate(data []byte) bool {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	type frame struct {
		obj     bool
		keys    map[string]bool
		wantKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k := tok.(string)
			if top.keys[k] {
				return true
			}
			top.keys[k] = true
			top.wantKey = false
			continue
		}
		if top != nil && top.obj {
			top.wantKey = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

// TestShapedBehindPointer: a Shaped type reached through a pointer (the
// decoded body itself, or a *T field) is checked by its shape.
func TestShapedBehindPointer(t *testing.T) {
	var dst *shapedDecoding
	if e := Check([]byte(`{"KIND":"x"}`), &dst); e == nil || e.Want != "kind" {
		t.Errorf("shape behind a pointer not used: %v", e)
	}
	type holder struct {
		In *shapedDecoding `json:"in"`
	}
	if e := Check([]byte(`{"in":{"kind":"x","kind":"y"}}`), &holder{}); e == nil || e.Key != "kind" {
		t.Errorf("duplicate inside a *Shaped field: %v", e)
	}
}
