package convert

import (
	"bytes"
	"encoding/json"

	"boxd/internal/ids"
	"boxd/pipelines/chat"
)

// CompletionRequest is POST /v1/completions, the legacy text completions
// API. Every field of OpenAI's API is declared (one it does not have is
// refused when the body is read), with chat's llama.cpp sampling
// extensions (top_k, min_p, repeat_penalty). The prompt is the user turn
// of the model's chat template, as ollama's /v1/completions sends it:
// the box's model is an instruction model, and there is no raw mode.
type CompletionRequest struct {
	Model            string             `json:"model"`
	Prompt           json.RawMessage    `json:"prompt"`
	Suffix           *string            `json:"suffix"`
	MaxTokens        *int               `json:"max_tokens"`
	Temperature      *float64           `json:"temperature"`
	TopP             *float64           `json:"top_p"`
	TopK             *int               `json:"top_k"`
	MinP             *float64           `json:"min_p"`
	RepeatPenalty    *float64           `json:"repeat_penalty"`
	FrequencyPenalty *float64           `json:"frequency_penalty"`
	PresencePenalty  *float64           `json:"presence_penalty"`
	Seed             *int64             `json:"seed"`
	Stop             chat.Stop          `json:"stop"`
	N                *int               `json:"n"`
	BestOf           *int               `json:"best_of"`
	Stream           bool               `json:"stream"`
	StreamOptions    *CompletionStream  `json:"stream_options"`
	Logprobs         *int               `json:"logprobs"`
	Echo             *bool              `json:"echo"`
	LogitBias        map[string]float64 `json:"logit_bias"`
	User             string             `json:"user"`
}

// CompletionStream is stream_options; the last chunk always carries
// usage (and the receipt), as on chat completions.
type CompletionStream struct {
	IncludeUsage       *bool `json:"include_usage"`
	IncludeObfuscation *bool `json:"include_obfuscation"`
}

// DefaultCompletionTokens is the legacy API's max_tokens default
// (OpenAI's: 16), not chat's 2,048: legacy clients expect it.
const DefaultCompletionTokens = 16

// Completions is a completions request converted to chat.
type Completions struct {
	Chat *chat.Request
}

// FromCompletions validates req and converts it to a chat request.
func FromCompletions(req *CompletionRequest) (*Completions, error) {
	prompt, err := promptOf(req.Prompt)
	if err != nil {
		return nil, err
	}
	switch {
	case req.Suffix != nil && *req.Suffix != "":
		return nil, invalid("suffix is not supported: the box's chat model does not fill in the middle; leave suffix out")
	case req.Echo != nil && *req.Echo:
		return nil, invalid("echo: true is not supported: the answer holds the completion only; leave echo out")
	case req.BestOf != nil && *req.BestOf != 1:
		return nil, invalid("best_of is %d; this box generates one completion (best_of: 1)", *req.BestOf)
	case req.Logprobs != nil:
		return nil, invalid("logprobs is not supported: this box returns no log probabilities; leave it out")
	case len(req.LogitBias) > 0:
		return nil, invalid("logit_bias is not supported: the box's sampler takes no token biases; leave it out")
	}
	max := DefaultCompletionTokens
	if req.MaxTokens != nil {
		max = *req.MaxTokens // chat checks it (1 to 2,048, more capped)
	}
	return &Completions{Chat: &chat.Request{
		Model: req.Model, Messages: []chat.Message{{Role: "user", Content: chat.Content{Text: prompt, Set: true}}},
		MaxTokens: &max, Temperature: req.Temperature, TopP: req.TopP, TopK: req.TopK, MinP: req.MinP,
		RepeatPenalty: req.RepeatPenalty, FrequencyPenalty: req.FrequencyPenalty, PresencePenalty: req.PresencePenalty,
		Seed: req.Seed, Stop: req.Stop, N: req.N, User: req.User,
	}}, nil
}

// promptOf reads prompt: a string, or a list of one string.
func promptOf(raw json.RawMessage) (string, error) {
	t := bytes.TrimSpace(raw)
	if isNull(t) {
		return "", invalid("prompt is required: the text to complete")
	}
	var s string
	if t[0] == '"' {
		if err := json.Unmarshal(t, &s); err != nil {
			return "", invalid("prompt is not a valid JSON string")
		}
		return s, nil
	}
	if t[0] != '[' {
		return "", invalid("prompt must be a string (or an array of one string), not %s", kindOf(t))
	}
	var list []json.RawMessage
	if err := json.Unmarshal(t, &list); err != nil {
		return "", invalid("prompt must be a string (or an array of one string)")
	}
	switch {
	case len(list) == 0:
		return "", invalid("prompt is an empty list; send the text to complete")
	case bytes.TrimSpace(list[0])[0] != '"':
		return "", invalid("prompt as token ids is not supported; send the prompt as text")
	case len(list) > 1:
		return "", invalid("prompt holds %d prompts; this box answers one prompt a request: send them one at a time", len(list))
	}
	if err := json.Unmarshal(list[0], &s); err != nil {
		return "", invalid("prompt[0] is not a valid JSON string")
	}
	return s, nil
}

// Rename words a refusal of the chat request in the completions API's
// names: messages[0] is the prompt.
// ChatRequest is the chat request that runs it.
func (c *Completions) ChatRequest() *chat.Request { return c.Chat }

func (c *Completions) Rename(err error) error {
	return rename(err, []string{"prompt"}, nil)
}

// Completion is a text_completion, whole or (streamed) one chunk.
type Completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []CompletionChoice `json:"choices"`
	Usage   *chat.Usage        `json:"usage,omitempty"`
	Receipt *chat.ReceiptRef   `json:"receipt,omitempty"`
}

// CompletionChoice is the one choice.
type CompletionChoice struct {
	Text         string    `json:"text"`
	Index        int       `json:"index"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// NewCompletionID makes a completion id (also its receipt's id).
func NewCompletionID() string { return ids.New("cmpl-", 12) }

// CompletionOf is the answer of a finished call.
func CompletionOf(id, model string, out *chat.Completion) *Completion {
	finish := out.FinishReason
	usage, rec := out.Usage, out.Receipt
	return &Completion{ID: id, Object: "text_completion", Created: out.Created, Model: model,
		Choices: []CompletionChoice{{Text: out.Content, FinishReason: &finish}}, Usage: &usage, Receipt: &rec}
}

// CompletionChunk is one streamed piece of text.
func CompletionChunk(id, model string, created int64, piece string) *Completion {
	return &Completion{ID: id, Object: "text_completion", Created: created, Model: model,
		Choices: []CompletionChoice{{Text: piece}}}
}

// CompletionEnd is a stream's last chunk: the finish reason, usage and
// receipt.
func CompletionEnd(id, model string, created int64, out *chat.Completion) *Completion {
	c := CompletionOf(id, model, out)
	c.Created = created
	c.Choices[0].Text = ""
	return c
}
