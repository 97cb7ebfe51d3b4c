// Package chat declares the OpenAI-style chat routes (/v1/chat/completions,
// /v1/responses, /v1/completions, /v1/models) over pipelines/chat.
package chat

import (
	"cmp"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"boxd/pipelines/retrieval"
	"boxd/web/api"

	"boxd/internal/problem"

	"boxd/internal/platform"
	"boxd/pipelines/chat"
)

// BodyLimit bounds a chat request: 48,000 characters of prompt (up to four
// bytes each) plus tools and JSON around them, and up to chat.MaxImages
// images of chat.MaxImageBytes each as base64 (4/3 the size).
const BodyLimit = 2<<20 + chat.MaxImages*(chat.MaxImageBytes/3*4+1024)

// chatVertical is the demo vertical of chat completions.
const chatVertical = "code"

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log     *slog.Logger
	Now     func() time.Time
	Service *chat.Service
	// Started is the models' created time (the server's start).
	Started time.Time
	// Retrieval names the embedder and reranker /v1/models lists (nil: none).
	Retrieval *retrieval.Service
}

type routes struct {
	api       *api.API
	log       *slog.Logger
	now       func() time.Time
	chat      *chat.Service
	started   time.Time
	retrieval *retrieval.Service
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	s := &routes{api: a, log: d.Log, now: d.Now, chat: d.Service, started: d.Started, retrieval: d.Retrieval}
	s.declare()
}

func (s *routes) declare() {
	s.chatRoutes()
	s.responsesRoutes()
}

func (s *routes) chatRoutes() {
	api.Declare(s.api, api.Declared[chat.Request]{
		Route: api.Route{Method: http.MethodPost, Path: "/v1/chat/completions", Auth: api.Bearer,
			Verticals: []string{chatVertical}, Body: BodyLimit, Lenient: true, CallSlot: true,
			Example: `{"model": "boxd-test", "messages": [{"role": "user", "content": "Hello"}]}`},
		Serve: s.chatCompletions,
	})
	api.Declare(s.api, api.Declared[struct{}]{
		Route: api.Route{Method: http.MethodGet, Path: "/v1/models", Auth: api.Bearer},
		Serve: s.listModels,
	})
	api.Declare(s.api, api.Declared[struct{}]{
		Route: api.Route{Method: http.MethodGet, Path: "/v1/models/{model...}", Auth: api.Bearer},
		Serve: s.getModel,
	})
}

func (s *routes) chatCompletions(a *api.Admitted, req *chat.Request) {
	w, r, pr := a.W, a.R, a.Principal
	call, err := chat.Prepare(s.chat, req)
	if err != nil {
		api.WriteProblem(w, api.ModelFailure(err))
		return
	}
	id := chat.NewID()
	w.Header().Set("x-service-receipt", id)
	if req.Stream {
		s.streamChat(w, r, call, id, pr)
		return
	}
	out, err := call.Run(r.Context(), id, api.Budget{Principal: pr}, nil)
	if err != nil {
		if r.Context().Err() == nil {
			api.WriteProblem(w, api.ModelFailure(err))
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
	api.WriteJSON(w, http.StatusOK, chat.Response{
		ID: id, Object: "chat.completion", Created: out.Created, Model: req.Model,
		Choices: []chat.Choice{{Index: 0, Message: msg, FinishReason: &finish}},
		Usage:   out.Usage, Receipt: &rec,
	})
}

// sseSink writes chat chunks on the one SSE writer: the role chunk goes
// out with the first content, so a refusal before any output still gets
// its status.
type sseSink struct {
	sse     *api.SSE
	id      string
	model   string
	created int64
}

func (k *sseSink) event(v any) error {
	if !k.sse.Started() {
		if err := k.sse.Send(chat.Chunk{ID: k.id, Object: "chat.completion.chunk", Created: k.created, Model: k.model,
			Choices: []chat.Choice{{Index: 0, Delta: &chat.Delta{Role: "assistant"}}}}); err != nil {
			return err
		}
	}
	return k.sse.Send(v)
}

func (k *sseSink) Content(piece string) error {
	return k.event(chat.Chunk{ID: k.id, Object: "chat.completion.chunk", Created: k.created, Model: k.model,
		Choices: []chat.Choice{{Index: 0, Delta: &chat.Delta{Content: &piece}}}})
}

func (s *routes) streamChat(w http.ResponseWriter, r *http.Request, call *chat.Call, id string, pr *platform.Principal) {
	sink := &sseSink{sse: api.NewSSE(w), id: id, model: call.Model(), created: s.now().Unix()}
	defer sink.sse.Close()
	out, err := call.Run(r.Context(), id, api.Budget{Principal: pr}, sink)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client left; its sequence is already freed
		}
		if !sink.sse.Started() {
			api.WriteProblem(w, api.ModelFailure(err))
			return
		}
		sink.sse.Fail(err, map[string]any{"error": map[string]string{"message": err.Error(), "type": "server_error"}}, "[DONE]")
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
	_ = sink.sse.End("[DONE]")
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

func (s *routes) listModels(a *api.Admitted, _ *struct{}) {
	api.WriteJSON(a.W, http.StatusOK, ModelList{Object: "list", Data: s.servedModels()})
}

// servedModels are the models loaded on this box as /v1/models lists
// them: the chat model by its id (chat completions), then the embedder
// (/v1/embeddings) and the reranker (/v1/rerank) by the names those
// routes take. Aliases of the chat model are not listed (one entry a
// model); GET /v1/models/{id} answers them.
func (s *routes) servedModels() []ModelItem {
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
func (s *routes) getModel(a *api.Admitted, _ *struct{}) {
	name := a.R.PathValue("model")
	served := s.servedModels()
	for _, m := range served {
		if m.ID == name {
			api.WriteJSON(a.W, http.StatusOK, m)
			return
		}
	}
	if s.chat.Engine != nil && s.chat.Serves(name) {
		m := served[0] // the chat model
		m.ID = name
		api.WriteJSON(a.W, http.StatusOK, m)
		return
	}
	ids := make([]string, len(served))
	for i, m := range served {
		ids[i] = m.ID
	}
	api.WriteProblem(a.W, problem.New(problem.NotFound, "model %q is not served on this box; it serves: %s", name, cmp.Or(strings.Join(ids, ", "), "no model (none is configured)")))
}
