package daemon

import (
	"context"
	"errors"
	"strings"
	"testing"

	chatroutes "boxd/web/routes/chat"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"boxd/internal/platform"
)

// TestOpenAIGoClient drives the box with the official Go SDK
// (github.com/openai/openai-go): a completion and a stream work, and every
// refusal reaches the app as an *openai.Error with its status, the box's
// message and Retry-After. Without sdkErrors the SDK fails to read any
// error ("cannot unmarshal string into Go value of type apierror.Error").
func TestOpenAIGoClient(t *testing.T) {
	env := chatServer(t, nil, 2048, 2, 0)
	ctx := context.Background()
	client := func(token string) openai.Client {
		return openai.NewClient(option.WithBaseURL(env.url+"/v1/"), option.WithAPIKey(token), option.WithMaxRetries(0))
	}
	hello := openai.ChatCompletionNewParams{
		Model:     "model-27b",
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")},
		MaxTokens: openai.Int(6),
		// Greedy: sampled, the model may end before six tokens and the
		// finish reason would be stop (seen once in a clean-clone run).
		Temperature: openai.Float(0),
	}

	c := client(env.token)
	got, err := c.Chat.Completions.New(ctx, hello)
	if err != nil {
		t.Fatalf("completion: %v", err)
	}
	if !strings.HasPrefix(got.ID, "chatcmpl-") || got.Choices[0].FinishReason != "length" || got.Usage.CompletionTokens != 6 {
		t.Errorf("completion: %+v", got)
	}
	stream := c.Chat.Completions.NewStreaming(ctx, hello)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil || acc.Choices[0].FinishReason != "length" || acc.Choices[0].Message.Content == "" {
		t.Errorf("stream: %v %+v", err, acc.Choices)
	}

	// A developer key that may make two requests a minute and has a six-token
	// daily budget, for 429 and 402.
	rpm, daily := int64(2), int64(6)
	limited, _, d := env.deps.Platform.CreateKey(ctx, platform.KeySpec{RequestsPerMinute: &rpm, DailyLLMTokens: &daily})
	if d != nil {
		t.Fatal(d)
	}
	big := hello
	big.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage(strings.Repeat("a", chatroutes.BodyLimit+1))}
	wrongModel := hello
	wrongModel.Model = "not-this-model"

	cases := []struct {
		name       string
		token      string
		params     openai.ChatCompletionNewParams
		status     int
		typ        string
		message    string
		retryAfter bool
	}{
		{"wrong key", "bxk_not-a-key", hello, 401, "authentication_error", "", false},
		{"wrong model", env.token, wrongModel, 404, "invalid_request_error", "not served", false},
		{"body over the limit", env.token, big, 413, "invalid_request_error", "", false},
		{"the day's budget", limited, hello, 0, "", "", false}, // spends all 6 tokens
		{"over the daily budget", limited, hello, 402, "insufficient_quota", "token budget used up", false},
		{"over the request rate", limited, hello, 429, "rate_limit_error", "limit 2", true},
	}
	for _, tc := range cases {
		cl := client(tc.token)
		_, err := cl.Chat.Completions.New(ctx, tc.params)
		if tc.status == 0 {
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
		if ra := apiErr.Response.Header.Get("Retry-After"); (ra != "") != tc.retryAfter {
			t.Errorf("%s: Retry-After %q", tc.name, ra)
		}
	}

	// Contract clients (no X-Stainless-* header) keep {"error": "text"}.
	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: "bxk_not-a-key", body: chatBodyJSON(nil)})
	if r.status != 401 || r.errMsg(t) == "" {
		t.Errorf("contract client: %d %s", r.status, r.body)
	}
}
