// Package exacttest helps tests prove that a verifier covers every field
// of what it verifies: Fill gives every field of a value a non-zero value
// (so a field added later is covered without the test naming it), and
// Mutations lists every small change to a JSON object (each value changed,
// each key removed, a key added to each object, each list one item
// shorter and longer).
package exacttest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
)

var rawType = reflect.TypeFor[json.RawMessage]()

// Fill sets every exported field reachable from v (a pointer) to a
// non-zero value: strings "s", numbers 1 (floats 0.5), booleans true, one
// item in each slice and map, every array element, pointers allocated,
// an any field "s", json.RawMessage {"k": 1}. Fields whose type's name is
// in skip are left alone (a receipt the code under test fills in).
func Fill(v any, skip ...string) {
	fill(reflect.ValueOf(v).Elem(), skip)
}

func fill(v reflect.Value, skip []string) {
	for _, s := range skip {
		if v.Type().Name() == s {
			return
		}
	}
	if v.Type() == rawType {
		v.SetBytes([]byte(`{"k":1}`))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), skip)
		v.Set(p)
	case reflect.Interface:
		if v.NumMethod() == 0 {
			v.Set(reflect.ValueOf("s"))
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), skip)
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), skip)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, skip)
		fill(e, skip)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), skip)
			}
		}
	}
}

// Mutation is one changed copy of a JSON object.
type Mutation struct {
	What string // like "pages[0].width changed"
	JSON []byte
}

// Mutations lists every small change of the JSON object raw.
func Mutations(raw []byte) ([]Mutation, error) {
	var root any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, err
	}
	var out []Mutation
	emit := func(what string) {
		j, err := json.Marshal(root)
		if err != nil {
			panic(err)
		}
		out = append(out, Mutation{What: what, JSON: j})
	}
	// walk visits the value at *slot, at path, mutating it in place and
	// restoring it after each mutation.
	var walk func(path string, get func() any, set func(any))
	walk = func(path string, get func() any, set func(any)) {
		switch x := get().(type) {
		case map[string]any:
			x["zz_extra"] = "s"
			emit(path + ": a field added")
			delete(x, "zz_extra")
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				v := x[k]
				delete(x, k)
				emit(path + "." + k + " removed")
				x[k] = v
				walk(path+"."+k, func() any { return x[k] }, func(n any) { x[k] = n })
			}
		case []any:
			if len(x) > 0 {
				set(x[:len(x)-1])
				emit(path + ": its last item removed")
				set(append(append([]any{}, x...), x[len(x)-1]))
				emit(path + ": its last item repeated")
				set(x)
			}
			for i := range x {
				walk(path+"["+strconv.Itoa(i)+"]", func() any { return x[i] }, func(n any) { x[i] = n })
			}
		case string:
			set(x + "x")
			emit(path + " changed")
			set(x)
		case bool:
			set(!x)
			emit(path + " changed")
			set(x)
		case json.Number:
			if n, err := x.Int64(); err == nil {
				set(json.Number(strconv.FormatInt(n+1, 10)))
			} else {
				f, _ := x.Float64()
				set(json.Number(strconv.FormatFloat(f+0.25, 'g', -1, 64)))
			}
			emit(path + " changed")
			set(x)
		case nil:
			set("s")
			emit(path + " changed from null")
			set(nil)
		}
	}
	walk("", func() any { return root }, func(n any) { root = n })
	return out, nil
}
