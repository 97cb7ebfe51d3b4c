// Package strictjson finds what encoding/json lets through silently: a key
// given twice in one object (json.Unmarshal keeps the last value, other
// readers the first) and a key whose spelling matches a field of the
// destination only when case is ignored (json.Unmarshal matches "Model" to
// model). Request bodies and signed records are read with Check or
// Duplicate after they parsed, so that every reader sees the same values.
//
// Check walks the JSON once without building values: keys are compared as
// byte slices of the input (a key with escapes is unescaped first, so
// "\u006bind" and "kind" are the same key), and only an object with many
// keys gets a map.
package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Error is the first key a strict reader refuses.
type Error struct {
	// Path is where the object holding the key is: "" for the top level,
	// else like messages[2].content or meta["a b"].
	Path string
	// Key is the key as it was sent (unescaped).
	Key string
	// Want is, for a key in the wrong case, the spelling the destination
	// reads; "" for a duplicate.
	Want string
}

func (e *Error) Error() string {
	where := "at the top level"
	if e.Path != "" {
		where = "in " + e.Path
	}
	if e.Want != "" {
		return fmt.Sprintf("key %q %s is spelled %q; keys are case-sensitive", e.Key, where, e.Want)
	}
	return fmt.Sprintf("key %q appears twice %s; send each key once", e.Key, where)
}

// Opaque marks, in a shape (Shaped), a value the walk skips entirely: a
// value passed on as sent to a reader that checks it itself (a record sent
// to POST /record/verify, which reports a duplicate key as a failed check).
type Opaque json.RawMessage

var (
	rawType       = reflect.TypeFor[json.RawMessage]()
	opaqueType    = reflect.TypeFor[Opaque]()
	unmarshalType = reflect.TypeFor[json.Unmarshaler]()
	fieldsCache   sync.Map // reflect.Type -> *fieldSet
)

// Shaped is a type that tells Check its keys: StrictShape returns a value
// (its zero is enough) whose type has the keys of the receiver's. It is
// for types that decode themselves (UnmarshalJSON), whose keys Check
// cannot otherwise know, and to mark a field Opaque. A shape's types need
// only describe keys: a scalar field's type does not matter. The method
// is declared on the type itself (a value receiver), next to the type,
// never registered anywhere.
type Shaped interface{ StrictShape() any }

var shapedType = reflect.TypeFor[Shaped]()

func shapeOf(t reflect.Type) (reflect.Type, bool) {
	// A pointer is walked through to its element, whose shape counts (a
	// nil pointer cannot be asked).
	if t.Kind() == reflect.Pointer || !t.Implements(shapedType) {
		return nil, false
	}
	v := reflect.Zero(t).Interface().(Shaped).StrictShape()
	if v == nil {
		return nil, false
	}
	return reflect.TypeOf(v), true
}

// Duplicate reports the first key that appears twice in one object of
// data, at any depth; nil when there is none or data is not JSON (the
// parser reports that).
func Duplicate(data []byte) *Error {
	return Check(data, nil)
}

// Check reports the first key of data (one JSON value) that appears twice
// in its object, at any depth, or that matches a field of dst's type only
// when case is ignored. dst is what data is decoded into (a pointer, as
// for json.Unmarshal, or a reflect.Type); nil checks duplicates only.
// extra are more keys the top-level object may hold (upload fields the
// destination does not declare). Keys the destination does not know are
// not refused here (json.Decoder.DisallowUnknownFields does that where
// wanted); their values are checked for duplicates. The inside of a
// json.RawMessage is checked for duplicates only, of an Opaque not at all,
// of a type that decodes itself by its shape (Shaped), else for
// duplicates only. Malformed JSON reports nil.
func Check(data []byte, dst any, extra ...string) *Error {
	var t reflect.Type
	switch d := dst.(type) {
	case nil:
	case reflect.Type:
		t = d
	default:
		t = reflect.TypeOf(d)
	}
	w := &walker{data: data, extra: extra}
	w.value(t, true)
	if w.bad || w.found != nil && !json.Valid(data) {
		return nil
	}
	return w.found
}

// walker is one walk over data.
type walker struct {
	data  []byte
	i     int
	extra []string
	path  []segment
	keys  [][]byte // keys of the objects being read, innermost last
	found *Error
	bad   bool // malformed JSON
}

type segment struct {
	key   []byte
	index int // when key is nil
}

func (w *walker) stop() bool { return w.found != nil || w.bad }

func (w *walker) ws() {
	for w.i < len(w.data) {
		switch w.data[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// value walks one value whose destination type is t (nil: unknown).
func (w *walker) value(t reflect.Type, top bool) {
	w.ws()
	if w.i >= len(w.data) {
		w.bad = true
		return
	}
	switch w.data[w.i] {
	case '{', '[':
		k := classify(t)
		if k.opaque {
			w.skip()
			return
		}
		if w.data[w.i] == '{' {
			w.object(k, top)
		} else {
			w.array(k)
		}
	case '"':
		w.str()
	default:
		for w.i < len(w.data) && strings.IndexByte(",]} \t\n\r", w.data[w.i]) < 0 {
			w.i++
		}
	}
}

// str skips a string starting at its quote and returns its raw contents
// and whether it holds escapes.
func (w *walker) str() (raw []byte, escaped bool) {
	start := w.i + 1
	for w.i++; w.i < len(w.data); w.i++ {
		switch w.data[w.i] {
		case '\\':
			escaped = true
			w.i++
		case '"':
			w.i++
			return w.data[start : w.i-1], escaped
		}
	}
	w.bad = true
	return nil, false
}

// skip passes over one object or array without looking inside.
func (w *walker) skip() {
	depth := 0
	for w.i < len(w.data) {
		switch w.data[w.i] {
		case '"':
			w.str()
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				w.i++
				return
			}
		}
		w.i++
	}
	w.bad = true
}

// manyKeys is the object size from which duplicates are found with a map.
const manyKeys = 16

func (w *walker) object(k kind, top bool) {
	w.i++ // {
	base := len(w.keys)
	var seen map[string]struct{}
	defer func() { w.keys = w.keys[:base] }()
	for n := 0; ; n++ {
		w.ws()
		if w.i >= len(w.data) {
			w.bad = true
			return
		}
		if w.data[w.i] == '}' && n == 0 {
			w.i++
			return
		}
		if w.data[w.i] != '"' {
			w.bad = true
			return
		}
		raw, escaped := w.str()
		if w.bad {
			return
		}
		key := raw
		if escaped {
			var s string
			if json.Unmarshal(w.data[w.i-len(raw)-2:w.i], &s) != nil {
				w.bad = true
				return
			}
			key = []byte(s)
		}
		// Duplicates.
		own := w.keys[base:]
		dup := false
		if seen != nil {
			_, dup = seen[string(key)]
		} else {
			for _, o := range own {
				if bytes.Equal(o, key) {
					dup = true
					break
				}
			}
		}
		if dup {
			w.found = &Error{Path: w.render(), Key: string(key)}
			return
		}
		w.keys = append(w.keys, key)
		if seen != nil {
			seen[string(key)] = struct{}{}
		} else if len(own)+1 >= manyKeys {
			seen = make(map[string]struct{}, 2*manyKeys)
			for _, o := range w.keys[base:] {
				seen[string(o)] = struct{}{}
			}
		}
		// The key's destination, and its case.
		child, want := k.lookup(key, top, w.extra)
		if want != "" {
			w.found = &Error{Path: w.render(), Key: string(key), Want: want}
			return
		}
		w.ws()
		if w.i >= len(w.data) || w.data[w.i] != ':' {
			w.bad = true
			return
		}
		w.i++
		w.path = append(w.path, segment{key: key})
		w.value(child, false)
		w.path = w.path[:len(w.path)-1]
		if w.stop() {
			return
		}
		w.ws()
		if w.i >= len(w.data) {
			w.bad = true
			return
		}
		switch w.data[w.i] {
		case ',':
			w.i++
		case '}':
			w.i++
			return
		default:
			w.bad = true
			return
		}
	}
}

func (w *walker) array(k kind) {
	w.i++ // [
	for n := 0; ; n++ {
		w.ws()
		if w.i >= len(w.data) {
			w.bad = true
			return
		}
		if w.data[w.i] == ']' && n == 0 {
			w.i++
			return
		}
		w.path = append(w.path, segment{index: n})
		w.value(k.elem, false)
		w.path = w.path[:len(w.path)-1]
		if w.stop() {
			return
		}
		w.ws()
		if w.i >= len(w.data) {
			w.bad = true
			return
		}
		switch w.data[w.i] {
		case ',':
			w.i++
		case ']':
			w.i++
			return
		default:
			w.bad = true
			return
		}
	}
}

// render writes the current path: messages[2].content, meta["a b"].
func (w *walker) render() string { return renderPath(w.path) }

// renderPath writes a path: messages[2].content, meta["a b"].
func renderPath(path []segment) string {
	var b strings.Builder
	for _, s := range path {
		switch {
		case s.key == nil:
			fmt.Fprintf(&b, "[%d]", s.index)
		case isIdent(s.key):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.Write(s.key)
		default:
			b.WriteString("[" + strconv.Quote(string(s.key)) + "]")
		}
	}
	return b.String()
}

func isIdent(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// kind is what the walk knows of a destination type.
// The zero kind is unknown: keys are not checked against anything and
// values have no destination.
type kind struct {
	opaque bool         // skipped
	fields *fieldSet    // a struct: its keys
	elem   reflect.Type // a map's values, a slice's or array's elements
}

func classify(t reflect.Type) kind {
	for t != nil {
		if t == opaqueType {
			return kind{opaque: true}
		}
		if s, ok := shapeOf(t); ok {
			t = s
			continue
		}
		if t == rawType {
			return kind{}
		}
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
			continue
		}
		break
	}
	if t == nil || t.Implements(unmarshalType) || reflect.PointerTo(t).Implements(unmarshalType) {
		return kind{}
	}
	switch t.Kind() {
	case reflect.Struct:
		return kind{fields: fieldsOf(t)}
	case reflect.Map, reflect.Slice, reflect.Array:
		return kind{elem: t.Elem()}
	}
	return kind{}
}

// lookup returns the destination type of key in an object of kind k, and
// for a key that matches a field only when case is ignored, the field's
// spelling.
func (k kind) lookup(key []byte, top bool, extra []string) (reflect.Type, string) {
	switch {
	case k.fields != nil:
		if f, ok := k.fields.byName[string(key)]; ok {
			return f, ""
		}
		names := k.fields.names
		if top {
			for _, e := range extra {
				if e == string(key) {
					return nil, ""
				}
			}
			names = append(names[:len(names):len(names)], extra...)
		}
		for _, n := range names {
			if strings.EqualFold(n, string(key)) {
				return nil, n
			}
		}
		return nil, "" // unknown: not this check's to refuse
	case k.elem != nil:
		return k.elem, ""
	}
	return nil, ""
}

// fieldSet is the keys of a struct as encoding/json reads them.
type fieldSet struct {
	byName map[string]reflect.Type
	names  []string
}

// fieldsOf lists a struct's JSON keys: the json tag's name, else the Go
// name, of exported fields, with the fields of embedded structs promoted
// (a shallower field wins a name).
func fieldsOf(t reflect.Type) *fieldSet {
	if fs, ok := fieldsCache.Load(t); ok {
		return fs.(*fieldSet)
	}
	fs := &fieldSet{byName: map[string]reflect.Type{}}
	level := []reflect.Type{t}
	visited := map[reflect.Type]bool{}
	for len(level) > 0 {
		var next []reflect.Type
		found := map[string]reflect.Type{}
		for _, st := range level {
			if visited[st] {
				continue
			}
			visited[st] = true
			for i := range st.NumField() {
				f := st.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				ft := f.Type
				if f.Anonymous && name == "" {
					et := ft
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if et.Kind() == reflect.Struct {
						next = append(next, et)
						continue
					}
				}
				if !f.IsExported() {
					continue
				}
				if name == "" {
					name = f.Name
				}
				if _, ok := fs.byName[name]; ok {
					continue // a shallower field has it
				}
				if _, ok := found[name]; !ok {
					found[name] = ft
				}
			}
		}
		for n, ft := range found {
			fs.byName[n] = ft
			fs.names = append(fs.names, n)
		}
		level = next
	}
	sort.Strings(fs.names)
	fieldsCache.Store(t, fs)
	return fs
}
