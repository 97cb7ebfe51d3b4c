package strictjson

import (
	"encoding/json"
	"strings"
	"testing"
)

type flatInner struct {
	Index struct {
		NChunks int `json:"n_chunks"`
	} `json:"index"`
}

// selfDecoding decodes itself, as the receipts do: errors inside it come
// with offsets into its own text and Go's names.
type selfDecoding struct{ flatInner }

func (s *selfDecoding) UnmarshalJSON(b []byte) error {
	type flat struct{ flatInner }
	var f flat
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	s.flatInner = f.flatInner
	return nil
}

type element struct {
	BBox [4]int `json:"bbox"`
	Text string `json:"text"`
}

type document struct {
	Pages []struct {
		Elements []element `json:"elements"`
	} `json:"pages"`
	Meta    map[string]struct{ N int8 } `json:"meta"`
	Receipt selfDecoding                `json:"receipt"`
	Deskew  float64                     `json:"deskew"`
	OK      bool                        `json:"ok"`
}

// TestExplain: encoding/json's type errors said in JSON's words, with
// the path of the value (list indices and map keys included), also
// inside a type that decodes itself; never a Go type or field name.
func TestExplain(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"108.0 in a bbox", `{"pages":[{"elements":[{"bbox":[1,2,3,4],"text":"a"},{"bbox":[1,2,3,4]},{"bbox":[1, 2,108.0,4]}]}]}`,
			"pages[0].elements[2].bbox[2] must be a whole number (digits only: no decimal point or exponent), not the number 108.0"},
		{"a string for a number", `{"deskew":"0.5"}`, "deskew must be a number, not a string"},
		{"a number for a string", `{"pages":[{"elements":[{"text":7}]}]}`, "pages[0].elements[0].text must be a string, not a number"},
		{"an object for a list", `{"pages":{}}`, "pages must be an array, not an object"},
		{"a list for a bool", `{"ok":[]}`, "ok must be true or false, not an array"},
		{"out of range", `{"meta":{"a b":{"N":300}}}`, `meta["a b"].N must be a whole number from -128 to 127, not the number 300`},
		{"a string for an object", `"x"`, "must be an object, not a string"},
		{"inside a type that decodes itself", `{"pages":[],"receipt":{"index":{"n_chunks":"7"}}}`, "receipt.index.n_chunks must be a whole number, not a string"},
		// Two such values: the path encoding/json gives, less the Go name of
		// the embedded struct.
		{"inside it, the same value elsewhere", `{"x":{"n_chunks":"7"},"receipt":{"index":{"n_chunks":"7"}}}`, "receipt.index.n_chunks must be a whole number, not a string"},
	} {
		var d document
		err := Explain([]byte(c.data), json.Unmarshal([]byte(c.data), &d))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "flat") || strings.Contains(err.Error(), "int8")) {
			t.Errorf("%s: Go's names in %q", c.name, err)
		}
	}
}

// TestExplainBOM: a byte-order mark is named, not read as 'ï'.
func TestExplainBOM(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"\xEF\xBB\xBF{}", "starts with a UTF-8 byte-order mark (EF BB BF): send JSON without it"},
		{"\xFF\xFE{\x00}\x00", "starts with a UTF-16 byte-order mark: send JSON as UTF-8, without a byte-order mark"},
	} {
		var v any
		err := Explain([]byte(c.data), json.Unmarshal([]byte(c.data), &v))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %s", c.data, err, c.want)
		}
	}
	var v any
	if err := Explain([]byte("{x"), json.Unmarshal([]byte("{x"), &v)); err == nil || !strings.Contains(err.Error(), "invalid character 'x'") {
		t.Errorf("other syntax errors pass through: %v", err)
	}
}
