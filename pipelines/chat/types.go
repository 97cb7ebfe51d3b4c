// Package chat is the chat-completions route family (OpenAI wire format):
// it validates a request, renders the conversation with the model's chat
// template and constrains the output with grammars for response_format and
// tool calls. Running the model, counting tokens against the caller's
// budget and signing one receipt per completion are pipelines/llmcall's.
// Errors are *problem.Error; web maps their kinds to statuses.
package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"boxd/engine/llm"
)

// Request is POST /v1/chat/completions. Fields the box does not use are
// accepted and ignored (OpenAI clients send many); the ones it uses are
// validated.
type Request struct {
	Model               string          `json:"model"`
	Messages            []Message       `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	TopK                *int            `json:"top_k"`
	MinP                *float64        `json:"min_p"`
	RepeatPenalty       *float64        `json:"repeat_penalty"`
	FrequencyPenalty    *float64        `json:"frequency_penalty"`
	PresencePenalty     *float64        `json:"presence_penalty"`
	Seed                *int64          `json:"seed"`
	Stop                Stop            `json:"stop"`
	N                   *int            `json:"n"`
	Stream              bool            `json:"stream"`
	StreamOptions       json.RawMessage `json:"stream_options"`
	ResponseFormat      *ResponseFormat `json:"response_format"`
	Tools               []Tool          `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	Logprobs            *bool           `json:"logprobs"`
	TopLogprobs         *int            `json:"top_logprobs"`
	User                string          `json:"user"`
}

// Message is one message of the conversation.
type Message struct {
	Role       string     `json:"role"`
	Content    Content    `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Content is a message's content: a string, null, or an array of text and
// image parts.
type Content struct {
	// Text is the text parts joined, an llm.ImageMarker where each image
	// part stands.
	Text string
	Set  bool // present and not null
	// Images are the image parts, in order.
	Images []ImagePart
	// Marked: a text part itself holds an image marker.
	Marked bool
	// Unsupported names the first part type that is neither text nor
	// image_url, if any.
	Unsupported string
}

// UnmarshalJSON reads a string, null or an array of parts.
// StrictShape gives strictjson the keys of content parts
// (strictjson.Shaped): a string's content has none.
func (Content) StrictShape() any {
	return []struct {
		Type any `json:"type"`
		Text any `json:"text"`
	}{}
}

func (c *Content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		c.Set = true
		return json.Unmarshal(b, &c.Text)
	case len(b) > 0 && b[0] == '[':
		var parts []struct {
			Type     string          `json:"type"`
			Text     *string         `json:"text"`
			ImageURL json.RawMessage `json:"image_url"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return errors.New("content parts must be objects with type and text (or image_url)")
		}
		c.Set = true
		for i, p := range parts {
			switch p.Type {
			case "text":
				if p.Text == nil {
					return errors.New("a text content part needs text")
				}
				c.Marked = c.Marked || llm.HasMarker(*p.Text)
				c.Text += *p.Text
			case "image_url":
				url, err := imageURL(p.ImageURL)
				if err != nil {
					return fmt.Errorf("content part %d: %w", i, err)
				}
				c.Images = append(c.Images, ImagePart{URL: url})
				c.Text += llm.ImageMarker
			default:
				if c.Unsupported == "" {
					c.Unsupported = p.Type
				}
			}
		}
		return nil
	}
	return errors.New("content must be a string, an array of parts, or null")
}

// imageURL reads an image part's image_url: {"url": "...", "detail": ...}
// as OpenAI sends it, or the URL as a bare string as some clients do.
func imageURL(raw json.RawMessage) (string, error) {
	var obj struct {
		URL    *string `json:"url"`
		Detail string  `json:"detail"`
	}
	if len(raw) > 0 && raw[0] == '"' {
		var url string
		if err := json.Unmarshal(raw, &url); err != nil {
			return "", err
		}
		return url, nil
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.URL == nil {
		return "", errors.New(`an image_url part needs image_url: {"url": "data:image/png;base64,..."}`)
	}
	switch obj.Detail {
	case "", "auto", "low", "high":
	default:
		return "", fmt.Errorf("image_url.detail %q; use auto, low or high", obj.Detail)
	}
	return *obj.URL, nil
}

// MarshalJSON writes the text (or null).
func (c Content) MarshalJSON() ([]byte, error) {
	if !c.Set {
		return []byte("null"), nil
	}
	return json.Marshal(c.Text)
}

// Stop is a string or a list of strings.
type Stop []string

// UnmarshalJSON reads a string, a list of strings, or null.
func (s *Stop) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = Stop{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("stop must be a string or an array of strings")
	}
	*s = many
	return nil
}

// ToolCall is a call the model made (or made earlier, in the history).
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
	// Index is set in stream deltas.
	Index *int `json:"index,omitempty"`
}

// FunctionCall names the function and carries its arguments as a JSON
// string, as OpenAI does.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a function the model may call.
type Tool struct {
	Type     string      `json:"type"`
	Function FunctionDef `json:"function"`
}

// FunctionDef describes a function.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// ResponseFormat is text, json_object or json_schema.
type ResponseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema is response_format.json_schema.
type JSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      *bool           `json:"strict,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// ReceiptRef is the receipt in a response: the completion id, the model,
// the hex Ed25519 signature of the signed receipt (the box's key takes the
// gateway's place) and the provider (this box's key id).
type ReceiptRef struct {
	ID         string `json:"id"`
	Model      string `json:"model"`
	GatewaySig string `json:"gateway_sig"`
	Provider   string `json:"provider"`
	Status     string `json:"status"`
}

// Response is a non-streamed completion.
type Response struct {
	ID      string      `json:"id"`
	Object  string      `json:"object"`
	Created int64       `json:"created"`
	Model   string      `json:"model"`
	Choices []Choice    `json:"choices"`
	Usage   Usage       `json:"usage"`
	Receipt *ReceiptRef `json:"receipt,omitempty"`
}

// Choice is the one choice of a completion.
type Choice struct {
	Index        int               `json:"index"`
	Message      *AssistantMessage `json:"message,omitempty"`
	Delta        *Delta            `json:"delta,omitempty"`
	FinishReason *string           `json:"finish_reason"`
	Logprobs     *struct{}         `json:"logprobs"`
}

// AssistantMessage is the answer of a non-streamed completion: content is
// null when the model called tools.
type AssistantMessage struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Refusal   *string    `json:"refusal"`
}

// Delta is one step of a streamed answer.
type Delta struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// Chunk is one streamed event.
type Chunk struct {
	ID      string      `json:"id"`
	Object  string      `json:"object"`
	Created int64       `json:"created"`
	Model   string      `json:"model"`
	Choices []Choice    `json:"choices"`
	Usage   *Usage      `json:"usage,omitempty"`
	Receipt *ReceiptRef `json:"receipt,omitempty"`
}
