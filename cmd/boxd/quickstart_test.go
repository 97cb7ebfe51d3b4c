package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
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
