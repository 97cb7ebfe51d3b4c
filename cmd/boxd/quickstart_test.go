package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"boxd/engine/models/testmodels"
)

// TestQuickStartChats runs the README's quick start as make run starts
// it: stories260K.gguf with the chat template the Makefile's run target
// passes (read from the Makefile, so dropping it fails here). /healthz
// says llm true and the README's chat request answers 200; the same model
// without the template serves chat 502 with the fix, and /healthz says so.
func TestQuickStartChats(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RUN_LLM_TEMPLATE := (\S+)$`).FindSubmatch(mk)
	if m == nil || !bytes.Contains(mk, []byte("--models-llm-template $(RUN_LLM_TEMPLATE)")) {
		t.Fatal("the Makefile's run target does not pass --models-llm-template $(RUN_LLM_TEMPLATE) for stories260K.gguf")
	}
	model := testmodels.Shared(t, "stories260K.gguf")
	for _, tc := range []struct {
		name   string
		args   []string
		status int
	}{
		{"make run", []string{"--models-llm-path", model, "--models-llm-template", string(m[1])}, 200},
		{"no template", []string{"--models-llm-path", model}, 502},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNotifySocket(t)
			cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path}, serveArgs(t, tc.args...)...)
			exited := ns.watch(t, cmd)
			ready := ns.waitFor(t, "READY=1", 60*time.Second)
			base := "http://" + strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):])
			post := func(path, token, body string) (int, map[string]any) {
				status, raw := request(t, base, "POST", path, token, body)
				var v map[string]any
				if err := json.Unmarshal(raw, &v); err != nil {
					t.Fatalf("%s: %v: %s", path, err, raw)
				}
				return status, v
			}
			resp, err := http.Get(base + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			var h map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			llmErr, _ := h["llm_error"].(string)
			if (h["llm"] == true) != (tc.status == 200) || (llmErr == "") != (tc.status == 200) {
				t.Errorf("healthz: %v", h)
			}
			_, sess := post("/demo/session", "", `{"vertical": "code"}`)
			token, _ := sess["token"].(string)
			// The README's chat request.
			status, out := post("/v1/chat/completions", token, `{"model": "model-27b", "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 8}`)
			if status != tc.status {
				t.Fatalf("chat: %d %v", status, out)
			}
			if status == 200 {
				choice := out["choices"].([]any)[0].(map[string]any)
				if content, _ := choice["message"].(map[string]any)["content"].(string); content == "" {
					t.Errorf("chat answered no text: %v", out)
				}
			} else if msg, _ := out["error"].(string); msg != llmErr {
				t.Errorf("chat error %q, healthz llm_error %q", msg, llmErr)
			}
			_ = cmd.Process.Signal(syscall.SIGTERM)
			if err := <-exited; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestQuickStartServesEveryFamily: make run writes the random-weight test
// models (a micro Whisper with the shared vocabulary, the BERT embedder
// and reranker) and serves with them and axe-core; a box started so
// answers speech true, lists those three under /healthz random_weights,
// and serves /v1/embeddings and /v1/rerank.
func TestQuickStartServesEveryFamily(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	recipe := string(mk[bytes.Index(mk, []byte("\nrun: ")):])
	recipe = recipe[:strings.Index(recipe, "\n\n")]
	for _, want := range []string{"run: run-deps build", "models make-test-models $$vocab $(RUN_DIR)/models", "--whisper-vocab $(MODELS_DIR)/whisper-vocab-tiny.bin",
		"--models-asr-path \"$$asr\" --models-vad-path \"$$vad\"", "--models-embedder-path $(RUN_DIR)/models/tiny-embed.gguf",
		"--models-reranker-path $(RUN_DIR)/models/tiny-rerank.gguf", "--a11y-axe-dir $(CURDIR)/$(AXE_DIR)"} {
		if !strings.Contains(recipe, want) {
			t.Errorf("the Makefile's run target lacks %q:\n%s", want, recipe)
		}
	}
	dir := t.TempDir()
	vocab := testmodels.Shared(t, "whisper-vocab-tiny.bin")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"models", "make-test-models", "--whisper-vocab", vocab, dir}, &out, &errb); code != 0 {
		t.Fatalf("make-test-models: %d %s", code, errb.String())
	}
	ns := newNotifySocket(t)
	cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path}, serveArgs(t,
		"--models-asr-path", filepath.Join(dir, testmodels.WhisperMicroGGUF), "--models-vad-path", testmodels.Shared(t, "ggml-silero-v6.2.0.bin"),
		"--models-embedder-path", filepath.Join(dir, testmodels.EmbedFile), "--models-reranker-path", filepath.Join(dir, testmodels.RerankFile))...)
	exited := ns.watch(t, cmd)
	ready := ns.waitFor(t, "READY=1", 90*time.Second)
	base := "http://" + strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):])
	_, raw := request(t, base, "GET", "/healthz", "", "")
	var h struct {
		ASR           bool     `json:"asr"`
		RandomWeights []string `json:"random_weights"`
	}
	if err := json.Unmarshal(raw, &h); err != nil || !h.ASR || strings.Join(h.RandomWeights, ",") != "asr,embedder,reranker" {
		t.Errorf("healthz: %s", raw)
	}
	_, sess := request(t, base, "POST", "/demo/session", "", `{"vertical": "clinical"}`)
	var s struct{ Token string }
	_ = json.Unmarshal(sess, &s)
	for _, c := range []struct{ path, body string }{
		{"/v1/embeddings", `{"model": "boxd-tiny-embed", "input": "the pump loses pressure"}`},
		{"/v1/rerank", `{"model": "boxd-tiny-rerank", "query": "pump", "documents": ["the pump loses pressure", "a cat"]}`},
	} {
		if status, body := request(t, base, "POST", c.path, s.Token, c.body); status != 200 {
			t.Errorf("%s: %d %s", c.path, status, body)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		t.Fatal(err)
	}
}
