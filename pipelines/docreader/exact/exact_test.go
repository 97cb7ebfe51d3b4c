package exact

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

type point struct {
	X float64 `json:"x"`
	N int     `json:"n"`
}

type shape struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Points []point `json:"points"`
	Extra  any     `json:"extra"`
}

// TestNumbersAsWritten: a decimal counts only as encoding/json writes it
// (the text attest.Canonical signs); any other spelling of the same value
// is refused with its path, as 108.0 in an integer field is.
func TestNumbersAsWritten(t *testing.T) {
	for _, c := range []struct {
		value float64
		ok    string   // the spelling the box writes
		bad   []string // the same value spelled otherwise
	}{
		{169.5, "169.5", []string{"169.50", "1.695e2", "1.695E+2", "169.5e0", "1695e-1", "169.500000000000000001"}},
		{0, "0", []string{"0.0", "0e0", "0E5"}},
		{math.Copysign(0, -1), "-0", []string{"-0.0", "-0e0"}},
		{1e-7, "1e-7", []string{"0.0000001", "1e-07", "1E-7", "1.0e-7", "10e-8"}},
		{0.5, "0.5", []string{"5e-1", ".5e0", "0.50"}},
		{1e21, "1e+21", []string{"1e21", "1000000000000000000000", "1E+21"}},
	} {
		doc := func(num string) []byte {
			return []byte(`{"name":"a","value":1,"points":[{"x":2,"n":3},{"x":` + num + `,"n":4}],"extra":{"k":1.50}}`)
		}
		var v shape
		if err := Decode(doc(c.ok), &v, "chart"); err != nil {
			t.Errorf("%s: %v", c.ok, err)
		} else if got := v.Points[1].X; got != c.value || math.Signbit(got) != math.Signbit(c.value) {
			t.Errorf("%s: read %v", c.ok, got)
		}
		for _, b := range c.bad {
			if strings.HasPrefix(b, ".") { // not JSON at all
				if err := Decode(doc(b), &v, "chart"); err == nil {
					t.Errorf("%s: read", b)
				}
				continue
			}
			err := Decode(doc(b), &v, "chart")
			var e *Error
			if !errors.As(err, &e) || e.Path != "chart.points[1].x" || !strings.Contains(e.Problem, "written "+b+" where the box writes "+c.ok) {
				t.Errorf("%s: %v, want chart.points[1].x named with %s", b, err, c.ok)
			}
		}
	}
	// A number in a field of any type is kept as sent (and hashed so).
	var v shape
	if err := Decode([]byte(`{"name":"a","value":1,"points":[],"extra":{"k":1.50}}`), &v, "chart"); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(v.Extra); string(b) != `{"k":1.50}` {
		t.Errorf("extra is written again as %s", b)
	}
}

// TestDecodeErrorsInJSONWords: wrong types, a byte-order mark and data
// after the value are named by their path, without Go's names.
func TestDecodeErrorsInJSONWords(t *testing.T) {
	for _, c := range []struct{ name, json, want string }{
		{"108.0 for an integer", `{"name":"a","value":1,"points":[{"x":1,"n":1},{"x":1,"n":108.0}],"extra":null}`,
			"chart.points[1].n must be a whole number (digits only: no decimal point or exponent), not the number 108.0"},
		{"a string for a number", `{"name":"a","value":"1","points":[],"extra":null}`, "chart.value must be a number, not a string"},
		{"an object for a list", `{"name":"a","value":1,"points":{},"extra":null}`, "chart.points must be an array, not an object"},
		{"a byte-order mark", "\xEF\xBB\xBF{}", "chart starts with a UTF-8 byte-order mark (EF BB BF): send JSON without it"},
		{"data after", `{} {}`, "chart has data after its JSON value: send exactly one value"},
	} {
		var v shape
		err := Decode([]byte(c.json), &v, "chart")
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "exact.")) {
			t.Errorf("%s: Go's names in %q", c.name, err)
		}
	}
}
