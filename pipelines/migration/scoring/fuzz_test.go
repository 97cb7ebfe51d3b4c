package scoring

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzScore: scoring never panics; normalising twice changes nothing; an
// answer always scores as itself.
func FuzzScore(f *testing.F) {
	for _, s := range []string{"Paris.", "```json\n{\"a\": 1}\n```", "[[yes]] no", "\u201cquoted\u201d", "", "{\"a\":[1,2,{\"b\":null}]}"} {
		f.Add(s, s+" more")
	}
	label := &Task{Type: TaskLabel, Labels: []string{"yes", "no", "maybe not"}, Extract: ExtractLast}
	js := &Task{Type: TaskJSON, Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":["integer","array"]},"b":{"type":"string","maxLength":3}}}`)}
	for _, tk := range []*Task{label, js} {
		if err := tk.Validate(); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, logged, answer string) {
		// Normalising again changes nothing, but for a second trailing
		// full stop (one is dropped: "etc.." is "etc.").
		if n := Normalize(logged); Normalize(n) != n && !strings.HasSuffix(n, ".") {
			t.Fatalf("Normalize is not idempotent: %q → %q → %q", logged, n, Normalize(n))
		}
		for _, tk := range []*Task{{Type: TaskExact}, label, js} {
			var sc, self Score
			Code(tk, logged, nil, answer, false, &sc)
			if sc.Outcome == "" {
				t.Fatalf("%s: no outcome", tk.Type)
			}
			Code(tk, logged, nil, logged, false, &self)
			if self.Outcome == Fail {
				t.Fatalf("%s: %q fails against itself: %+v", tk.Type, logged, self)
			}
		}
	})
}
