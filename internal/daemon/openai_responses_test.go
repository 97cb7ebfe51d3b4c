package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"boxd/internal/platform"
)

// TestOpenAINodeResponses drives POST /v1/responses and POST
// /v1/completions with the official openai npm client
// (internal/daemon/testdata/openai/responses.mjs; installed by make deps).
func TestOpenAINodeResponses(t *testing.T) {
	dir, _ := filepath.Abs("testdata/openai")
	node, err := exec.LookPath("node")
	if _, statErr := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil || statErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or the openai package is missing (make deps installs it): %v %v", err, statErr)
		}
		t.Skip("node or the openai npm package is missing; run make deps")
	}
	env := chatServer(t, nil, 2048, 2, 0)
	cmd := exec.Command(node, "responses.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BOXD_URL="+env.url, "BOXD_TOKEN="+env.token, "BOXD_MODEL=model-27b")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	var got struct {
		Plain struct {
			ID, Object, Status, Reason, OutputText string
			Types                                  []string
			Usage                                  map[string]any
			Receipt                                map[string]string
		}
		Stream struct {
			Events       []string
			Deltas, Text string
			Usage        map[string]any
			Receipt      map[string]string
		}
		Helper struct{ Text, Deltas, Status string }
		Tool   struct {
			Status string
			Call   map[string]any
			After  []string
		}
		Schema     struct{ Text, Status string }
		Completion struct {
			ID, Object, Text, Finish string
			Usage                    map[string]int
			Receipt                  map[string]string
		}
		CompletionStream struct {
			Text, Finish string
			Chunks       int
		}
		Previous, WebSearch, WrongModel, Echo refusal
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("client output: %v\n%s", err, out)
	}
	p := got.Plain
	if !strings.HasPrefix(p.ID, "resp_") || p.Object != "response" || p.Status != "incomplete" || p.Reason != "max_output_tokens" ||
		p.OutputText == "" || strings.Join(p.Types, ",") != "message" || p.Usage["output_tokens"] != 8.0 || p.Receipt["id"] != p.ID || p.Receipt["gateway_sig"] == "" {
		t.Errorf("plain: %+v", p)
	}
	s := got.Stream
	events := strings.Join(s.Events, " ")
	if !strings.HasPrefix(events, "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta") ||
		!strings.HasSuffix(events, "response.output_text.done response.content_part.done response.output_item.done response.incomplete") ||
		s.Deltas == "" || s.Deltas != s.Text || s.Usage["output_tokens"] != 6.0 || s.Receipt["gateway_sig"] == "" {
		t.Errorf("stream: %+v", s)
	}
	if got.Helper.Text != s.Text || got.Helper.Deltas != s.Text || got.Helper.Status != "incomplete" {
		t.Errorf("the SDK's stream helper rebuilt %+v; the stream wrote %q", got.Helper, s.Text)
	}
	var args map[string]string
	if c := got.Tool.Call; c == nil || c["type"] != "function_call" || c["name"] != "get_weather" || !strings.HasPrefix(c["call_id"].(string), "call_") ||
		json.Unmarshal([]byte(c["arguments"].(string)), &args) != nil || (args["city"] != "Boston" && args["city"] != "Madrid") ||
		got.Tool.Status != "completed" || strings.Join(got.Tool.After, ",") != "message" {
		t.Errorf("tool: %+v", got.Tool)
	}
	var v struct {
		Answer     string `json:"answer"`
		Confidence *int   `json:"confidence"`
	}
	if err := json.Unmarshal([]byte(got.Schema.Text), &v); err != nil || (v.Answer != "yes" && v.Answer != "no") || v.Confidence == nil || got.Schema.Status != "completed" {
		t.Errorf("schema: %+v (%v)", got.Schema, err)
	}
	c := got.Completion
	if !strings.HasPrefix(c.ID, "cmpl-") || c.Object != "text_completion" || c.Finish != "length" || c.Usage["completion_tokens"] != 5 || c.Receipt["id"] != c.ID {
		t.Errorf("completion: %+v", c)
	}
	if cs := got.CompletionStream; cs.Text != c.Text || cs.Finish != "length" || cs.Chunks < 2 {
		t.Errorf("completion stream: %+v, whole %q", cs, c.Text)
	}
	for _, tc := range []struct {
		name    string
		got     refusal
		status  int
		message string
	}{
		{"previous_response_id", got.Previous, 400, "previous_response_id is not supported"},
		{"web_search", got.WebSearch, 400, "web_search is a built-in tool"},
		{"wrong model", got.WrongModel, 404, "not served"},
		{"echo", got.Echo, 400, "echo: true is not supported"},
	} {
		if g := tc.got; g.Status != tc.status || g.Type == "" || g.Code == "" || !strings.Contains(g.Message, tc.message) {
			t.Errorf("%s: %+v", tc.name, g)
		}
	}
}

// TestOpenAIGoResponses drives the same routes with the official Go SDK:
// Responses.New (text, a function call and its output, json_schema),
// Responses.NewStreaming, Completions.New and NewStreaming, and refusals
// as *openai.Error.
func TestOpenAIGoResponses(t *testing.T) {
	env := chatServer(t, nil, 2048, 2, 0)
	ctx := context.Background()
	client := func(token string) openai.Client {
		return openai.NewClient(option.WithBaseURL(env.url+"/v1/"), option.WithAPIKey(token), option.WithMaxRetries(0))
	}
	c := client(env.token)
	hello := responses.ResponseNewParams{
		Model:           "model-27b",
		Instructions:    openai.String("Be brief."),
		Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello.")},
		MaxOutputTokens: openai.Int(6),
		Temperature:     openai.Float(0),
	}
	resp, err := c.Responses.New(ctx, hello)
	if err != nil {
		t.Fatalf("response: %v", err)
	}
	var rc map[string]string
	if err := json.Unmarshal([]byte(resp.JSON.ExtraFields["receipt"].Raw()), &rc); err != nil || rc["id"] != resp.ID || rc["gateway_sig"] == "" {
		t.Errorf("receipt: %v %v", rc, err)
	}
	if !strings.HasPrefix(resp.ID, "resp_") || resp.Status != responses.ResponseStatusIncomplete || resp.IncompleteDetails.Reason != "max_output_tokens" ||
		resp.OutputText() == "" || resp.Usage.OutputTokens != 6 || resp.Usage.TotalTokens != resp.Usage.InputTokens+6 || resp.Output[0].Type != "message" {
		t.Errorf("response: %s", resp.RawJSON())
	}

	stream := c.Responses.NewStreaming(ctx, hello)
	var types []string
	var deltas string
	var final responses.Response
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			deltas += ev.Delta
		case "response.completed", "response.incomplete":
			final = ev.Response
		}
	}
	if err := stream.Err(); err != nil || len(types) < 10 || types[0] != "response.created" || types[len(types)-1] != "response.incomplete" ||
		deltas != resp.OutputText() || final.OutputText() != deltas || final.Usage.OutputTokens != 6 {
		t.Errorf("stream: %v %v %q, whole %q", err, types, deltas, resp.OutputText())
	}

	// A function call, then its output sent back.
	tool := responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name: "get_weather", Strict: openai.Bool(true),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string", "enum": []string{"Boston", "Madrid"}}},
			"required": []string{"city"}, "additionalProperties": false},
	}}
	user := responses.ResponseInputItemParamOfMessage("Weather in Boston?", responses.EasyInputMessageRoleUser)
	called, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "model-27b", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{user}},
		Tools: []responses.ToolUnionParam{tool}, ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)},
		ParallelToolCalls: openai.Bool(false), MaxOutputTokens: openai.Int(100), Temperature: openai.Float(0),
	})
	if err != nil {
		t.Fatalf("function call: %v", err)
	}
	fc := called.Output[0].AsFunctionCall()
	if called.Output[0].Type != "function_call" || fc.Name != "get_weather" || !strings.HasPrefix(fc.CallID, "call_") || !json.Valid([]byte(fc.Arguments)) {
		t.Fatalf("function call: %s", called.RawJSON())
	}
	output := responses.ResponseInputItemParamOfFunctionCallOutput(`{"temperature": 21}`)
	output.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
	answered, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "model-27b", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			user, {OfFunctionCall: &[]responses.ResponseFunctionToolCallParam{fc.ToParam()}[0]}, output}},
		Tools: []responses.ToolUnionParam{tool}, ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsNone)},
		MaxOutputTokens: openai.Int(8),
	})
	if err != nil || answered.Output[0].Type != "message" {
		t.Fatalf("after the function's output: %v %v", err, answered)
	}

	// json_schema.
	structured, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "model-27b", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Is the roof sound?")}, MaxOutputTokens: openai.Int(100),
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{
			Name: "verdict", Strict: openai.Bool(true),
			Schema: map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string", "enum": []string{"yes", "no"}}},
				"required": []string{"answer"}, "additionalProperties": false},
		}}},
	})
	var verdict struct{ Answer string }
	if err != nil || json.Unmarshal([]byte(structured.OutputText()), &verdict) != nil || (verdict.Answer != "yes" && verdict.Answer != "no") {
		t.Errorf("json_schema: %v %v", err, structured)
	}

	// Legacy completions.
	cp := openai.CompletionNewParams{Model: "model-27b", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once upon a time")},
		MaxTokens: openai.Int(5), Temperature: openai.Float(0)}
	comp, err := c.Completions.New(ctx, cp)
	if err != nil || !strings.HasPrefix(comp.ID, "cmpl-") || comp.Choices[0].FinishReason != "length" || comp.Usage.CompletionTokens != 5 || comp.Object != "text_completion" {
		t.Fatalf("completion: %v %+v", err, comp)
	}
	cs := c.Completions.NewStreaming(ctx, cp)
	var text string
	var finish string
	for cs.Next() {
		ch := cs.Current()
		text += ch.Choices[0].Text
		if ch.Choices[0].FinishReason != "" {
			finish = string(ch.Choices[0].FinishReason)
		}
	}
	if err := cs.Err(); err != nil || text != comp.Choices[0].Text || finish != "length" {
		t.Errorf("completion stream: %v %q %q, whole %q", err, text, finish, comp.Choices[0].Text)
	}

	// Refusals: the box's message, status and OpenAI's error object.
	daily := int64(6)
	limited, _, d := env.deps.Platform.CreateKey(ctx, platform.KeySpec{DailyLLMTokens: &daily})
	if d != nil {
		t.Fatal(d)
	}
	stored := hello
	stored.PreviousResponseID = openai.String(resp.ID)
	web := hello
	web.Tools = []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}}
	keep := hello
	keep.Store = openai.Bool(true)
	for _, tc := range []struct {
		name    string
		token   string
		call    func(openai.Client) error
		status  int
		typ     string
		message string
	}{
		{"previous_response_id", env.token, func(c openai.Client) error { _, err := c.Responses.New(ctx, stored); return err }, 400, "invalid_request_error", "previous_response_id is not supported"},
		{"web_search", env.token, func(c openai.Client) error { _, err := c.Responses.New(ctx, web); return err }, 400, "invalid_request_error", "web_search is a built-in tool"},
		{"store", env.token, func(c openai.Client) error { _, err := c.Responses.New(ctx, keep); return err }, 400, "invalid_request_error", "store: true is not supported"},
		{"the day's budget", limited, func(c openai.Client) error { _, err := c.Responses.New(ctx, hello); return err }, 0, "", ""},
		{"over the budget", limited, func(c openai.Client) error { _, err := c.Responses.New(ctx, hello); return err }, 402, "insufficient_quota", "token budget used up"},
		{"over the budget, streamed", limited, func(c openai.Client) error {
			s := c.Responses.NewStreaming(ctx, hello)
			for s.Next() {
			}
			return s.Err()
		}, 402, "insufficient_quota", "token budget used up"},
		{"completions over the budget", limited, func(c openai.Client) error { _, err := c.Completions.New(ctx, cp); return err }, 402, "insufficient_quota", "token budget used up"},
		{"wrong key", "bxk_not-a-key", func(c openai.Client) error { _, err := c.Completions.New(ctx, cp); return err }, 401, "authentication_error", ""},
	} {
		err := tc.call(client(tc.token))
		if tc.status == 0 {
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			continue
		}
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			t.Errorf("%s: want *openai.Error, got %T %v", tc.name, err, err)
			continue
		}
		if apiErr.StatusCode != tc.status || apiErr.Type != tc.typ || apiErr.Message == "" || !strings.Contains(apiErr.Message, tc.message) || apiErr.Code == "" {
			t.Errorf("%s: status %d type %q code %q message %q", tc.name, apiErr.StatusCode, apiErr.Type, apiErr.Code, apiErr.Message)
		}
	}
}
