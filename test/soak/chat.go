package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ChatModel is the model id chat completions name (contract document 1,
// section 4).
const ChatModel = "model-27b"

// chatPrompts are what the chat streams ask, in turn: short requests of
// the kind the tiny story model answers.
var chatPrompts = []string{
	"Tell me a short story about a cat who finds a red ball.",
	"Once upon a time, a little girl named Lily went to the park. What happened next?",
	"Write two sentences about a dog and a boat.",
	"What did the bird say to the tree?",
	"Tell a story about a boy who wanted to fly.",
	"A small frog lived by the pond. Continue the story.",
}

// chatRequest is one request of a chat stream: prompt n, a length that
// varies from request to request (8 to 40 tokens: short answers, so the
// streams turn over often and the live sessions' lane calls, which take
// the model's sequences first, are not kept waiting long), sampled.
func chatRequest(n int) ([]byte, int) {
	maxTokens := 8 + (n*13)%33
	body, _ := json.Marshal(map[string]any{
		"model":       ChatModel,
		"messages":    []map[string]string{{"role": "user", "content": chatPrompts[n%len(chatPrompts)]}},
		"max_tokens":  maxTokens,
		"temperature": 0.8,
		"stream":      true,
	})
	return body, maxTokens
}

// ChatResult is one streamed completion as the client saw it.
type ChatResult struct {
	ID         string // x-service-receipt
	Text       string // the content deltas joined
	Finish     string
	Completion int // usage.completion_tokens of the last chunk
	ReceiptSig string
	Chunks     int
}

// sseChunk is the part of a chat.completion.chunk the soak checks.
type sseChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta *struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Receipt *struct {
		ID         string `json:"id"`
		Model      string `json:"model"`
		GatewaySig string `json:"gateway_sig"`
		Provider   string `json:"provider"`
	} `json:"receipt"`
	Error any `json:"error"`
}

// ReadChatStream reads a chat completion's SSE body (id is its
// x-service-receipt header) and checks the stream's shape: data lines of
// JSON chunks (comment lines are heartbeats), every chunk of the one id,
// object and model, the role first, content deltas, then one last chunk
// with finish_reason, usage and the receipt, then [DONE] and nothing
// after it. provider is the box's key id the receipt must name. It returns
// what was received and every fault found (none: the stream ended with
// its receipt).
func ReadChatStream(body io.Reader, id, provider string) (ChatResult, []string) {
	res := ChatResult{ID: id}
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var text strings.Builder
	done, ended := false, false
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			fail("not an SSE data line: %q", clipStr(line))
			continue
		}
		if done {
			fail("data after [DONE]: %q", clipStr(data))
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		if ended {
			fail("a chunk after the one that carried the receipt")
		}
		var c sseChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			fail("chunk is not JSON: %q", clipStr(data))
			continue
		}
		res.Chunks++
		if c.Error != nil {
			fail("error chunk: %v", c.Error)
			continue
		}
		if c.ID != id || c.Object != "chat.completion.chunk" || c.Model != ChatModel || len(c.Choices) != 1 || c.Choices[0].Index != 0 || c.Choices[0].Delta == nil {
			fail("chunk %d: id %q object %q model %q, %d choices", res.Chunks, c.ID, c.Object, c.Model, len(c.Choices))
			continue
		}
		ch := c.Choices[0]
		if res.Chunks == 1 {
			if ch.Delta.Role != "assistant" || ch.FinishReason != nil {
				fail("first chunk is not the assistant role")
			}
		} else if ch.Delta.Role != "" {
			fail("role in chunk %d", res.Chunks)
		}
		if ch.Delta.Content != nil {
			text.WriteString(*ch.Delta.Content)
		}
		if ch.FinishReason == nil {
			if c.Receipt != nil || c.Usage != nil {
				fail("chunk %d has a receipt or usage but no finish_reason", res.Chunks)
			}
			continue
		}
		ended = true
		res.Finish = *ch.FinishReason
		if res.Finish != "stop" && res.Finish != "length" {
			fail("finish_reason %q", res.Finish)
		}
		if c.Usage == nil || c.Usage.PromptTokens+c.Usage.CompletionTokens != c.Usage.TotalTokens {
			fail("last chunk's usage %v", c.Usage)
		} else {
			res.Completion = c.Usage.CompletionTokens
		}
		if c.Receipt == nil {
			fail("last chunk has no receipt")
			continue
		}
		if c.Receipt.ID != id || c.Receipt.Model != ChatModel || len(c.Receipt.GatewaySig) != 128 || c.Receipt.Provider != provider {
			fail("receipt %+v (want id %s, model %s, a 128-hex signature, provider %s)", *c.Receipt, id, ChatModel, provider)
		}
		res.ReceiptSig = c.Receipt.GatewaySig
	}
	if err := sc.Err(); err != nil {
		fail("reading the stream: %v", err)
	}
	if !ended {
		fail("the stream ended without its receipt (%d chunks)", res.Chunks)
	}
	if !done {
		fail("the stream ended without [DONE]")
	}
	res.Text = text.String()
	return res, bad
}

func clipStr(s string) string { return clip([]byte(s)) }

// Client is what the soak's workers share: the box's address, one HTTP
// client (keep-alive connections, as an app holds them) and the receipt
// verifier.
type Client struct {
	Base   string
	HTTP   *http.Client
	Verify *Verifier
}

// NewSession asks for a demo session token of vertical.
func (c *Client) NewSession(ctx context.Context, vertical string) (string, error) {
	body, _ := json.Marshal(map[string]string{"vertical": vertical})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/demo/session", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return "", fmt.Errorf("POST /demo/session: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var s struct {
		Token string `json:"token"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &s) != nil || s.Token == "" {
		return "", fmt.Errorf("POST /demo/session %s: %d %s", vertical, resp.StatusCode, clip(raw))
	}
	return s.Token, nil
}

// NewKey creates a developer key for the code vertical (POST /v1/keys with
// the admin secret), as an app's operator would: the daily token budget at
// its cap and a request rate no stream reaches, so the soak measures the
// box, not its rate limits. It returns the key and its id.
func (c *Client) NewKey(ctx context.Context, admin, label string) (key, id string, err error) {
	body, _ := json.Marshal(map[string]any{"label": label, "verticals": []string{"code"},
		"daily_llm_tokens": 5_000_000, "requests_per_minute": 100_000})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/v1/keys", bytes.NewReader(body))
	if err != nil {
		return "", "", err
	}
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("POST /v1/keys: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var k struct {
		Key   string `json:"key"`
		KeyID string `json:"key_id"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(raw, &k) != nil || k.Key == "" || k.KeyID == "" {
		return "", "", fmt.Errorf("POST /v1/keys: %d %s", resp.StatusCode, clip(raw))
	}
	return k.Key, k.KeyID, nil
}

// ChatOutcome is one chat request's end: a stream checked and its receipt
// verified (Faults empty), or what went wrong. Status is the HTTP status
// (0: no answer); RetryAfter is a refusal's Retry-After.
type ChatOutcome struct {
	Status     int
	RetryAfter time.Duration
	Result     ChatResult
	Faults     []string
	Receipt    bool // the receipt was fetched back and verified
}

// Busy says whether the box refused the request for now (429 or 503 with
// Retry-After): back-pressure a client waits out, not a fault.
func (o ChatOutcome) Busy() bool {
	return (o.Status == http.StatusTooManyRequests || o.Status == http.StatusServiceUnavailable) && o.RetryAfter > 0
}

// Chat runs request n of a chat stream with a developer key (keyID its
// id): a streamed completion, read to its end and checked, then its
// receipt fetched back and verified.
func (c *Client) Chat(ctx context.Context, key, keyID string, n int) ChatOutcome {
	body, _ := chatRequest(n)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return ChatOutcome{Faults: []string{err.Error()}}
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return ChatOutcome{Faults: []string{fmt.Sprintf("POST /v1/chat/completions: %v", err)}}
	}
	defer resp.Body.Close()
	out := ChatOutcome{Status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			out.RetryAfter = time.Duration(s) * time.Second
		}
		out.Faults = []string{fmt.Sprintf("POST /v1/chat/completions: %d %s", resp.StatusCode, clip(raw))}
		return out
	}
	id := resp.Header.Get("x-service-receipt")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || !strings.HasPrefix(id, "chatcmpl-") {
		out.Faults = append(out.Faults, fmt.Sprintf("Content-Type %q, x-service-receipt %q", ct, id))
	}
	res, faults := ReadChatStream(resp.Body, id, c.Verify.KeyID())
	out.Result, out.Faults = res, append(out.Faults, faults...)
	if out.Result.ReceiptSig == "" {
		return out
	}
	text := out.Result.Text
	vf := c.Verify.Verify(ctx, Expect{ID: id, Model: ChatModel, Sig: out.Result.ReceiptSig, KeyID: keyID, Output: &text, Completion: out.Result.Completion})
	out.Faults = append(out.Faults, vf...)
	out.Receipt = len(vf) == 0
	return out
}
