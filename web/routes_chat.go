package web

import (
	"cmp"
	"net/http"
	"strings"

	"boxd/internal/problem"

	"boxd/internal/platform"
	"boxd/pipelines/chat"
)

// chatBody bounds a chat request: 48,000 characters of prompt (up to four
// bytes each) plus tools and JSON around them, and up to chat.MaxImages
// images of chat.MaxImageBytes each as base64 (4/3 the size).
const chatBody = 2<<20 + chat.MaxImages*(chat.MaxImageBytes/3*4+1024)

// chatVertical is the demo vertical of chat completions.
const chatVertical = "code"

func (s *Server) chatRoutes() {
	declare(s, Declared[chat.Request]{
		Route: Route{Method: http.MethodPost, Path: "/v1/chat/completions", Auth: Bearer,
			Verticals: []string{chatVertical}, Body: chatBody, Lenient: true, CallSlot: true,
			Example: `{"model": "boxd-test", "messages": [{"role": "user", "content": "Hello"}]}`},
		Serve: s.chatCompletions,
	})
	declare(s, Declared[struct{}]{
		Route: Route{Method: http.MethodGet, Path: "/v1/models", Auth: Bearer},
		Serve: s.listModels,
	})
	declare(s, Declared[struct{}]{
		Route: Route{Method: http.MethodGet, Path: "/v1/models/{model...}", Auth: Bearer},
		Serve: s.getModel,
	})
}

// decodeOpenAI reads a JSON body like decodeJSON but ignores unknown fields:
// OpenAI clients send fields a box does not use. Duplicate and wrong-case
// keys are refused all the same (body.go).
func decodeOpenAI(w http.ResponseWriter, r *http.Request, limit int64, dst any) *problem.Error {
	return decodeBody(w, r, limit, dst, true)
}

func (s *Server) chatCompletions(a *Admitted, req *chat.Request) {
	w, r, pr := a.W, a.R, a.Principal
	call, err := chat.Prepare(s.chat, req)
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
	if !out.NoContent {
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

// writeChatError answers a pipeline or platform refusal (a
// *problem.Error, its kind mapped to the contract's status); any other
// error is the model's failure.
func writeChatError(w http.ResponseWriter, err error) {
	if _, ok := problem.As(err); ok {
		writeProblem(w, err)
		return
	}
	writeError(w, http.StatusBadGateway, "the model failed: "+err.Error())
}

// sseSink writes chat chunks on the one SSE writer: the role chunk goes
// out with the first content, so a refusal before any output still gets
// its status.
type sseSink struct {
	sse     *sseStream
	id      string
	model   string
	created int64
}

func (k *sseSink) event(v any) error {
	if !k.sse.Started() {
		if err := k.sse.send(chat.Chunk{ID: k.id, Object: "chat.completion.chunk", Created: k.created, Model: k.model,
			Choices: []chat.Choice{{Index: 0, Delta: &chat.Delta{Role: "assistant"}}}}); err != nil {
			return err
		}
	}
	return k.sse.send(v)
}

func (k *sseSink) Content(piece string) error {
	return k.event(chat.Chunk{ID: k.id, Object: "chat.completion.chunk", Created: k.created, Model: k.model,
		Choices: []chat.Choice{{Index: 0, Delta: &chat.Delta{Content: &piece}}}})
}

func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, call *chat.Call, id string, pr *platform.Principal) {
	sink := &sseSink{sse: newSSE(w), id: id, model: call.Model(), created: s.now().Unix()}
	defer sink.sse.close()
	out, err := call.Run(r.Context(), id, budget{pr}, sink)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client left; its sequence is already freed
		}
		if !sink.sse.Started() {
			writeChatError(w, err)
			return
		}
		sink.sse.fail(err, map[string]any{"error": map[string]string{"message": err.Error(), "type": "server_error"}}, "[DONE]")
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
	_ = sink.sse.end("[DONE]")
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

func (s *Server) listModels(a *Admitted, _ *struct{}) {
	writeJSON(a.W, http.StatusOK, ModelList{Object: "list", Data: s.servedModels()})
}

// servedModels are the models loaded on this box as /v1/models lists
// them: the chat model by its id (chat completions), then the embedder
// (/v1/embeddings) and the reranker (/v1/rerank) by the names those
// routes take. Aliases of the chat model are not listed (one entry a
// model); GET /v1/models/{id} answers them.
func (s *Server) servedModels() []ModelItem {
	out := []ModelItem{}
	item := func(id string) ModelItem {
		return ModelItem{ID: id, Object: "model", Created: s.started.Unix(), OwnedBy: "boxd"}
	}
	if s.chat.Engine != nil {
		out = append(out, item(s.chat.ModelID))
	}
	if s.retrieval != nil && s.retrieval.Embedder != nil {
		out = append(out, item(s.retrieval.EmbedderModel.Ref.Repo))
	}
	if s.retrieval != nil && s.retrieval.Reranker != nil {
		out = append(out, item(s.retrieval.RerankerModel.Ref.Repo))
	}
	return out
}

// getModel is GET /v1/models/{model}: one served model, by its id or
// one of the chat model's aliases (the answer carries the name asked
// for, as OpenAI's does); 404 naming what is served otherwise.
func (s *Server) getModel(a *Admitted, _ *struct{}) {
	name := a.R.PathValue("model")
	served := s.servedModels()
	for _, m := range served {
		if m.ID == name {
			writeJSON(a.W, http.StatusOK, m)
			return
		}
	}
	if s.chat.Engine != nil && s.chat.Serves(name) {
		m := served[0] // the chat model
		m.ID = name
		writeJSON(a.W, http.StatusOK, m)
		return
	}
	ids := make([]string, len(served))
	for i, m := range served {
		ids[i] = m.ID
	}
	writeProblem(a.W, problem.New(problem.NotFound, "model %q is not served on this box; it serves: %s", name, cmp.Or(strings.Join(ids, ", "), "no model (none is configured)")))
}
