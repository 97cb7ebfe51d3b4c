package convert

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"boxd/engine/llm"
	"boxd/internal/problem"
	"boxd/pipelines/chat"
)

// decode reads body as the route does (strict: unknown fields refused).
func decode(t *testing.T, body string, dst any) error {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}

func responses(t *testing.T, body string) (*Responses, error) {
	t.Helper()
	var req ResponsesRequest
	if err := decode(t, body, &req); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return FromResponses(&req)
}

// TestResponsesRefusals: every refused feature and bad input is a 400
// naming the field and saying why or what to send.
func TestResponsesRefusals(t *testing.T) {
	const in = `"model":"m","input":"hi"`
	fn := `{"type":"function","name":"get_weather","parameters":{"type":"object"}}`
	for _, tc := range []struct{ body, want string }{
		{`{"model":"m"}`, "input is required"},
		{`{"model":"m","input":5}`, "input must be a string or an array of input items, not a number"},
		{`{"model":"m","input":[]}`, "input is an empty list"},
		{`{"model":"m","input":["hi"]}`, "input[0] must be an object (an input item), not a string"},
		{`{"model":"m","input":[{"role":"wizard","content":"x"}]}`, `input[0].role "wizard"; use user, assistant, system or developer`},
		{`{"model":"m","input":[{"content":"x"}]}`, "input[0].role is required"},
		{`{"model":"m","input":[{"role":"user"}]}`, "input[0].content is required"},
		{`{"model":"m","input":[{"role":"user","content":7}]}`, "input[0].content must be a string or an array of content parts, not a number"},
		{`{"model":"m","input":[{"role":"user","content":"x","colour":"red"}]}`, `input[0] has an unknown field "colour"; remove it`},
		{`{"model":"m","input":[{"role":"user","content":"x","Role":"user"}]}`, `input[0]: key "Role" at the top level is spelled "role"`},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":5}]}]}`, "input[0].content[0].text must be a string, not a number"},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_text"}]}]}`, "input[0].content[0] needs text"},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"output_text","text":"x"}]}]}`, "output_text parts belong to assistant messages"},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}]}`, "input[0].content[0]: input_file parts are not supported: file inputs are read on OpenAI's servers and nothing leaves this box"},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]}`, "file_id names a file stored on OpenAI's servers"},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x/y.png"}]}]}`, "does not fetch image URLs"},
		{`{"model":"m","input":[{"role":"assistant","content":[{"type":"input_image","image_url":"data:image/png;base64,AA=="}]}]}`, "input_image parts are read in user messages only"},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_audio"}]}]}`, "input_audio parts are not supported"},
		{`{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0]: item_reference is not supported: it points at an item stored on OpenAI's servers"},
		{`{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[]}]}`, "input[0]: reasoning items are not supported"},
		{`{"model":"m","input":[{"type":"web_search_call","id":"ws_1"}]}`, "web_search_call items come from built-in tools"},
		{`{"model":"m","input":[{"type":"telepathy"}]}`, `input[0].type "telepathy" is not supported`},
		{`{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0] (function_call) needs call_id"},
		{`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{nope"}]}`, "input[0].arguments must be a JSON string holding a JSON object"},
		{`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":{}}]}`, "input[0].arguments must be a string, not an object"},
		{`{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, "input[0] (function_call_output) needs call_id"},
		{`{"model":"m","input":[{"type":"function_call_output","call_id":"c"}]}`, "needs output"},
		{`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":"21C"}]}`, `no function_call with call_id "c" comes before it`},
		{`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":"21C"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`, `no function_call with call_id "c" comes before it`},
		{`{` + in + `,"previous_response_id":"resp_1"}`, "previous_response_id is not supported: this box stores no responses or conversations"},
		{`{` + in + `,"conversation":"conv_1"}`, "conversation is not supported"},
		{`{` + in + `,"store":true}`, "store: true is not supported"},
		{`{` + in + `,"background":true}`, "background: true is not supported"},
		{`{` + in + `,"prompt":{"id":"pmpt_1"}}`, "prompt is not supported: prompt templates are stored on OpenAI's servers"},
		{`{` + in + `,"include":["message.output_text.logprobs"]}`, `include[0] "message.output_text.logprobs" is not supported`},
		{`{` + in + `,"context_management":[{"type":"compaction"}]}`, "context_management is not supported"},
		{`{` + in + `,"reasoning":{"effort":"high"}}`, `reasoning.effort "high" is not supported`},
		{`{` + in + `,"truncation":"auto"}`, `truncation "auto" is not supported`},
		{`{` + in + `,"service_tier":"flex"}`, `service_tier "flex"`},
		{`{` + in + `,"top_logprobs":3}`, "top_logprobs is 3"},
		{`{` + in + `,"max_output_tokens":0}`, "max_output_tokens is 0; use 1 to 2048"},
		{`{` + in + `,"metadata":{"` + strings.Repeat("k", 65) + `":"v"}}`, "keys are up to 64 characters"},
		{`{` + in + `,"tools":[{"type":"web_search"}]}`, "tools[0]: web_search is a built-in tool that runs on OpenAI's servers"},
		{`{` + in + `,"tools":[{"type":"file_search","vector_store_ids":["vs_1"]}]}`, "tools[0]: file_search is not supported"},
		{`{` + in + `,"tools":[{"type":"mcp","server_label":"x"}]}`, "tools[0]: mcp is a built-in tool"},
		{`{` + in + `,"tools":[{"name":"f"}]}`, "tools[0].type is required: function"},
		{`{` + in + `,"tools":[{"type":"function","name":"bad name"}]}`, `tools[0].name "bad name"`},
		{`{` + in + `,"tools":[{"type":"function","name":"f","function":{"name":"f"}}]}`, `tools[0] has an unknown field "function"`},
		{`{` + in + `,"tools":[{"type":"function","name":"f","parameters":[1]}]}`, "tools[0].parameters must be a JSON schema object"},
		{`{` + in + `,"tools":[` + fn + `],"tool_choice":"sometimes"}`, `tool_choice "sometimes"`},
		{`{` + in + `,"tools":[` + fn + `],"tool_choice":{"type":"web_search_preview"}}`, "tool_choice web_search_preview is not supported"},
		{`{` + in + `,"tools":[` + fn + `],"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[]}}`, "tool_choice allowed_tools is not supported"},
		{`{` + in + `,"tools":[` + fn + `],"tool_choice":{"type":"function"}}`, "tool_choice needs name"},
		{`{` + in + `,"text":{"format":{"type":"xml"}}}`, `text.format.type "xml"; use text, json_object or json_schema`},
		{`{` + in + `,"text":{"format":{"type":"json_schema","schema":{"type":"object"}}}}`, "text.format.name"},
		{`{` + in + `,"text":{"format":{"type":"json_schema","name":"v"}}}`, "text.format.schema is required"},
		{`{` + in + `,"text":{"format":{"type":"json_schema","name":"v","schema":[1]}}}`, "text.format.schema must be a JSON object"},
		{`{` + in + `,"text":{"verbosity":"loud"}}`, `text.verbosity "loud"`},
		{`{` + in + `,"tools":[` + fn + `],"text":{"format":{"type":"json_object"}}}`, "use either tools or text.format json_object in one request"},
	} {
		_, err := responses(t, tc.body)
		p, ok := problem.As(err)
		if !ok || p.Kind != problem.Invalid || !strings.Contains(p.Message, tc.want) {
			t.Errorf("%s:\n got %v\nwant 400 with %q", tc.body, err, tc.want)
		}
	}
}

// TestResponsesAccepted: the values that ask for nothing the box lacks
// pass (store false, background false, empty include, reasoning effort
// none, the one service tier, truncation disabled, hints).
func TestResponsesAccepted(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","input":"hi","store":false,"background":false,"include":[],"previous_response_id":null,"conversation":null}`,
		`{"model":"m","input":"hi","reasoning":{"effort":"none"},"service_tier":"auto","truncation":"disabled","top_logprobs":0}`,
		`{"model":"m","input":"hi","user":"u","safety_identifier":"s","prompt_cache_key":"k","prompt_cache_retention":"24h","metadata":{"a":"b"}}`,
		`{"model":"m","input":"hi","stream":true,"stream_options":{"include_obfuscation":false},"max_tool_calls":3,"context_management":[]}`,
		`{"model":"m","input":"hi","text":{"format":{"type":"text"},"verbosity":"low"}}`,
	} {
		if _, err := responses(t, body); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

// TestResponsesToChat: instructions, messages, parts, function calls and
// their outputs become chat messages in order; tools, tool_choice and
// text.format become chat's.
func TestResponsesToChat(t *testing.T) {
	c, err := responses(t, `{"model":"m","instructions":"Be brief.","max_output_tokens":9,"temperature":0.5,
		"input":[
			{"role":"system","content":"Sys."},
			{"role":"user","content":[{"type":"input_text","text":"Look: "},{"type":"input_image","image_url":"data:image/png;base64,AA==","detail":"low"}]},
			{"type":"message","role":"assistant","id":"msg_1","status":"completed","content":[{"type":"output_text","text":"Calling.","annotations":[],"logprobs":[]}]},
			{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Boston\"}","status":"completed"},
			{"type":"function_call","call_id":"call_2","name":"get_weather","arguments":"{}"},
			{"type":"function_call_output","call_id":"call_1","output":"21C"},
			{"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"18C"}]}
		],
		"tools":[{"type":"function","name":"get_weather","description":"Weather.","parameters":{"type":"object"},"strict":true}],
		"tool_choice":{"type":"function","name":"get_weather"},"parallel_tool_calls":false}`)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Chat
	if r.Model != "m" || *r.MaxTokens != 9 || *r.Temperature != 0.5 || *r.ParallelToolCalls {
		t.Errorf("settings: %+v", r)
	}
	type msg struct {
		role, text string
		calls      int
		callID     string
		images     int
	}
	want := []msg{
		{role: "developer", text: "Be brief."},
		{role: "system", text: "Sys."},
		{role: "user", text: "Look: " + llm.ImageMarker, images: 1},
		{role: "assistant", text: "Calling.", calls: 2},
		{role: "tool", text: "21C", callID: "call_1"},
		{role: "tool", text: "18C", callID: "call_2"},
	}
	if len(r.Messages) != len(want) {
		t.Fatalf("%d messages: %+v", len(r.Messages), r.Messages)
	}
	for i, w := range want {
		m := r.Messages[i]
		if m.Role != w.role || m.Content.Text != w.text || len(m.ToolCalls) != w.calls || m.ToolCallID != w.callID || len(m.Content.Images) != w.images {
			t.Errorf("message %d: %+v, want %+v", i, m, w)
		}
	}
	if tc := r.Messages[3].ToolCalls[0]; tc.ID != "call_1" || tc.Function.Name != "get_weather" || tc.Function.Arguments != `{"city":"Boston"}` {
		t.Errorf("tool call: %+v", tc)
	}
	if got := strings.Join(c.paths, " "); got != "instructions input[0] input[1] input[2] input[5] input[6]" {
		t.Errorf("paths: %s", got)
	}
	if len(r.Tools) != 1 || r.Tools[0].Type != "function" || r.Tools[0].Function.Name != "get_weather" || r.Tools[0].Function.Description != "Weather." {
		t.Errorf("tools: %+v", r.Tools)
	}
	if string(r.ToolChoice) != `{"function":{"name":"get_weather"},"type":"function"}` || string(c.toolChoice) != `{"type":"function","name":"get_weather"}` {
		t.Errorf("tool_choice: chat %s, echo %s", r.ToolChoice, c.toolChoice)
	}

	c, err = responses(t, `{"model":"m","input":"Is it?","text":{"format":{"type":"json_schema","name":"verdict","schema":{"type":"object"},"strict":true}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if rf := c.Chat.ResponseFormat; rf == nil || rf.Type != "json_schema" || rf.JSONSchema.Name != "verdict" || string(rf.JSONSchema.Schema) != `{"type":"object"}` {
		t.Errorf("format: %+v", c.Chat.ResponseFormat)
	}
	if m := c.Chat.Messages; len(m) != 1 || m[0].Role != "user" || m[0].Content.Text != "Is it?" || c.Chat.MaxTokens != nil {
		t.Errorf("string input: %+v", m)
	}
}

// TestRename: chat's refusals are worded in the Responses API's names.
func TestRename(t *testing.T) {
	c := &Responses{paths: []string{"instructions", "input[3]"}}
	for _, tc := range []struct {
		in   error
		want string
	}{
		{problem.New(problem.Invalid, "messages[1] image 0: image_url.url must be a data: URL"), "input[3] image 0: image_url must be a data: URL"},
		{problem.New(problem.Invalid, "response_format.json_schema.schema: bad ref"), "text.format.schema: bad ref"},
		{problem.New(problem.TooLarge, "messages[0]: too long"), "instructions: too long"},
		{problem.New(problem.Invalid, "messages[7]: x"), "messages[7]: x"},
		{problem.New(problem.Budget, "token budget used up"), "token budget used up"},
	} {
		got := c.Rename(tc.in)
		if got.Error() != tc.want || problem.KindOf(got) != problem.KindOf(tc.in) {
			t.Errorf("%v: %v", tc.in, got)
		}
	}
}

func completion(content string, finish string, calls ...chat.ToolCall) *chat.Completion {
	return &chat.Completion{ID: "resp_1", Created: 5, Content: content, ToolCalls: calls, FinishReason: finish, NoContent: len(calls) > 0,
		Usage: chat.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}, Receipt: chat.ReceiptRef{ID: "resp_1", GatewaySig: "ab"}}
}

// TestResponseObject: text, cut text and function calls as output items,
// status, usage and receipt.
func TestResponseObject(t *testing.T) {
	c, err := responses(t, `{"model":"m","input":"hi","instructions":"x","metadata":{"a":"b"}}`)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Response("resp_1", 5, 6, completion("Hello", "stop"))
	b, _ := json.Marshal(r)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m["object"] != "response" || m["status"] != "completed" || m["incomplete_details"] != nil || m["store"] != false || m["instructions"] != "x" ||
		m["previous_response_id"] != nil || m["tool_choice"] != "auto" || m["metadata"].(map[string]any)["a"] != "b" || m["temperature"] != 0.8 {
		t.Errorf("response: %s", b)
	}
	out := m["output"].([]any)[0].(map[string]any)
	part := out["content"].([]any)[0].(map[string]any)
	if out["type"] != "message" || !strings.HasPrefix(out["id"].(string), "msg_") || out["status"] != "completed" || out["role"] != "assistant" ||
		part["type"] != "output_text" || part["text"] != "Hello" || r.OutputText() != "Hello" {
		t.Errorf("output: %v", out)
	}
	u := m["usage"].(map[string]any)
	if u["input_tokens"] != 3.0 || u["output_tokens"] != 4.0 || u["total_tokens"] != 7.0 || m["receipt"].(map[string]any)["gateway_sig"] != "ab" {
		t.Errorf("usage/receipt: %s", b)
	}
	r = c.Response("resp_1", 5, 6, completion("Hel", "length"))
	if r.Status != "incomplete" || r.IncompleteDetails.Reason != "max_output_tokens" || r.Output[0].(*MessageItem).Status != "incomplete" {
		t.Errorf("cut: %+v", r)
	}
	call := chat.ToolCall{ID: "call_1", Type: "function", Function: chat.FunctionCall{Name: "f", Arguments: `{"a":1}`}}
	r = c.Response("resp_1", 5, 6, completion("", "tool_calls", call))
	fc, ok := r.Output[0].(*FunctionCallItem)
	if len(r.Output) != 1 || !ok || fc.CallID != "call_1" || fc.Name != "f" || fc.Arguments != `{"a":1}` || !strings.HasPrefix(fc.ID, "fc_") || r.Status != "completed" {
		t.Errorf("function call: %+v", r.Output)
	}
}

func types(evs []Event) string {
	var s []string
	for _, e := range evs {
		s = append(s, strings.TrimPrefix(e.Type, "response."))
	}
	return strings.Join(s, " ")
}

// TestStreamEvents: the events come in OpenAI's order, numbered, the
// message's id the same throughout, the text the pieces joined.
func TestStreamEvents(t *testing.T) {
	c, err := responses(t, `{"model":"m","input":"hi","stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	st := c.Stream("resp_1", 5)
	var evs []Event
	evs = append(evs, st.Text("Hel")...)
	evs = append(evs, st.Text("lo")...)
	evs = append(evs, st.Finish(completion("Hello", "stop"), 6)...)
	if got := types(evs); got != "created in_progress output_item.added content_part.added output_text.delta output_text.delta output_text.done content_part.done output_item.done completed" {
		t.Fatalf("events: %s", got)
	}
	var text strings.Builder
	for i, e := range evs {
		if e.SequenceNumber != i {
			t.Errorf("event %d has sequence_number %d", i, e.SequenceNumber)
		}
		if e.ItemID != "" && e.ItemID != st.msgID {
			t.Errorf("event %d: item %s", i, e.ItemID)
		}
		if e.Type == "response.output_text.delta" {
			text.WriteString(*e.Delta)
		}
	}
	last := evs[len(evs)-1].Response
	if text.String() != "Hello" || *evs[6].Text != "Hello" || last.Status != "completed" || last.Output[0].(*MessageItem).ID != st.msgID || last.Usage.TotalTokens != 7 || last.Receipt == nil {
		t.Errorf("text %q, last %+v", text.String(), last)
	}
	if evs[0].Response.Status != "in_progress" || evs[0].Response.Usage != nil || len(evs[0].Response.Output) != 0 {
		t.Errorf("created: %+v", evs[0].Response)
	}
	b, _ := json.Marshal(evs[4])
	if !bytes.Equal(b, []byte(`{"type":"response.output_text.delta","sequence_number":4,"output_index":0,"item_id":"`+st.msgID+`","content_index":0,"delta":"Hel","logprobs":[]}`)) {
		t.Errorf("delta: %s", b)
	}

	// A function call (sent whole at the end), and a cut answer.
	st = c.Stream("resp_2", 5)
	call := chat.ToolCall{ID: "call_1", Type: "function", Function: chat.FunctionCall{Name: "f", Arguments: `{"a":1}`}}
	evs = st.Finish(completion("", "tool_calls", call), 6)
	if got := types(evs); got != "created in_progress output_item.added function_call_arguments.delta function_call_arguments.done output_item.done completed" {
		t.Fatalf("call events: %s", got)
	}
	if added := evs[2].Item.(*FunctionCallItem); added.Arguments != "" || added.Status != "in_progress" || added.CallID != "call_1" {
		t.Errorf("added: %+v", added)
	}
	if *evs[4].Arguments != `{"a":1}` || evs[4].Name != "f" || evs[5].Item.(*FunctionCallItem).Status != "completed" {
		t.Errorf("call done: %+v %+v", evs[4], evs[5])
	}
	st = c.Stream("resp_3", 5)
	evs = append(st.Text("Hel"), st.Finish(completion("Hel", "length"), 6)...)
	if last := evs[len(evs)-1]; last.Type != "response.incomplete" || last.Response.IncompleteDetails.Reason != "max_output_tokens" {
		t.Errorf("cut: %+v", last)
	}
	st = c.Stream("resp_4", 5)
	evs = append(st.Text("Hel"), st.Fail("the model failed")...)
	if last := evs[len(evs)-1]; last.Type != "response.failed" || last.Response.Error.Message != "the model failed" || last.SequenceNumber != 5 {
		t.Errorf("failed: %+v", last)
	}
}

// TestCompletionsToChat: the prompt is the one user message; max_tokens
// defaults to 16; the legacy API's unsupported options are refused.
func TestCompletionsToChat(t *testing.T) {
	conv := func(body string) (*Completions, error) {
		var req CompletionRequest
		if err := decode(t, body, &req); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return FromCompletions(&req)
	}
	c, err := conv(`{"model":"m","prompt":["Once"],"temperature":0,"stop":"\n","seed":3,"n":1,"best_of":1,"echo":false,"suffix":"","logit_bias":{}}`)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Chat
	if len(r.Messages) != 1 || r.Messages[0].Role != "user" || r.Messages[0].Content.Text != "Once" || *r.MaxTokens != 16 || *r.Temperature != 0 || r.Stop[0] != "\n" || *r.Seed != 3 {
		t.Errorf("chat: %+v", r)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"model":"m"}`, "prompt is required"},
		{`{"model":"m","prompt":5}`, "prompt must be a string (or an array of one string), not a number"},
		{`{"model":"m","prompt":[]}`, "prompt is an empty list"},
		{`{"model":"m","prompt":["a","b"]}`, "prompt holds 2 prompts"},
		{`{"model":"m","prompt":[1,2,3]}`, "prompt as token ids is not supported"},
		{`{"model":"m","prompt":"x","suffix":"y"}`, "suffix is not supported"},
		{`{"model":"m","prompt":"x","echo":true}`, "echo: true is not supported"},
		{`{"model":"m","prompt":"x","best_of":3}`, "best_of is 3"},
		{`{"model":"m","prompt":"x","logprobs":2}`, "logprobs is not supported"},
		{`{"model":"m","prompt":"x","logit_bias":{"50256":-100}}`, "logit_bias is not supported"},
	} {
		_, err := conv(tc.body)
		if p, ok := problem.As(err); !ok || p.Kind != problem.Invalid || !strings.Contains(p.Message, tc.want) {
			t.Errorf("%s: %v, want %q", tc.body, err, tc.want)
		}
	}
	if got := c.Rename(problem.New(problem.Invalid, "messages[0]: the text holds <__media__>")); got.Error() != "prompt: the text holds <__media__>" {
		t.Errorf("rename: %v", got)
	}
	out := CompletionOf("cmpl-1", "m", completion("Upon", "length"))
	b, _ := json.Marshal(out)
	if !strings.Contains(string(b), `"object":"text_completion"`) || !strings.Contains(string(b), `"choices":[{"text":"Upon","index":0,"logprobs":null,"finish_reason":"length"}]`) {
		t.Errorf("completion: %s", b)
	}
}

// TestCutCalls: cut by the length cap, the calls complete before the cut
// stay completed and the last (being written) is incomplete.
func TestCutCalls(t *testing.T) {
	c, err := responses(t, `{"model":"m","input":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	a := chat.ToolCall{ID: "call_1", Type: "function", Function: chat.FunctionCall{Name: "f", Arguments: `{"a":1}`}}
	b := chat.ToolCall{ID: "call_2", Type: "function", Function: chat.FunctionCall{Name: "f", Arguments: `{"a":`}}
	r := c.Response("resp_1", 5, 6, completion("", "length", a, b))
	if r.Status != "incomplete" || r.Output[0].(*FunctionCallItem).Status != "completed" || r.Output[1].(*FunctionCallItem).Status != "incomplete" {
		t.Errorf("cut calls: %+v %+v", r.Output[0], r.Output[1])
	}
	cut := completion("", "length")
	cut.NoContent = true // a call cut before its name
	r = c.Response("resp_1", 5, 6, cut)
	if r.Status != "incomplete" || len(r.Output) != 0 {
		t.Errorf("cut before a name: %+v", r)
	}
}
