package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
)

// TestLogSoftmaxTop: the log-softmax and the top ids, ties by id, on
// logits small enough to work out by hand.
func TestLogSoftmaxTop(t *testing.T) {
	logits := []float32{1, 3, 3, 0, -2}
	var sum float64
	for _, l := range logits {
		sum += math.Exp(float64(l))
	}
	lse := math.Log(sum)
	got, top := logSoftmaxTop(logits, 3, 3)
	if math.Abs(got-(0-lse)) > 1e-12 {
		t.Errorf("logprob of token 3: %v, want %v", got, -lse)
	}
	want := []scored{{1, 3 - lse}, {2, 3 - lse}, {0, 1 - lse}}
	if len(top) != len(want) {
		t.Fatalf("top: %v, want %v", top, want)
	}
	for i := range want {
		if top[i].id != want[i].id || math.Abs(top[i].lp-want[i].lp) > 1e-12 {
			t.Errorf("top[%d] = %v, want %v", i, top[i], want[i])
		}
	}
	if _, all := logSoftmaxTop(logits, 0, 20); len(all) != len(logits) {
		t.Errorf("top 20 of %d logits: %d", len(logits), len(all))
	}
}

// TestEmittedLogprobs: a stop string drops the tokens whose pieces lie
// wholly in or after it, keeps one that put a byte into the text.
func TestEmittedLogprobs(t *testing.T) {
	lps := []TokenLogprob{{Bytes: []byte("ab")}, {Bytes: nil}, {Bytes: []byte("cd")}, {Bytes: []byte("ef")}}
	for emitted, want := range map[int]int{0: 0, 1: 1, 2: 2, 3: 3, 4: 3, 5: 4, 6: 4} {
		if got := len(emittedLogprobs(lps, emitted)); got != want {
			t.Errorf("%d bytes emitted: %d tokens kept, want %d", emitted, got, want)
		}
	}
}

func joinBytes(lps []TokenLogprob) string {
	var b []byte
	for _, lp := range lps {
		b = append(b, lp.Bytes...)
	}
	return string(b)
}

// checkDistribution: the logprobs of greedy generation are a distribution
// whose likeliest token is the one chosen.
func checkDistribution(t *testing.T, what string, res Result, top int) {
	t.Helper()
	if len(res.Logprobs) != res.CompletionTokens {
		t.Errorf("%s: %d logprobs for %d tokens", what, len(res.Logprobs), res.CompletionTokens)
	}
	if got := joinBytes(res.Logprobs); got != res.Text {
		t.Errorf("%s: the tokens' bytes %q, the text %q", what, got, res.Text)
	}
	for i, lp := range res.Logprobs {
		if len(lp.Top) != top {
			t.Fatalf("%s position %d: %d alternatives, want %d", what, i, len(lp.Top), top)
		}
		if !(lp.Logprob <= 0) || lp.Token != string(lp.Bytes) {
			t.Errorf("%s position %d: %+v", what, i, lp)
		}
		if lp.Logprob != lp.Top[0].Logprob || !bytes.Equal(lp.Bytes, lp.Top[0].Bytes) {
			t.Errorf("%s position %d: chosen %q %.6f, the likeliest %q %.6f", what, i, lp.Token, lp.Logprob, lp.Top[0].Token, lp.Top[0].Logprob)
		}
		var mass float64
		for k, a := range lp.Top {
			mass += math.Exp(a.Logprob)
			if !(a.Logprob <= 0) || (k > 0 && a.Logprob > lp.Top[k-1].Logprob) {
				t.Errorf("%s position %d: alternative %d %.6f after %.6f", what, i, k, a.Logprob, lp.Top[max(k-1, 0)].Logprob)
			}
		}
		if mass > 1+1e-9 || mass <= math.Exp(lp.Logprob)-1e-12 {
			t.Errorf("%s position %d: the top %d hold probability %.9f", what, i, top, mass)
		}
	}
}

// rerunTolerance bounds |Δ logprob| between runs of the same prompt: a
// prompt found in the cache decodes its last token alone, a batch of
// another shape, whose float32 logits differ in rounding (about 1e-6 on
// the CPU).
const rerunTolerance = 1e-4

// TestLogprobsGreedy: with the real tiny LLM, greedy generation's
// logprobs are a distribution led by the chosen token, the tokens' bytes
// make the text, a stop string cuts them where it cuts the text, sampling
// at a temperature reports the same raw logprobs, and asking for none or
// for too many is as documented.
func TestLogprobsGreedy(t *testing.T) {
	model := sharedModel(t, "stories260K.gguf")
	e, err := Open(context.Background(), EngineOptions{Options: Options{Path: model, ContextLength: 512, Parallel: 2, GPULayers: testGPULayers(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.nVocab < MaxTopLogprobs {
		t.Fatalf("vocabulary of %d tokens", e.nVocab)
	}
	prompts := []string{"Once upon a time", "Lily and Tom went to the park. They saw a big dog.", "The little bird"}
	for _, p := range prompts {
		res := run(t, e, p, Request{MaxTokens: 40, TopLogprobs: MaxTopLogprobs})
		checkDistribution(t, fmt.Sprintf("%q", p), res, MaxTopLogprobs)
		plain := run(t, e, p, Request{MaxTokens: 40})
		if plain.Text != res.Text || plain.Logprobs != nil {
			t.Errorf("%q without logprobs: %q (%d logprobs), with: %q", p, plain.Text, len(plain.Logprobs), res.Text)
		}
	}

	// A stop string in the middle of a token's piece.
	free := run(t, e, prompts[0], Request{MaxTokens: 40, TopLogprobs: 3})
	cutAt := len(free.Text) / 2
	stop := free.Text[cutAt : cutAt+2]
	cut := run(t, e, prompts[0], Request{MaxTokens: 40, TopLogprobs: 3, Stop: []string{stop}})
	joined := joinBytes(cut.Logprobs)
	if cut.Finish != FinishStop || !strings.HasPrefix(joined, cut.Text) || len(cut.Logprobs) == 0 ||
		len(joined)-len(cut.Logprobs[len(cut.Logprobs)-1].Bytes) >= len(cut.Text) {
		t.Errorf("stop %q: text %q (%s), tokens' bytes %q", stop, cut.Text, cut.Finish, joined)
	}
	for i, lp := range cut.Logprobs {
		if math.Abs(lp.Logprob-free.Logprobs[i].Logprob) > rerunTolerance || lp.Token != free.Logprobs[i].Token {
			t.Errorf("stop: position %d %q %.6f, without the stop %q %.6f", i, lp.Token, lp.Logprob, free.Logprobs[i].Token, free.Logprobs[i].Logprob)
		}
	}

	// At a temperature the first position's logits are the same as under
	// greedy, and so are its reported logprobs (raw, before temperature).
	hot := run(t, e, prompts[0], Request{MaxTokens: 8, TopLogprobs: 5, Sampling: Sampling{Temperature: 1.5, Seed: seed(3)}})
	if len(hot.Logprobs) == 0 {
		t.Fatal("no logprobs at temperature 1.5")
	}
	if len(hot.Logprobs[0].Top) != 5 {
		t.Fatalf("%d alternatives, want 5", len(hot.Logprobs[0].Top))
	}
	for k, g := range free.Logprobs[0].Top {
		if a := hot.Logprobs[0].Top[k]; a.Token != g.Token || math.Abs(a.Logprob-g.Logprob) > rerunTolerance {
			t.Errorf("first position, alternative %d: at temperature 1.5 %q %.6f, greedy %q %.6f", k, a.Token, a.Logprob, g.Token, g.Logprob)
		}
	}

	toks, _ := e.Tokenize(prompts[0], true, true)
	for _, n := range []int{-1, MaxTopLogprobs + 1} {
		if _, err := e.Generate(context.Background(), Request{Prompt: toks, MaxTokens: 4, TopLogprobs: n}); err == nil || !strings.Contains(err.Error(), "top logprobs") {
			t.Errorf("TopLogprobs %d: %v", n, err)
		}
	}
}

// ollamaLogprob is one position of ollama's /api/generate logprobs.
type ollamaLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Top     []struct {
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
	} `json:"top_logprobs"`
}

// logprobsOllamaTolerance bounds |Δ logprob| between boxd and ollama, both
// on the CPU. Both take the log-softmax of the raw logits (ollama's
// runner/common.CalculateLogprobs, after the end-of-generation check, so
// neither reports that token) but ollama subtracts in float32: half an ulp
// of a logprob of magnitude below 32 is under 2e-6. The rest of the margin
// is for the logits themselves, computed by ollama's own vendored
// llama.cpp, whose kernels may round otherwise. Measured: 7.7e-7.
const logprobsOllamaTolerance = 1e-5

// TestLogprobsMatchOllama: with the real tiny LLM, the greedy tokens'
// logprobs and the top 5 at each position match what `ollama serve`
// reports for the same GGUF and raw prompt.
func TestLogprobsMatchOllama(t *testing.T) {
	model := sharedModel(t, "stories260K.gguf")
	o := startOllama(t, model, 1)
	e, err := Open(context.Background(), EngineOptions{Options: Options{Path: model, ContextLength: 2048, Parallel: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const top = 5
	worst := 0.0
	for _, p := range []string{"Once upon a time", "One day, a boy named Max found a shiny stone. He", "Mom said, \"Don't"} {
		body, _ := json.Marshal(map[string]any{"model": "ref", "prompt": p, "raw": true, "stream": false,
			"logprobs": true, "top_logprobs": top,
			"options": map[string]any{"temperature": 0, "num_predict": 16, "repeat_penalty": 1.0, "seed": 1, "num_gpu": 0}})
		resp, err := http.Post(o.url+"/api/generate", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var ref struct {
			Response string          `json:"response"`
			Logprobs []ollamaLogprob `json:"logprobs"`
			Error    string          `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&ref)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("ollama: %d %v %s", resp.StatusCode, err, ref.Error)
		}
		got := run(t, e, p, Request{MaxTokens: 16, TopLogprobs: top})
		if got.Text != ref.Response || len(got.Logprobs) != len(ref.Logprobs) {
			t.Fatalf("prompt %q: boxd %q (%d logprobs), ollama %q (%d)", p, got.Text, len(got.Logprobs), ref.Response, len(ref.Logprobs))
		}
		for i, want := range ref.Logprobs {
			lp := got.Logprobs[i]
			d := math.Abs(lp.Logprob - want.Logprob)
			worst = max(worst, d)
			if lp.Token != want.Token || d > logprobsOllamaTolerance {
				t.Errorf("prompt %q position %d: boxd %q %.7f, ollama %q %.7f", p, i, lp.Token, lp.Logprob, want.Token, want.Logprob)
			}
			if len(lp.Top) != top || len(want.Top) != top {
				t.Fatalf("prompt %q position %d: %d alternatives, ollama %d", p, i, len(lp.Top), len(want.Top))
			}
			for k, w := range want.Top {
				a := lp.Top[k]
				d := math.Abs(a.Logprob - w.Logprob)
				worst = max(worst, d)
				// Near-ties may come in either order (ollama's sort is not
				// stable); control tokens render empty in boxd, as text in
				// ollama.
				tied := (k > 0 && w.Logprob-want.Top[k-1].Logprob > -2*logprobsOllamaTolerance) ||
					(k+1 < top && want.Top[k+1].Logprob-w.Logprob > -2*logprobsOllamaTolerance)
				if d > logprobsOllamaTolerance || (a.Token != w.Token && !tied && a.Token != "") {
					t.Errorf("prompt %q position %d alternative %d: boxd %q %.7f, ollama %q %.7f", p, i, k, a.Token, a.Logprob, w.Token, w.Logprob)
				}
			}
		}
	}
	t.Logf("max |Δ logprob| with ollama: %.3g (tolerance %g)", worst, logprobsOllamaTolerance)
}
