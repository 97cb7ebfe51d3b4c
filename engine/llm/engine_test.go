package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"boxd/engine/models"
	"boxd/engine/models/testmodels"
	"boxd/gpu"
)

// testGPULayers is BOXD_TEST_GPU_LAYERS (default 0): the GPU check runs
// some of these tests with the model on the GPU.
func testGPULayers(t testing.TB) int { return testmodels.EnvInt(t, "BOXD_TEST_GPU_LAYERS", 0) }

func openTiny(t testing.TB, parallel int) *Engine {
	t.Helper()
	e, err := Open(context.Background(), EngineOptions{Options: Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 1024, Parallel: parallel, GPULayers: testGPULayers(t)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func seed(n uint32) *uint32 { return &n }

func run(t testing.TB, e *Engine, prompt string, r Request) Result {
	t.Helper()
	toks, err := e.Tokenize(prompt, true, true)
	if err != nil {
		t.Fatal(err)
	}
	r.Prompt = toks
	return generate(t, e, r)
}

func TestGenerateBasics(t *testing.T) {
	e := openTiny(t, 2)
	a := run(t, e, "The patient reports", Request{MaxTokens: 20})
	b := run(t, e, "The patient reports", Request{MaxTokens: 20})
	if a.Text != b.Text || a.CompletionTokens != 20 || a.Finish != FinishLength {
		t.Errorf("greedy runs differ or wrong length: %q (%d %s) vs %q", a.Text, a.CompletionTokens, a.Finish, b.Text)
	}
	if b.CachedTokens != a.PromptTokens-1 {
		t.Errorf("the repeated prompt reused %d of %d tokens", b.CachedTokens, a.PromptTokens)
	}
	s1 := run(t, e, "Hello", Request{MaxTokens: 30, Sampling: Sampling{Temperature: 0.9, Seed: seed(1)}})
	s2 := run(t, e, "Hello", Request{MaxTokens: 30, Sampling: Sampling{Temperature: 0.9, Seed: seed(1)}})
	s3 := run(t, e, "Hello", Request{MaxTokens: 30, Sampling: Sampling{Temperature: 0.9, Seed: seed(2)}})
	if s1.Text != s2.Text || s1.Text == s3.Text {
		t.Errorf("seeds: %q %q %q", s1.Text, s2.Text, s3.Text)
	}
}

func TestIsolationUnderConcurrency(t *testing.T) {
	e := openTiny(t, 4)
	alone := make([]string, 16)
	for i := range alone {
		alone[i] = run(t, e, fmt.Sprintf("Request %d: the roof", i), Request{MaxTokens: 24, Sampling: Sampling{Temperature: 0.8, Seed: seed(uint32(100 + i))}}).Text
	}
	var wg sync.WaitGroup
	together := make([]string, 16)
	start := time.Now()
	for i := range together {
		wg.Add(1)
		go func() {
			defer wg.Done()
			together[i] = run(t, e, fmt.Sprintf("Request %d: the roof", i), Request{MaxTokens: 24, Sampling: Sampling{Temperature: 0.8, Seed: seed(uint32(100 + i))}}).Text
		}()
	}
	wg.Wait()
	t.Logf("16 concurrent in %s", time.Since(start))
	for i := range alone {
		if alone[i] != together[i] {
			t.Errorf("request %d: alone %q, together %q", i, alone[i], together[i])
		}
	}
}

func TestStopStrings(t *testing.T) {
	e := openTiny(t, 1)
	free := run(t, e, "Once upon a time", Request{MaxTokens: 40, Sampling: Sampling{Temperature: 1, Seed: seed(5)}})
	if len(free.Text) < 6 {
		t.Skipf("generation too short to cut: %q", free.Text)
	}
	stop := free.Text[3:6]
	cut := run(t, e, "Once upon a time", Request{MaxTokens: 40, Sampling: Sampling{Temperature: 1, Seed: seed(5)}, Stop: []string{"never-appears", stop}})
	if cut.Finish != FinishStop || cut.Text != free.Text[:strings.Index(free.Text, stop)] {
		t.Errorf("stop %q: got %q (%s), full %q", stop, cut.Text, cut.Finish, free.Text)
	}
}

func TestStreamingPiecesAddUp(t *testing.T) {
	e := openTiny(t, 1)
	toks, _ := e.Tokenize("Stream this", true, true)
	j, err := e.Generate(context.Background(), Request{Prompt: toks, MaxTokens: 30, Sampling: Sampling{Temperature: 1, Seed: seed(9)}})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	pieces := 0
	for {
		p, err := j.Next(context.Background())
		if err != nil {
			break
		}
		pieces++
		sb.WriteString(p)
	}
	res := j.Result()
	if sb.String() != res.Text || pieces == 0 || !utf8.ValidString(res.Text) {
		t.Errorf("pieces %q != result %q", sb.String(), res.Text)
	}
}

func TestCancelFreesTheSequence(t *testing.T) {
	e := openTiny(t, 1)
	toks, _ := e.Tokenize("A long answer please", true, true)
	ctx, cancel := context.WithCancel(context.Background())
	j, err := e.Generate(ctx, Request{Prompt: toks, MaxTokens: 100000, Sampling: Sampling{Temperature: 1}, Grammar: `root ::= [a-z ] root`})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Next(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for e.Stats().Active != 0 {
		if time.Now().After(deadline) {
			t.Fatal("cancelled request still holds its sequence")
		}
		time.Sleep(time.Millisecond)
	}
	if r := j.Result(); r.Finish != FinishCancelled {
		t.Errorf("finish = %s", r.Finish)
	}
	// The one sequence serves the next request at once.
	done := run(t, e, "Next", Request{MaxTokens: 3})
	if done.CompletionTokens != 3 || done.CachedTokens != 0 {
		t.Errorf("after cancel: %+v", done)
	}
	if e.Stats().Cancelled != 1 {
		t.Errorf("cancelled = %d", e.Stats().Cancelled)
	}
}

func TestPrefixReuse(t *testing.T) {
	e := openTiny(t, 2)
	system := strings.Repeat("You are a careful clinical scribe. ", 20)
	a := run(t, e, system+"First visit.", Request{MaxTokens: 4})
	before := e.Stats().PromptEvaluated
	b := run(t, e, system+"Second visit.", Request{MaxTokens: 4})
	evaluated := e.Stats().PromptEvaluated - before
	if b.CachedTokens < a.PromptTokens/2 || evaluated > int64(b.PromptTokens-b.CachedTokens) {
		t.Errorf("prefix reuse: cached %d of %d, evaluated %d", b.CachedTokens, b.PromptTokens, evaluated)
	}
	// Reuse does not change the output.
	fresh := openTiny(t, 1)
	if c := run(t, fresh, system+"Second visit.", Request{MaxTokens: 4}); c.Text != b.Text {
		t.Errorf("with cache %q, without %q", b.Text, c.Text)
	}
}

func TestPromptTooLongAndBusy(t *testing.T) {
	e, err := Open(context.Background(), EngineOptions{Options: Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 64, Parallel: 1}, MaxQueue: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	long, _ := e.Tokenize(strings.Repeat("word ", 100), true, true)
	if _, err := e.Generate(context.Background(), Request{Prompt: long}); !errors.Is(err, ErrPromptTooLong) {
		t.Errorf("long prompt: %v", err)
	}
	short, _ := e.Tokenize("hi", true, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A grammar that never completes keeps the end-of-generation token out,
	// so the request runs until the context cap.
	running, err := e.Generate(ctx, Request{Prompt: short, Sampling: Sampling{Temperature: 1}, Grammar: `root ::= [a-z ] root`})
	if err != nil {
		t.Fatal(err)
	}
	queued := make(chan error, 1)
	go func() {
		j, err := e.Generate(ctx, Request{Prompt: short, MaxTokens: 1})
		if err == nil {
			_, err = j.Wait(ctx)
		}
		queued <- err
	}()
	for e.Stats().Waiting == 0 {
		time.Sleep(time.Millisecond)
	}
	if _, err := e.Generate(ctx, Request{Prompt: short}); !errors.Is(err, ErrBusy) {
		t.Errorf("third request: %v, want ErrBusy", err)
	}
	if r, _ := running.Wait(ctx); r.Finish != FinishLength || r.CompletionTokens != 64-len(short) {
		t.Errorf("capped at the context: %+v", r)
	}
	if err := <-queued; err != nil {
		t.Errorf("queued request: %v", err)
	}
}

func TestGrammarOutputValidates(t *testing.T) {
	e := openTiny(t, 4)
	schema := `{"type":"object","properties":{"severity":{"type":"string","enum":["critical","major","minor","info"]},"count":{"type":"integer","minimum":0,"maximum":99},"note":{"type":"string","maxLength":12},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string","maxLength":5},"maxItems":3}},"required":["severity","count","note","ok","tags"],"additionalProperties":false}`
	g, err := SchemaGrammar(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	var doc any
	_ = json.Unmarshal([]byte(schema), &doc)
	if err := c.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := run(t, e, "Report the finding as JSON.", Request{MaxTokens: 400, Grammar: g, Sampling: Sampling{Temperature: 1, Seed: seed(uint32(i))}})
			var v any
			if err := json.Unmarshal([]byte(r.Text), &v); err != nil {
				t.Errorf("seed %d: not JSON (%s): %q", i, r.Finish, r.Text)
				return
			}
			if err := sch.Validate(v); err != nil {
				t.Errorf("seed %d: %q does not validate: %v", i, r.Text, err)
			}
			if r.Finish != FinishStop {
				t.Errorf("seed %d: finish %s", i, r.Finish)
			}
		}()
	}
	wg.Wait()
	if _, err := e.Generate(context.Background(), Request{Prompt: []int32{1}, Grammar: "root ::= ("}); !errors.Is(err, ErrGrammar) {
		t.Errorf("bad grammar: %v", err)
	}
	if _, err := SchemaGrammar(json.RawMessage(`{"type":`)); !errors.Is(err, ErrGrammar) {
		t.Errorf("bad schema: %v", err)
	}
	obj := run(t, e, "JSON please", Request{MaxTokens: 200, Grammar: JSONObjectGrammar(), Sampling: Sampling{Temperature: 0.5, Seed: seed(3)}})
	if strings.TrimSpace(obj.Text) == "" || obj.Text[0] != '{' {
		t.Errorf("json_object output %q", obj.Text)
	}
}

func TestTemplatesTokenizeControlTokens(t *testing.T) {
	for _, name := range []string{testmodels.ChatFile, testmodels.TemplateFile(models.TemplateGemma), testmodels.TemplateFile(models.TemplateLlama3), testmodels.TemplateFile(models.TemplateMistral)} {
		e, err := Open(context.Background(), EngineOptions{Options: Options{Path: testmodels.Generated(t, name), ContextLength: 512, Parallel: 1}})
		if err != nil {
			t.Fatal(err)
		}
		prompt, err := models.Render(e.Template(), []models.Message{{Role: "user", Content: "Hi"}})
		if err != nil {
			t.Fatal(err)
		}
		withSpecial, _ := e.Tokenize(prompt, true, true)
		asText, _ := e.Tokenize(prompt, true, false)
		if len(withSpecial) >= len(asText) {
			t.Errorf("%s: control tokens not parsed as single tokens (%d vs %d)", e.Template(), len(withSpecial), len(asText))
		}
		if r := run(t, e, prompt, Request{MaxTokens: 5}); r.CompletionTokens == 0 && r.Finish != FinishStop {
			t.Errorf("%s: no generation", e.Template())
		}
		e.Close()
	}
}

func TestEmbedder(t *testing.T) {
	e, err := OpenEmbedder(context.Background(), Options{Path: testmodels.Generated(t, testmodels.EmbedFile)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	texts := []string{"the patient reports back pain", "the roof has cracked shingles", "the patient reports back pain"}
	many := make([]string, 40)
	for i := range many {
		many[i] = texts[i%3]
	}
	vs, err := e.Embed(context.Background(), many)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 40 || len(vs[0]) != e.Dim() {
		t.Fatalf("%d vectors of %d", len(vs), len(vs[0]))
	}
	dot := func(a, b []float32) (s float64) {
		for i := range a {
			s += float64(a[i] * b[i])
		}
		return
	}
	if n := dot(vs[0], vs[0]); math.Abs(n-1) > 1e-4 {
		t.Errorf("not unit length: %v", n)
	}
	if d := dot(vs[0], vs[2]); math.Abs(d-1) > 1e-4 {
		t.Errorf("same text, different vectors: %v", d)
	}
	if d := dot(vs[0], vs[1]); d > 0.9999 {
		t.Errorf("different texts, same vector: %v", d)
	}
	if d := dot(vs[0], vs[39]); math.Abs(d-1) > 1e-4 { // batch position does not matter
		t.Errorf("batching changed a vector: %v", d)
	}
	if _, err := e.Rerank(context.Background(), "q", []string{"d"}); err == nil {
		t.Error("an embedder reranked")
	}
}

func TestReranker(t *testing.T) {
	r, err := OpenEmbedder(context.Background(), Options{Path: testmodels.Generated(t, testmodels.RerankFile)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	docs := []string{"back pain after lifting", "roof shingles", "back pain after lifting"}
	s, err := r.Rerank(context.Background(), "why does my back hurt", docs)
	if err != nil {
		t.Fatal(err)
	}
	// The same document scores the same wherever it sits in the batch (to
	// float32 rounding: its rows meet other rows in the batch's products).
	if len(s) != 3 || math.Abs(float64(s[0]-s[2])) > 1e-5 || math.Abs(float64(s[0]-s[1])) < 1e-4 {
		t.Errorf("scores = %v", s)
	}
	if _, err := r.Embed(context.Background(), []string{"x"}); err == nil {
		t.Error("a reranker embedded")
	}
}

// TestKQuantMixLoads: the generator's Q4_K_M mix (random K-quant blocks,
// a head size other than embd/heads, a tied embedding), the form of the
// 27B-class GPU benchmark model, is a file llama.cpp loads as Q4_K_M and
// generates from with finite logits (greedy stays within the length asked).
func TestKQuantMixLoads(t *testing.T) {
	spec := testmodels.LargeChat()
	spec.Name, spec.Vocab, spec.Embd, spec.Layers, spec.Heads, spec.KVHeads, spec.HeadDim, spec.FF, spec.Context =
		"boxd-kquant-mini", 600, 256, 3, 8, 4, 64, 512, 1024
	path := filepath.Join(t.TempDir(), "mini-q4_k_m.gguf")
	if err := testmodels.WriteLLM(path, spec); err != nil {
		t.Fatal(err)
	}
	info, err := ReadInfo(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.Quantisation, "Q4_K") {
		t.Errorf("quantisation %q, want Q4_K_M", info.Quantisation)
	}
	e, err := Open(context.Background(), EngineOptions{Options: Options{Path: path, ContextLength: 512, Parallel: 1, GPULayers: testGPULayers(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r := run(t, e, "The roof inspection found", Request{MaxTokens: 12})
	if r.CompletionTokens == 0 || r.CompletionTokens > 12 {
		t.Errorf("generated %d tokens", r.CompletionTokens)
	}
}

// TestCloseFreesTheContextOnTheCPU: without a GPU backend Close frees the
// llama.cpp context (freeContext keeps only contexts that have GPU
// backends, which llama_free would crash on).
func TestCloseFreesTheContextOnTheCPU(t *testing.T) {
	if testGPULayers(t) != 0 {
		t.Skip("on the GPU the context is kept until exit")
	}
	before := keptContexts.Load()
	e, err := Open(context.Background(), EngineOptions{Options: Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 256, Parallel: 1}})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if keptContexts.Load() != before {
		t.Error("Close kept a CPU context")
	}
}

// TestEnginesShareAnArbiter: two engines on one arbiter, each in its own
// pool: four requests at once to the one with a single sequence queue for
// it and all finish (a shared pool admitted them by the other's four
// sequences: "no free sequence").
func TestEnginesShareAnArbiter(t *testing.T) {
	arb := gpu.NewArbiter()
	open := func(parallel int, pool string) *Engine {
		e, err := Open(context.Background(), EngineOptions{Arbiter: arb, Pool: pool,
			Options: Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 1024, Parallel: parallel}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		return e
	}
	open(4, "")
	one := open(1, "llm:one")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	toks, _ := one.Tokenize("Hello", true, true)
	start := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			j, err := one.Generate(context.Background(), Request{Prompt: toks, MaxTokens: 400, Sampling: Sampling{Temperature: 1, Seed: seed(3)}})
			if err == nil {
				var res Result
				if res, err = j.Wait(context.Background()); err == nil {
					err = res.Err
				}
			}
			errs <- err
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
