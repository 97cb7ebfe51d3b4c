package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// TypeError is a JSON value of the wrong type for where it was sent, said
// in JSON's words (no Go type or field names).
type TypeError struct {
	// Path is where the value is, like pages[0].elements[3].bbox[0]; ""
	// for the whole value.
	Path string
	// Want is what the place takes: "a whole number", "a string", "an
	// object"...
	Want string
	// Got is what was sent: "a string", "the number 108.0"...
	Got string
}

func (e *TypeError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("must be %s, not %s", e.Want, e.Got)
	}
	return fmt.Sprintf("%s must be %s, not %s", e.Path, e.Want, e.Got)
}

// BOMError is a JSON text that starts with a byte-order mark.
type BOMError struct {
	UTF16 bool // FE FF or FF FE, not UTF-8's EF BB BF
}

func (e *BOMError) Error() string {
	if e.UTF16 {
		return "starts with a UTF-16 byte-order mark: send JSON as UTF-8, without a byte-order mark"
	}
	return "starts with a UTF-8 byte-order mark (EF BB BF): send JSON without it"
}

// BOM reports a byte-order mark at the start of data (nil when none).
// RFC 8259 (section 8.1) forbids sending one; encoding/json reads it as
// "invalid character 'ï'", which does not say what to remove.
func BOM(data []byte) *BOMError {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return &BOMError{}
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}), bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return &BOMError{UTF16: true}
	}
	return nil
}

// Explain returns err, an error of decoding data with encoding/json, in
// JSON's words: a *json.UnmarshalTypeError becomes a *TypeError naming
// the value's path in data (with list indices) and the JSON type the
// place takes; a *json.SyntaxError on data with a byte-order mark becomes
// a *BOMError. Other errors come back unchanged.
func Explain(data []byte, err error) error {
	var typ *json.UnmarshalTypeError
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &typ):
		return explainType(data, typ)
	case errors.As(err, &syn):
		if b := BOM(data); b != nil {
			return b
		}
	}
	return err
}

func explainType(data []byte, e *json.UnmarshalTypeError) *TypeError {
	out := &TypeError{Want: Want(e.Type), Got: got(e.Value)}
	if s, ok := strings.CutPrefix(e.Value, "number "); ok && isInteger(e.Type) {
		if strings.ContainsAny(s, ".eE") {
			out.Want = "a whole number (digits only: no decimal point or exponent)"
		} else {
			out.Want = "a whole number " + intRange(e.Type)
		}
	}
	var fields []string
	if e.Field != "" {
		fields = strings.Split(e.Field, ".")
	}
	last := ""
	if len(fields) > 0 {
		last = fields[len(fields)-1]
	}
	// The value's end (a literal) or its first byte's end (an object or
	// a list) is at Offset, in the text the decoder read; a type that
	// decodes itself reads its own text, so Offset may be in that. The
	// place found is taken when it holds what the error says was sent,
	// under the key it names; else the one such place in data.
	if p, ok := locate(data, int(e.Offset)-1, e.Value, last); ok {
		out.Path = p
		return out
	}
	if p, ok := unique(data, e.Value, last); ok {
		out.Path = p
		return out
	}
	// encoding/json's path names an embedded Go struct by its Go name:
	// keep only the names data holds as keys.
	var keep []string
	for _, f := range fields {
		if bytes.Contains(data, []byte(strconv.Quote(f)+":")) || bytes.Contains(data, []byte(strconv.Quote(f)+" ")) {
			keep = append(keep, f)
		}
	}
	out.Path = strings.Join(keep, ".")
	return out
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// Want says in JSON's words what a value decoded into t must be.
func Want(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) && !reflect.PointerTo(t).Implements(unmarshalType) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return fmt.Sprintf("an array of %d", t.Len())
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another JSON value"
}

// intRange is an integer type's range: "from 0 to 255".
func intRange(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
	}
	return fmt.Sprintf("from %d to %d", int64(math.MinInt64)>>(64-t.Bits()), int64(math.MaxInt64)>>(64-t.Bits()))
}

func isInteger(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// got says what encoding/json's Value ("string", "number 108.0",
// "object"...) is.
func got(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return "the number " + n
	}
	switch v {
	case "object":
		return "an object"
	case "array":
		return "an array"
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	case "null":
		return "null"
	}
	return v
}

// value is one JSON value found in a walk.
type value struct {
	path       []segment
	start, end int  // its bytes: data[start:end]
	kind       byte // '{', '[', '"', 'n' (number), 'b' (true, false), '0' (null)
}

// holds reports whether v is what encoding/json's Value describes.
func (v value) holds(data []byte, desc string) bool {
	if n, ok := strings.CutPrefix(desc, "number "); ok {
		return v.kind == 'n' && string(data[v.start:v.end]) == n
	}
	switch desc {
	case "object":
		return v.kind == '{'
	case "array":
		return v.kind == '['
	case "string":
		return v.kind == '"'
	case "number":
		return v.kind == 'n'
	case "bool":
		return v.kind == 'b'
	}
	return false
}

// lastKey is the innermost key of the path ("" for none).
func (v value) lastKey() string {
	for i := len(v.path) - 1; i >= 0; i-- {
		if v.path[i].key != nil {
			return string(v.path[i].key)
		}
	}
	return ""
}

// locate finds the innermost value of data holding byte at and checks
// that it is desc under key.
func locate(data []byte, at int, desc, key string) (string, bool) {
	if at < 0 || at >= len(data) {
		return "", false
	}
	var found *value
	walkValues(data, func(v value) bool {
		if v.start <= at && at < v.end {
			found = &v
			return false // the first value ended that holds it is the innermost
		}
		return true
	})
	if found == nil || !found.holds(data, desc) || found.lastKey() != key {
		return "", false
	}
	return renderPath(found.path), true
}

// unique finds the one value of data that is desc under key.
func unique(data []byte, desc, key string) (string, bool) {
	var found []segment
	n := 0
	walkValues(data, func(v value) bool {
		if v.holds(data, desc) && v.lastKey() == key {
			n++
			found = append([]segment(nil), v.path...)
		}
		return n < 2
	})
	if n != 1 {
		return "", false
	}
	return renderPath(found), true
}

// walkValues calls f with each value of data, innermost first (a value
// after the values inside it), until f returns false. Malformed JSON
// ends the walk.
func walkValues(data []byte, f func(value) bool) {
	w := &walker{data: data}
	var visit func() bool
	visit = func() bool {
		w.ws()
		if w.i >= len(w.data) {
			return false
		}
		start := w.i
		kind := w.data[w.i]
		switch kind {
		case '{':
			w.i++
			for n := 0; ; n++ {
				w.ws()
				if w.i < len(w.data) && w.data[w.i] == '}' && n == 0 {
					w.i++
					break
				}
				if w.i >= len(w.data) || w.data[w.i] != '"' {
					return false
				}
				raw, escaped := w.str()
				if w.bad {
					return false
				}
				key := raw
				if escaped {
					var s string
					if json.Unmarshal(w.data[w.i-len(raw)-2:w.i], &s) != nil {
						return false
					}
					key = []byte(s)
				}
				w.ws()
				if w.i >= len(w.data) || w.data[w.i] != ':' {
					return false
				}
				w.i++
				w.path = append(w.path, segment{key: key})
				ok := visit()
				w.path = w.path[:len(w.path)-1]
				if !ok {
					return false
				}
				w.ws()
				if w.i >= len(w.data) {
					return false
				}
				if w.data[w.i] == ',' {
					w.i++
					continue
				}
				if w.data[w.i] != '}' {
					return false
				}
				w.i++
				break
			}
		case '[':
			w.i++
			for n := 0; ; n++ {
				w.ws()
				if w.i < len(w.data) && w.data[w.i] == ']' && n == 0 {
					w.i++
					break
				}
				w.path = append(w.path, segment{index: n})
				ok := visit()
				w.path = w.path[:len(w.path)-1]
				if !ok {
					return false
				}
				w.ws()
				if w.i >= len(w.data) {
					return false
				}
				if w.data[w.i] == ',' {
					w.i++
					continue
				}
				if w.data[w.i] != ']' {
					return false
				}
				w.i++
				break
			}
		case '"':
			w.str()
			if w.bad {
				return false
			}
		default:
			for w.i < len(w.data) && strings.IndexByte(",]} \t\n\r", w.data[w.i]) < 0 {
				w.i++
			}
			switch kind {
			case 't', 'f':
				kind = 'b'
			case 'n':
				kind = '0'
			default:
				kind = 'n'
			}
		}
		return f(value{path: w.path, start: start, end: w.i, kind: kind})
	}
	visit()
}
