package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	chatroutes "boxd/web/routes/chat"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/gpu"
	"boxd/internal/platform"
	"boxd/pipelines/chat"
	"boxd/web"
)

type chatEnv struct {
	*testServer
	engine *llm.Engine
	token  string
}

// chatServer runs the server with the tiny generated chat model.
func chatServer(t *testing.T, cfg *configs.Config, ctxLen, parallel, queue int, wrap ...func(net.Listener) net.Listener) *chatEnv {
	t.Helper()
	return chatServerTweaked(t, cfg, ctxLen, parallel, queue, nil, wrap...)
}

// chatServerTweaked is chatServer with tweak run before the mount (knobs
// such as ReplyTokens).
func chatServerTweaked(t *testing.T, cfg *configs.Config, ctxLen, parallel, queue int, tweak func(*Box), wrap ...func(net.Listener) net.Listener) *chatEnv {
	t.Helper()
	if cfg == nil {
		cfg = configs.Defaults()
	}
	arbiter := gpu.NewArbiter()
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: ctxLen, Parallel: parallel, Threads: 1}, MaxQueue: queue, Arbiter: arbiter})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	var env chatEnv
	env.engine = e
	env.testServer = launch(t, cfg, web.Probes{LLMReady: func() bool { return true }, Queue: arbiter.Queued}, nil, func(s *Box) {
		s.Chat = &chat.Service{Engine: e, ModelID: cfg.Models.LLM.ID, WeightsRoot: strings.Repeat("ab", 32), Upstream: e.Info().Name, Provider: s.deps.Key.ID(), Receipts: s.deps.Receipts, Meter: s.Server.LLMMeter()}
		if tweak != nil {
			tweak(s)
		}
	}, wrap...)
	env.token = session(t, env.testServer, "code")
	return &env
}

func chatBodyJSON(extra map[string]any) map[string]any {
	b := map[string]any{"model": "model-27b", "messages": []map[string]any{{"role": "user", "content": "Hello there"}}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func TestChatNonStreamingShape(t *testing.T) {
	env := chatServer(t, nil, 1024, 2, 0)
	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{"max_tokens": 7, "temperature": 0})})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var resp map[string]any
	_ = json.Unmarshal(r.body, &resp)
	id := resp["id"].(string)
	if !strings.HasPrefix(id, "chatcmpl-") || r.header.Get("x-service-receipt") != id || resp["object"] != "chat.completion" || resp["model"] != "model-27b" {
		t.Errorf("top level: %s", r.body)
	}
	if _, ok := resp["created"].(float64); !ok {
		t.Error("created is not a number")
	}
	choices := resp["choices"].([]any)
	c0 := choices[0].(map[string]any)
	msg := c0["message"].(map[string]any)
	if len(choices) != 1 || c0["index"] != 0.0 || c0["finish_reason"] != "length" || msg["role"] != "assistant" {
		t.Errorf("choice: %v", c0)
	}
	if _, ok := msg["content"].(string); !ok {
		t.Errorf("content: %v", msg["content"])
	}
	u := resp["usage"].(map[string]any)
	if u["completion_tokens"] != 7.0 || u["prompt_tokens"].(float64) < 3 || u["total_tokens"] != u["prompt_tokens"].(float64)+7 {
		t.Errorf("usage: %v", u)
	}
	rc := resp["receipt"].(map[string]any)
	if rc["id"] != id || rc["model"] != "model-27b" || len(rc["gateway_sig"].(string)) != 128 || rc["provider"] != env.deps.Key.ID() {
		t.Errorf("receipt: %v", rc)
	}
	// The receipt is served and verifies.
	rec := env.do(t, call{method: "GET", path: "/receipts/" + id}).json(t)
	if rec["status"] != "attested" || rec["gateway"].(map[string]any)["sig"] != rc["gateway_sig"] || rec["usage"].(map[string]any)["completion_tokens"] != 7.0 || rec["key_id"] != nil {
		t.Errorf("receipt record: %v", rec)
	}
	if rec["output_hash"] != attest.HashText(msg["content"].(string)) {
		t.Error("the receipt's output hash is not the answer's")
	}
	// Paid by a developer key, the receipt names the key (platform section 2).
	key, keyID := createKeyForChat(t, env)
	kr := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: key, body: chatBodyJSON(map[string]any{"max_tokens": 2})})
	if kr.status != 200 {
		t.Fatalf("with a key: %d %s", kr.status, kr.body)
	}
	krec := env.do(t, call{method: "GET", path: "/receipts/" + kr.json(t)["id"].(string)}).json(t)
	if krec["key_id"] != keyID || krec["status"] != "attested" {
		t.Errorf("receipt paid by key %s: key_id %v, status %v", keyID, krec["key_id"], krec["status"])
	}
}

// readSSE reads data lines until [DONE].
func readSSE(t *testing.T, body io.Reader) ([]map[string]any, bool) {
	t.Helper()
	var chunks []map[string]any
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line == ": keep-alive" { // blank lines and the heartbeat
			continue
		}
		if !strings.HasPrefix(line, "data: ") {
			t.Fatalf("not an SSE data line: %q", line)
		}
		data := strings.TrimPrefix(line, "data: ")
		if data == "[DONE]" {
			return chunks, true
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("chunk is not JSON: %q", data)
		}
		chunks = append(chunks, m)
	}
	return chunks, false
}

func TestChatStreamingShape(t *testing.T) {
	env := chatServer(t, nil, 1024, 2, 0)
	body, _ := json.Marshal(chatBodyJSON(map[string]any{"max_tokens": 6, "stream": true, "temperature": 0}))
	req, _ := http.NewRequest("POST", env.url+"/v1/chat/completions", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+env.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(resp.Header.Get("x-service-receipt"), "chatcmpl-") {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	chunks, done := readSSE(t, resp.Body)
	if !done || len(chunks) < 3 {
		t.Fatalf("stream ended without [DONE] or too short: %d chunks", len(chunks))
	}
	id := resp.Header.Get("x-service-receipt")
	var text strings.Builder
	for i, c := range chunks {
		if c["id"] != id || c["object"] != "chat.completion.chunk" || c["model"] != "model-27b" {
			t.Errorf("chunk %d: %v", i, c)
		}
		ch := c["choices"].([]any)[0].(map[string]any)
		delta := ch["delta"].(map[string]any)
		switch {
		case i == 0:
			if delta["role"] != "assistant" || ch["finish_reason"] != nil {
				t.Errorf("first chunk: %v", c)
			}
		case i == len(chunks)-1:
			if ch["finish_reason"] != "length" || c["usage"].(map[string]any)["completion_tokens"] != 6.0 {
				t.Errorf("last chunk: %v", c)
			}
			rc := c["receipt"].(map[string]any)
			if rc["id"] != id || rc["gateway_sig"] == "" || rc["provider"] == "" || rc["model"] != "model-27b" {
				t.Errorf("last chunk receipt: %v", rc)
			}
		default:
			if _, ok := delta["content"].(string); !ok || ch["finish_reason"] != nil {
				t.Errorf("content chunk %d: %v", i, c)
			}
			text.WriteString(delta["content"].(string))
		}
	}
	// Streamed text equals the non-streamed answer for the same greedy call.
	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{"max_tokens": 6, "temperature": 0})})
	if got := r.json(t)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; got != text.String() {
		t.Errorf("streamed %q, whole %q", text.String(), got)
	}
}

func TestChatCapsAndBudget(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.TokenBudget = 30
	env := chatServer(t, cfg, 1024, 2, 0)
	// max_tokens above 2048 is capped, not refused.
	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{"max_tokens": 5000, "temperature": 0})})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	// The budget caps it: 30 tokens, finish length.
	u := r.json(t)["usage"].(map[string]any)
	if u["completion_tokens"] != 30.0 || r.json(t)["choices"].([]any)[0].(map[string]any)["finish_reason"] != "length" {
		t.Errorf("budget cap: %s", r.body)
	}
	r = env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(nil)})
	if r.status != 402 || r.errMsg(t) != "token budget used up" {
		t.Errorf("after the budget: %d %s", r.status, r.body)
	}
}

func TestChatErrors(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	env := chatServer(t, cfg, 256, 1, 0)
	clinical := session(t, env.testServer, "clinical")
	long := strings.Repeat("x", 48_001)
	cases := []struct {
		name   string
		token  string
		body   any
		status int
		want   string
	}{
		{"no token", "", chatBodyJSON(nil), 401, "missing token"},
		{"other vertical", clinical, chatBodyJSON(nil), 403, "this route needs a code token"},
		{"empty model", env.token, chatBodyJSON(map[string]any{"model": ""}), 404, "model is required"},
		{"model not a string", env.token, chatBodyJSON(map[string]any{"model": 27}), 400, "model must be a string"},
		{"wrong model", env.token, chatBodyJSON(map[string]any{"model": "gpt-4o"}), 404, `model "gpt-4o" is not served on this box; use "model-27b"`},
		{"missing model", env.token, map[string]any{"messages": []any{map[string]any{"role": "user", "content": "x"}}}, 404, `model is required: use "model-27b"`},
		{"prompt over 48,000 characters", env.token, chatBodyJSON(map[string]any{"messages": []any{map[string]any{"role": "user", "content": long}}}), 413, "48001 characters; the limit is 48000"},
		{"prompt over the context", env.token, chatBodyJSON(map[string]any{"messages": []any{map[string]any{"role": "user", "content": strings.Repeat("word ", 300)}}}), 413, "context holds 256 tokens"},
		{"no messages", env.token, chatBodyJSON(map[string]any{"messages": []any{}}), 400, "messages is empty"},
		{"bad role", env.token, chatBodyJSON(map[string]any{"messages": []any{map[string]any{"role": "wizard", "content": "x"}}}), 400, `role "wizard"`},
		{"image part, text-only model", env.token, chatBodyJSON(map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "image_url", "image_url": map[string]any{"url": "x"}}}}}}), 400, "does not read images"},
		{"content number", env.token, chatBodyJSON(map[string]any{"messages": []any{map[string]any{"role": "user", "content": 5}}}), 400, "content must be a string"},
		{"temperature", env.token, chatBodyJSON(map[string]any{"temperature": 3}), 400, "temperature is 3; use 0 to 2"},
		{"temperature type", env.token, chatBodyJSON(map[string]any{"temperature": "hot"}), 400, "field temperature must be a number"},
		{"max_tokens zero", env.token, chatBodyJSON(map[string]any{"max_tokens": 0}), 400, "max_tokens is 0"},
		{"n", env.token, chatBodyJSON(map[string]any{"n": 2}), 400, "one choice"},
		{"stop type", env.token, chatBodyJSON(map[string]any{"stop": 5}), 400, "stop must be a string or an array"},
		{"response_format", env.token, chatBodyJSON(map[string]any{"response_format": map[string]any{"type": "xml"}}), 400, `response_format.type "xml"`},
		{"schema missing", env.token, chatBodyJSON(map[string]any{"response_format": map[string]any{"type": "json_schema"}}), 400, "json_schema.schema is required"},
		{"tool without name", env.token, chatBodyJSON(map[string]any{"tools": []any{map[string]any{"type": "function", "function": map[string]any{}}}}), 400, "function.name"},
		{"tool_choice unknown", env.token, chatBodyJSON(map[string]any{"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "a"}}}, "tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "b"}}}), 400, `names "b"`},
		{"tool message without id", env.token, chatBodyJSON(map[string]any{"messages": []any{map[string]any{"role": "tool", "content": "21"}}}), 400, "tool_call_id"},
		{"not JSON", env.token, "{", 400, "JSON"},
		{"too large", env.token, `{"model":"model-27b","messages":[{"role":"user","content":"` + strings.Repeat("a", chatroutes.BodyLimit) + `"}]}`, 413, "larger than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: tc.token, body: tc.body})
			if r.status != tc.status || !strings.Contains(r.errMsg(t), tc.want) {
				t.Errorf("%d %s, want %d with %q", r.status, r.body, tc.status, tc.want)
			}
		})
	}
	// Unknown fields OpenAI clients send are ignored.
	if r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{"user": "u1", "store": false, "metadata": map[string]any{"a": "b"}, "max_tokens": 2})}); r.status != 200 {
		t.Errorf("extra OpenAI fields: %d %s", r.status, r.body)
	}
}

func TestChatWithoutModelIs502(t *testing.T) {
	ts := platformServer(t, nil, nil)
	tok := session(t, ts, "code")
	r := ts.do(t, call{method: "POST", path: "/v1/chat/completions", token: tok, body: chatBodyJSON(nil)})
	if r.status != 502 || !strings.Contains(r.errMsg(t), "no chat model is loaded") {
		t.Errorf("%d %s", r.status, r.body)
	}
	m := ts.do(t, call{method: "GET", path: "/v1/models", token: tok}).json(t)
	if m["object"] != "list" || len(m["data"].([]any)) != 0 {
		t.Errorf("models without a model: %v", m)
	}
}

func TestChatBusy(t *testing.T) {
	env := chatServer(t, nil, 4096, 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	key, _ := createKeyForChat(t, env)
	// Occupy the one sequence and the one queue place with streams.
	for range 2 {
		body, _ := json.Marshal(chatBodyJSON(map[string]any{"max_tokens": 2048, "stream": true, "temperature": 0}))
		req, _ := http.NewRequestWithContext(ctx, "POST", env.url+"/v1/chat/completions", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+key)
		go func() {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for env.engine.Stats().Active != 1 || env.engine.Stats().Waiting != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v", env.engine.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if h := env.Server.Health(); h.Queue != 1 || !h.LLM {
		t.Errorf("healthz while one request waits: queue %d llm %v", h.Queue, h.LLM)
	}
	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: key, body: chatBodyJSON(map[string]any{"max_tokens": 1})})
	if r.status != 503 || r.header.Get("Retry-After") == "" || !strings.Contains(r.errMsg(t), "busy") {
		t.Errorf("busy: %d %s", r.status, r.body)
	}
	cancel()
}

func createKeyForChat(t *testing.T, env *chatEnv) (string, string) {
	t.Helper()
	secret, k, d := env.deps.Platform.CreateKey(context.Background(), platformSpec())
	if d != nil {
		t.Fatal(d)
	}
	return secret, k.ID
}

func TestChatDisconnectFreesSequence(t *testing.T) {
	env := chatServer(t, nil, 4096, 1, 0)
	ctx, cancel := context.WithCancel(context.Background())
	// Greedy on this prompt runs to max_tokens (deterministic), so the
	// stream is still going when the client leaves.
	body, _ := json.Marshal(chatBodyJSON(map[string]any{"max_tokens": 2048, "stream": true, "temperature": 0}))
	req, _ := http.NewRequestWithContext(ctx, "POST", env.url+"/v1/chat/completions", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+env.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for range 3 { // a few events arrive
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	if env.engine.Stats().Active != 1 {
		t.Fatal("no active sequence while streaming")
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for env.engine.Stats().Active != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the client left but its sequence still runs")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if env.engine.Stats().Cancelled != 1 {
		t.Errorf("cancelled = %d", env.engine.Stats().Cancelled)
	}
	// The budget was charged for what was generated, and the sequence
	// serves the next request.
	if r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{"max_tokens": 2})}); r.status != 200 {
		t.Errorf("next request: %d %s", r.status, r.body)
	}
}

func TestChatJSONSchema(t *testing.T) {
	env := chatServer(t, nil, 2048, 4, 0)
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"condition": map[string]any{"type": "string", "enum": []string{"good", "fair", "poor"}},
		"issues":    map[string]any{"type": "array", "maxItems": 3, "items": map[string]any{"type": "string", "maxLength": 10}},
		"score":     map[string]any{"type": "integer", "minimum": 1, "maximum": 5},
	}, "required": []string{"condition", "issues", "score"}, "additionalProperties": false}
	c := jsonschema.NewCompiler()
	raw, _ := json.Marshal(schema)
	var doc any
	_ = json.Unmarshal(raw, &doc)
	_ = c.AddResource("s.json", doc)
	sch, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{
				"max_tokens": 300, "seed": i, "temperature": 1,
				"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "report", "schema": schema}}})})
			if r.status != 200 {
				t.Errorf("%d %s", r.status, r.body)
				return
			}
			ch := r.json(t)["choices"].([]any)[0].(map[string]any)
			content := ch["message"].(map[string]any)["content"].(string)
			var v any
			if err := json.Unmarshal([]byte(content), &v); err != nil {
				t.Errorf("seed %d: not JSON: %q", i, content)
				return
			}
			if err := sch.Validate(v); err != nil {
				t.Errorf("seed %d: %q: %v", i, content, err)
			}
			if ch["finish_reason"] != "stop" {
				t.Errorf("seed %d: finish %v", i, ch["finish_reason"])
			}
		}()
	}
	wg.Wait()
	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{"max_tokens": 100, "response_format": map[string]any{"type": "json_object"}, "seed": 1})})
	if c := r.json(t)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string); !strings.HasPrefix(c, "{") {
		t.Errorf("json_object: %q", c)
	}
}

func TestChatToolCallRoundTrip(t *testing.T) {
	env := chatServer(t, nil, 2048, 2, 0)
	tools := []any{map[string]any{"type": "function", "function": map[string]any{
		"name": "get_weather", "description": "Current weather in a city.",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{
			"city": map[string]any{"type": "string", "enum": []string{"Boston", "Madrid"}},
			"unit": map[string]any{"type": "string", "enum": []string{"celsius", "fahrenheit"}},
		}, "required": []string{"city", "unit"}, "additionalProperties": false},
	}}}
	messages := []any{map[string]any{"role": "user", "content": "Weather in Boston?"}}
	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{
		"messages": messages, "tools": tools, "tool_choice": "required", "max_tokens": 200, "seed": 4})})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	ch := r.json(t)["choices"].([]any)[0].(map[string]any)
	msg := ch["message"].(map[string]any)
	if ch["finish_reason"] != "tool_calls" || msg["content"] != nil {
		t.Fatalf("expected a tool call: %s", r.body)
	}
	calls := msg["tool_calls"].([]any)
	first := calls[0].(map[string]any)
	fn := first["function"].(map[string]any)
	var args map[string]string
	if err := json.Unmarshal([]byte(fn["arguments"].(string)), &args); err != nil || fn["name"] != "get_weather" || first["type"] != "function" ||
		!strings.HasPrefix(first["id"].(string), "call_") || (args["city"] != "Boston" && args["city"] != "Madrid") {
		t.Fatalf("tool call: %v", first)
	}
	if _, hasIndex := first["index"]; hasIndex {
		t.Error("non-streamed tool calls carry no index")
	}
	// Send the result back as a tool message; the model answers.
	messages = append(messages, map[string]any{"role": "assistant", "content": nil, "tool_calls": calls},
		map[string]any{"role": "tool", "tool_call_id": first["id"], "content": `{"temperature": 21}`})
	r = env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{
		"messages": messages, "tools": tools, "tool_choice": "none", "max_tokens": 10})})
	if r.status != 200 {
		t.Fatalf("tool result turn: %d %s", r.status, r.body)
	}
	ch = r.json(t)["choices"].([]any)[0].(map[string]any)
	if _, ok := ch["message"].(map[string]any)["content"].(string); !ok || ch["finish_reason"] == "tool_calls" {
		t.Errorf("answer after the tool result: %v", ch)
	}
	// Streamed tool call: one delta with the whole call, then finish.
	body, _ := json.Marshal(chatBodyJSON(map[string]any{"messages": messages[:1], "tools": tools, "tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}, "parallel_tool_calls": false, "max_tokens": 200, "stream": true, "seed": 5}))
	req, _ := http.NewRequest("POST", env.url+"/v1/chat/completions", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+env.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	chunks, done := readSSE(t, resp.Body)
	if !done {
		t.Fatal("no [DONE]")
	}
	var sawCall bool
	for _, c := range chunks {
		delta := c["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
		if tc, ok := delta["tool_calls"].([]any); ok {
			sawCall = tc[0].(map[string]any)["index"] == 0.0 && tc[0].(map[string]any)["function"].(map[string]any)["name"] == "get_weather"
		}
		if _, ok := delta["content"]; ok {
			t.Errorf("a tool call streamed content: %v", delta)
		}
	}
	last := chunks[len(chunks)-1]["choices"].([]any)[0].(map[string]any)
	if !sawCall || last["finish_reason"] != "tool_calls" {
		t.Errorf("streamed tool call: %v", chunks)
	}
}

func TestChatConcurrentIsolation(t *testing.T) {
	env := chatServer(t, nil, 1024, 4, 64)
	key, _ := createKeyForChat(t, env)
	ask := func(i int) string {
		r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: key, body: chatBodyJSON(map[string]any{
			"messages":   []any{map[string]any{"role": "user", "content": fmt.Sprintf("Question %d about the roof", i)}},
			"max_tokens": 16, "seed": 1000 + i, "temperature": 0.9})})
		if r.status != 200 {
			t.Errorf("%d %s", r.status, r.body)
			return ""
		}
		return r.json(t)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
	}
	alone := make([]string, 16)
	for i := range alone {
		alone[i] = ask(i)
	}
	together := make([]string, 16)
	var wg sync.WaitGroup
	for i := range together {
		wg.Add(1)
		go func() { defer wg.Done(); together[i] = ask(i) }()
	}
	wg.Wait()
	for i := range alone {
		if alone[i] != together[i] {
			t.Errorf("request %d: alone %q, together %q", i, alone[i], together[i])
		}
	}
}

func TestModelsList(t *testing.T) {
	env := chatServer(t, nil, 512, 1, 0)
	r := env.do(t, call{method: "GET", path: "/v1/models", token: env.token})
	m := r.json(t)
	data := m["data"].([]any)
	item := data[0].(map[string]any)
	if r.status != 200 || m["object"] != "list" || len(data) != 1 || item["id"] != "model-27b" || item["object"] != "model" || item["owned_by"] != "boxd" {
		t.Errorf("%d %s", r.status, r.body)
	}
	if r := env.do(t, call{method: "GET", path: "/v1/models"}); r.status != 401 {
		t.Errorf("without a token: %d", r.status)
	}
}

func platformSpec() platform.KeySpec { return platform.KeySpec{} }

// TestChatCutToolCall: a forced tool call cut by max_tokens answers the
// calls that can be read, with finish_reason length and content null; the
// grammar's {"tool_calls": [ wrapper never comes back as content, streamed
// or not.
func TestChatCutToolCall(t *testing.T) {
	env := chatServer(t, nil, 2048, 2, 0)
	tools := []any{map[string]any{"type": "function", "function": map[string]any{
		"name": "get_weather", "parameters": map[string]any{"type": "object", "properties": map[string]any{
			"city": map[string]any{"type": "string"}}, "required": []string{"city"}}}}}
	named := 0
	for _, maxTokens := range []int{2, 10, 30, 45, 60} {
		for _, choice := range []any{"required", map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}} {
			body := chatBodyJSON(map[string]any{"tools": tools, "tool_choice": choice, "max_tokens": maxTokens, "seed": 7})
			r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: body})
			if r.status != 200 {
				t.Fatalf("max_tokens %d: %d %s", maxTokens, r.status, r.body)
			}
			ch := r.json(t)["choices"].([]any)[0].(map[string]any)
			msg := ch["message"].(map[string]any)
			content, hasContent := msg["content"]
			if !hasContent || content != nil || strings.Contains(string(r.body), `{\"tool_calls\"`) {
				t.Errorf("max_tokens %d: the cut call came back as content: %s", maxTokens, r.body)
			}
			if ch["finish_reason"] != "length" && ch["finish_reason"] != "tool_calls" {
				t.Errorf("max_tokens %d: finish %v", maxTokens, ch["finish_reason"])
			}
			calls, _ := msg["tool_calls"].([]any)
			for _, c := range calls {
				if fn := c.(map[string]any)["function"].(map[string]any); fn["name"] != "get_weather" {
					t.Errorf("max_tokens %d: call %v", maxTokens, c)
				}
			}
			if ch["finish_reason"] == "length" && len(calls) > 0 {
				named++
			}
			// Streamed: no content chunk, the same calls at the end.
			body["stream"] = true
			raw, _ := json.Marshal(body)
			req, _ := http.NewRequest("POST", env.url+"/v1/chat/completions", strings.NewReader(string(raw)))
			req.Header.Set("Authorization", "Bearer "+env.token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			chunks, done := readSSE(t, resp.Body)
			resp.Body.Close()
			if !done {
				t.Fatalf("max_tokens %d: stream without [DONE]", maxTokens)
			}
			for _, c := range chunks {
				if delta, _ := c["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any); delta["content"] != nil {
					t.Errorf("max_tokens %d: streamed content %v", maxTokens, delta)
				}
			}
		}
	}
	if named == 0 {
		t.Error("no max_tokens cut a call after its name: the test no longer covers a partial call")
	}
}

// TestMetricsCountModelTokens: /metrics counts the chat model's prompt and
// generated tokens, its calls by finish reason, the time to the first
// token, and a decode speed, as llama-server's /metrics does.
func TestMetricsCountModelTokens(t *testing.T) {
	env := chatServer(t, nil, 2048, 2, 0)
	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{"max_tokens": 8, "temperature": 0})})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	prompt := int(r.json(t)["usage"].(map[string]any)["prompt_tokens"].(float64))
	_, body := get(t, env.url+"/metrics")
	text := string(body)
	for _, want := range []string{
		fmt.Sprintf("boxd_llm_prompt_tokens_total %d\n", prompt),
		"boxd_llm_generated_tokens_total 8\n",
		`boxd_llm_calls_total{finish="length"} 1` + "\n",
		"boxd_llm_time_to_first_token_seconds_count 1\n",
		"boxd_llm_calls_running 0\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", strings.TrimSpace(want))
		}
	}
	var tps, gen float64
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "boxd_llm_tokens_per_second "); ok {
			tps, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := strings.CutPrefix(line, "boxd_llm_generation_seconds_total "); ok {
			gen, _ = strconv.ParseFloat(v, 64)
		}
	}
	if tps <= 0 || gen <= 0 {
		t.Errorf("tokens per second %v, generation seconds %v: want both above 0", tps, gen)
	}
}
