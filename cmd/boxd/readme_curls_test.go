package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"boxd/engine/models/testmodels"
	"boxd/pipelines/docreader/samples"
)

// readmeCurls are README's curl commands against the box (every line in a
// sh block that starts with curl or TOKEN=$(curl, with its continuation
// lines), in order.
func readmeCurls(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	lines := strings.Split(string(raw), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
			continue
		case strings.HasPrefix(l, "```"):
			in = false
			continue
		}
		if !in || !(strings.HasPrefix(l, "curl ") || strings.HasPrefix(l, "TOKEN=$(curl ")) || !strings.Contains(l, "localhost:8445") {
			continue
		}
		cmd := l
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(lines[i])
		}
		out = append(out, cmd)
	}
	return out
}

// TestReadmeCurlsAgainstQuickStart runs every curl command in README, as
// printed, against a box started as make run starts it (the same models:
// stories260K in the quick start's template, the random-weight speech,
// embedder and reranker), and each must answer 200 with JSON. What the
// test supplies is what README tells the reader to supply: $TOKEN (the
// quick start's own line makes a code session; the family sections say
// which vertical they need, so the rest run with a developer key allowed
// every vertical), $BOXD_ADMIN_SECRET, a letter.pdf, and the index hash
// the index command returned for "<hash>". Streams must be JSON events
// ending in [DONE]. The site check fetches a real domain, and tests reach
// no network: there it may answer 400 saying the name did not resolve
// (DNS), which is the box's answer to that domain offline.
func TestReadmeCurlsAgainstQuickStart(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	curls := readmeCurls(t)
	if len(curls) < 10 {
		t.Fatalf("README has %d curl commands against the box; the test reads them wrong", len(curls))
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := regexp.MustCompile(`(?m)^RUN_LLM_TEMPLATE := (\S+)$`).FindSubmatch(mk)
	if tmpl == nil {
		t.Fatal("no RUN_LLM_TEMPLATE in the Makefile")
	}
	models := t.TempDir()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"models", "make-test-models", "--whisper-vocab", testmodels.Shared(t, "whisper-vocab-tiny.bin"), models}, &out, &errb); code != 0 {
		t.Fatalf("make-test-models: %d %s", code, errb.String())
	}
	const secret = "readme-curls-admin-secret-0"
	ns := newNotifySocket(t)
	cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path, "BOXD_ADMIN_SECRET=" + secret}, serveArgs(t,
		"--models-llm-path", testmodels.Shared(t, "stories260K.gguf"), "--models-llm-template", string(tmpl[1]),
		"--models-asr-path", filepath.Join(models, testmodels.WhisperMicroGGUF), "--models-vad-path", testmodels.Shared(t, "ggml-silero-v6.2.0.bin"),
		"--models-embedder-path", filepath.Join(models, testmodels.EmbedFile), "--models-reranker-path", filepath.Join(models, testmodels.RerankFile))...)
	exited := ns.watch(t, cmd)
	ready := ns.waitFor(t, "READY=1", 90*time.Second)
	addr := strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):])
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			t.Error(err)
		}
	}()
	status, raw := request(t, "http://"+addr, "POST", "/v1/keys", secret, `{"label": "readme test", "verticals": "all"}`)
	var key struct{ Key string }
	if json.Unmarshal(raw, &key) != nil || key.Key == "" {
		t.Fatalf("a key for every vertical: %d %s", status, raw)
	}
	dir := t.TempDir()
	pdf, err := samples.Get("born-digital")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "letter.pdf"), pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	indexHash := ""
	for _, c := range curls {
		shown := c
		c = strings.ReplaceAll(c, "localhost:8445", addr)
		if strings.Contains(c, "<hash>") {
			if indexHash == "" {
				t.Errorf("%s: no index hash yet (README shows the index command first)", shown)
				continue
			}
			c = strings.ReplaceAll(c, "<hash>", indexHash)
		}
		token := key.Key
		if strings.HasPrefix(c, "TOKEN=") {
			// The quick start's own line: it must leave a token in TOKEN.
			c += `; printf '%s' "$TOKEN"`
		} else {
			c += ` -w '\n%{http_code}'`
		}
		sh := exec.Command("bash", "-c", c)
		sh.Dir = dir
		sh.Env = append(os.Environ(), "TOKEN="+token, "BOXD_ADMIN_SECRET="+secret)
		got, err := sh.Output()
		if err != nil {
			t.Errorf("%s: %v\n%s", shown, err, got)
			continue
		}
		if strings.HasPrefix(c, "TOKEN=") {
			if len(got) < 16 || strings.ContainsAny(string(got), " \n{\"") {
				t.Errorf("%s: TOKEN is %q", shown, got)
			}
			continue
		}
		body, code, _ := strings.Cut(string(bytes.TrimSpace(got)), "\n")
		if i := strings.LastIndexByte(string(got), '\n'); i >= 0 {
			body, code = string(got[:i]), strings.TrimSpace(string(got[i+1:]))
		}
		var v any
		if strings.HasPrefix(body, "data: ") {
			// A stream: every event is JSON, the last is [DONE].
			for _, ev := range strings.Split(strings.TrimSpace(body), "\n\n") {
				d := strings.TrimPrefix(ev, "data: ")
				if d != "[DONE]" && json.Unmarshal([]byte(d), &v) != nil {
					t.Errorf("%s: an event is not JSON: %.300s", shown, ev)
				}
			}
			if !strings.HasSuffix(strings.TrimSpace(body), "data: [DONE]") {
				t.Errorf("%s: the stream does not end with [DONE]: %.300s", shown, body)
			}
		} else if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Errorf("%s: not JSON (%v): %.300s", shown, err, body)
			continue
		}
		n, _ := strconv.Atoi(code)
		if strings.Contains(c, "/geo/site-check") && n == 400 && strings.Contains(body, "DNS") {
			continue // no network in tests: the domain does not resolve, and the box says so
		}
		if strings.Contains(c, "/audit/runs") && n == 400 && strings.Contains(body, "does not resolve") {
			continue // the same for the endpoint an audit names
		}
		if n != 200 && n != 201 {
			t.Errorf("%s: %s %.400s", shown, code, body)
			continue
		}
		if m, ok := v.(map[string]any); ok && strings.Contains(c, "/retrieval/index") {
			ix, _ := m["index"].(map[string]any)
			indexHash, _ = ix["hash"].(string)
		}
	}
}
