// Package convert maps two more OpenAI APIs onto chat completions: the
// Responses API (POST /v1/responses) and the legacy text completions API
// (POST /v1/completions). A request is validated in its own API's words,
// turned into a chat.Request that pipelines/chat prepares and runs exactly
// as it runs POST /v1/chat/completions (the same limits, grammars, model
// call, budget and signed receipt), and the chat.Completion comes back in
// the API's shape: a response object with output items and, streamed, the
// Responses API's named events; or a text_completion.
//
// The box keeps no state between requests and sends nothing off the
// machine, so the Responses API's stored and hosted features
// (previous_response_id, conversation, store, background, prompt
// templates, built-in tools, file inputs) are refused by name with the
// reason, never ignored. Errors are *problem.Error.
package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/pipelines/chat"
)

// ResponsesRequest is POST /v1/responses. Every field of OpenAI's API is
// declared; one the API does not have is refused (400) when the body is
// read, as OpenAI refuses it. Fields are pointers or raw JSON where
// absent, null and a value differ.
type ResponsesRequest struct {
	Model             string            `json:"model"`
	Input             json.RawMessage   `json:"input"`
	Instructions      *string           `json:"instructions"`
	MaxOutputTokens   *int              `json:"max_output_tokens"`
	Temperature       *float64          `json:"temperature"`
	TopP              *float64          `json:"top_p"`
	Stream            bool              `json:"stream"`
	StreamOptions     *StreamOptions    `json:"stream_options"`
	Text              *TextConfig       `json:"text"`
	Tools             []json.RawMessage `json:"tools"`
	ToolChoice        json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls"`
	MaxToolCalls      *int              `json:"max_tool_calls"`
	Metadata          map[string]string `json:"metadata"`
	// Accepted and without effect on a box: identifiers and cache hints
	// for OpenAI's servers.
	User                 *string `json:"user"`
	SafetyIdentifier     *string `json:"safety_identifier"`
	PromptCacheKey       *string `json:"prompt_cache_key"`
	PromptCacheRetention *string `json:"prompt_cache_retention"`
	// Accepted with the one value a box has; other values are refused.
	ServiceTier *string `json:"service_tier"`
	Truncation  *string `json:"truncation"`
	TopLogprobs *int    `json:"top_logprobs"`
	Store       *bool   `json:"store"`
	Background  *bool   `json:"background"`
	// Refused when set: stored state and hosted features.
	PreviousResponseID *string         `json:"previous_response_id"`
	Conversation       json.RawMessage `json:"conversation"`
	Prompt             json.RawMessage `json:"prompt"`
	Include            []string        `json:"include"`
	Reasoning          *Reasoning      `json:"reasoning"`
	ContextManagement  json.RawMessage `json:"context_management"`
}

// StreamOptions is stream_options (include_obfuscation pads events
// against length side channels on the internet; a box answers locally
// and sends no padding).
type StreamOptions struct {
	IncludeObfuscation *bool `json:"include_obfuscation"`
}

// TextConfig is text: the answer's format.
type TextConfig struct {
	Format    *TextFormat `json:"format"`
	Verbosity *string     `json:"verbosity"`
}

// TextFormat is text.format: text, json_object or json_schema.
type TextFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// Reasoning is reasoning: refused unless empty (the chat model does not
// reason).
type Reasoning struct {
	Effort          *string `json:"effort"`
	Summary         *string `json:"summary"`
	GenerateSummary *string `json:"generate_summary"`
}

// Sampling defaults of pipelines/chat (llama.cpp's), echoed in a response
// that did not set them.
const (
	defaultTemperature = 0.8
	defaultTopP        = 0.95
)

// maxOutputTokens is chat.MaxTokens: more is capped, as on chat.
const maxOutputTokens = chat.MaxTokens

// Responses is a Responses request converted to chat.
type Responses struct {
	// Chat is the chat request that runs it.
	Chat *chat.Request
	req  *ResponsesRequest
	// paths names, for each chat message, the field it came from
	// (instructions, input, input[3]): Rename speaks of those.
	paths      []string
	tools      []FunctionTool
	toolChoice json.RawMessage
	format     TextFormat
}

// FunctionTool is a function tool as the Responses API declares it (and
// a response echoes it).
type FunctionTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description *string         `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// FromResponses validates req and converts it to a chat request. The
// model is not checked here (chat.Prepare does, first).
func FromResponses(req *ResponsesRequest) (*Responses, error) {
	if err := refuseStateful(req); err != nil {
		return nil, err
	}
	c := &Responses{req: req, Chat: &chat.Request{
		Model: req.Model, Temperature: req.Temperature, TopP: req.TopP, ParallelToolCalls: req.ParallelToolCalls,
	}}
	if err := c.settings(req); err != nil {
		return nil, err
	}
	if req.Instructions != nil && *req.Instructions != "" {
		c.add("instructions", chat.Message{Role: "developer", Content: chat.Content{Text: *req.Instructions, Set: true}})
	}
	if err := c.input(req.Input); err != nil {
		return nil, err
	}
	if err := c.toolsOf(req); err != nil {
		return nil, err
	}
	if err := c.textFormat(req); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Responses) add(path string, m chat.Message) {
	c.Chat.Messages = append(c.Chat.Messages, m)
	c.paths = append(c.paths, path)
}

func invalid(format string, args ...any) *problem.Error {
	return problem.New(problem.Invalid, format, args...)
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// refuseStateful refuses what needs state kept between requests or a
// service off the box.
func refuseStateful(req *ResponsesRequest) error {
	const stores = "this box stores no responses or conversations"
	switch {
	case req.PreviousResponseID != nil:
		return invalid("previous_response_id is not supported: %s; send the earlier turns in input (the model's output items and your function_call_output items) instead", stores)
	case !isNull(req.Conversation):
		return invalid("conversation is not supported: %s; send the earlier turns in input instead", stores)
	case req.Store != nil && *req.Store:
		return invalid("store: true is not supported: %s (nothing can be retrieved later); send store: false or leave it out", stores)
	case req.Background != nil && *req.Background:
		return invalid("background: true is not supported: %s to poll later; leave background out, and send stream: true to see the answer as it is written", stores)
	case !isNull(req.Prompt):
		return invalid("prompt is not supported: prompt templates are stored on OpenAI's servers and nothing leaves this box; send instructions and input instead")
	case len(req.Include) > 0:
		return invalid("include[0] %q is not supported: this box adds nothing to a response (no log probabilities, reasoning or built-in tool results); leave include out", req.Include[0])
	case !isNull(req.ContextManagement) && string(bytes.TrimSpace(req.ContextManagement)) != "[]":
		return invalid("context_management is not supported: compaction keeps state on OpenAI's servers and %s; leave it out", stores)
	}
	if r := req.Reasoning; r != nil {
		switch {
		case r.Effort != nil && *r.Effort != "none":
			return invalid("reasoning.effort %q is not supported: this box's chat model does not reason; leave reasoning out (or send effort \"none\")", *r.Effort)
		case r.Summary != nil || r.GenerateSummary != nil:
			return invalid("reasoning summaries are not supported: this box's chat model does not reason; leave reasoning out")
		}
	}
	return nil
}

// settings checks the scalar settings.
func (c *Responses) settings(req *ResponsesRequest) error {
	if v := req.MaxOutputTokens; v != nil {
		if *v < 1 {
			return invalid("max_output_tokens is %d; use 1 to %d (more is capped at %d)", *v, maxOutputTokens, maxOutputTokens)
		}
		c.Chat.MaxTokens = v
	}
	if v := req.TopLogprobs; v != nil && *v != 0 {
		return invalid("top_logprobs is %d: this box returns no log probabilities; send 0 or leave it out", *v)
	}
	if v := req.MaxToolCalls; v != nil && *v < 0 {
		return invalid("max_tool_calls is %d; use 0 or more (it bounds built-in tool calls, which this box does not make)", *v)
	}
	if v := req.ServiceTier; v != nil && *v != "auto" && *v != "default" {
		return invalid("service_tier %q: this box has one service tier; send auto or default, or leave it out", *v)
	}
	if v := req.Truncation; v != nil {
		switch *v {
		case "disabled":
		case "auto":
			return invalid("truncation \"auto\" is not supported: this box never drops input to make it fit (an input over the model's context is 413); send disabled or leave it out")
		default:
			return invalid("truncation %q; use disabled", *v)
		}
	}
	if len(req.Metadata) > 16 {
		return invalid("metadata has %d keys; the most is 16", len(req.Metadata))
	}
	for k, v := range req.Metadata {
		if len([]rune(k)) > 64 || len([]rune(v)) > 512 {
			return invalid("metadata[%q]: keys are up to 64 characters and values up to 512", k)
		}
	}
	return nil
}

// builtinTools are the tool types OpenAI runs on its own servers.
var builtinTools = map[string]bool{
	"web_search": true, "web_search_preview": true, "web_search_2025_08_26": true, "web_search_preview_2025_03_11": true,
	"file_search": true, "code_interpreter": true, "computer_use_preview": true, "computer_use": true, "computer": true,
	"image_generation": true, "mcp": true, "local_shell": true, "shell": true, "apply_patch": true, "tool_search": true,
}

// toolsOf converts tools and tool_choice.
func (c *Responses) toolsOf(req *ResponsesRequest) error {
	for i, raw := range req.Tools {
		where := fmt.Sprintf("tools[%d]", i)
		typ, err := peekType(raw, where)
		if err != nil {
			return err
		}
		switch {
		case typ == "function":
		case typ == "":
			return invalid("%s.type is required: function", where)
		case typ == "file_search":
			return invalid("%s: file_search is not supported: it searches vector stores on OpenAI's servers and nothing leaves this box; search your documents with POST /retrieval/search, or declare a function tool that does", where)
		case typ == "custom":
			return invalid("%s: custom (free-form) tools are not supported; declare a function tool with a JSON schema", where)
		case builtinTools[typ]:
			return invalid("%s: %s is a built-in tool that runs on OpenAI's servers; this box runs no built-in tools (nothing leaves it): declare a function tool and run it in your app", where, typ)
		default:
			return invalid("%s.type %q is not supported; this box calls function tools (type function)", where, typ)
		}
		var t FunctionTool
		if err := decodeStrict(raw, &t, where); err != nil {
			return err
		}
		if !toolName.MatchString(t.Name) {
			return invalid("%s.name %q: use 1 to 64 letters, digits, _ or -", where, t.Name)
		}
		if !isNull(t.Parameters) {
			var obj map[string]any
			if json.Unmarshal(t.Parameters, &obj) != nil {
				return invalid("%s.parameters must be a JSON schema object", where)
			}
		} else {
			t.Parameters = nil
		}
		c.tools = append(c.tools, t)
		fd := chat.FunctionDef{Name: t.Name, Parameters: t.Parameters, Strict: t.Strict}
		if t.Description != nil {
			fd.Description = *t.Description
		}
		c.Chat.Tools = append(c.Chat.Tools, chat.Tool{Type: "function", Function: fd})
	}
	choice, err := c.choice(req.ToolChoice)
	if err != nil {
		return err
	}
	c.Chat.ToolChoice = choice
	return nil
}

var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// choice converts tool_choice to chat's form and keeps the echo.
func (c *Responses) choice(raw json.RawMessage) (json.RawMessage, error) {
	const use = `tool_choice must be "none", "auto", "required" or {"type": "function", "name": "<a function in tools>"}`
	if isNull(raw) {
		c.toolChoice = json.RawMessage(`"auto"`)
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "none", "auto", "required":
			c.toolChoice = raw
			return raw, nil
		}
		return nil, invalid("tool_choice %q; %s", s, strings.TrimPrefix(use, "tool_choice "))
	}
	typ, err := peekType(raw, "tool_choice")
	if err != nil {
		return nil, invalid("%s", use)
	}
	switch {
	case typ == "function":
	case typ == "allowed_tools":
		return nil, invalid("tool_choice allowed_tools is not supported; send only the tools the model may call in tools, with tool_choice auto or required")
	case typ == "custom":
		return nil, invalid("tool_choice custom is not supported: this box calls function tools only")
	case builtinTools[typ]:
		return nil, invalid("tool_choice %s is not supported: it is a built-in tool that runs on OpenAI's servers, and this box runs none", typ)
	default:
		return nil, invalid("%s", use)
	}
	var named struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := decodeStrict(raw, &named, "tool_choice"); err != nil {
		return nil, err
	}
	if named.Name == "" {
		return nil, invalid("tool_choice needs name: the function to call")
	}
	c.toolChoice, _ = json.Marshal(named)
	out, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": named.Name}})
	return out, nil
}

// schemaName is text.format.name's form (OpenAI's).
var schemaName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// textFormat converts text.format to chat's response_format.
func (c *Responses) textFormat(req *ResponsesRequest) error {
	c.format = TextFormat{Type: "text"}
	if req.Text == nil {
		return nil
	}
	if v := req.Text.Verbosity; v != nil && *v != "low" && *v != "medium" && *v != "high" {
		return invalid("text.verbosity %q; use low, medium or high", *v)
	}
	f := req.Text.Format
	if f == nil {
		return nil
	}
	switch f.Type {
	case "text":
		return nil
	case "json_object":
	case "json_schema":
		if !schemaName.MatchString(f.Name) {
			return invalid("text.format.name %q: a json_schema format needs a name of 1 to 64 letters, digits, _ or -", f.Name)
		}
		if isNull(f.Schema) {
			return invalid("text.format.schema is required: the JSON schema the answer must follow")
		}
		var obj map[string]any
		if json.Unmarshal(f.Schema, &obj) != nil {
			return invalid("text.format.schema must be a JSON object (a JSON schema)")
		}
	case "":
		return invalid("text.format.type is required: text, json_object or json_schema")
	default:
		return invalid("text.format.type %q; use text, json_object or json_schema", f.Type)
	}
	if len(c.Chat.Tools) > 0 && string(c.toolChoice) != `"none"` {
		return invalid("use either tools or text.format %s in one request: this box holds an answer to one grammar (tool_choice \"none\" keeps the tools unused)", f.Type)
	}
	c.format = *f
	rf := &chat.ResponseFormat{Type: f.Type}
	if f.Type == "json_schema" {
		rf.JSONSchema = &chat.JSONSchema{Name: f.Name, Description: f.Description, Schema: f.Schema, Strict: f.Strict}
	}
	c.Chat.ResponseFormat = rf
	return nil
}

// chatNames are field names of chat's messages and their Responses
// names, for the refusals chat.Prepare words itself.
var chatNames = strings.NewReplacer(
	"response_format.json_schema.schema", "text.format.schema",
	"response_format", "text.format",
	"image_url.url", "image_url",
	"max_tokens", "max_output_tokens",
)

var messageRef = regexp.MustCompile(`messages\[(\d+)\]`)

// Rename words a refusal of the chat request (chat.Prepare's, the
// model call's) in the Responses API's field names: messages[k] becomes
// the instructions or input item it came from.
// ChatRequest is the chat request that runs it.
func (c *Responses) ChatRequest() *chat.Request { return c.Chat }

func (c *Responses) Rename(err error) error {
	return rename(err, c.paths, chatNames)
}

func rename(err error, paths []string, names *strings.Replacer) error {
	p, ok := problem.As(err)
	if !ok || p.Kind != problem.Invalid && p.Kind != problem.TooLarge {
		return err
	}
	msg := messageRef.ReplaceAllStringFunc(p.Message, func(m string) string {
		var k int
		if _, err := fmt.Sscanf(m, "messages[%d]", &k); err == nil && k < len(paths) {
			return paths[k]
		}
		return m
	})
	if names != nil {
		msg = names.Replace(msg)
	}
	if msg == p.Message {
		return err
	}
	q := *p
	q.Message = msg
	return &q
}

// NewResponseID makes a response id (also its receipt's id).
func NewResponseID() string { return ids.New("resp_", 12) }
