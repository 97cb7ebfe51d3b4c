// Package audittest builds the endpoint audit's ladder for tests and
// benchmarks: the tiny chat model and its variants (Q8_0 and Q4_0
// quantisations of the same weights, other random weights of the same
// shape, another shape), and `ollama serve` (built from the pinned module
// by make tools) serving them on a private port through its
// OpenAI-compatible /v1.
package audittest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"boxd/engine/models/gguf"
	"boxd/engine/models/testmodels"
)

// Rungs of the ladder, by ollama model name, and the verdict each must get
// against the fixture of Base.
const (
	Base  = "base"  // the same GGUF: pass
	Q8    = "q8"    // Q8_0 of the same weights: drift
	Q4    = "q4"    // Q4_0 of the same weights: drift
	Other = "other" // other random weights, same shape: fail
	Shape = "shape" // another shape: fail
)

// Spec is the model file of a rung.
func Spec(rung string) testmodels.LLM {
	s := testmodels.TinyChat()
	switch rung {
	case Q8:
		s.Type = gguf.Q8_0
	case Q4:
		s.Type = gguf.Q4_0
	case Other:
		s.Seed = 4242
	case Shape:
		s.Seed, s.Embd, s.FF, s.Layers = 4343, 96, 192, 3
	}
	return s
}

// Rungs are every rung, in order.
var Rungs = []string{Base, Q8, Q4, Other, Shape}

// WriteLadder writes every rung's GGUF into dir and returns their paths by
// rung.
func WriteLadder(dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, r := range Rungs {
		p := filepath.Join(dir, "audit-"+r+".gguf")
		if err := testmodels.WriteLLM(p, Spec(r)); err != nil {
			return nil, fmt.Errorf("audittest: writing %s: %w", r, err)
		}
		out[r] = p
	}
	return out, nil
}

// chatMLTemplate is the tiny model's ChatML template in ollama's Go
// template language (the GGUF's Jinja one, which boxd renders).
const chatMLTemplate = `{{- range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}<|im_start|>assistant
`

// Ollama is a running `ollama serve`.
type Ollama struct {
	URL string // http://127.0.0.1:port
	bin string
	env []string
}

// V1 is the OpenAI-compatible base URL.
func (o *Ollama) V1() string { return o.URL + "/v1" }

// Binary is the ollama reference binary: OLLAMA_BIN, else
// $HOME/.cache/boxd/bin/ollama. Missing, the test skips, but fails under CI.
func Binary(tb testing.TB) string {
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

// StartOllama serves each model file as the ollama model of its name, with
// the ChatML template, greedy-friendly defaults and one sequence.
func StartOllama(tb testing.TB, files map[string]string) *Ollama {
	tb.Helper()
	bin := Binary(tb)
	dir := tb.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	o := &Ollama{URL: "http://" + addr, bin: bin}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OLLAMA_LIBRARY_PATH=") {
			env = append(env, kv)
		}
	}
	o.env = append(env, "HOME="+dir, "OLLAMA_HOST="+addr, "OLLAMA_MODELS="+filepath.Join(dir, "models"),
		"OLLAMA_NUM_PARALLEL=1", "OLLAMA_KEEP_ALIVE=1h", "OLLAMA_NOPRUNE=1", "OLLAMA_MAX_LOADED_MODELS=8")
	cmd := exec.Command(bin, "serve")
	cmd.Env = o.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if tb.Failed() {
			tb.Logf("ollama log:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get(o.URL + "/api/version"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("ollama did not start:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for name, file := range files {
		mf := filepath.Join(dir, name+".Modelfile")
		body := "FROM " + file + "\nTEMPLATE \"\"\"" + chatMLTemplate + "\"\"\"\nPARAMETER stop <|im_end|>\nPARAMETER repeat_penalty 1\nPARAMETER num_ctx 4096\nPARAMETER num_thread 1\n"
		if err := os.WriteFile(mf, []byte(body), 0o600); err != nil {
			tb.Fatal(err)
		}
		create := exec.Command(bin, "create", name, "-f", mf)
		create.Env = o.env
		if out, err := create.CombinedOutput(); err != nil {
			tb.Fatalf("ollama create %s: %v\n%s", name, err, out)
		}
	}
	return o
}
