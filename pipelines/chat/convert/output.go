package convert

import (
	"encoding/json"
	"strings"

	"boxd/internal/ids"
	"boxd/pipelines/chat"
)

// Response is the Responses API's response object. The box stores none:
// store is false, previous_response_id null. receipt is boxd's, as on
// chat completions: the call's signed receipt.
type Response struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"`
	CreatedAt          int64              `json:"created_at"`
	CompletedAt        *int64             `json:"completed_at"`
	Status             string             `json:"status"`
	Background         bool               `json:"background"`
	Error              *ResponseError     `json:"error"`
	IncompleteDetails  *IncompleteDetails `json:"incomplete_details"`
	Instructions       *string            `json:"instructions"`
	MaxOutputTokens    *int               `json:"max_output_tokens"`
	MaxToolCalls       *int               `json:"max_tool_calls"`
	Model              string             `json:"model"`
	Output             []any              `json:"output"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Reasoning          reasoningEcho      `json:"reasoning"`
	ServiceTier        string             `json:"service_tier"`
	Store              bool               `json:"store"`
	Temperature        float64            `json:"temperature"`
	Text               textEcho           `json:"text"`
	ToolChoice         json.RawMessage    `json:"tool_choice"`
	Tools              []FunctionTool     `json:"tools"`
	TopLogprobs        int                `json:"top_logprobs"`
	TopP               float64            `json:"top_p"`
	Truncation         string             `json:"truncation"`
	Usage              *Usage             `json:"usage"`
	User               *string            `json:"user"`
	Metadata           map[string]string  `json:"metadata"`
	Receipt            *chat.ReceiptRef   `json:"receipt,omitempty"`
}

// ResponseError is a failed response's error.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// IncompleteDetails says why a response is incomplete.
type IncompleteDetails struct {
	Reason string `json:"reason"`
}

type reasoningEcho struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

type textEcho struct {
	Format    TextFormat `json:"format"`
	Verbosity string     `json:"verbosity"`
}

// Usage is a response's token counts.
type Usage struct {
	InputTokens         int          `json:"input_tokens"`
	InputTokensDetails  inputDetail  `json:"input_tokens_details"`
	OutputTokens        int          `json:"output_tokens"`
	OutputTokensDetails outputDetail `json:"output_tokens_details"`
	TotalTokens         int          `json:"total_tokens"`
}

type inputDetail struct {
	CachedTokens int `json:"cached_tokens"`
}

type outputDetail struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// MessageItem is an output message.
type MessageItem struct {
	Type    string        `json:"type"`
	ID      string        `json:"id"`
	Status  string        `json:"status"`
	Role    string        `json:"role"`
	Content []ContentPart `json:"content"`
}

// ContentPart is an output_text part.
type ContentPart struct {
	Type        string   `json:"type"`
	Text        string   `json:"text"`
	Annotations []string `json:"annotations"`
	Logprobs    []string `json:"logprobs"`
}

// FunctionCallItem is a function call the model made.
type FunctionCallItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Status    string `json:"status"`
}

func textPartOf(text string) ContentPart {
	return ContentPart{Type: "output_text", Text: text, Annotations: []string{}, Logprobs: []string{}}
}

// skeleton is the response before its output: status in_progress.
func (c *Responses) skeleton(id string, created int64) *Response {
	req := c.req
	r := &Response{
		ID: id, Object: "response", CreatedAt: created, Status: "in_progress",
		Instructions: req.Instructions, MaxOutputTokens: req.MaxOutputTokens, MaxToolCalls: req.MaxToolCalls,
		Model: req.Model, Output: []any{}, ParallelToolCalls: req.ParallelToolCalls == nil || *req.ParallelToolCalls,
		ServiceTier: "default", Temperature: defaultTemperature, TopP: defaultTopP, Truncation: "disabled",
		Text: textEcho{Format: c.format, Verbosity: "medium"}, ToolChoice: c.toolChoice, Tools: c.tools,
		User: req.User, Metadata: req.Metadata,
	}
	if req.Temperature != nil {
		r.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		r.TopP = *req.TopP
	}
	if req.Text != nil && req.Text.Verbosity != nil {
		r.Text.Verbosity = *req.Text.Verbosity
	}
	if r.Tools == nil {
		r.Tools = []FunctionTool{}
	}
	if r.Metadata == nil {
		r.Metadata = map[string]string{}
	}
	return r
}

// Response is the finished response of out (completed, or incomplete
// when the length cap or the budget cut it). msgID names the message
// item ("": a new id).
func (c *Responses) Response(id string, created, completed int64, out *chat.Completion) *Response {
	return c.finish(id, created, completed, out, "")
}

func (c *Responses) finish(id string, created, completed int64, out *chat.Completion, msgID string) *Response {
	r := c.skeleton(id, created)
	r.CompletedAt = &completed
	r.Status = "completed"
	if !out.NoContent {
		if msgID == "" {
			msgID = newMessageID()
		}
		r.Output = append(r.Output, &MessageItem{Type: "message", ID: msgID, Status: "completed", Role: "assistant",
			Content: []ContentPart{textPartOf(out.Content)}})
	}
	for _, tc := range out.ToolCalls {
		r.Output = append(r.Output, &FunctionCallItem{Type: "function_call", ID: ids.New("fc_", 12), CallID: tc.ID,
			Name: tc.Function.Name, Arguments: tc.Function.Arguments, Status: "completed"})
	}
	if out.FinishReason == "length" {
		// The length cap (or the budget) cut the last item: the text, or
		// the call being written (chat keeps the calls complete before
		// it, and the cut one once its name is written).
		r.Status = "incomplete"
		r.IncompleteDetails = &IncompleteDetails{Reason: "max_output_tokens"}
		if n := len(r.Output); n > 0 {
			switch item := r.Output[n-1].(type) {
			case *MessageItem:
				item.Status = "incomplete"
			case *FunctionCallItem:
				item.Status = "incomplete"
			}
		}
	}
	u := out.Usage
	r.Usage = &Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	rec := out.Receipt
	r.Receipt = &rec
	return r
}

func newMessageID() string { return ids.New("msg_", 12) }

// OutputText is a response's text: its output_text parts joined (the
// SDKs' output_text).
func (r *Response) OutputText() string {
	var b strings.Builder
	for _, it := range r.Output {
		if m, ok := it.(*MessageItem); ok {
			for _, p := range m.Content {
				b.WriteString(p.Text)
			}
		}
	}
	return b.String()
}

// Event is one streamed event of the Responses API: its type names the
// SSE event, and the whole value is its data.
type Event struct {
	Type           string          `json:"type"`
	SequenceNumber int             `json:"sequence_number"`
	Response       *Response       `json:"response,omitempty"`
	OutputIndex    *int            `json:"output_index,omitempty"`
	ItemID         string          `json:"item_id,omitempty"`
	ContentIndex   *int            `json:"content_index,omitempty"`
	Item           any             `json:"item,omitempty"`
	Part           *ContentPart    `json:"part,omitempty"`
	Delta          *string         `json:"delta,omitempty"`
	Text           *string         `json:"text,omitempty"`
	Name           string          `json:"name,omitempty"`
	Arguments      *string         `json:"arguments,omitempty"`
	Logprobs       json.RawMessage `json:"logprobs,omitempty"`
}

// Stream turns a streamed chat completion into the Responses API's
// events, in OpenAI's order: response.created and response.in_progress;
// for the message, response.output_item.added, response.content_part.added,
// response.output_text.delta for each piece, response.output_text.done,
// response.content_part.done and response.output_item.done; for each
// function call (chat sends a call whole, at the end),
// response.output_item.added, response.function_call_arguments.delta and
// .done, response.output_item.done; then response.completed (or
// response.incomplete). Nothing is sent before the first piece of output,
// so a refusal before it (402, 503) keeps its status.
type Stream struct {
	c       *Responses
	id      string
	created int64
	seq     int
	started bool
	msgID   string // the message item, once opened
	text    strings.Builder
}

// Stream starts the events of response id.
func (c *Responses) Stream(id string, created int64) *Stream {
	return &Stream{c: c, id: id, created: created}
}

func (s *Stream) event(e Event) Event {
	e.SequenceNumber = s.seq
	s.seq++
	return e
}

func intp(i int) *int { return &i }

func strp(s string) *string { return &s }

var noLogprobs = json.RawMessage(`[]`)

func (s *Stream) start(evs []Event) []Event {
	if s.started {
		return evs
	}
	s.started = true
	return append(evs,
		s.event(Event{Type: "response.created", Response: s.c.skeleton(s.id, s.created)}),
		s.event(Event{Type: "response.in_progress", Response: s.c.skeleton(s.id, s.created)}))
}

func (s *Stream) openMessage(evs []Event) []Event {
	if s.msgID != "" {
		return evs
	}
	s.msgID = newMessageID()
	part := textPartOf("")
	return append(evs,
		s.event(Event{Type: "response.output_item.added", OutputIndex: intp(0),
			Item: &MessageItem{Type: "message", ID: s.msgID, Status: "in_progress", Role: "assistant", Content: []ContentPart{}}}),
		s.event(Event{Type: "response.content_part.added", ItemID: s.msgID, OutputIndex: intp(0), ContentIndex: intp(0), Part: &part}))
}

// Text is the events of one piece of the answer's text.
func (s *Stream) Text(piece string) []Event {
	evs := s.openMessage(s.start(nil))
	s.text.WriteString(piece)
	return append(evs, s.event(Event{Type: "response.output_text.delta", ItemID: s.msgID, OutputIndex: intp(0), ContentIndex: intp(0),
		Delta: strp(piece), Logprobs: noLogprobs}))
}

// Finish is the events after the last piece: the items' ends, the
// function calls, and response.completed (or response.incomplete) with
// the whole response, its usage and receipt.
func (s *Stream) Finish(out *chat.Completion, completed int64) []Event {
	evs := s.start(nil)
	if !out.NoContent {
		evs = s.openMessage(evs)
	}
	r := s.c.finish(s.id, s.created, completed, out, s.msgID)
	for i, it := range r.Output {
		switch item := it.(type) {
		case *MessageItem:
			text := item.Content[0].Text
			part := item.Content[0]
			evs = append(evs,
				s.event(Event{Type: "response.output_text.done", ItemID: item.ID, OutputIndex: intp(i), ContentIndex: intp(0), Text: strp(text), Logprobs: noLogprobs}),
				s.event(Event{Type: "response.content_part.done", ItemID: item.ID, OutputIndex: intp(i), ContentIndex: intp(0), Part: &part}),
				s.event(Event{Type: "response.output_item.done", OutputIndex: intp(i), Item: item}))
		case *FunctionCallItem:
			added := *item
			added.Arguments, added.Status = "", "in_progress"
			evs = append(evs,
				s.event(Event{Type: "response.output_item.added", OutputIndex: intp(i), Item: &added}),
				s.event(Event{Type: "response.function_call_arguments.delta", ItemID: item.ID, OutputIndex: intp(i), Delta: strp(item.Arguments)}),
				s.event(Event{Type: "response.function_call_arguments.done", ItemID: item.ID, OutputIndex: intp(i), Name: item.Name, Arguments: strp(item.Arguments)}),
				s.event(Event{Type: "response.output_item.done", OutputIndex: intp(i), Item: item}))
		}
	}
	end := "response.completed"
	if r.Status == "incomplete" {
		end = "response.incomplete"
	}
	return append(evs, s.event(Event{Type: end, Response: r}))
}

// Fail is the last event of a stream the model failed after output
// began: response.failed, its error saying why.
func (s *Stream) Fail(message string) []Event {
	evs := s.start(nil)
	r := s.c.skeleton(s.id, s.created)
	r.Status = "failed"
	r.Error = &ResponseError{Code: "server_error", Message: message}
	return append(evs, s.event(Event{Type: "response.failed", Response: r}))
}
