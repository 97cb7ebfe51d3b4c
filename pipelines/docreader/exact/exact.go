// Package exact decodes JSON that must be exactly what its Go type writes:
// the document reader's documents and chart results as POST
// /docreader/verify, /docreader/chart/verify and boxd verify take them back.
// encoding/json drops unknown fields (at any depth, and everywhere inside a
// type that decodes itself), reads a missing field as its zero value and
// accepts null for a list; a verifier that checks the decoded value would
// then vouch for fields it never saw, and a key sent twice is read as its
// last value by it and as its first by other readers. Decode refuses all
// of that: the value
// decoded and written again must be the JSON sent, field for field (object
// keys in any order, whitespace aside, numbers spelled exactly as
// encoding/json writes them: 169.5, not 169.50 or 1.695e2; 1e-7, not
// 0.0000001; attest.Canonical keeps that text, so it is the spelling the
// box writes and signs).
package exact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"boxd/internal/strictjson"
)

// Error is the first place where the JSON sent is not what its type
// writes.
type Error struct {
	// Path is where, like document.pages[0].elements[3].text.
	Path string
	// Problem says what differs: "is not a field", "is missing", or a
	// value in another form.
	Problem string
}

func (e *Error) Error() string { return e.Path + " " + e.Problem }

// Decode decodes raw into v (a pointer) and checks that v, written as
// JSON again, is raw. name is the path's root ("document", "chart").
// Errors name the path of the first value that differs, in JSON's words
// (never Go's type or field names).
func Decode(raw []byte, v any, name string) error {
	if b := strictjson.BOM(raw); b != nil {
		return &Error{Path: name, Problem: b.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var sent any
	if err := dec.Decode(&sent); err != nil {
		return fmt.Errorf("%s is not JSON: %w", name, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Path: name, Problem: "has data after its JSON value: send exactly one value"}
	}
	if _, ok := sent.(map[string]any); !ok {
		return &Error{Path: name, Problem: "is not a JSON object"}
	}
	if e := strictjson.Duplicate(raw); e != nil {
		return &Error{Path: join(join(name, e.Path), e.Key), Problem: "appears twice (send each key once)"}
	}
	// Numbers in a field of any type stay as sent (json.Number), so that
	// they are written again as they came and hash as they came.
	dec = json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *strictjson.TypeError
		if errors.As(strictjson.Explain(raw, err), &te) {
			return &Error{Path: join(name, te.Path), Problem: fmt.Sprintf("must be %s, not %s", te.Want, te.Got)}
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	again, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	dec = json.NewDecoder(bytes.NewReader(again))
	dec.UseNumber()
	var written any
	if err := dec.Decode(&written); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if e := compare(name, sent, written); e != nil {
		return e
	}
	return nil
}

// join appends a path to a root: document.pages[0], document["a b"],
// document[0].
func join(root, path string) string {
	switch {
	case path == "":
		return root
	case strings.HasPrefix(path, "["):
		return root + path
	}
	return root + "." + path
}

// compare finds the first difference between the JSON sent and the JSON
// written, keys in sorted order.
func compare(path string, sent, written any) *Error {
	switch s := sent.(type) {
	case map[string]any:
		w, ok := written.(map[string]any)
		if !ok {
			return &Error{Path: path, Problem: fmt.Sprintf("is an object where %s is written", kind(written))}
		}
		keys := make([]string, 0, len(s)+len(w))
		for k := range s {
			keys = append(keys, k)
		}
		for k := range w {
			if _, ok := s[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			sv, inSent := s[k]
			wv, inWritten := w[k]
			p := path + "." + k
			switch {
			case !inWritten && sv == nil:
				return &Error{Path: p, Problem: "is null where the field is left out"}
			case !inWritten:
				return &Error{Path: p, Problem: "is not a field (remove it)"}
			case !inSent:
				return &Error{Path: p, Problem: "is missing (send every field as it was returned)"}
			}
			if e := compare(p, sv, wv); e != nil {
				return e
			}
		}
	case []any:
		w, ok := written.([]any)
		if !ok {
			return &Error{Path: path, Problem: fmt.Sprintf("is a list where %s is written", kind(written))}
		}
		if len(s) != len(w) {
			return &Error{Path: path, Problem: fmt.Sprintf("has %d items where %d are read", len(s), len(w))}
		}
		for i := range s {
			if e := compare(path+"["+strconv.Itoa(i)+"]", s[i], w[i]); e != nil {
				return e
			}
		}
	case json.Number:
		w, ok := written.(json.Number)
		switch {
		case ok && s == w:
		case ok && sameNumber(s, w):
			// The value the box wrote, spelled another way: the box's
			// numbers count exactly as it wrote them (a signed hash
			// covers their text), so 169.50, 1.695e2 and 0.0000001 for
			// 1e-7 are refused, not read as the same number.
			return &Error{Path: path, Problem: fmt.Sprintf("is written %s where the box writes %s (send numbers exactly as the box wrote them)", s, w)}
		default:
			return &Error{Path: path, Problem: fmt.Sprintf("is %s where %s is read", s, show(written))}
		}
	default: // string, bool, nil
		if sent != written {
			return &Error{Path: path, Problem: fmt.Sprintf("is %s where %s is read", show(sent), show(written))}
		}
	}
	return nil
}

// sameNumber compares two JSON numbers by value (1.0 and 1 are one
// number, written two ways).
func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, err1 := strconv.ParseFloat(string(a), 64)
	y, err2 := strconv.ParseFloat(string(b), 64)
	return err1 == nil && err2 == nil && x == y
}

func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// show is a value for a message, strings cut to 40 characters.
func show(v any) string {
	switch x := v.(type) {
	case string:
		if r := []rune(x); len(r) > 40 {
			x = string(r[:40]) + "…"
		}
		return strconv.Quote(x)
	case map[string]any, []any, nil:
		return kind(v)
	}
	return fmt.Sprint(v)
}
