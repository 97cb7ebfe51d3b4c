package chat

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"boxd/engine/llm"
	"boxd/engine/models"
	"boxd/internal/problem"
)

// wordEngine renders prompts but generates nothing: enough for Prepare.
type wordEngine struct{}

func (wordEngine) Template() models.Template { return models.TemplateChatML }
func (wordEngine) Tokenize(text string, _, _ bool) ([]int32, error) {
	return make([]int32, len(text)/4+1), nil
}
func (wordEngine) Generate(context.Context, llm.Request) (*llm.Job, error) {
	return nil, errors.New("wordEngine does not generate")
}
func (wordEngine) ContextPerRequest() int { return 1 << 20 }

// wantBudget records what a call asks to reserve and refuses it.
type wantBudget struct{ want int64 }

var errNoBudget = errors.New("test budget refuses")

func (b *wantBudget) Reserve(_ context.Context, want int64) (int64, func(int64), error) {
	b.want = want
	return 0, nil, errNoBudget
}
func (b *wantBudget) KeyID() *string                            { return nil }
func (b *wantBudget) TokensLeft(context.Context) (int64, error) { return 0, nil }
func (b *wantBudget) Daily() bool                               { return false }

// TestMaxTokensDefaultAndCap: max_tokens defaults to 2048 and is capped at
// 2048 (contract, platform sections 4 and 8), and the call reserves exactly
// that many tokens of the caller's budget (which may cap it further).
func TestMaxTokensDefaultAndCap(t *testing.T) {
	s := &Service{Engine: wordEngine{}, ModelID: "model-27b"}
	cases := []struct {
		name   string
		fields string
		want   int
	}{
		{"absent", ``, 2048},
		{"null", `,"max_tokens":null`, 2048},
		{"below the cap", `,"max_tokens":17`, 17},
		{"at the cap", `,"max_tokens":2048`, 2048},
		{"above the cap", `,"max_tokens":5000`, 2048},
		{"max_completion_tokens above", `,"max_completion_tokens":9999`, 2048},
		{"max_completion_tokens below", `,"max_completion_tokens":3`, 3},
		{"one", `,"max_tokens":1`, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var req Request
			body := `{"model":"model-27b","messages":[{"role":"user","content":"hello"}]` + c.fields + `}`
			if err := json.Unmarshal([]byte(body), &req); err != nil {
				t.Fatal(err)
			}
			call, err := Prepare(s, &req)
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if call.maxTokens != c.want {
				t.Errorf("maxTokens %d, want %d", call.maxTokens, c.want)
			}
			b := &wantBudget{}
			if _, err := call.Run(context.Background(), "chatcmpl-test", b, nil); !errors.Is(err, errNoBudget) {
				t.Fatalf("Run: %v, want the budget's refusal", err)
			}
			if b.want != int64(c.want) {
				t.Errorf("reserved %d tokens, want %d", b.want, c.want)
			}
		})
	}
	for _, bad := range []string{`,"max_tokens":0`, `,"max_tokens":-5`, `,"max_completion_tokens":0`} {
		var req Request
		if err := json.Unmarshal([]byte(`{"model":"model-27b","messages":[{"role":"user","content":"hi"}]`+bad+`}`), &req); err != nil {
			t.Fatal(err)
		}
		_, err := Prepare(s, &req)
		if !problem.Is(err, problem.Invalid) {
			t.Errorf("%s: %v, want an Invalid problem", bad, err)
		}
	}
}
