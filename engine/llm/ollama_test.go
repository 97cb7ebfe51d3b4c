package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"boxd/engine/models/testmodels"
)

// ollama is `ollama serve` built from the pinned module (make tools puts it
// in $HOME/.cache/boxd/bin), running on a private port and model store: the
// reference the engine is compared with.
type ollama struct {
	url string
	cmd *exec.Cmd
	bin string
	env []string
}

func ollamaBinary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("OLLAMA_BIN"); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	p := filepath.Join(home, ".cache", "boxd", "bin", "ollama")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("ollama (built from the pinned module by make tools) is missing: %v", err)
		}
		tb.Skipf("ollama reference binary missing (make tools builds it): %v", err)
	}
	return p
}

func freePort(tb testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startOllama serves model as the ollama model "ref" with parallel sequences.
func startOllama(tb testing.TB, model string, parallel int) *ollama {
	tb.Helper()
	bin := ollamaBinary(tb)
	dir := tb.TempDir()
	addr := freePort(tb)
	o := &ollama{url: "http://" + addr, bin: bin}
	// Without boxd's OLLAMA_LIBRARY_PATH: ollama finds its GPU libraries
	// in its own layout (lib/ollama beside its bin/), as installed.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OLLAMA_LIBRARY_PATH=") {
			env = append(env, kv)
		}
	}
	o.env = append(env, "HOME="+dir, "OLLAMA_HOST="+addr, "OLLAMA_MODELS="+filepath.Join(dir, "models"),
		fmt.Sprintf("OLLAMA_NUM_PARALLEL=%d", parallel), "OLLAMA_KEEP_ALIVE=1h", "OLLAMA_NOPRUNE=1")
	o.cmd = exec.Command(bin, "serve")
	o.cmd.Env = o.env
	// Its own process group, so the runners it starts die with it.
	o.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs bytes.Buffer
	o.cmd.Stdout, o.cmd.Stderr = &logs, &logs
	if err := o.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = syscall.Kill(-o.cmd.Process.Pid, syscall.SIGKILL)
		_ = o.cmd.Wait()
		if tb.Failed() {
			tb.Logf("ollama log:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get(o.url + "/api/version"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("ollama did not start:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	mf := filepath.Join(dir, "Modelfile")
	if err := os.WriteFile(mf, []byte("FROM "+model+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	create := exec.Command(bin, "create", "ref", "-f", mf)
	create.Env = o.env
	if out, err := create.CombinedOutput(); err != nil {
		tb.Fatalf("ollama create: %v\n%s", err, out)
	}
	return o
}

type ollamaResult struct {
	Response        string `json:"response"`
	PromptEvalCount int    `json:"prompt_eval_count"`
	EvalCount       int    `json:"eval_count"`
	EvalDuration    int64  `json:"eval_duration"`
	PromptDuration  int64  `json:"prompt_eval_duration"`
	DoneReason      string `json:"done_reason"`
}

// vramFraction is the share of the loaded model ollama holds in GPU
// memory (/api/ps).
func (o *ollama) vramFraction(ctx context.Context) (float64, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", o.url+"/api/ps", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var ps struct {
		Models []struct {
			Size     int64 `json:"size"`
			SizeVRAM int64 `json:"size_vram"`
		} `json:"models"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ps); err != nil {
		return 0, fmt.Errorf("ollama /api/ps: %w", err)
	}
	if len(ps.Models) == 0 || ps.Models[0].Size == 0 {
		return 0, fmt.Errorf("ollama /api/ps lists no loaded model")
	}
	return float64(ps.Models[0].SizeVRAM) / float64(ps.Models[0].Size), nil
}

// generate calls /api/generate with raw: true (no template).
func (o *ollama) generate(ctx context.Context, prompt string, options map[string]any) (ollamaResult, error) {
	body, _ := json.Marshal(map[string]any{"model": "ref", "prompt": prompt, "raw": true, "stream": false, "options": options})
	req, _ := http.NewRequestWithContext(ctx, "POST", o.url+"/api/generate", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ollamaResult{}, err
	}
	defer resp.Body.Close()
	var r ollamaResult
	if resp.StatusCode != 200 {
		var e map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return r, fmt.Errorf("ollama: %d %v", resp.StatusCode, e)
	}
	return r, json.NewDecoder(resp.Body).Decode(&r)
}

// TestGreedyMatchesOllama: with the real tiny LLM, greedy raw-prompt output
// is identical to ollama's for the same model and prompt, token for token.
func TestGreedyMatchesOllama(t *testing.T) {
	model := sharedModel(t, "stories260K.gguf")
	o := startOllama(t, model, 1)
	e, err := Open(context.Background(), EngineOptions{Options: Options{Path: model, ContextLength: 2048, Parallel: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	prompts := []string{
		"Once upon a time",
		"Lily and Tom went to the park. They saw a big dog.",
		"The little bird",
		"One day, a boy named Max found a shiny stone. He",
		"Mom said, \"Don't",
	}
	for _, p := range prompts {
		ref, err := o.generate(context.Background(), p, map[string]any{"temperature": 0, "num_predict": 64, "repeat_penalty": 1.0, "seed": 1})
		if err != nil {
			t.Fatal(err)
		}
		toks, err := e.Tokenize(p, true, true)
		if err != nil {
			t.Fatal(err)
		}
		j, err := e.Generate(context.Background(), Request{Prompt: toks, MaxTokens: 64})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := j.Wait(context.Background())
		if got.Text != ref.Response {
			t.Errorf("prompt %q:\nboxd   %q\nollama %q", p, got.Text, ref.Response)
		}
		if got.PromptTokens != ref.PromptEvalCount || got.CompletionTokens != ref.EvalCount {
			t.Errorf("prompt %q: tokens boxd %d+%d, ollama %d+%d", p, got.PromptTokens, got.CompletionTokens, ref.PromptEvalCount, ref.EvalCount)
		}
		if strings.TrimSpace(got.Text) == "" {
			t.Errorf("prompt %q: empty output", p)
		}
	}
}

// embed calls /api/embed for texts.
func (o *ollama) embed(ctx context.Context, texts []string) ([][]float32, error) {
	body, _ := json.Marshal(map[string]any{"model": "ref", "input": texts})
	req, _ := http.NewRequestWithContext(ctx, "POST", o.url+"/api/embed", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Embeddings [][]float32 `json:"embeddings"`
		Error      string      `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("ollama /api/embed: %w", err)
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("ollama /api/embed: %d %s", resp.StatusCode, r.Error)
	}
	return r.Embeddings, nil
}

// TestEmbeddingsMatchOllama: the random-weight BERT test embedder (mean
// pooling, normalised) gives the vectors `ollama serve`'s /api/embed gives
// for the same GGUF and texts: cosine at least 0.9999 for each, batched
// as the retrieval index batches them. The texts are ASCII: on accented
// letters the two tokenizers part (llama.cpp's strips accents as Hugging
// Face's uncased BERT tokenizer does, "café" → "cafe"; ollama's WordPiece
// keeps them and finds no piece), which the test shows and logs.
func TestEmbeddingsMatchOllama(t *testing.T) {
	path := testmodels.Generated(t, testmodels.EmbedFile)
	o := startOllama(t, path, 1)
	e, err := OpenEmbedder(context.Background(), Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	texts := []string{
		"the patient reports back pain after lifting a box",
		"The roof has cracked shingles near the chimney.",
		"a",
		"Dosage: 500 mg twice daily; review in 2 weeks.",
		strings.Repeat("long text with many words ", 20),
		"ALL CAPS and MiXeD case, with (brackets) & symbols #12!",
	}
	for i := range 14 {
		texts = append(texts, fmt.Sprintf("document %d about valves, pumps and filter number %d", i, i*7))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	want, err := o.embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(texts) || len(got) != len(texts) {
		t.Fatalf("%d texts: ollama gave %d vectors, boxd %d", len(texts), len(want), len(got))
	}
	worst := 1.0
	for i := range texts {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("text %d: %d dimensions, ollama %d", i, len(got[i]), len(want[i]))
		}
		var dot, na, nb float64
		for j := range got[i] {
			dot += float64(got[i][j]) * float64(want[i][j])
			na += float64(got[i][j]) * float64(got[i][j])
			nb += float64(want[i][j]) * float64(want[i][j])
		}
		cos := dot / math.Sqrt(na*nb)
		worst = min(worst, cos)
		if cos < 0.9999 {
			t.Errorf("text %d %.30q: cosine %.6f with ollama's vector", i, texts[i], cos)
		}
	}
	t.Logf("%d texts, worst cosine with ollama %.7f", len(texts), worst)

	// Accents: boxd (llama.cpp) embeds "café crème" as "cafe creme".
	acc, err := e.Embed(ctx, []string{"café crème brûlée", "cafe creme brulee"})
	if err != nil {
		t.Fatal(err)
	}
	var same float64
	for j := range acc[0] {
		same += float64(acc[0][j]) * float64(acc[1][j])
	}
	if same < 0.99999 {
		t.Errorf("accented and plain text embed apart (cosine %.6f): the tokenizer no longer strips accents", same)
	}
	if ov, err := o.embed(ctx, []string{"café crème brûlée"}); err == nil {
		var c float64
		for j := range acc[0] {
			c += float64(acc[0][j]) * float64(ov[0][j])
		}
		t.Logf("accented text: cosine with ollama %.4f (its tokenizer keeps accents)", c)
	}
}

// BenchmarkEmbedVsOllama embeds BOXD_BENCH_EMBED_TEXTS chunk-sized texts
// (default 1,500, the retrieval index's most) with the test embedder, in
// boxd and through `ollama serve`'s /api/embed on the same GGUF, in
// batches of 64 for both, alternating, and reports texts/s for each and
// the ratio boxd ÷ ollama (above 1: boxd is faster).
func BenchmarkEmbedVsOllama(b *testing.B) {
	path := os.Getenv("BOXD_BENCH_EMBED_MODEL")
	if path == "" {
		path = testmodels.Generated(b, testmodels.EmbedFile)
	}
	n := 1500
	if v := os.Getenv("BOXD_BENCH_EMBED_TEXTS"); v != "" {
		fmt.Sscan(v, &n)
	}
	texts := make([]string, n)
	for i := range texts {
		var sb strings.Builder
		for j := range 40 {
			fmt.Fprintf(&sb, "word%d filter pump valve %d ", (i*7+j)%97, j)
		}
		texts[i] = sb.String()
	}
	o := startOllama(b, path, 1)
	e, err := OpenEmbedder(context.Background(), Options{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	const batch = 64
	run := func(f func([]string) error) time.Duration {
		start := time.Now()
		for i := 0; i < len(texts); i += batch {
			if err := f(texts[i:min(i+batch, len(texts))]); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	boxd := func(t []string) error { _, err := e.Embed(ctx, t); return err }
	ref := func(t []string) error { _, err := o.embed(ctx, t); return err }
	run(boxd) // warm up both
	run(ref)
	var tb, to time.Duration
	for range b.N {
		tb += run(boxd)
		to += run(ref)
	}
	bps := float64(b.N*n) / tb.Seconds()
	ops := float64(b.N*n) / to.Seconds()
	b.ReportMetric(bps, "boxd_texts/s")
	b.ReportMetric(ops, "ollama_texts/s")
	b.ReportMetric(bps/ops, "ratio")
}
