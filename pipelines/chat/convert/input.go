package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"boxd/engine/llm"
	"boxd/internal/strictjson"
	"boxd/pipelines/chat"
)

// Input items: a message (user, system, developer or assistant; content
// text or parts), a function_call the model made earlier, and a
// function_call_output with its result. They become chat messages in
// order: function_call items join the assistant message before them (or
// make one), as chat's assistant tool_calls.

type messageItem struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Status  string          `json:"status"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type functionCallItem struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	Status    string  `json:"status"`
	CallID    string  `json:"call_id"`
	Name      string  `json:"name"`
	Arguments *string `json:"arguments"`
}

type functionCallOutputItem struct {
	Type   string          `json:"type"`
	ID     string          `json:"id"`
	Status string          `json:"status"`
	CallID string          `json:"call_id"`
	Name   string          `json:"name"` // the function's, in newer SDKs
	Output json.RawMessage `json:"output"`
}

// Content parts.
type textPart struct {
	Type        string          `json:"type"`
	Text        *string         `json:"text"`
	Annotations json.RawMessage `json:"annotations"` // output_text, echoed back
	Logprobs    json.RawMessage `json:"logprobs"`    // output_text, echoed back
}

type refusalPart struct {
	Type    string  `json:"type"`
	Refusal *string `json:"refusal"`
}

type imagePart struct {
	Type     string  `json:"type"`
	ImageURL *string `json:"image_url"`
	FileID   *string `json:"file_id"`
	Detail   string  `json:"detail"`
}

// hostedItems are input item types made by built-in tools, which run on
// OpenAI's servers.
var hostedItems = map[string]bool{
	"web_search_call": true, "file_search_call": true, "computer_call": true, "computer_call_output": true,
	"code_interpreter_call": true, "image_generation_call": true, "local_shell_call": true, "local_shell_call_output": true,
	"shell_call": true, "shell_call_output": true, "apply_patch_call": true, "apply_patch_call_output": true,
	"mcp_list_tools": true, "mcp_approval_request": true, "mcp_approval_response": true, "mcp_call": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "tool_search_call": true, "tool_search_output": true,
}

// input converts input: a string (one user message) or a list of items.
func (c *Responses) input(raw json.RawMessage) error {
	t := bytes.TrimSpace(raw)
	if isNull(t) {
		return invalid("input is required: the text to answer, or a list of input items (messages, function_call_output, ...)")
	}
	switch t[0] {
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return invalid("input is not a valid JSON string")
		}
		c.add("input", chat.Message{Role: "user", Content: chat.Content{Text: s, Set: true, Marked: llm.HasMarker(s)}})
		return nil
	case '[':
	default:
		return invalid("input must be a string or an array of input items, not %s", kindOf(t))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(t, &items); err != nil {
		return invalid("input must be a string or an array of input items")
	}
	if len(items) == 0 {
		return invalid("input is an empty list; send at least one input item")
	}
	for i, item := range items {
		where := fmt.Sprintf("input[%d]", i)
		if b := bytes.TrimSpace(item); len(b) == 0 || b[0] != '{' {
			return invalid("%s must be an object (an input item), not %s", where, kindOf(b))
		}
		typ, err := peekType(item, where)
		if err != nil {
			return err
		}
		switch {
		case typ == "" || typ == "message":
			err = c.message(item, where)
		case typ == "function_call":
			err = c.functionCall(item, where)
		case typ == "function_call_output":
			err = c.functionCallOutput(item, where)
		case typ == "item_reference":
			err = invalid("%s: item_reference is not supported: it points at an item stored on OpenAI's servers, and this box stores none; send the item itself", where)
		case typ == "reasoning":
			err = invalid("%s: reasoning items are not supported: this box's chat model does not reason; leave them out of input", where)
		case typ == "compaction":
			err = invalid("%s: compaction items are not supported: this box stores no conversations; send the earlier turns themselves", where)
		case hostedItems[typ]:
			err = invalid("%s: %s items come from built-in tools that run on OpenAI's servers, and this box runs none; leave them out of input", where, typ)
		default:
			err = invalid("%s.type %q is not supported; this box reads message, function_call and function_call_output items", where, typ)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *Responses) message(raw json.RawMessage, where string) error {
	var m messageItem
	if err := decodeStrict(raw, &m, where); err != nil {
		return err
	}
	switch m.Role {
	case "user", "system", "developer", "assistant":
	case "":
		return invalid("%s.role is required: user, assistant, system or developer", where)
	default:
		return invalid("%s.role %q; use user, assistant, system or developer", where, m.Role)
	}
	content, err := parts(m.Content, m.Role, where)
	if err != nil {
		return err
	}
	c.add(where, chat.Message{Role: m.Role, Content: content})
	return nil
}

// parts reads a message's content: a string or a list of parts.
func parts(raw json.RawMessage, role, where string) (chat.Content, error) {
	t := bytes.TrimSpace(raw)
	if isNull(t) {
		return chat.Content{}, invalid("%s.content is required: text, or a list of content parts", where)
	}
	if t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return chat.Content{}, invalid("%s.content is not a valid JSON string", where)
		}
		return chat.Content{Text: s, Set: true, Marked: llm.HasMarker(s)}, nil
	}
	var list []json.RawMessage
	if t[0] != '[' || json.Unmarshal(t, &list) != nil {
		return chat.Content{}, invalid("%s.content must be a string or an array of content parts, not %s", where, kindOf(t))
	}
	out := chat.Content{Set: true}
	assistant := role == "assistant"
	for j, p := range list {
		at := fmt.Sprintf("%s.content[%d]", where, j)
		if b := bytes.TrimSpace(p); len(b) == 0 || b[0] != '{' {
			return chat.Content{}, invalid("%s must be an object (a content part), not %s", at, kindOf(b))
		}
		typ, err := peekType(p, at)
		if err != nil {
			return chat.Content{}, err
		}
		switch typ {
		case "input_text", "output_text":
			if typ == "output_text" && !assistant {
				return chat.Content{}, invalid("%s: output_text parts belong to assistant messages; send input_text in a %s message", at, role)
			}
			var tp textPart
			if err := decodeStrict(p, &tp, at); err != nil {
				return chat.Content{}, err
			}
			if typ == "input_text" && (tp.Annotations != nil || tp.Logprobs != nil) {
				return chat.Content{}, invalid("%s: an input_text part takes type and text only", at)
			}
			if tp.Text == nil {
				return chat.Content{}, invalid("%s needs text", at)
			}
			out.Text += *tp.Text
			out.Marked = out.Marked || llm.HasMarker(*tp.Text)
		case "refusal":
			if !assistant {
				return chat.Content{}, invalid("%s: refusal parts belong to assistant messages", at)
			}
			var rp refusalPart
			if err := decodeStrict(p, &rp, at); err != nil {
				return chat.Content{}, err
			}
			if rp.Refusal == nil {
				return chat.Content{}, invalid("%s needs refusal: the refusal's text", at)
			}
			out.Text += *rp.Refusal
		case "input_image":
			url, err := image(p, role, at)
			if err != nil {
				return chat.Content{}, err
			}
			out.Images = append(out.Images, chat.ImagePart{URL: url})
			out.Text += llm.ImageMarker
		case "input_file":
			return chat.Content{}, invalid("%s: input_file parts are not supported: file inputs are read on OpenAI's servers and nothing leaves this box; send the file's text as input_text (POST /docreader/read reads PDFs and scans on this box)", at)
		case "input_audio":
			return chat.Content{}, invalid("%s: input_audio parts are not supported: the chat model reads text and images; send a transcript as input_text", at)
		case "":
			return chat.Content{}, invalid("%s.type is required: input_text or input_image (output_text in assistant messages)", at)
		default:
			return chat.Content{}, invalid("%s.type %q is not supported; use input_text or input_image (output_text in assistant messages)", at, typ)
		}
	}
	return out, nil
}

// image reads an input_image part: its data: URL (chat reads it).
func image(raw json.RawMessage, role, at string) (string, error) {
	var ip imagePart
	if err := decodeStrict(raw, &ip, at); err != nil {
		return "", err
	}
	switch {
	case role != "user":
		return "", invalid("%s: input_image parts are read in user messages only, not %s", at, role)
	case ip.FileID != nil:
		return "", invalid("%s: file_id names a file stored on OpenAI's servers, and nothing leaves this box; send the image inline as image_url: a data: URL (data:image/png;base64,...)", at)
	case ip.ImageURL == nil || *ip.ImageURL == "":
		return "", invalid("%s needs image_url: the image as a data: URL (data:image/png;base64,...)", at)
	case strings.HasPrefix(*ip.ImageURL, "http://"), strings.HasPrefix(*ip.ImageURL, "https://"):
		return "", invalid("%s: this box does not fetch image URLs (nothing leaves the machine); send the image inline as a data: URL (data:image/png;base64,...)", at)
	}
	switch ip.Detail {
	case "", "auto", "low", "high", "original":
	default:
		return "", invalid("%s.detail %q; use auto, low, high or original", at, ip.Detail)
	}
	return *ip.ImageURL, nil
}

func (c *Responses) functionCall(raw json.RawMessage, where string) error {
	var fc functionCallItem
	if err := decodeStrict(raw, &fc, where); err != nil {
		return err
	}
	switch {
	case fc.CallID == "":
		return invalid("%s (function_call) needs call_id: the id the function_call_output answering it names", where)
	case !toolName.MatchString(fc.Name):
		return invalid("%s (function_call) needs name: the function called (1 to 64 letters, digits, _ or -)", where)
	case fc.Arguments == nil:
		return invalid("%s (function_call) needs arguments: a JSON string holding a JSON object", where)
	}
	var args map[string]any
	if json.Unmarshal([]byte(*fc.Arguments), &args) != nil {
		return invalid("%s.arguments must be a JSON string holding a JSON object, like \"{\\\"city\\\": \\\"Boston\\\"}\"", where)
	}
	call := chat.ToolCall{ID: fc.CallID, Type: "function", Function: chat.FunctionCall{Name: fc.Name, Arguments: *fc.Arguments}}
	if n := len(c.Chat.Messages); n > 0 && c.Chat.Messages[n-1].Role == "assistant" {
		c.Chat.Messages[n-1].ToolCalls = append(c.Chat.Messages[n-1].ToolCalls, call)
		return nil
	}
	c.add(where, chat.Message{Role: "assistant", ToolCalls: []chat.ToolCall{call}})
	return nil
}

// called says whether an earlier input item called id.
func (c *Responses) called(id string) bool {
	for _, m := range c.Chat.Messages {
		for _, tc := range m.ToolCalls {
			if tc.ID == id {
				return true
			}
		}
	}
	return false
}

func (c *Responses) functionCallOutput(raw json.RawMessage, where string) error {
	var fo functionCallOutputItem
	if err := decodeStrict(raw, &fo, where); err != nil {
		return err
	}
	if fo.CallID == "" {
		return invalid("%s (function_call_output) needs call_id: the call_id of the function_call it answers", where)
	}
	t := bytes.TrimSpace(fo.Output)
	var text string
	switch {
	case isNull(t):
		return invalid("%s (function_call_output) needs output: the function's result, as text", where)
	case t[0] == '"':
		if err := json.Unmarshal(t, &text); err != nil {
			return invalid("%s.output is not a valid JSON string", where)
		}
	case t[0] == '[':
		content, err := parts(t, "tool", where+".output") // input_text parts (an image is refused: not in a user message)
		if err != nil {
			return err
		}
		text = content.Text
	default:
		return invalid("%s.output must be a string or an array of input_text parts, not %s", where, kindOf(t))
	}
	if !c.called(fo.CallID) {
		// As OpenAI answers: a result must follow the call it answers.
		return invalid("%s (function_call_output): no function_call with call_id %q comes before it in input; send the function_call item (as the response gave it) before its output", where, fo.CallID)
	}
	c.add(where, chat.Message{Role: "tool", ToolCallID: fo.CallID, Name: fo.Name, Content: chat.Content{Text: text, Set: true, Marked: llm.HasMarker(text)}})
	return nil
}

// peekType reads an object's type ("" when absent).
func peekType(raw json.RawMessage, where string) (string, error) {
	var head struct {
		Type *json.RawMessage `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return "", invalid("%s must be an object, not %s", where, kindOf(bytes.TrimSpace(raw)))
	}
	if head.Type == nil || isNull(*head.Type) {
		return "", nil
	}
	var typ string
	if json.Unmarshal(*head.Type, &typ) != nil {
		return "", invalid("%s.type must be a string, not %s", where, kindOf(bytes.TrimSpace(*head.Type)))
	}
	return typ, nil
}

// decodeStrict reads an object into dst as the body reader does: an
// unknown key, a value of the wrong type, a key twice or in the wrong
// case is refused, named by its path under where.
func decodeStrict(raw json.RawMessage, dst any, where string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		err = strictjson.Explain(raw, err)
		var te *strictjson.TypeError
		switch {
		case errors.As(err, &te) && te.Path != "":
			return invalid("%s.%s must be %s, not %s", where, te.Path, te.Want, te.Got)
		case errors.As(err, &te):
			return invalid("%s must be %s, not %s", where, te.Want, te.Got)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return invalid("%s has an unknown field %s; remove it", where, strings.TrimPrefix(err.Error(), "json: unknown field "))
		}
		return invalid("%s: %s", where, strings.TrimPrefix(err.Error(), "json: "))
	}
	if e := strictjson.Check(raw, dst); e != nil {
		return invalid("%s: %s", where, e.Error())
	}
	return nil
}

// kindOf names a JSON value's kind.
func kindOf(t []byte) string {
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
