package chat

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/models"
	"boxd/gpu"
)

// Contract limits (platform section 8).
const (
	MaxPromptChars   = 48_000
	MaxTokens        = 2048
	DefaultMaxTokens = 2048
	maxStops         = 16
	maxStopLen       = 256
	maxTools         = 128
	maxToolCalls     = 8
)

// Engine is what the chat route needs of the model runtime.
type Engine interface {
	Template() models.Template
	Tokenize(text string, addSpecial, parseSpecial bool) ([]int32, error)
	Generate(ctx context.Context, r llm.Request) (*llm.Job, error)
	ContextPerRequest() int
}

// Receipts signs and stores model-call receipts.
type Receipts interface {
	Issue(ctx context.Context, mc attest.ModelCall, upstream string) (attest.SignedModelCall, error)
}

// Budget is the caller's generated-token budget.
type Budget interface {
	// Reserve grants up to want tokens (at least one left, else an error
	// the caller maps to 402); commit charges what was used.
	Reserve(ctx context.Context, want int64) (granted int64, commit func(used int64), err error)
	// KeyID is the developer key paying, nil for a demo session.
	KeyID() *string
}

// Service serves chat completions for one model.
type Service struct {
	Engine      Engine // nil when no chat model is loaded
	ModelID     string
	WeightsRoot string
	Upstream    string // the model file's name (receipt upstream_model)
	Provider    string // this box's signing key id
	Receipts    Receipts
	Now         func() time.Time
}

// Call is a validated request, ready to run.
type Call struct {
	s         *Service
	req       *Request
	prompt    []int32
	maxTokens int
	sampling  llm.Sampling
	stop      []string
	grammar   string
	tools     *toolMode
	params    map[string]string
	priority  gpu.Priority
}

// SetPriority runs the call at another priority on the GPU arbiter (chat
// completions run at gpu.Interactive; live lanes at gpu.Live).
func (c *Call) SetPriority(p gpu.Priority) { c.priority = p }

var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Prepare validates a request and renders its prompt. Errors are *Error
// with the contract's status.
func (s *Service) Prepare(req *Request) (*Call, error) {
	if req.Model == "" {
		// The contract: any model but the served one is 404, an absent one too.
		return nil, errorf(404, "model is required: use %q (GET /v1/models)", s.ModelID)
	}
	if req.Model != s.ModelID {
		return nil, errorf(404, "model %q is not served on this box; use %q (GET /v1/models)", req.Model, s.ModelID)
	}
	if len(req.Messages) == 0 {
		return nil, errorf(400, "messages is empty; send at least one message")
	}
	if req.N != nil && *req.N != 1 {
		return nil, errorf(400, "n is %d; this box returns one choice (n: 1)", *req.N)
	}
	if req.Logprobs != nil && *req.Logprobs {
		return nil, errorf(400, "logprobs are not supported by this box")
	}
	c := &Call{s: s, req: req, params: map[string]string{}, priority: gpu.Interactive}
	if err := c.sample(req); err != nil {
		return nil, err
	}
	chars := 0
	for i, m := range req.Messages {
		if err := checkMessage(i, m); err != nil {
			return nil, err
		}
		chars += utf8.RuneCountInString(m.Content.Text)
		for _, tc := range m.ToolCalls {
			chars += utf8.RuneCountInString(tc.Function.Arguments)
		}
	}
	if chars > MaxPromptChars {
		return nil, errorf(413, "the prompt holds %d characters; the limit is %d", chars, MaxPromptChars)
	}
	tm, terr := parseTools(req)
	if terr != nil {
		return nil, terr
	}
	c.tools = tm
	if ferr := c.format(req); ferr != nil {
		return nil, ferr
	}
	if s.Engine == nil {
		return nil, errorf(502, "no chat model is loaded on this box; the operator sets models.llm.path")
	}
	msgs := render(req.Messages, tm)
	text, err := models.Render(s.Engine.Template(), msgs)
	if err != nil {
		return nil, errorf(502, "the chat model cannot be prompted: %v", err)
	}
	c.prompt, err = s.Engine.Tokenize(text, true, true)
	if err != nil {
		return nil, errorf(502, "tokenizing the prompt failed: %v", err)
	}
	if ctxLen := s.Engine.ContextPerRequest(); len(c.prompt) >= ctxLen {
		return nil, errorf(413, "the prompt is %d tokens; this model's context holds %d tokens for prompt and answer together", len(c.prompt), ctxLen)
	}
	return c, nil
}

func checkMessage(i int, m Message) *Error {
	where := fmt.Sprintf("messages[%d]", i)
	if m.Content.Unsupported != "" {
		return errorf(400, "%s: content part type %q is not supported; this box reads text parts only", where, m.Content.Unsupported)
	}
	switch m.Role {
	case "system", "developer", "user":
		if !m.Content.Set {
			return errorf(400, "%s (%s) needs content", where, m.Role)
		}
	case "assistant":
		if !m.Content.Set && len(m.ToolCalls) == 0 {
			return errorf(400, "%s (assistant) needs content or tool_calls", where)
		}
		for j, tc := range m.ToolCalls {
			if tc.Function.Name == "" {
				return errorf(400, "%s.tool_calls[%d] needs function.name", where, j)
			}
			if tc.Function.Arguments != "" && !json.Valid([]byte(tc.Function.Arguments)) {
				return errorf(400, "%s.tool_calls[%d].function.arguments must be a JSON string holding a JSON object", where, j)
			}
		}
	case "tool":
		if m.ToolCallID == "" {
			return errorf(400, "%s (tool) needs tool_call_id: the id of the call it answers", where)
		}
		if !m.Content.Set {
			return errorf(400, "%s (tool) needs content: the tool's result", where)
		}
	case "":
		return errorf(400, "%s needs a role", where)
	default:
		return errorf(400, "%s: role %q; use system, developer, user, assistant or tool", where, m.Role)
	}
	return nil
}

// sample reads and checks the sampling parameters. Defaults follow
// llama.cpp's (temperature 0.8, top_k 40, top_p 0.95, min_p 0.05).
func (c *Call) sample(req *Request) *Error {
	s := llm.Sampling{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05}
	rangeErr := func(name string, v float64, lo, hi float64) *Error {
		if v < lo || v > hi {
			return errorf(400, "%s is %v; use %v to %v", name, v, lo, hi)
		}
		return nil
	}
	if v := req.Temperature; v != nil {
		if e := rangeErr("temperature", *v, 0, 2); e != nil {
			return e
		}
		s.Temperature = float32(*v)
	}
	if v := req.TopP; v != nil {
		if e := rangeErr("top_p", *v, 0, 1); e != nil {
			return e
		}
		s.TopP = float32(*v)
	}
	if v := req.TopK; v != nil {
		if *v < 0 || *v > 1000 {
			return errorf(400, "top_k is %d; use 0 (off) to 1000", *v)
		}
		s.TopK = *v
	}
	if v := req.MinP; v != nil {
		if e := rangeErr("min_p", *v, 0, 1); e != nil {
			return e
		}
		s.MinP = float32(*v)
	}
	if v := req.RepeatPenalty; v != nil {
		if e := rangeErr("repeat_penalty", *v, 0, 10); e != nil {
			return e
		}
		s.RepeatPenalty = float32(*v)
	}
	if v := req.FrequencyPenalty; v != nil {
		if e := rangeErr("frequency_penalty", *v, -2, 2); e != nil {
			return e
		}
		s.FrequencyPenalty = float32(*v)
	}
	if v := req.PresencePenalty; v != nil {
		if e := rangeErr("presence_penalty", *v, -2, 2); e != nil {
			return e
		}
		s.PresencePenalty = float32(*v)
	}
	if req.Seed != nil {
		seed := uint32(uint64(*req.Seed))
		s.Seed = &seed
		c.params["seed"] = strconv.FormatInt(*req.Seed, 10)
	}
	max := DefaultMaxTokens
	for _, v := range []*int{req.MaxTokens, req.MaxCompletionTokens} {
		if v == nil {
			continue
		}
		if *v < 1 {
			return errorf(400, "max_tokens is %d; use 1 to %d", *v, MaxTokens)
		}
		max = min(*v, MaxTokens) // capped, as the contract says
	}
	if len(req.Stop) > maxStops {
		return errorf(400, "stop has %d strings; the limit is %d", len(req.Stop), maxStops)
	}
	for _, st := range req.Stop {
		if st == "" || len(st) > maxStopLen {
			return errorf(400, "each stop string must be 1 to %d bytes", maxStopLen)
		}
	}
	c.sampling, c.maxTokens, c.stop = s, max, req.Stop
	c.params["temperature"] = ftoa(s.Temperature)
	c.params["top_p"] = ftoa(s.TopP)
	c.params["top_k"] = strconv.Itoa(s.TopK)
	c.params["min_p"] = ftoa(s.MinP)
	if s.RepeatPenalty != 0 {
		c.params["repeat_penalty"] = ftoa(s.RepeatPenalty)
	}
	if s.FrequencyPenalty != 0 || s.PresencePenalty != 0 {
		c.params["frequency_penalty"] = ftoa(s.FrequencyPenalty)
		c.params["presence_penalty"] = ftoa(s.PresencePenalty)
	}
	if len(c.stop) > 0 {
		c.params["stop"] = strconv.Itoa(len(c.stop))
	}
	return nil
}

func ftoa(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 32) }

// format sets the grammar for response_format.
func (c *Call) format(req *Request) *Error {
	rf := req.ResponseFormat
	if rf == nil || rf.Type == "" || rf.Type == "text" {
		if c.tools != nil {
			c.grammar = c.tools.grammar
		}
		return nil
	}
	if c.tools != nil && c.tools.choice != "none" {
		return errorf(400, "use either tools or response_format %q in one request", rf.Type)
	}
	switch rf.Type {
	case "json_object":
		c.grammar = llm.JSONObjectGrammar()
	case "json_schema":
		if rf.JSONSchema == nil || len(bytes.TrimSpace(rf.JSONSchema.Schema)) == 0 {
			return errorf(400, "response_format.json_schema.schema is required: the JSON schema the answer must follow")
		}
		var obj map[string]any
		if err := json.Unmarshal(rf.JSONSchema.Schema, &obj); err != nil {
			return errorf(400, "response_format.json_schema.schema must be a JSON object (a JSON schema)")
		}
		g, err := llm.SchemaGrammar(rf.JSONSchema.Schema)
		if err != nil {
			return errorf(400, "response_format.json_schema.schema: %v", err)
		}
		c.grammar = g
		c.params["schema_sha256"] = attest.HashText(string(rf.JSONSchema.Schema))
	default:
		return errorf(400, "response_format.type %q; use text, json_object or json_schema", rf.Type)
	}
	c.params["response_format"] = rf.Type
	return nil
}

// Model is the model id the request named.
func (c *Call) Model() string { return c.req.Model }

// Completion is a finished completion.
type Completion struct {
	ID           string
	Created      int64
	Content      string
	ToolCalls    []ToolCall
	FinishReason string
	Usage        Usage
	Receipt      ReceiptRef
}

// Sink receives a streamed completion's pieces; returning an error stops
// the generation (the client went away).
type Sink interface {
	Content(piece string) error
}

// NewID makes a completion id.
func NewID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "chatcmpl-" + hex.EncodeToString(b[:])
}

// Run generates the completion with id, charging budget, streaming content
// to sink (nil for none), and signs its receipt.
func (c *Call) Run(ctx context.Context, id string, budget Budget, sink Sink) (*Completion, error) {
	granted, commit, err := budget.Reserve(ctx, int64(c.maxTokens))
	if err != nil {
		return nil, err
	}
	used := int64(0)
	defer func() { commit(used) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a failed sink stops the generation
	job, err := c.s.Engine.Generate(ctx, llm.Request{
		Prompt: c.prompt, MaxTokens: int(granted), Sampling: c.sampling, Stop: c.stop,
		Grammar: c.grammar, Priority: c.priority,
	})
	switch {
	case errors.Is(err, llm.ErrBusy):
		return nil, &Error{Status: 503, Message: "the box is busy: every sequence is in use and the queue is full; retry shortly", RetryAfter: 2}
	case errors.Is(err, llm.ErrPromptTooLong):
		return nil, errorf(413, "%v", err)
	case errors.Is(err, llm.ErrGrammar):
		return nil, errorf(400, "%v", err)
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errorf(502, "the model failed: %v", err)
	}
	var buffered strings.Builder
	streamText := sink != nil && c.tools == nil
	toolsDecided := false
	for {
		piece, err := job.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			res, _ := job.Wait(context.Background())
			used = int64(res.CompletionTokens)
			return nil, err
		}
		if sink == nil {
			continue
		}
		if !streamText && !toolsDecided {
			// With tools, the answer is a tool call when it opens with {;
			// hold text until that is known.
			buffered.WriteString(piece)
			t := strings.TrimLeft(buffered.String(), " \t\r\n")
			if t == "" {
				continue
			}
			toolsDecided = true
			if t[0] == '{' {
				continue // a tool call: sent whole at the end
			}
			streamText = true
			piece = buffered.String()
		}
		if streamText {
			if err := sink.Content(piece); err != nil {
				cancel()
				res, _ := job.Wait(context.Background())
				used = int64(res.CompletionTokens)
				return nil, err
			}
		}
	}
	res := job.Result()
	used = int64(res.CompletionTokens)
	if res.Err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errorf(502, "the model failed: %v", res.Err)
	}
	out := &Completion{
		ID: id, Created: c.s.now().Unix(), Content: res.Text, FinishReason: string(res.Finish),
		Usage: Usage{PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, TotalTokens: res.PromptTokens + res.CompletionTokens},
	}
	if c.tools != nil {
		if calls, ok := c.tools.parse(res.Text); ok {
			out.ToolCalls, out.Content, out.FinishReason = calls, "", "tool_calls"
		} else if c.tools.choice == "required" || c.tools.named != "" {
			// The grammar forces a call; only the length cap can cut it.
			out.FinishReason = "length"
		}
	}
	if err := c.sign(ctx, out, budget.KeyID()); err != nil {
		return nil, errorf(502, "signing the receipt failed: %v", err)
	}
	return out, nil
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// sign issues the completion's receipt: hashes of the request (canonical
// JSON of the messages and parameters) and of the output.
func (c *Call) sign(ctx context.Context, out *Completion, keyID *string) error {
	reqHash, err := attest.HashJSON(map[string]any{"model": c.req.Model, "messages": c.req.Messages, "tools": c.req.Tools, "params": c.params})
	if err != nil {
		return err
	}
	output := out.Content
	if len(out.ToolCalls) > 0 {
		b, _ := json.Marshal(out.ToolCalls)
		output = string(b)
	}
	params := map[string]string{"max_tokens": strconv.Itoa(c.maxTokens), "finish_reason": out.FinishReason}
	for k, v := range c.params {
		params[k] = v
	}
	signed, err := c.s.Receipts.Issue(ctx, attest.ModelCall{
		ID: out.ID, Model: c.s.ModelID, WeightsRoot: c.s.WeightsRoot,
		RequestHash: reqHash, OutputHash: attest.HashText(output), Params: params,
		Usage: attest.NewUsage(out.Usage.PromptTokens, out.Usage.CompletionTokens), KeyID: keyID,
	}, c.s.Upstream)
	if err != nil {
		return err
	}
	out.Receipt = ReceiptRef{ID: out.ID, Model: c.s.ModelID, GatewaySig: signed.Sig, Provider: c.s.Provider, Status: "attested"}
	return nil
}
