package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	chatroutes "boxd/web/routes/chat"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/pipelines/chat"
)

func responsesBody(extra map[string]any) map[string]any {
	b := map[string]any{"model": "model-27b", "input": "Hello there"}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// namedEvent is one server-sent event: its name and its data as JSON.
type namedEvent struct {
	name string
	data map[string]any
}

// readNamedEvents reads named events until the stream ends.
func readNamedEvents(t *testing.T, body io.Reader) []namedEvent {
	t.Helper()
	var out []namedEvent
	var name string
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" || line == ": keep-alive":
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("event data is not JSON: %q", line)
			}
			if name == "" {
				t.Fatalf("data without an event name: %q", line)
			}
			out = append(out, namedEvent{name: name, data: m})
			name = ""
		default:
			t.Fatalf("not an SSE line: %q", line)
		}
	}
	return out
}

// post sends body to path with token and returns the open response.
func post(t *testing.T, env *chatEnv, path string, body any) *http.Response {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", env.url+path, strings.NewReader(string(raw)))
	req.Header.Set("Authorization", "Bearer "+env.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// outputText joins a response's output_text parts.
func outputText(t *testing.T, resp map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, it := range resp["output"].([]any) {
		item := it.(map[string]any)
		if item["type"] != "message" {
			continue
		}
		for _, p := range item["content"].([]any) {
			b.WriteString(p.(map[string]any)["text"].(string))
		}
	}
	return b.String()
}

// checkReceipt: the receipt the answer names is served, attested, and
// hashes text as the answer's output.
func checkReceipt(t *testing.T, env *chatEnv, id string, rc map[string]any, text string, completionTokens float64) {
	t.Helper()
	if rc["id"] != id || rc["model"] != "model-27b" || len(rc["gateway_sig"].(string)) != 128 || rc["provider"] != env.deps.Key.ID() {
		t.Errorf("receipt: %v", rc)
	}
	rec := env.do(t, call{method: "GET", path: "/receipts/" + id}).json(t)
	if rec["status"] != "attested" || rec["gateway"].(map[string]any)["sig"] != rc["gateway_sig"] || rec["usage"].(map[string]any)["completion_tokens"] != completionTokens {
		t.Errorf("receipt record: %v", rec)
	}
	if rec["output_hash"] != attest.HashText(text) {
		t.Errorf("the receipt's output hash is not the answer's (%q)", text)
	}
}

// TestResponsesText: POST /v1/responses answers a response object with
// one output message, usage and the call's signed receipt; cut by
// max_output_tokens it is incomplete.
func TestResponsesText(t *testing.T) {
	env := chatServer(t, nil, 1024, 2, 0)
	r := env.do(t, call{method: "POST", path: "/v1/responses", token: env.token, body: responsesBody(map[string]any{
		"instructions": "Be brief.", "max_output_tokens": 7, "temperature": 0, "metadata": map[string]string{"ticket": "42"}})})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	resp := r.json(t)
	id, _ := resp["id"].(string)
	if !strings.HasPrefix(id, "resp_") || r.header.Get("x-service-receipt") != id || resp["object"] != "response" || resp["model"] != "model-27b" ||
		resp["status"] != "incomplete" || resp["incomplete_details"].(map[string]any)["reason"] != "max_output_tokens" || resp["store"] != false ||
		resp["instructions"] != "Be brief." || resp["max_output_tokens"] != 7.0 || resp["temperature"] != 0.0 || resp["metadata"].(map[string]any)["ticket"] != "42" {
		t.Errorf("response: %s", r.body)
	}
	out := resp["output"].([]any)
	item := out[0].(map[string]any)
	if len(out) != 1 || item["type"] != "message" || item["role"] != "assistant" || item["status"] != "incomplete" || !strings.HasPrefix(item["id"].(string), "msg_") {
		t.Errorf("output: %v", out)
	}
	u := resp["usage"].(map[string]any)
	if u["output_tokens"] != 7.0 || u["input_tokens"].(float64) < 3 || u["total_tokens"] != u["input_tokens"].(float64)+7 {
		t.Errorf("usage: %v", u)
	}
	checkReceipt(t, env, id, resp["receipt"].(map[string]any), outputText(t, resp), 7)

	// Run through chat: the same greedy call on chat completions writes
	// the same text.
	c := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{
		"messages":   []any{map[string]any{"role": "developer", "content": "Be brief."}, map[string]any{"role": "user", "content": "Hello there"}},
		"max_tokens": 7, "temperature": 0})})
	if got := c.json(t)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; got != outputText(t, resp) {
		t.Errorf("chat wrote %q, responses %q", got, outputText(t, resp))
	}

	// Input items: a system message and a user message with text parts.
	r = env.do(t, call{method: "POST", path: "/v1/responses", token: env.token, body: responsesBody(map[string]any{
		"input": []any{
			map[string]any{"role": "system", "content": "Be brief."},
			map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Hello there"}}},
		}, "max_output_tokens": 7, "temperature": 0})})
	if r.status != 200 || outputText(t, r.json(t)) != outputText(t, resp) {
		t.Errorf("input items: %d %s", r.status, r.body)
	}
}

// TestResponsesStreaming: stream: true sends the Responses API's named
// events in order, numbered from 0, the message's id the same in each;
// the deltas join to the done text, which is the non-streamed answer;
// response.completed carries usage and the receipt.
func TestResponsesStreaming(t *testing.T) {
	env := chatServer(t, nil, 1024, 2, 0)
	resp := post(t, env, "/v1/responses", responsesBody(map[string]any{"max_output_tokens": 6, "temperature": 0, "stream": true}))
	id := resp.Header.Get("x-service-receipt")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(id, "resp_") {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	evs := readNamedEvents(t, resp.Body)
	var names []string
	var deltas strings.Builder
	var msgID string
	for i, ev := range evs {
		names = append(names, strings.TrimPrefix(ev.name, "response."))
		if ev.data["type"] != ev.name || ev.data["sequence_number"] != float64(i) {
			t.Errorf("event %d %s: %v", i, ev.name, ev.data)
		}
		if r, ok := ev.data["response"].(map[string]any); ok && r["id"] != id {
			t.Errorf("event %d: response id %v", i, r["id"])
		}
		if item, ok := ev.data["item"].(map[string]any); ok && msgID == "" {
			msgID = item["id"].(string)
		}
		if iid, ok := ev.data["item_id"]; ok && iid != msgID {
			t.Errorf("event %d: item_id %v, the message is %s", i, iid, msgID)
		}
		if ev.name == "response.output_text.delta" {
			deltas.WriteString(ev.data["delta"].(string))
		}
	}
	// Six tokens make at least one delta; more deltas may follow.
	head := []string{"created", "in_progress", "output_item.added", "content_part.added", "output_text.delta"}
	tail := []string{"output_text.done", "content_part.done", "output_item.done", "incomplete"}
	ok := len(names) >= len(head)+len(tail) && slices.Equal(names[:len(head)], head) && slices.Equal(names[len(names)-len(tail):], tail)
	for i := len(head); ok && i < len(names)-len(tail); i++ {
		ok = names[i] == "output_text.delta"
	}
	if !ok {
		t.Fatalf("events: %v", names)
	}
	if evs[0].data["response"].(map[string]any)["status"] != "in_progress" {
		t.Errorf("created: %v", evs[0].data)
	}
	done := evs[len(evs)-4].data["text"].(string)
	last := evs[len(evs)-1].data["response"].(map[string]any)
	if done != deltas.String() || outputText(t, last) != done || last["status"] != "incomplete" || last["usage"].(map[string]any)["output_tokens"] != 6.0 {
		t.Errorf("deltas %q, done %q, last %v", deltas.String(), done, last)
	}
	checkReceipt(t, env, id, last["receipt"].(map[string]any), done, 6)
	r := env.do(t, call{method: "POST", path: "/v1/responses", token: env.token, body: responsesBody(map[string]any{"max_output_tokens": 6, "temperature": 0})})
	if whole := outputText(t, r.json(t)); whole != done {
		t.Errorf("streamed %q, whole %q", done, whole)
	}
}

var weatherTool = map[string]any{"type": "function", "name": "get_weather", "description": "Current weather in a city.",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{
		"city": map[string]any{"type": "string", "enum": []string{"Boston", "Madrid"}},
		"unit": map[string]any{"type": "string", "enum": []string{"celsius", "fahrenheit"}},
	}, "required": []string{"city", "unit"}, "additionalProperties": false}}

// TestResponsesTools: a forced call is a function_call output item
// (call_id, name, JSON arguments); sent back with its
// function_call_output, the model answers in text; streamed, the call
// arrives as output_item.added, the arguments' delta and done, and
// output_item.done.
func TestResponsesTools(t *testing.T) {
	env := chatServer(t, nil, 2048, 2, 0)
	user := map[string]any{"role": "user", "content": "Weather in Boston?"}
	r := env.do(t, call{method: "POST", path: "/v1/responses", token: env.token, body: responsesBody(map[string]any{
		"input": []any{user}, "tools": []any{weatherTool}, "tool_choice": "required", "parallel_tool_calls": false, "max_output_tokens": 200, "temperature": 0})})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	resp := r.json(t)
	out := resp["output"].([]any)
	fc := out[0].(map[string]any)
	var args map[string]string
	if err := json.Unmarshal([]byte(fc["arguments"].(string)), &args); err != nil || resp["status"] != "completed" || fc["type"] != "function_call" ||
		fc["name"] != "get_weather" || fc["status"] != "completed" || !strings.HasPrefix(fc["call_id"].(string), "call_") || !strings.HasPrefix(fc["id"].(string), "fc_") ||
		(args["city"] != "Boston" && args["city"] != "Madrid") {
		t.Fatalf("function call: %s", r.body)
	}
	if tools := resp["tools"].([]any); len(tools) != 1 || tools[0].(map[string]any)["name"] != "get_weather" || resp["tool_choice"] != "required" {
		t.Errorf("echo: tools %v, tool_choice %v", resp["tools"], resp["tool_choice"])
	}
	// The receipt hashes the call as chat's tool_calls array.
	rec := env.do(t, call{method: "GET", path: "/receipts/" + resp["id"].(string)}).json(t)
	var calls bytes.Buffer
	enc := json.NewEncoder(&calls)
	enc.SetEscapeHTML(false)
	_ = enc.Encode([]chat.ToolCall{{ID: fc["call_id"].(string), Type: "function", Function: chat.FunctionCall{Name: "get_weather", Arguments: fc["arguments"].(string)}}})
	if rec["output_hash"] != attest.HashText(strings.TrimSpace(calls.String())) || rec["status"] != "attested" {
		t.Errorf("tool call receipt: %v", rec)
	}

	// The call and its output go back as input items.
	r = env.do(t, call{method: "POST", path: "/v1/responses", token: env.token, body: responsesBody(map[string]any{
		"input": []any{user, fc, map[string]any{"type": "function_call_output", "call_id": fc["call_id"], "output": `{"temperature": 21}`}},
		"tools": []any{weatherTool}, "tool_choice": "none", "max_output_tokens": 10})})
	if r.status != 200 {
		t.Fatalf("tool result turn: %d %s", r.status, r.body)
	}
	if item := r.json(t)["output"].([]any)[0].(map[string]any); item["type"] != "message" {
		t.Errorf("answer after the tool result: %s", r.body)
	}

	// Streamed, with a named function.
	sr := post(t, env, "/v1/responses", responsesBody(map[string]any{"input": []any{user}, "tools": []any{weatherTool},
		"tool_choice": map[string]any{"type": "function", "name": "get_weather"}, "parallel_tool_calls": false,
		"max_output_tokens": 200, "temperature": 0, "stream": true}))
	evs := readNamedEvents(t, sr.Body)
	var names []string
	for _, ev := range evs {
		names = append(names, strings.TrimPrefix(ev.name, "response."))
	}
	if got := strings.Join(names, " "); got != "created in_progress output_item.added function_call_arguments.delta function_call_arguments.done output_item.done completed" {
		t.Fatalf("streamed call: %s", got)
	}
	added, doneArgs := evs[2].data["item"].(map[string]any), evs[4].data
	final := evs[6].data["response"].(map[string]any)["output"].([]any)[0].(map[string]any)
	if added["type"] != "function_call" || added["arguments"] != "" || added["status"] != "in_progress" || added["call_id"] != final["call_id"] ||
		evs[3].data["delta"] != final["arguments"] || doneArgs["arguments"] != final["arguments"] || doneArgs["item_id"] != final["id"] || final["name"] != "get_weather" {
		t.Errorf("streamed call: added %v, done %v, final %v", added, doneArgs, final)
	}
}

// TestResponsesJSONSchema: text.format json_schema holds the answer to
// the schema.
func TestResponsesJSONSchema(t *testing.T) {
	env := chatServer(t, nil, 2048, 2, 0)
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"condition": map[string]any{"type": "string", "enum": []string{"good", "fair", "poor"}},
		"score":     map[string]any{"type": "integer", "minimum": 1, "maximum": 5},
	}, "required": []string{"condition", "score"}, "additionalProperties": false}
	c := jsonschema.NewCompiler()
	raw, _ := json.Marshal(schema)
	var doc any
	_ = json.Unmarshal(raw, &doc)
	_ = c.AddResource("s.json", doc)
	sch, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, temp := range []float64{0, 1} {
		r := env.do(t, call{method: "POST", path: "/v1/responses", token: env.token, body: responsesBody(map[string]any{
			"max_output_tokens": 200, "temperature": temp,
			"text": map[string]any{"format": map[string]any{"type": "json_schema", "name": "report", "schema": schema, "strict": true}}})})
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		resp := r.json(t)
		var v any
		text := outputText(t, resp)
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatalf("not JSON: %q", text)
		}
		if err := sch.Validate(v); err != nil || resp["status"] != "completed" {
			t.Errorf("temperature %v: %q: %v (%v)", temp, text, err, resp["status"])
		}
		if f := resp["text"].(map[string]any)["format"].(map[string]any); f["type"] != "json_schema" || f["name"] != "report" {
			t.Errorf("text.format echo: %v", f)
		}
	}
}

// TestResponsesBudget: max_output_tokens above 2,048 is capped, the
// token budget cuts the answer (incomplete), and an empty budget is 402
// before anything is streamed.
func TestResponsesBudget(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.TokenBudget = 30
	env := chatServer(t, cfg, 1024, 2, 0)
	r := env.do(t, call{method: "POST", path: "/v1/responses", token: env.token, body: responsesBody(map[string]any{"max_output_tokens": 5000, "temperature": 0})})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	resp := r.json(t)
	if resp["usage"].(map[string]any)["output_tokens"] != 30.0 || resp["status"] != "incomplete" || resp["max_output_tokens"] != 5000.0 {
		t.Errorf("budget cap: %s", r.body)
	}
	for _, stream := range []bool{false, true} {
		r = env.do(t, call{method: "POST", path: "/v1/responses", token: env.token, body: responsesBody(map[string]any{"stream": stream})})
		if r.status != 402 || r.errMsg(t) != "token budget used up" {
			t.Errorf("stream %v after the budget: %d %s", stream, r.status, r.body)
		}
		r = env.do(t, call{method: "POST", path: "/v1/completions", token: env.token, body: map[string]any{"model": "model-27b", "prompt": "x", "stream": stream}})
		if r.status != 402 || r.errMsg(t) != "token budget used up" {
			t.Errorf("completions, stream %v, after the budget: %d %s", stream, r.status, r.body)
		}
	}
}

// TestResponsesErrors: admission as chat's (401, 403, 404, 413, 415),
// strict reading (unknown fields, types, duplicate keys), ranges, and
// the refused features, each with its status and a message that names
// the field.
func TestResponsesErrors(t *testing.T) {
	env := chatServer(t, nil, 256, 1, 0)
	clinical := session(t, env.testServer, "clinical")
	long := strings.Repeat("x", 48_001)
	cases := []struct {
		name   string
		token  string
		body   any
		status int
		want   string
	}{
		{"no token", "", responsesBody(nil), 401, "missing token"},
		{"other vertical", clinical, responsesBody(nil), 403, "this route needs a code token"},
		{"wrong model", env.token, responsesBody(map[string]any{"model": "gpt-4o"}), 404, `model "gpt-4o" is not served on this box; use "model-27b"`},
		{"wrong model before a bad input", env.token, responsesBody(map[string]any{"model": "gpt-4o", "input": 5}), 404, "not served"},
		{"missing model", env.token, map[string]any{"input": "x"}, 404, "model is required"},
		{"model not a string", env.token, responsesBody(map[string]any{"model": 27}), 400, "field model must be a string"},
		{"unknown field", env.token, responsesBody(map[string]any{"max_tokens": 5}), 400, `unknown field "max_tokens"; remove it`},
		{"key twice", env.token, `{"model":"model-27b","input":"a","input":"b"}`, 400, `key "input" appears twice`},
		{"key case", env.token, `{"model":"model-27b","Input":"a"}`, 400, `key "Input" at the top level is spelled "input"`},
		{"temperature range", env.token, responsesBody(map[string]any{"temperature": 3}), 400, "temperature is 3; use 0 to 2"},
		{"temperature type", env.token, responsesBody(map[string]any{"temperature": "hot"}), 400, "field temperature must be a number"},
		{"max_output_tokens zero", env.token, responsesBody(map[string]any{"max_output_tokens": 0}), 400, "max_output_tokens is 0"},
		{"max_output_tokens type", env.token, responsesBody(map[string]any{"max_output_tokens": "ten"}), 400, "field max_output_tokens must be"},
		{"no input", env.token, map[string]any{"model": "model-27b"}, 400, "input is required"},
		{"input number", env.token, responsesBody(map[string]any{"input": 5}), 400, "input must be a string or an array"},
		{"bad role", env.token, responsesBody(map[string]any{"input": []any{map[string]any{"role": "wizard", "content": "x"}}}), 400, `input[0].role "wizard"`},
		{"item unknown field", env.token, responsesBody(map[string]any{"input": []any{map[string]any{"role": "user", "content": "x", "mood": "ok"}}}), 400, `input[0] has an unknown field "mood"`},
		{"image, text-only model", env.token, responsesBody(map[string]any{"input": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "input_image", "image_url": "data:image/png;base64,AA=="}}}}}), 400, "does not read images"},
		{"marker in the text of a request with an image", env.token, responsesBody(map[string]any{"input": []any{
			map[string]any{"role": "user", "content": "<__media__>"},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_image", "image_url": "data:image/png;base64,AA=="}}}}}), 400, "input[0]: the text holds <__media__>"},
		{"previous_response_id", env.token, responsesBody(map[string]any{"previous_response_id": "resp_1"}), 400, "previous_response_id is not supported: this box stores no responses"},
		{"store", env.token, responsesBody(map[string]any{"store": true}), 400, "store: true is not supported"},
		{"background", env.token, responsesBody(map[string]any{"background": true}), 400, "background: true is not supported"},
		{"conversation", env.token, responsesBody(map[string]any{"conversation": "conv_1"}), 400, "conversation is not supported"},
		{"web_search", env.token, responsesBody(map[string]any{"tools": []any{map[string]any{"type": "web_search"}}}), 400, "tools[0]: web_search is a built-in tool"},
		{"file input", env.token, responsesBody(map[string]any{"input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_file", "file_id": "file-1"}}}}}), 400, "input_file parts are not supported"},
		{"item_reference", env.token, responsesBody(map[string]any{"input": []any{map[string]any{"type": "item_reference", "id": "msg_1"}}}), 400, "item_reference is not supported"},
		{"schema missing", env.token, responsesBody(map[string]any{"text": map[string]any{"format": map[string]any{"type": "json_schema", "name": "x"}}}), 400, "text.format.schema is required"},
		{"schema not a grammar", env.token, responsesBody(map[string]any{"text": map[string]any{"format": map[string]any{"type": "json_schema", "name": "x", "schema": map[string]any{"$ref": "#/nowhere"}}}}), 400, "text.format.schema: "},
		{"tool_choice unknown", env.token, responsesBody(map[string]any{"tools": []any{weatherTool}, "tool_choice": map[string]any{"type": "function", "name": "b"}}), 400, `tool_choice names "b"`},
		{"input over 48,000 characters", env.token, responsesBody(map[string]any{"input": long}), 413, "48001 characters; the limit is 48000"},
		{"input over the context", env.token, responsesBody(map[string]any{"input": strings.Repeat("word ", 300)}), 413, "context holds 256 tokens"},
		{"not JSON", env.token, "{", 400, "JSON"},
		{"too large", env.token, `{"model":"model-27b","input":"` + strings.Repeat("a", chatroutes.BodyLimit) + `"}`, 413, "larger than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := env.do(t, call{method: "POST", path: "/v1/responses", token: tc.token, body: tc.body})
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d with %q", r.status, r.body, tc.status, tc.want)
			}
			if msg := r.errMsg(t); !strings.Contains(msg, tc.want) {
				t.Errorf("%q, want %q", msg, tc.want)
			}
		})
	}
	r := env.do(t, call{method: "POST", path: "/v1/responses", token: env.token, body: `{"model":"model-27b","input":"x"}`,
		headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	if r.status != 415 {
		t.Errorf("form body: %d %s", r.status, r.body)
	}
	if r := env.do(t, call{method: "GET", path: "/v1/responses", token: env.token}); r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("GET /v1/responses: %d %v %s", r.status, r.header, r.body)
	}
	// Routes on stored responses: none is stored.
	for _, c := range []call{{method: "GET", path: "/v1/responses/resp_1"}, {method: "DELETE", path: "/v1/responses/resp_1"},
		{method: "POST", path: "/v1/responses/resp_1/cancel"}, {method: "GET", path: "/v1/responses/resp_1/input_items"}} {
		c.token = env.token
		if r := env.do(t, c); r.status != 404 || !strings.Contains(r.errMsg(t), "this box stores no responses") {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.status, r.body)
		}
	}
}

// TestCompletions: POST /v1/completions answers a text_completion (the
// prompt as the user turn, as chat runs it), 16 tokens by default,
// streamed as text_completion chunks then [DONE], with usage and the
// receipt; the legacy API's unsupported options are refused.
func TestCompletions(t *testing.T) {
	env := chatServer(t, nil, 256, 2, 0)
	body := func(extra map[string]any) map[string]any {
		b := map[string]any{"model": "model-27b", "prompt": "Hello there"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	r := env.do(t, call{method: "POST", path: "/v1/completions", token: env.token, body: body(map[string]any{"max_tokens": 5, "temperature": 0})})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	m := r.json(t)
	id, _ := m["id"].(string)
	ch := m["choices"].([]any)[0].(map[string]any)
	text, _ := ch["text"].(string)
	if !strings.HasPrefix(id, "cmpl-") || r.header.Get("x-service-receipt") != id || m["object"] != "text_completion" || m["model"] != "model-27b" ||
		ch["finish_reason"] != "length" || ch["index"] != 0.0 || m["usage"].(map[string]any)["completion_tokens"] != 5.0 {
		t.Errorf("completion: %s", r.body)
	}
	checkReceipt(t, env, id, m["receipt"].(map[string]any), text, 5)
	// The same call on chat completions writes the same text.
	c := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: chatBodyJSON(map[string]any{"max_tokens": 5, "temperature": 0})})
	if got := c.json(t)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; got != text {
		t.Errorf("chat wrote %q, completions %q", got, text)
	}
	// The legacy default: 16 tokens.
	r = env.do(t, call{method: "POST", path: "/v1/completions", token: env.token, body: body(map[string]any{"temperature": 0, "prompt": []string{"Once upon a time"}})})
	if u := r.json(t)["usage"].(map[string]any); r.status != 200 || u["completion_tokens"].(float64) > 16 {
		t.Errorf("default max_tokens: %s", r.body)
	}

	resp := post(t, env, "/v1/completions", body(map[string]any{"max_tokens": 5, "temperature": 0, "stream": true}))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(resp.Header.Get("x-service-receipt"), "cmpl-") {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	chunks, done := readSSE(t, resp.Body)
	if !done || len(chunks) < 2 {
		t.Fatalf("stream: %d chunks, [DONE] %v", len(chunks), done)
	}
	var streamed strings.Builder
	for i, c := range chunks {
		ch := c["choices"].([]any)[0].(map[string]any)
		if c["object"] != "text_completion" || c["id"] != resp.Header.Get("x-service-receipt") {
			t.Errorf("chunk %d: %v", i, c)
		}
		streamed.WriteString(ch["text"].(string))
		if last := i == len(chunks)-1; last != (ch["finish_reason"] != nil) || last != (c["usage"] != nil) || last != (c["receipt"] != nil) {
			t.Errorf("chunk %d of %d: %v", i, len(chunks), c)
		}
	}
	if streamed.String() != text || chunks[len(chunks)-1]["choices"].([]any)[0].(map[string]any)["finish_reason"] != "length" {
		t.Errorf("streamed %q, whole %q", streamed.String(), text)
	}

	for _, tc := range []struct {
		name   string
		body   any
		status int
		want   string
	}{
		{"wrong model", body(map[string]any{"model": "davinci-002"}), 404, `model "davinci-002" is not served on this box; use "model-27b"`},
		{"no prompt", map[string]any{"model": "model-27b"}, 400, "prompt is required"},
		{"prompt number", body(map[string]any{"prompt": 5}), 400, "prompt must be a string"},
		{"two prompts", body(map[string]any{"prompt": []string{"a", "b"}}), 400, "prompt holds 2 prompts"},
		{"token prompt", body(map[string]any{"prompt": []int{1, 2}}), 400, "prompt as token ids is not supported"},
		{"unknown field", body(map[string]any{"messages": []any{}}), 400, `unknown field "messages"; remove it`},
		{"max_tokens zero", body(map[string]any{"max_tokens": 0}), 400, "max_tokens is 0"},
		{"n", body(map[string]any{"n": 2}), 400, "one choice"},
		{"echo", body(map[string]any{"echo": true}), 400, "echo: true is not supported"},
		{"suffix", body(map[string]any{"suffix": "end"}), 400, "suffix is not supported"},
		{"best_of", body(map[string]any{"best_of": 2}), 400, "best_of is 2"},
		{"logprobs", body(map[string]any{"logprobs": 1}), 400, "logprobs is not supported"},
		{"stop type", body(map[string]any{"stop": 5}), 400, "stop must be a string or an array"},
		{"prompt over 48,000 characters", body(map[string]any{"prompt": strings.Repeat("x", 48_001)}), 413, "48001 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.do(t, call{method: "POST", path: "/v1/completions", token: env.token, body: tc.body})
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d with %q", r.status, r.body, tc.status, tc.want)
			}
			if !strings.Contains(r.errMsg(t), tc.want) {
				t.Errorf("%s, want %q", r.body, tc.want)
			}
		})
	}
}

// TestResponsesDisconnectFreesSequence: a client that leaves a streamed
// response stops its generation, as on chat completions.
func TestResponsesDisconnectFreesSequence(t *testing.T) {
	env := chatServer(t, nil, 4096, 1, 0)
	ctx, cancel := context.WithCancel(context.Background())
	raw, _ := json.Marshal(responsesBody(map[string]any{"max_output_tokens": 2048, "stream": true, "temperature": 0}))
	req, _ := http.NewRequestWithContext(ctx, "POST", env.url+"/v1/responses", bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+env.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for range 12 { // the first events arrive
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
	if r := env.do(t, call{method: "POST", path: "/v1/responses", token: env.token, body: responsesBody(map[string]any{"max_output_tokens": 2})}); r.status != 200 {
		t.Errorf("next request: %d %s", r.status, r.body)
	}
}

// TestResponsesWithoutModelIs502: with no chat model loaded both routes
// answer chat's 502.
func TestResponsesWithoutModelIs502(t *testing.T) {
	ts := platformServer(t, nil, nil)
	tok := session(t, ts, "code")
	for path, body := range map[string]any{
		"/v1/responses":   responsesBody(nil),
		"/v1/completions": map[string]any{"model": "model-27b", "prompt": "x"},
	} {
		r := ts.do(t, call{method: "POST", path: path, token: tok, body: body})
		if r.status != 502 || !strings.Contains(r.errMsg(t), "no chat model is loaded") {
			t.Errorf("%s: %d %s", path, r.status, r.body)
		}
	}
}
