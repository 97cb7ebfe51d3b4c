package llmcall

import (
	"context"
	"reflect"
	"testing"

	"boxd/engine/llm"
)

// TestLogprobsPassThrough: a call's TopLogprobs reaches the engine's
// request, its result carries the engine's logprobs, and its receipt names
// top_logprobs (and its request hash differs) only when the call asked.
func TestLogprobsPassThrough(t *testing.T) {
	lps := []llm.TokenLogprob{
		{Token: "a", Bytes: []byte("a"), Logprob: -0.25, Top: []llm.TopLogprob{{Token: "a", Bytes: []byte("a"), Logprob: -0.25}, {Token: "b", Bytes: []byte("b"), Logprob: -1.5}}},
		{Token: "c", Bytes: []byte("c"), Logprob: -0.5, Top: []llm.TopLogprob{{Token: "c", Bytes: []byte("c"), Logprob: -0.5}, {Token: "d", Bytes: []byte("d"), Logprob: -1}}},
	}
	var hashes []string
	for _, top := range []int{0, 2} {
		eng, iss := &fakeEngine{ctxLen: 4096, pieces: []string{"a", "c"}, logprobs: lps}, &issuer{}
		m := &Model{Engine: eng, ModelID: "model-27b", Receipts: iss}
		res, err := m.Text(context.Background(), &budget{}, Request{Messages: hello, MaxTokens: 8, TopLogprobs: top})
		if err != nil {
			t.Fatal(err)
		}
		if got := eng.started[0].TopLogprobs; got != top {
			t.Errorf("TopLogprobs %d: the engine was asked for %d", top, got)
		}
		if !reflect.DeepEqual(res.Logprobs, lps) {
			t.Errorf("TopLogprobs %d: result logprobs %+v, want the engine's %+v", top, res.Logprobs, lps)
		}
		p, named := iss.calls[0].Params["top_logprobs"]
		if named != (top > 0) || named && p != "2" {
			t.Errorf("TopLogprobs %d: receipt params %v", top, iss.calls[0].Params)
		}
		hashes = append(hashes, iss.calls[0].RequestHash)
	}
	if hashes[0] == hashes[1] {
		t.Error("a call asking for logprobs has the request hash of one that does not")
	}
}
