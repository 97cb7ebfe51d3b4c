package migration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"boxd/internal/run"
	"boxd/pipelines/llmcall/llmcalltest"
)

// FuzzVerify: any bytes given as a record verify or fail without a panic,
// and a record that verifies has a recomputation without diffs.
func FuzzVerify(f *testing.F) {
	s, key := service(f)
	req := sample(f, "ticket-label")
	if err := s.Validate(&req); err != nil {
		f.Fatal(err)
	}
	rep, err := s.Run(context.Background(), req, run.Env{Events: quiet{}, Budget: &llmcalltest.Budget{}})
	if err != nil {
		f.Fatal(err)
	}
	raw, _ := json.Marshal(rep.Report)
	f.Add(raw)
	f.Add([]byte(`{"format":"service.record.v1","kind":"migration-check","entries":[{"type":"params","data":{"resamples":"999999999"}}]}`))
	f.Add([]byte(`{"kind":"migration-check","entries":[]}`))
	pub := key.PublicKey()
	f.Fuzz(func(t *testing.T, b []byte) {
		v := Verify(b, pub)
		if v.OK && (!v.Recompute.OK || len(v.Recompute.Diffs) != 0) {
			t.Fatalf("ok with diffs: %+v", v.Recompute)
		}
	})
}

// FuzzScore: scoring never panics; normalising twice changes nothing; an
// answer always scores as itself.
func FuzzScore(f *testing.F) {
	for _, s := range []string{"Paris.", "```json\n{\"a\": 1}\n```", "[[yes]] no", "\u201cquoted\u201d", "", "{\"a\":[1,2,{\"b\":null}]}"} {
		f.Add(s, s+" more")
	}
	label := &Task{Type: TaskLabel, Labels: []string{"yes", "no", "maybe not"}, Extract: ExtractLast}
	js := &Task{Type: TaskJSON, Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":["integer","array"]},"b":{"type":"string","maxLength":3}}}`)}
	for _, tk := range []*Task{label, js} {
		if err := tk.validate(); err != nil {
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
			scoreCode(tk, logged, nil, answer, false, &sc)
			if sc.Outcome == "" {
				t.Fatalf("%s: no outcome", tk.Type)
			}
			scoreCode(tk, logged, nil, logged, false, &self)
			if self.Outcome == Fail {
				t.Fatalf("%s: %q fails against itself: %+v", tk.Type, logged, self)
			}
		}
	})
}
