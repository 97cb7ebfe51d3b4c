package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"boxd/engine/llm"
	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/pipelines/llmcall"
)

// toolMode is how a request uses tools.
type toolMode struct {
	tools   []Tool
	choice  string // none, auto, required
	named   string // a forced function
	grammar string
}

// parseTools validates tools and tool_choice and builds the grammar that
// keeps the model's answer either plain text or a well-formed call.
func parseTools(req *Request) (*toolMode, *problem.Error) {
	if len(req.Tools) == 0 {
		if len(bytes.TrimSpace(req.ToolChoice)) > 0 && string(bytes.TrimSpace(req.ToolChoice)) != "null" && string(bytes.TrimSpace(req.ToolChoice)) != `"none"` {
			return nil, problem.New(problem.Invalid, "tool_choice needs tools")
		}
		return nil, nil
	}
	if len(req.Tools) > maxTools {
		return nil, problem.New(problem.Invalid, "%d tools; the limit is %d", len(req.Tools), maxTools)
	}
	m := &toolMode{tools: req.Tools, choice: "auto"}
	seen := map[string]bool{}
	for i, t := range req.Tools {
		if t.Type != "function" {
			return nil, problem.New(problem.Invalid, "tools[%d].type %q; use function", i, t.Type)
		}
		if !toolName.MatchString(t.Function.Name) {
			return nil, problem.New(problem.Invalid, "tools[%d].function.name %q: use 1 to 64 letters, digits, _ or -", i, t.Function.Name)
		}
		if seen[t.Function.Name] {
			return nil, problem.New(problem.Invalid, "tools[%d]: the name %q is used twice", i, t.Function.Name)
		}
		seen[t.Function.Name] = true
		if p := bytes.TrimSpace(t.Function.Parameters); len(p) > 0 {
			var obj map[string]any
			if json.Unmarshal(p, &obj) != nil {
				return nil, problem.New(problem.Invalid, "tools[%d].function.parameters must be a JSON schema object", i)
			}
		}
	}
	if tc := bytes.TrimSpace(req.ToolChoice); len(tc) > 0 && string(tc) != "null" {
		var s string
		var named struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		switch {
		case json.Unmarshal(tc, &s) == nil:
			if s != "none" && s != "auto" && s != "required" {
				return nil, problem.New(problem.Invalid, "tool_choice %q; use none, auto, required or {\"type\":\"function\",\"function\":{\"name\":...}}", s)
			}
			m.choice = s
		case json.Unmarshal(tc, &named) == nil && named.Type == "function":
			if !seen[named.Function.Name] {
				return nil, problem.New(problem.Invalid, "tool_choice names %q, which is not among the tools", named.Function.Name)
			}
			m.choice, m.named = "required", named.Function.Name
		default:
			return nil, problem.New(problem.Invalid, "tool_choice must be none, auto, required or {\"type\":\"function\",\"function\":{\"name\":...}}")
		}
	}
	if m.choice == "none" {
		return m, nil
	}
	maxCalls := maxToolCalls
	if req.ParallelToolCalls != nil && !*req.ParallelToolCalls {
		maxCalls = 1
	}
	var alts []any
	for _, t := range req.Tools {
		if m.named != "" && t.Function.Name != m.named {
			continue
		}
		params := json.RawMessage(`{"type":"object"}`)
		if p := bytes.TrimSpace(t.Function.Parameters); len(p) > 0 {
			params = p
		}
		// Written by hand so that name comes before arguments (llama.cpp's
		// grammar keeps the schema's property order; a map would sort
		// arguments first): a call cut by the length cap still names its
		// function (see cut).
		name, _ := json.Marshal(t.Function.Name)
		alts = append(alts, json.RawMessage(`{"type":"object","properties":{"name":{"const":`+string(name)+`},"arguments":`+string(params)+
			`},"required":["name","arguments"],"additionalProperties":false}`))
	}
	var item any = alts[0]
	if len(alts) > 1 {
		item = map[string]any{"anyOf": alts}
	}
	schema, _ := json.Marshal(map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"tool_calls": map[string]any{"type": "array", "items": item, "minItems": 1, "maxItems": maxCalls}},
		"required":             []string{"tool_calls"},
		"additionalProperties": false,
	})
	g, err := llm.SchemaGrammar(schema)
	if err != nil {
		return nil, problem.New(problem.Invalid, "the tools' parameters cannot be turned into a grammar: %v", err)
	}
	if m.choice == "auto" {
		// Either a call (opening with {) or text that does not open with {.
		g = strings.Replace(g, "root ::=", "boxd-tool-call ::=", 1) +
			"\nroot ::= boxd-tool-call | boxd-free-text\nboxd-free-text ::= [^{ \\t\\n\\r] [^\\x00]*\n"
	}
	m.grammar = g
	return m, nil
}

// toolPrompt tells the model which tools it has and how to call them.
func (m *toolMode) toolPrompt() string {
	var b strings.Builder
	b.WriteString("You can call tools. To call tools, answer with only a JSON object of the form {\"tool_calls\": [{\"name\": \"<tool name>\", \"arguments\": {<arguments>}}]} and nothing else")
	switch {
	case m.named != "":
		fmt.Fprintf(&b, "; call the tool %s now.", m.named)
	case m.choice == "required":
		b.WriteString("; you must call a tool now.")
	default:
		b.WriteString(". Otherwise answer normally, in text that does not start with {.")
	}
	b.WriteString("\nTools:\n")
	for _, t := range m.tools {
		params := string(t.Function.Parameters)
		if params == "" {
			params = `{"type":"object"}`
		}
		fmt.Fprintf(&b, "- %s: %s Parameters (JSON schema): %s\n", t.Function.Name, strings.TrimSpace(t.Function.Description), params)
	}
	return b.String()
}

// render turns the OpenAI messages into template messages: developer is
// system, assistant tool calls are written in the form the model is asked
// to use, and tool results name the call they answer.
func render(msgs []Message, tm *toolMode) []llmcall.Message {
	var out []llmcall.Message
	if tm != nil && tm.choice != "none" {
		out = append(out, llmcall.Message{Role: "system", Content: tm.toolPrompt()})
	}
	names := map[string]string{}
	for _, m := range msgs {
		switch m.Role {
		case "developer", "system":
			out = append(out, llmcall.Message{Role: "system", Content: m.Content.Text})
		case "assistant":
			content := m.Content.Text
			if len(m.ToolCalls) > 0 {
				var calls []map[string]any
				for _, tc := range m.ToolCalls {
					names[tc.ID] = tc.Function.Name
					var args any = map[string]any{}
					if tc.Function.Arguments != "" {
						_ = json.Unmarshal([]byte(tc.Function.Arguments), &args)
					}
					calls = append(calls, map[string]any{"name": tc.Function.Name, "arguments": args})
				}
				b, _ := json.Marshal(map[string]any{"tool_calls": calls})
				content = strings.TrimSpace(content + "\n" + string(b))
			}
			out = append(out, llmcall.Message{Role: "assistant", Content: content})
		case "tool":
			name := names[m.ToolCallID]
			if name == "" {
				name = m.Name
			}
			out = append(out, llmcall.Message{Role: "tool", Content: fmt.Sprintf("Result of the tool call %s (%s):\n%s", m.ToolCallID, name, m.Content.Text)})
		default:
			out = append(out, llmcall.Message{Role: "user", Content: m.Content.Text})
		}
	}
	return out
}

// parse reads a tool call answer.
func (m *toolMode) parse(text string) ([]ToolCall, bool) {
	if m.choice == "none" {
		return nil, false
	}
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "{") {
		return nil, false
	}
	var out struct {
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"tool_calls"`
	}
	if json.Unmarshal([]byte(t), &out) != nil || len(out.ToolCalls) == 0 {
		return nil, false
	}
	known := map[string]bool{}
	for _, tl := range m.tools {
		known[tl.Function.Name] = true
	}
	var calls []ToolCall
	for _, c := range out.ToolCalls {
		if !known[c.Name] {
			return nil, false
		}
		args := c.Arguments
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, args)
		calls = append(calls, ToolCall{ID: callID(), Type: "function", Function: FunctionCall{Name: c.Name, Arguments: compact.String()}})
	}
	return calls, true
}

// partialCall is a call object cut inside its arguments: the grammar
// writes the name first (see parseTools).
var partialCall = regexp.MustCompile(`^\{\s*"name"\s*:\s*"([A-Za-z0-9_-]{1,64})"\s*,\s*"arguments"\s*:\s*([\s\S]*)$`)

// cut reads an answer that the length cap cut inside the tool-call object
// (text opens with {; only a call does): the calls complete before the cut,
// and the call being written if its name is complete, with the arguments
// written so far — what OpenAI answers under finish_reason length, where
// arguments may be incomplete JSON. Never the grammar's wrapper as text.
func (m *toolMode) cut(text string) []ToolCall {
	t := strings.TrimSpace(text)
	known := map[string]bool{}
	for _, tl := range m.tools {
		known[tl.Function.Name] = true
	}
	dec := json.NewDecoder(strings.NewReader(t))
	for _, want := range []any{json.Delim('{'), "tool_calls", json.Delim('[')} {
		if tok, err := dec.Token(); err != nil || tok != want {
			return nil
		}
	}
	var calls []ToolCall
	for dec.More() {
		start := dec.InputOffset()
		var c struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := dec.Decode(&c); err != nil {
			rest := strings.TrimLeft(t[start:], " \t\r\n,")
			if p := partialCall.FindStringSubmatch(rest); p != nil && known[p[1]] {
				calls = append(calls, ToolCall{ID: callID(), Type: "function", Function: FunctionCall{Name: p[1], Arguments: strings.TrimSpace(p[2])}})
			}
			break
		}
		if !known[c.Name] {
			break
		}
		var compact bytes.Buffer
		if json.Compact(&compact, c.Arguments) != nil {
			compact.Reset()
			compact.WriteString("{}")
		}
		calls = append(calls, ToolCall{ID: callID(), Type: "function", Function: FunctionCall{Name: c.Name, Arguments: compact.String()}})
	}
	return calls
}

func callID() string { return ids.New("call_", 12) }
