package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/gpu"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/llmcall"
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

// Service is the model the route serves: an llmcall.Model, through which
// every completion runs, is charged and is signed.
type Service = llmcall.Model

// Engine is what the chat route needs of the model runtime.
type Engine = llmcall.Engine

// Receipts signs and stores model-call receipts.
type Receipts = llmcall.Receipts

// Call is a validated request, ready to run.
type Call struct {
	s         *Service
	req       *Request
	prompt    []int32
	msgs      []llmcall.Message // a request with images: rendered in Run
	maxTokens int
	sampling  llm.Sampling
	stop      []string
	grammar   string
	tools     *toolMode
	params    map[string]string
}

var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Prepare validates a request for the model s serves and renders its
// prompt. Errors are *problem.Error.
func Prepare(s *Service, req *Request) (*Call, error) {
	if req.Model == "" {
		// The contract: any model but the served one is not found, an absent one too.
		return nil, problem.New(problem.NotFound, "model is required: use %q (GET /v1/models)", s.ModelID)
	}
	if !s.Serves(req.Model) {
		return nil, problem.New(problem.NotFound, "model %q is not served on this box; use %q (GET /v1/models)", req.Model, s.ModelID)
	}
	if len(req.Messages) == 0 {
		return nil, problem.New(problem.Invalid, "messages is empty; send at least one message")
	}
	if req.N != nil && *req.N != 1 {
		return nil, problem.New(problem.Invalid, "n is %d; this box returns one choice (n: 1)", *req.N)
	}
	if req.Logprobs != nil && *req.Logprobs {
		return nil, problem.New(problem.Invalid, "logprobs are not supported by this box")
	}
	c := &Call{s: s, req: req, params: map[string]string{}}
	if err := c.sample(req); err != nil {
		return nil, err
	}
	chars, images := 0, 0
	for _, m := range req.Messages {
		images += len(m.Content.Images)
	}
	for i, m := range req.Messages {
		if err := checkMessage(i, m, images > 0); err != nil {
			return nil, err
		}
		chars += utf8.RuneCountInString(m.Content.Text) - len(m.Content.Images)*utf8.RuneCountInString(llm.ImageMarker)
		for _, tc := range m.ToolCalls {
			chars += utf8.RuneCountInString(tc.Function.Arguments)
		}
	}
	if chars > MaxPromptChars {
		return nil, problem.New(problem.TooLarge, "the prompt holds %d characters; the limit is %d", chars, MaxPromptChars)
	}
	tm, terr := parseTools(req)
	if terr != nil {
		return nil, terr
	}
	c.tools = tm
	if ferr := c.format(req); ferr != nil {
		return nil, ferr
	}
	msgs := render(req.Messages, tm)
	if images > 0 {
		if err := c.pictures(req, msgs, images); err != nil {
			return nil, err
		}
		return c, nil
	}
	prompt, err := s.Render(msgs)
	if err != nil {
		return nil, err
	}
	c.prompt = prompt
	return c, nil
}

// pictures decodes a request's image parts onto its rendered user
// messages (render keeps the messages' order and text, markers included)
// and names them, by the SHA-256 of each file, in the receipt's params.
// Their prompt is rendered in Run, where the projector encodes them.
func (c *Call) pictures(req *Request, msgs []llmcall.Message, n int) *problem.Error {
	if n > MaxImages {
		return problem.New(problem.Invalid, "the request holds %d images; the most is %d", n, MaxImages)
	}
	if !c.s.Sees() {
		return problem.New(problem.Invalid, "this box's chat model does not read images (the operator sets models.llm.projector to the model's mmproj file); send text parts only")
	}
	var hashes []string
	// render writes one message per request message, in order, after the
	// tool prompt when there is one.
	offset := len(msgs) - len(req.Messages)
	for i, m := range req.Messages {
		if len(m.Content.Images) == 0 {
			continue
		}
		k := i + offset
		if k < 0 || k >= len(msgs) || msgs[k].Role != "user" || msgs[k].Content != m.Content.Text {
			return problem.New(problem.Internal, "chat: messages[%d] was not rendered as a user message", i)
		}
		for j, part := range m.Content.Images {
			pic, sum, err := readImage(fmt.Sprintf("messages[%d] image %d", i, j), part.URL)
			if err != nil {
				return err
			}
			msgs[k].Images = append(msgs[k].Images, pic)
			hashes = append(hashes, sum)
		}
	}
	c.msgs = msgs
	c.params["image_sha256"] = strings.Join(hashes, ",")
	return nil
}

func checkMessage(i int, m Message, images bool) *problem.Error {
	where := fmt.Sprintf("messages[%d]", i)
	if m.Content.Unsupported != "" {
		return problem.New(problem.Invalid, "%s: content part type %q is not supported; this box reads text and image_url parts", where, m.Content.Unsupported)
	}
	if len(m.Content.Images) > 0 && m.Role != "user" {
		return problem.New(problem.Invalid, "%s: image parts are read in user messages only, not %s", where, m.Role)
	}
	if images && m.Content.Marked {
		return problem.New(problem.Invalid, "%s: the text holds %s or %s, which this box uses to place images; remove it from a request with images", where, llm.ImageMarker, "<__image__>")
	}
	switch m.Role {
	case "system", "developer", "user":
		if !m.Content.Set {
			return problem.New(problem.Invalid, "%s (%s) needs content", where, m.Role)
		}
	case "assistant":
		if !m.Content.Set && len(m.ToolCalls) == 0 {
			return problem.New(problem.Invalid, "%s (assistant) needs content or tool_calls", where)
		}
		for j, tc := range m.ToolCalls {
			if tc.Function.Name == "" {
				return problem.New(problem.Invalid, "%s.tool_calls[%d] needs function.name", where, j)
			}
			if tc.Function.Arguments != "" && !json.Valid([]byte(tc.Function.Arguments)) {
				return problem.New(problem.Invalid, "%s.tool_calls[%d].function.arguments must be a JSON string holding a JSON object", where, j)
			}
		}
	case "tool":
		if m.ToolCallID == "" {
			return problem.New(problem.Invalid, "%s (tool) needs tool_call_id: the id of the call it answers", where)
		}
		if !m.Content.Set {
			return problem.New(problem.Invalid, "%s (tool) needs content: the tool's result", where)
		}
	case "":
		return problem.New(problem.Invalid, "%s needs a role", where)
	default:
		return problem.New(problem.Invalid, "%s: role %q; use system, developer, user, assistant or tool", where, m.Role)
	}
	return nil
}

// sample reads and checks the sampling parameters. Defaults follow
// llama.cpp's (temperature 0.8, top_k 40, top_p 0.95, min_p 0.05).
func (c *Call) sample(req *Request) *problem.Error {
	s := llmcall.Temperature(0.8)
	rangeErr := func(name string, v float64, lo, hi float64) *problem.Error {
		if v < lo || v > hi {
			return problem.New(problem.Invalid, "%s is %v; use %v to %v", name, v, lo, hi)
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
			return problem.New(problem.Invalid, "top_k is %d; use 0 (off) to 1000", *v)
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
	}
	max := DefaultMaxTokens
	for _, v := range []*int{req.MaxTokens, req.MaxCompletionTokens} {
		if v == nil {
			continue
		}
		if *v < 1 {
			return problem.New(problem.Invalid, "max_tokens is %d; use 1 to %d", *v, MaxTokens)
		}
		max = min(*v, MaxTokens) // capped, as the contract says
	}
	if len(req.Stop) > maxStops {
		return problem.New(problem.Invalid, "stop has %d strings; the limit is %d", len(req.Stop), maxStops)
	}
	for _, st := range req.Stop {
		if st == "" || len(st) > maxStopLen {
			return problem.New(problem.Invalid, "each stop string must be 1 to %d bytes", maxStopLen)
		}
	}
	c.sampling, c.maxTokens, c.stop = s, max, req.Stop
	maps.Copy(c.params, llmcall.SamplingParams(s, c.stop))
	if req.Seed != nil {
		c.params["seed"] = strconv.FormatInt(*req.Seed, 10) // as sent
	}
	return nil
}

// format sets the grammar for response_format.
func (c *Call) format(req *Request) *problem.Error {
	rf := req.ResponseFormat
	if rf == nil || rf.Type == "" || rf.Type == "text" {
		if c.tools != nil {
			c.grammar = c.tools.grammar
		}
		return nil
	}
	if c.tools != nil && c.tools.choice != "none" {
		return problem.New(problem.Invalid, "use either tools or response_format %q in one request", rf.Type)
	}
	switch rf.Type {
	case "json_object":
		c.grammar = llm.JSONObjectGrammar()
	case "json_schema":
		if rf.JSONSchema == nil || len(bytes.TrimSpace(rf.JSONSchema.Schema)) == 0 {
			return problem.New(problem.Invalid, "response_format.json_schema.schema is required: the JSON schema the answer must follow")
		}
		var obj map[string]any
		if err := json.Unmarshal(rf.JSONSchema.Schema, &obj); err != nil {
			return problem.New(problem.Invalid, "response_format.json_schema.schema must be a JSON object (a JSON schema)")
		}
		g, err := llm.SchemaGrammar(rf.JSONSchema.Schema)
		if err != nil {
			return problem.New(problem.Invalid, "response_format.json_schema.schema: %v", err)
		}
		c.grammar = g
		c.params["schema_sha256"] = attest.HashText(string(rf.JSONSchema.Schema))
	default:
		return problem.New(problem.Invalid, "response_format.type %q; use text, json_object or json_schema", rf.Type)
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
	// NoContent: the answer is tool calls (content null), also when the
	// length cap cut the call and none could be read.
	NoContent bool
}

// Sink receives a streamed completion's pieces; returning an error stops
// the generation (the client went away).
type Sink interface {
	Content(piece string) error
}

// NewID makes a completion id.
func NewID() string { return llmcall.NewID() }

// Run generates the completion with id through llmcall, which charges
// budget and signs (and stores) its one receipt, streaming content to sink
// (nil for none). A completion that fails after generating still has its
// receipt stored (finish_reason error or cancelled).
func (c *Call) Run(ctx context.Context, id string, budget run.Budget, sink Sink) (*Completion, error) {
	reqHash, err := attest.HashJSON(map[string]any{"model": c.req.Model, "messages": c.req.Messages, "tools": c.req.Tools, "params": c.params})
	if err != nil {
		return nil, problem.Wrap(problem.Internal, err, "hashing the request failed: %v", err)
	}
	var calls []ToolCall
	cutCall := false
	r := llmcall.Request{
		ID: id, Prompt: c.prompt, Messages: c.msgs, RequestHash: reqHash, Sampling: c.sampling, Stop: c.stop,
		MaxTokens: c.maxTokens, Grammar: c.grammar, Priority: gpu.Interactive, Params: c.params,
	}
	if sink != nil {
		r.Stream = c.stream(sink)
	}
	if c.tools != nil {
		r.Answer = func(text, finish string) (string, string) {
			if tc, ok := c.tools.parse(text); ok {
				calls = tc
				return toolCallsText(tc), "tool_calls"
			}
			if c.tools.choice != "none" && strings.HasPrefix(strings.TrimSpace(text), "{") {
				// Only a call opens with { (the grammar), and only the
				// length cap cuts one: the calls that can be read, with
				// finish_reason length; never the wrapper as content.
				cutCall = true
				calls = c.tools.cut(text)
				return toolCallsText(calls), "length"
			}
			return text, finish
		}
	}
	res, err := c.s.Text(ctx, budget, r)
	if err != nil {
		return nil, err
	}
	out := &Completion{
		ID: res.ID, Created: res.Created, Content: res.Text, ToolCalls: calls, FinishReason: res.FinishReason,
		Usage: Usage(res.Usage), Receipt: refOf(res.Receipt),
	}
	if len(calls) > 0 || cutCall {
		out.Content, out.NoContent = "", true
	}
	return out, nil
}

// toolCallsText is a tool-call answer's text, which its receipt's
// output_hash covers: the tool_calls array as the route writes it (compact,
// keys id, type, function {name, arguments}, no HTML escaping), [] for none.
func toolCallsText(calls []ToolCall) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(append([]ToolCall{}, calls...))
	return strings.TrimSuffix(b.String(), "\n")
}

// stream passes content to sink as it is generated. With tools, text is
// held until it is known not to be a tool call (one opens with {); a tool
// call is sent whole at the end.
func (c *Call) stream(sink Sink) func(string) error {
	var buffered strings.Builder
	streamText, toolCall := c.tools == nil, false
	return func(piece string) error {
		if toolCall {
			return nil
		}
		if !streamText {
			buffered.WriteString(piece)
			t := strings.TrimLeft(buffered.String(), " \t\r\n")
			if t == "" {
				return nil
			}
			if t[0] == '{' {
				toolCall = true
				return nil
			}
			streamText = true
			piece = buffered.String()
		}
		return sink.Content(piece)
	}
}

// refOf is a receipt as a completion names it.
func refOf(r *llmcall.Receipt) ReceiptRef {
	return ReceiptRef{ID: r.ID, Model: r.Model, GatewaySig: r.GatewaySig, Provider: r.Provider, Status: r.Status}
}
