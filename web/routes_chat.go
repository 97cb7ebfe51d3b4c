package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"boxd/pipelines/chat"
	"boxd/web/platform"
)

// chatBody bounds a chat request: 48,000 characters of prompt (up to four
// bytes each) plus tools and JSON around them.
const chatBody = 2 << 20

// chatVertical is the demo vertical of chat completions.
const chatVertical = "code"

func (s *Server) chatRoutes() {
	s.Handle(http.MethodPost, "/v1/chat/completions", s.chatCompletions)
	s.Handle(http.MethodGet, "/v1/models", s.listModels)
}

// decodeOpenAI reads a JSON body like decodeJSON but ignores unknown fields:
// OpenAI clients send fields a box does not use.
func decodeOpenAI(w http.ResponseWriter, r *http.Request, limit int64, dst any) *httpError {
	if r.ContentLength > limit {
		return tooLarge(limit)
	}
	if e := checkJSONType(r); e != nil {
		return e
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	if err := dec.Decode(dst); err != nil {
		return jsonError(err, limit)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("body has data after its JSON object; send exactly one object")
	}
	return nil
}

// budget adapts a principal to the chat pipeline's Budget.
type budget struct{ pr *platform.Principal }

func (b budget) Reserve(ctx context.Context, want int64) (int64, func(int64), error) {
	res, d := b.pr.ReserveTokens(ctx, want)
	if d != nil {
		return 0, nil, d
	}
	return res.Granted, func(used int64) { _ = res.Commit(context.Background(), used) }, nil
}

func (b budget) KeyID() *string { return b.pr.KeyID() }

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	pr := s.principal(w, r, chatVertical)
	if pr == nil {
		return
	}
	var req chat.Request
	if e := decodeOpenAI(w, r, chatBody, &req); e != nil {
		writeHTTPError(w, e)
		return
	}
	call, err := s.chat.Prepare(&req)
	if err != nil {
		writeChatError(w, err)
		return
	}
	id := chat.NewID()
	w.Header().Set("x-service-receipt", id)
	if req.Stream {
		s.streamChat(w, r, call, id, pr)
		return
	}
	out, err := call.Run(r.Context(), id, budget{pr}, nil)
	if err != nil {
		if r.Context().Err() == nil {
			writeChatError(w, err)
		}
		return
	}
	s.log.Info("chat completion", "id", id, "caller", pr.LogID(), "prompt_tokens", out.Usage.PromptTokens, "completion_tokens", out.Usage.CompletionTokens, "finish", out.FinishReason)
	finish := out.FinishReason
	msg := &chat.AssistantMessage{Role: "assistant", ToolCalls: out.ToolCalls}
	if len(out.ToolCalls) == 0 {
		content := out.Content
		msg.Content = &content
	}
	rec := out.Receipt
	writeJSON(w, http.StatusOK, chat.Response{
		ID: id, Object: "chat.completion", Created: out.Created, Model: req.Model,
		Choices: []chat.Choice{{Index: 0, Message: msg, FinishReason: &finish}},
		Usage:   out.Usage, Receipt: &rec,
	})
}

// writeChatError answers a pipeline or platform refusal.
func writeChatError(w http.ResponseWriter, err error) {
	var ce *chat.Error
	var d *platform.Denial
	switch {
	case errors.As(err, &ce):
		if ce.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(ce.RetryAfter))
		}
		writeError(w, ce.Status, ce.Message)
	case errors.As(err, &d):
		writeDenial(w, d)
	default:
		writeError(w, http.StatusBadGateway, "the model failed: "+err.Error())
	}
}

// sseSink writes chat chunks as server-sent events. Headers go out with the
// first event, so a refusal before any output still gets its status.
type sseSink struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	id      string
	model   string
	created int64
	started bool
}

func (k *sseSink) event(v any) error {
	if !k.started {
		h := k.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		k.w.WriteHeader(http.StatusOK)
		k.started = true
		if err := k.write(chat.Chunk{ID: k.id, Object: "chat.completion.chunk", Created: k.created, Model: k.model,
			Choices: []chat.Choice{{Index: 0, Delta: &chat.Delta{Role: "assistant"}}}}); err != nil {
			return err
		}
	}
	return k.write(v)
}

func (k *sseSink) write(v any) error {
	var b []byte
	if s, ok := v.(string); ok {
		b = []byte(s)
	} else {
		var err error
		if b, err = json.Marshal(v); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(k.w, "data: %s\n\n", b); err != nil {
		return err
	}
	return k.rc.Flush()
}

func (k *sseSink) Content(piece string) error {
	return k.event(chat.Chunk{ID: k.id, Object: "chat.completion.chunk", Created: k.created, Model: k.model,
		Choices: []chat.Choice{{Index: 0, Delta: &chat.Delta{Content: &piece}}}})
}

func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, call *chat.Call, id string, pr *platform.Principal) {
	sink := &sseSink{w: w, rc: http.NewResponseController(w), id: id, model: call.Model(), created: s.now().Unix()}
	out, err := call.Run(r.Context(), id, budget{pr}, sink)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client left; its sequence is already freed
		}
		if !sink.started {
			writeChatError(w, err)
			return
		}
		_ = sink.write(map[string]any{"error": map[string]string{"message": err.Error(), "type": "server_error"}})
		_ = sink.write("[DONE]")
		return
	}
	s.log.Info("chat completion", "id", id, "caller", pr.LogID(), "stream", true, "prompt_tokens", out.Usage.PromptTokens, "completion_tokens", out.Usage.CompletionTokens, "finish", out.FinishReason)
	if len(out.ToolCalls) > 0 {
		calls := make([]chat.ToolCall, len(out.ToolCalls))
		for i, c := range out.ToolCalls {
			idx := i
			c.Index = &idx
			calls[i] = c
		}
		if err := sink.event(chat.Chunk{ID: id, Object: "chat.completion.chunk", Created: sink.created, Model: sink.model,
			Choices: []chat.Choice{{Index: 0, Delta: &chat.Delta{ToolCalls: calls}}}}); err != nil {
			return
		}
	}
	finish := out.FinishReason
	usage, rec := out.Usage, out.Receipt
	if err := sink.event(chat.Chunk{ID: id, Object: "chat.completion.chunk", Created: sink.created, Model: sink.model,
		Choices: []chat.Choice{{Index: 0, Delta: &chat.Delta{}, FinishReason: &finish}}, Usage: &usage, Receipt: &rec}); err != nil {
		return
	}
	_ = sink.write("[DONE]")
}

// ModelList is GET /v1/models (OpenAI's list shape).
type ModelList struct {
	Object string      `json:"object"`
	Data   []ModelItem `json:"data"`
}

// ModelItem is one served model.
type ModelItem struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	if pr := s.principal(w, r, ""); pr == nil {
		return
	}
	list := ModelList{Object: "list", Data: []ModelItem{}}
	if s.chat.Engine != nil {
		list.Data = append(list.Data, ModelItem{ID: s.chat.ModelID, Object: "model", Created: s.started.Unix(), OwnedBy: "boxd"})
	}
	writeJSON(w, http.StatusOK, list)
}
