package attest

import "testing"

func TestCanonical(t *testing.T) {
	cases := []struct {
		name string
		in   any
		want string
	}{
		{"keys sorted, no spaces", map[string]any{"b": "1", "a": []any{"x", true, nil}}, `{"a":["x",true,null],"b":"1"}`},
		{"nested objects sorted", map[string]any{"z": map[string]any{"y": "1", "x": "2"}}, `{"z":{"x":"2","y":"1"}}`},
		{"non-ASCII kept as UTF-8", map[string]any{"name": "Dr. Muñoz — 東京"}, `{"name":"Dr. Muñoz — 東京"}`},
		{"HTML characters not escaped", "<a&b>", `"<a&b>"`},
		{"control characters escaped", "a\nb\tc\x01", `"a\nb\tc\u0001"`},
		{"quotes and backslashes", `say "hi" \o/`, `"say \"hi\" \\o/"`},
		{"sort by bytes, upper before lower", map[string]any{"a": "1", "B": "2", "é": "3"}, `{"B":"2","a":"1","é":"3"}`},
		{"struct fields", struct {
			Size string `json:"size"`
			Name string `json:"name"`
		}{"12", "m.gguf"}, `{"name":"m.gguf","size":"12"}`},
		{"numbers keep their text", map[string]any{"n": 12}, `{"n":12}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonical(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
