package llmcall_test

import (
	"context"
	"testing"

	"boxd/pipelines/llmcall"
	"boxd/pipelines/llmcall/llmcalltest"
)

// TestLogprobsFromTheEngine: through the real engine (the tiny chat
// model), a greedy call asking for logprobs gets one per generated token,
// led by the chosen token, whose bytes make the text.
func TestLogprobsFromTheEngine(t *testing.T) {
	m, iss := llmcalltest.Tiny(t, false)
	res, err := m.Text(context.Background(), &llmcalltest.Budget{}, llmcall.Request{
		Messages: []llmcall.Message{{Role: "user", Content: "Hello"}}, MaxTokens: 12, TopLogprobs: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Logprobs) != res.Usage.CompletionTokens || res.Usage.CompletionTokens == 0 {
		t.Fatalf("%d logprobs for %d tokens", len(res.Logprobs), res.Usage.CompletionTokens)
	}
	var text []byte
	for i, lp := range res.Logprobs {
		text = append(text, lp.Bytes...)
		if len(lp.Top) != 3 || lp.Top[0].Logprob != lp.Logprob || lp.Logprob > 0 {
			t.Errorf("position %d: %+v", i, lp)
		}
	}
	if string(text) != res.Text {
		t.Errorf("the tokens' bytes %q, the text %q", text, res.Text)
	}
	if p := iss.Calls()[0].Params["top_logprobs"]; p != "3" {
		t.Errorf("receipt top_logprobs %q", p)
	}
}
