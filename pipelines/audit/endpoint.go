package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"boxd/internal/run"
)

// Call is one probe sent to an endpoint.
type Call struct {
	Probe Probe
	// Seed is sent as the request's seed (fresh per pass).
	Seed int64
	// TopLogprobs asks for the chosen token's logprob and this many
	// alternatives at each position (0: none).
	TopLogprobs int
	// Stream asks for server-sent chunks (time to first token).
	Stream bool
}

// Token is one generated token with its log probability and the top
// alternatives at its position.
type Token struct {
	Text string `json:"t"`
	// Hex is the token's bytes in hex when the endpoint gave them (a
	// byte-fallback piece is not valid UTF-8 on its own).
	Hex     string     `json:"x,omitempty"`
	Logprob float64    `json:"lp"`
	Top     []TopToken `json:"top,omitempty"`
}

// TopToken is one alternative at a position.
type TopToken struct {
	Text    string  `json:"t"`
	Hex     string  `json:"x,omitempty"`
	Logprob float64 `json:"lp"`
}

// ToolCall is a function call an answer made.
type ToolCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Reply is what an endpoint answered to one probe.
type Reply struct {
	Text      string
	Tokens    []Token // nil: the endpoint gave no logprobs
	ToolCalls []ToolCall
	// Model is the model the endpoint said answered.
	Model            string
	Finish           string
	PromptTokens     int
	CompletionTokens int
	// FirstToken is the time to the first content (streamed calls);
	// Total the whole call.
	FirstToken, Total time.Duration
	// Receipt is the model call's receipt when it went through this box's
	// own engine.
	Receipt *run.ReceiptBody
}

// Endpoint answers probes: an OpenAI-compatible server (HTTPEndpoint) or
// this box's own chat model (Local).
type Endpoint interface {
	Chat(ctx context.Context, c Call) (Reply, error)
}

// Poster sends a POST and hands back the response to read (the box's
// outbound client: addresses checked when dialled, no redirects).
type Poster interface {
	Post(ctx context.Context, rawURL string, header http.Header, body []byte) (*http.Response, error)
}

// ProbeError is a probe the endpoint answered with an error or an answer
// that could not be read. Its message never carries the provider key.
type ProbeError struct {
	Status int // HTTP status, 0 for a transport or reading failure
	Msg    string
}

func (e *ProbeError) Error() string { return e.Msg }

// maxReplyBytes bounds one probe's answer.
const maxReplyBytes = 1 << 20

// HTTPEndpoint is an OpenAI-compatible /v1 server.
type HTTPEndpoint struct {
	BaseURL string // without the trailing slash, ending /v1
	Model   string
	Poster  Poster
	// key is the provider's key: held for the run, sent as a bearer
	// token, never marshalled, logged or put in an error.
	key string
	// noLogprobs is set once the endpoint refused logprobs (400): the
	// calls after that do not ask.
	noLogprobs atomic.Bool
}

// NewHTTPEndpoint makes an endpoint for baseURL and model, with the
// provider's key ("" for none).
func NewHTTPEndpoint(baseURL, model, key string, p Poster) *HTTPEndpoint {
	return &HTTPEndpoint{BaseURL: strings.TrimRight(baseURL, "/"), Model: model, Poster: p, key: key}
}

// MarshalJSON keeps the key out of any serialisation.
func (e *HTTPEndpoint) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"base_url": e.BaseURL, "model": e.Model})
}

// String names the endpoint without its key.
func (e *HTTPEndpoint) String() string { return e.BaseURL + " " + e.Model }

// redact removes the key from a provider's message.
func (e *HTTPEndpoint) redact(s string) string {
	if e.key != "" {
		s = strings.ReplaceAll(s, e.key, "[provider key]")
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// wireRequest is the OpenAI chat completions body a probe sends.
type wireRequest struct {
	Model         string         `json:"model"`
	Messages      []Message      `json:"messages"`
	MaxTokens     int            `json:"max_tokens"`
	Temperature   float64        `json:"temperature"`
	Seed          int64          `json:"seed"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	Logprobs      bool           `json:"logprobs,omitempty"`
	TopLogprobs   int            `json:"top_logprobs,omitempty"`
	Tools         []Tool         `json:"tools,omitempty"`
	ToolChoice    string         `json:"tool_choice,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

func wireOf(model string, c Call, logprobs bool) wireRequest {
	w := wireRequest{Model: model, Messages: c.Probe.Messages, MaxTokens: c.Probe.MaxTokens, Temperature: 0, Seed: c.Seed, Stream: c.Stream, Tools: c.Probe.Tools}
	if c.Stream {
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if logprobs && c.TopLogprobs > 0 {
		w.Logprobs, w.TopLogprobs = true, c.TopLogprobs
	}
	if len(c.Probe.Tools) > 0 {
		w.ToolChoice = "auto"
	}
	return w
}

// Chat sends one probe.
func (e *HTTPEndpoint) Chat(ctx context.Context, c Call) (Reply, error) {
	asked := c.TopLogprobs > 0 && !e.noLogprobs.Load()
	r, err := e.send(ctx, c, asked)
	var pe *ProbeError
	if asked && errors.As(err, &pe) && pe.Status == http.StatusBadRequest {
		// An endpoint without logprobs (boxd itself, some hosts) refuses
		// the field: ask again without, and no more in this run.
		e.noLogprobs.Store(true)
		return e.send(ctx, c, false)
	}
	return r, err
}

func (e *HTTPEndpoint) send(ctx context.Context, c Call, logprobs bool) (Reply, error) {
	body, err := json.Marshal(wireOf(e.Model, c, logprobs))
	if err != nil {
		return Reply{}, fmt.Errorf("audit: encoding a probe: %w", err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if c.Stream {
		h.Set("Accept", "text/event-stream")
	}
	if e.key != "" {
		h.Set("Authorization", "Bearer "+e.key)
	}
	start := time.Now()
	resp, err := e.Poster.Post(ctx, e.BaseURL+"/chat/completions", h, body)
	if err != nil {
		return Reply{}, &ProbeError{Msg: e.redact(err.Error())}
	}
	defer resp.Body.Close()
	lr := io.LimitReader(resp.Body, maxReplyBytes+1)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(lr, 4096))
		return Reply{}, &ProbeError{Status: resp.StatusCode, Msg: e.statusMessage(resp.StatusCode, b)}
	}
	var rep Reply
	if c.Stream && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		rep, err = readStream(lr, start)
	} else {
		rep, err = readWhole(lr)
	}
	if err != nil {
		return Reply{}, &ProbeError{Msg: e.redact(err.Error())}
	}
	rep.Total = time.Since(start)
	if rep.FirstToken == 0 {
		rep.FirstToken = rep.Total
	}
	return rep, nil
}

// statusMessage says what an error answer was, the provider's message
// kept only where it cannot carry credentials.
func (e *HTTPEndpoint) statusMessage(status int, body []byte) string {
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return fmt.Sprintf("the endpoint answered %d: the provider refused the credentials (check api_key)", status)
	}
	var eb struct {
		Error json.RawMessage `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &eb) == nil && len(eb.Error) > 0 {
		var s string
		var o struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(eb.Error, &s) == nil {
			msg = s
		} else if json.Unmarshal(eb.Error, &o) == nil {
			msg = o.Message
		}
	}
	if msg == "" {
		return fmt.Sprintf("the endpoint answered %d", status)
	}
	return e.redact(fmt.Sprintf("the endpoint answered %d: %s", status, msg))
}

// wireLogprobs is OpenAI's choices[].logprobs.
type wireLogprobs struct {
	Content []struct {
		Token       string  `json:"token"`
		Logprob     float64 `json:"logprob"`
		Bytes       []int   `json:"bytes"`
		TopLogprobs []struct {
			Token   string  `json:"token"`
			Logprob float64 `json:"logprob"`
			Bytes   []int   `json:"bytes"`
		} `json:"top_logprobs"`
	} `json:"content"`
}

// hexOf is the hex of a token's bytes ("" for none).
func hexOf(b []int) string {
	out := make([]byte, 0, len(b))
	for _, x := range b {
		if x < 0 || x > 255 {
			return ""
		}
		out = append(out, byte(x))
	}
	return hex.EncodeToString(out)
}

func (w *wireLogprobs) tokens() []Token {
	if w == nil {
		return nil
	}
	out := make([]Token, 0, len(w.Content))
	for _, c := range w.Content {
		t := Token{Text: c.Token, Hex: hexOf(c.Bytes), Logprob: c.Logprob}
		for _, a := range c.TopLogprobs {
			t.Top = append(t.Top, TopToken{Text: a.Token, Hex: hexOf(a.Bytes), Logprob: a.Logprob})
		}
		out = append(out, t)
	}
	return out
}

type wireToolCall struct {
	Index    int `json:"index"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

func readWhole(r io.Reader) (Reply, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return Reply{}, fmt.Errorf("reading the answer: %w", err)
	}
	if len(b) > maxReplyBytes {
		return Reply{}, fmt.Errorf("the answer is larger than %d bytes", maxReplyBytes)
	}
	var w struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content   *string        `json:"content"`
				ToolCalls []wireToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string        `json:"finish_reason"`
			Logprobs     *wireLogprobs `json:"logprobs"`
		} `json:"choices"`
		Usage wireUsage `json:"usage"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return Reply{}, fmt.Errorf("the answer is not a chat completion: %w", err)
	}
	if len(w.Choices) == 0 {
		return Reply{}, errors.New("the answer has no choices")
	}
	ch := w.Choices[0]
	rep := Reply{Model: w.Model, Finish: ch.FinishReason, PromptTokens: w.Usage.PromptTokens, CompletionTokens: w.Usage.CompletionTokens, Tokens: ch.Logprobs.tokens()}
	if ch.Message.Content != nil {
		rep.Text = *ch.Message.Content
	}
	for _, tc := range ch.Message.ToolCalls {
		rep.ToolCalls = append(rep.ToolCalls, ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return rep, nil
}

// readStream reads an OpenAI chunk stream to [DONE].
func readStream(r io.Reader, start time.Time) (Reply, error) {
	var rep Reply
	var text strings.Builder
	calls := map[int]*ToolCall{}
	var order []int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxReplyBytes)
	done := false
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if !bytes.HasPrefix(line, []byte("data:")) {
			continue
		}
		data := bytes.TrimSpace(line[5:])
		if string(data) == "[DONE]" {
			done = true
			break
		}
		var ch struct {
			Model   string `json:"model"`
			Choices []struct {
				Delta struct {
					Content   *string        `json:"content"`
					ToolCalls []wireToolCall `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string       `json:"finish_reason"`
				Logprobs     *wireLogprobs `json:"logprobs"`
			} `json:"choices"`
			Usage *wireUsage      `json:"usage"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(data, &ch); err != nil {
			return Reply{}, fmt.Errorf("a streamed chunk is not JSON: %w", err)
		}
		if len(ch.Error) > 0 {
			return Reply{}, errors.New("the endpoint sent an error in the stream")
		}
		if ch.Model != "" {
			rep.Model = ch.Model
		}
		if ch.Usage != nil {
			rep.PromptTokens, rep.CompletionTokens = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != nil && *c.Delta.Content != "" {
				if rep.FirstToken == 0 {
					rep.FirstToken = time.Since(start)
				}
				text.WriteString(*c.Delta.Content)
			}
			for _, tc := range c.Delta.ToolCalls {
				if rep.FirstToken == 0 {
					rep.FirstToken = time.Since(start)
				}
				t, ok := calls[tc.Index]
				if !ok {
					t = &ToolCall{}
					calls[tc.Index] = t
					order = append(order, tc.Index)
				}
				t.Name += tc.Function.Name
				t.Arguments += tc.Function.Arguments
			}
			rep.Tokens = append(rep.Tokens, c.Logprobs.tokens()...)
			if c.FinishReason != nil && *c.FinishReason != "" {
				rep.Finish = *c.FinishReason
			}
		}
	}
	if err := sc.Err(); err != nil {
		return Reply{}, fmt.Errorf("reading the stream: %w", err)
	}
	if !done && rep.Finish == "" {
		return Reply{}, errors.New("the stream ended before its last chunk")
	}
	rep.Text = text.String()
	for _, i := range order {
		rep.ToolCalls = append(rep.ToolCalls, *calls[i])
	}
	return rep, nil
}
