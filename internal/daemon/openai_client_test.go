package daemon

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"boxd/internal/platform"
)

// refusal is what the node client saw of an APIError.
type refusal struct {
	Status              int
	Message, Type, Code string
	RetryAfter          *string
}

// TestOpenAINodeClient drives the server with the official openai npm client
// (installed into internal/daemon/testdata/openai by make deps).
func TestOpenAINodeClient(t *testing.T) {
	dir, _ := filepath.Abs("testdata/openai")
	node, err := exec.LookPath("node")
	if _, statErr := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil || statErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or the openai package is missing (make deps installs it): %v %v", err, statErr)
		}
		t.Skip("node or the openai npm package is missing; run make deps")
	}
	env := chatServer(t, nil, 2048, 2, 0)
	cmd := exec.Command(node, "client.mjs")
	cmd.Dir = dir
	rpm := int64(1)
	limited, _, d := env.deps.Platform.CreateKey(context.Background(), platform.KeySpec{RequestsPerMinute: &rpm})
	if d != nil {
		t.Fatal(d)
	}
	if r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: limited, body: chatBodyJSON(map[string]any{"max_tokens": 2})}); r.status != 200 {
		t.Fatalf("the limited key's one request: %d %s", r.status, r.body)
	}
	cmd.Env = append(os.Environ(), "BOXD_URL="+env.url, "BOXD_TOKEN="+env.token, "BOXD_MODEL=model-27b", "BOXD_LIMITED_KEY="+limited)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	var got struct {
		Plain struct {
			ID, Object, Finish, Content string
			Usage                       map[string]int
		}
		Stream struct {
			Text    string
			Chunks  int
			Finish  string
			Usage   map[string]int
			Receipt map[string]string
		}
		Schema struct {
			Content, Finish string
		}
		WrongModel, WrongKey, Rate refusal
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("client output: %v\n%s", err, out)
	}
	if !strings.HasPrefix(got.Plain.ID, "chatcmpl-") || got.Plain.Object != "chat.completion" || got.Plain.Finish != "length" || got.Plain.Usage["completion_tokens"] != 8 {
		t.Errorf("plain: %+v", got.Plain)
	}
	if got.Stream.Chunks < 3 || got.Stream.Finish != "length" || got.Stream.Usage["completion_tokens"] != 6 || got.Stream.Receipt["gateway_sig"] == "" {
		t.Errorf("stream: %+v", got.Stream)
	}
	var v struct {
		Answer     string `json:"answer"`
		Confidence *int   `json:"confidence"`
	}
	if err := json.Unmarshal([]byte(got.Schema.Content), &v); err != nil || (v.Answer != "yes" && v.Answer != "no") || v.Confidence == nil || *v.Confidence > 9 || got.Schema.Finish != "stop" {
		t.Errorf("schema: %+v (%v)", got.Schema, err)
	}
	for _, tc := range []struct {
		name       string
		got        refusal
		status     int
		typ        string
		message    string
		retryAfter bool
	}{
		{"wrong model", got.WrongModel, 404, "invalid_request_error", "not served", false},
		{"wrong key", got.WrongKey, 401, "authentication_error", "", false},
		{"over the request rate", got.Rate, 429, "rate_limit_error", "limit 1", true},
	} {
		g := tc.got
		if g.Status != tc.status || g.Type != tc.typ || g.Code == "" || g.Message == "" || !strings.Contains(g.Message, tc.message) || (g.RetryAfter != nil) != tc.retryAfter {
			t.Errorf("%s: %+v", tc.name, g)
		}
	}
}
