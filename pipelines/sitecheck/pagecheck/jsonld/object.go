package jsonld

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Member is one key and value of an Object.
type Member struct {
	Key   string
	Value any
}

// Object is a JSON object that keeps its keys in insertion order. Values are
// string, int, json.Number, bool, nil, Object, []any or []string.
type Object []Member

// Obj builds an Object from alternating keys and values.
func Obj(kv ...any) Object {
	o := make(Object, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		o = append(o, Member{kv[i].(string), kv[i+1]})
	}
	return o
}

// Get returns the value of key.
func (o Object) Get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// MarshalJSON writes the object compactly with its keys in order.
func (o Object) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	writeJSON(&b, o, "", "")
	return []byte(b.String()), nil
}

// Plain converts the object to the map[string]any / []any form
// schema.Validate reads.
func (o Object) Plain() map[string]any { return ToPlain(o).(map[string]any) }

// ToPlain converts v to the form ParseJSON builds: an Object becomes a
// map[string]any, []any and []string become a new []any, an int becomes a
// json.Number, converting Object member values and []any elements in turn;
// every other value (a map[string]any included) is returned as it is.
func ToPlain(v any) any {
	switch x := v.(type) {
	case Object:
		m := make(map[string]any, len(x))
		for _, mb := range x {
			m[mb.Key] = ToPlain(mb.Value)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = ToPlain(e)
		}
		return a
	case []string:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = e
		}
		return a
	case int:
		return json.Number(strconv.Itoa(x))
	}
	return v
}

// Snippet renders v as the indented JSON of a schema Finding's snippet:
// two-space indentation, "key": value with one space after the colon, each
// member and element on its own line, "{}" and "[]" for empty containers,
// keys in the Object's order, and strings escaped by Quote. This is what
// JSON.stringify(v, null, 2) and Python's json.dumps(v, indent=2,
// ensure_ascii=False) print.
func Snippet(v any) string {
	var b strings.Builder
	writeJSON(&b, v, "  ", "")
	return b.String()
}

// writeJSON writes v; with indent == "" it is compact ("," and ":" without
// spaces).
func writeJSON(b *strings.Builder, v any, indent, cur string) {
	nl := func(level string) {
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(level)
		}
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case json.Number:
		b.WriteString(string(x))
	case string:
		b.WriteString(Quote(x))
	case Object:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(cur + indent)
			b.WriteString(Quote(m.Key))
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			writeJSON(b, m.Value, indent, cur+indent)
		}
		nl(cur)
		b.WriteByte('}')
	case []string:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = e
		}
		writeJSON(b, a, indent, cur)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(cur + indent)
			writeJSON(b, e, indent, cur+indent)
		}
		nl(cur)
		b.WriteByte(']')
	default:
		panic(fmt.Sprintf("pagecheck: cannot encode %T", v))
	}
}

// Quote quotes s as a JSON string: '"' and '\' are escaped, U+0008,
// U+0009, U+000A, U+000C and U+000D use \b \t \n \f \r, other characters
// below U+0020 use \u00xx with lower-case hex; everything else (non-ASCII,
// U+007F, U+2028, "/", "<", "&") is written as is.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
