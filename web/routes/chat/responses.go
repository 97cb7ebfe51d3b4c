package chat

import (
	"net/http"

	"boxd/internal/problem"
	"boxd/pipelines/chat"
	"boxd/pipelines/chat/convert"
	"boxd/web/api"
)

// POST /v1/responses (OpenAI's Responses API) and POST /v1/completions
// (the legacy text completions API) are chat completions in other wire
// formats: pipelines/chat/convert turns each request into a chat.Request,
// which chat.Prepare and Call.Run serve exactly as POST
// /v1/chat/completions (admission, limits, grammars, the model call, the
// budget, the signed receipt), and turns the completion back. Both
// routes are admitted as chat's (Bearer, the code vertical, chat's body
// limit, a model-call slot) but read strictly: a field the API does not
// have is refused, as OpenAI refuses it.

func (s *routes) responsesRoutes() {
	api.Declare(s.api, api.Declared[convert.ResponsesRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/v1/responses", Auth: api.Bearer,
			Verticals: []string{chatVertical}, Body: BodyLimit, CallSlot: true,
			Example: `{"model": "boxd-test", "input": "Hello", "max_output_tokens": 16}`},
		Serve: s.createResponse,
	})
	// The Responses API's routes on stored responses: none is stored.
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		s.api.Handle(api.Route{Method: m, Path: "/v1/responses/{rest...}"}, s.noStoredResponses)
	}
	api.Declare(s.api, api.Declared[convert.CompletionRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/v1/completions", Auth: api.Bearer,
			Verticals: []string{chatVertical}, Body: BodyLimit, CallSlot: true,
			Example: `{"model": "boxd-test", "prompt": "Hello", "max_tokens": 16}`},
		Serve: s.textCompletion,
	})
}

// noStoredResponses answers the Responses API's routes on stored
// responses (retrieve, input_items, cancel, delete, input_tokens).
func (s *routes) noStoredResponses(w http.ResponseWriter, r *http.Request) {
	api.WriteProblem(w, problem.New(problem.NotFound, "%s %s is not served: this box stores no responses (nothing to retrieve, list, cancel or delete, and no conversation state); POST /v1/responses answers each request whole, with its usage and receipt", r.Method, r.URL.Path))
}

// modelRefusal is chat's refusal of the model a request names (404
// naming the served id), nil when the box serves it: chat.Prepare checks
// the model first, so the three routes refuse a wrong model before
// anything else, in the same words.
func (s *routes) modelRefusal(model string) error {
	if _, err := chat.Prepare(s.chat, &chat.Request{Model: model}); problem.Is(err, problem.NotFound) {
		return err
	}
	return nil
}

// converted is a request of another wire format turned into a chat
// request (pipelines/chat/convert), whose Rename words chat's refusals in
// that format's field names.
type converted interface {
	ChatRequest() *chat.Request
	Rename(error) error
}

// prepareConverted runs the steps both formats share, in chat's order:
// the model first (404 in chat's words), then the format's own checks,
// then chat's, renamed. It writes the refusal and reports false on one.
func prepareConverted[C converted](s *routes, w http.ResponseWriter, model string, convert func() (C, error)) (C, *chat.Call, bool) {
	var zero C
	if err := s.modelRefusal(model); err != nil {
		api.WriteProblem(w, api.ModelFailure(err))
		return zero, nil, false
	}
	conv, err := convert()
	if err != nil {
		api.WriteProblem(w, api.ModelFailure(err))
		return zero, nil, false
	}
	call, err := chat.Prepare(s.chat, conv.ChatRequest())
	if err != nil {
		api.WriteProblem(w, api.ModelFailure(conv.Rename(err)))
		return zero, nil, false
	}
	return conv, call, true
}

func (s *routes) createResponse(a *api.Admitted, req *convert.ResponsesRequest) {
	w, r, pr := a.W, a.R, a.Principal
	conv, call, ok := prepareConverted(s, w, req.Model, func() (*convert.Responses, error) { return convert.FromResponses(req) })
	if !ok {
		return
	}
	id := convert.NewResponseID()
	w.Header().Set("x-service-receipt", id)
	created := s.now().Unix()
	var out *chat.Completion
	if req.Stream {
		out = s.streamResponse(w, r, conv, call, id, created, api.Budget{Principal: pr})
	} else {
		var err error
		out, err = call.Run(r.Context(), id, api.Budget{Principal: pr}, nil)
		if err != nil {
			if r.Context().Err() == nil {
				api.WriteProblem(w, api.ModelFailure(conv.Rename(err)))
			}
			return
		}
		api.WriteJSON(w, http.StatusOK, conv.Response(id, created, s.now().Unix(), out))
	}
	if out != nil {
		s.log.Info("response", "id", id, "caller", pr.LogID(), "stream", req.Stream, "prompt_tokens", out.Usage.PromptTokens,
			"completion_tokens", out.Usage.CompletionTokens, "finish", out.FinishReason, "tool_calls", len(out.ToolCalls))
	}
}

// responseSink writes a response's events as the model writes.
type responseSink struct {
	sse *api.SSE
	st  *convert.Stream
}

func (k *responseSink) Content(piece string) error { return k.emit(k.st.Text(piece), false) }

// emit writes events, the last of them ending the stream when last.
func (k *responseSink) emit(evs []convert.Event, last bool) error {
	for i, ev := range evs {
		if err := k.sse.SendEvent(ev.Type, ev, last && i == len(evs)-1); err != nil {
			return err
		}
	}
	return nil
}

// streamResponse runs call streamed as the Responses API's events; the
// completion when it finished (nil when it was refused or failed, which
// it has answered).
func (s *routes) streamResponse(w http.ResponseWriter, r *http.Request, conv *convert.Responses, call *chat.Call, id string, created int64, b api.Budget) *chat.Completion {
	sink := &responseSink{sse: api.NewSSE(w), st: conv.Stream(id, created)}
	defer sink.sse.Close()
	out, err := call.Run(r.Context(), id, b, sink)
	if err != nil {
		if r.Context().Err() != nil {
			return nil // the client left; its sequence is already freed
		}
		if !sink.sse.Started() {
			api.WriteProblem(w, api.ModelFailure(conv.Rename(err)))
			return nil
		}
		_ = sink.emit(sink.st.Fail(err.Error()), true)
		return nil
	}
	_ = sink.emit(sink.st.Finish(out, s.now().Unix()), true)
	return out
}

func (s *routes) textCompletion(a *api.Admitted, req *convert.CompletionRequest) {
	w, r, pr := a.W, a.R, a.Principal
	conv, call, ok := prepareConverted(s, w, req.Model, func() (*convert.Completions, error) { return convert.FromCompletions(req) })
	if !ok {
		return
	}
	id := convert.NewCompletionID()
	w.Header().Set("x-service-receipt", id)
	var out *chat.Completion
	if req.Stream {
		out = s.streamCompletion(w, r, conv, call, id, api.Budget{Principal: pr})
	} else {
		var err error
		out, err = call.Run(r.Context(), id, api.Budget{Principal: pr}, nil)
		if err != nil {
			if r.Context().Err() == nil {
				api.WriteProblem(w, api.ModelFailure(conv.Rename(err)))
			}
			return
		}
		api.WriteJSON(w, http.StatusOK, convert.CompletionOf(id, req.Model, out))
	}
	if out != nil {
		s.log.Info("text completion", "id", id, "caller", pr.LogID(), "stream", req.Stream, "prompt_tokens", out.Usage.PromptTokens,
			"completion_tokens", out.Usage.CompletionTokens, "finish", out.FinishReason)
	}
}

// completionSink writes text_completion chunks.
type completionSink struct {
	sse     *api.SSE
	id      string
	model   string
	created int64
}

func (k *completionSink) Content(piece string) error {
	return k.sse.Send(convert.CompletionChunk(k.id, k.model, k.created, piece))
}

// streamCompletion runs call streamed as text_completion chunks, the last
// with the finish reason, usage and receipt, then [DONE] (as chat's
// stream ends); the completion when it finished.
func (s *routes) streamCompletion(w http.ResponseWriter, r *http.Request, conv *convert.Completions, call *chat.Call, id string, b api.Budget) *chat.Completion {
	sink := &completionSink{sse: api.NewSSE(w), id: id, model: call.Model(), created: s.now().Unix()}
	defer sink.sse.Close()
	out, err := call.Run(r.Context(), id, b, sink)
	if err != nil {
		if r.Context().Err() != nil {
			return nil
		}
		if !sink.sse.Started() {
			api.WriteProblem(w, api.ModelFailure(conv.Rename(err)))
			return nil
		}
		sink.sse.Fail(err, map[string]any{"error": map[string]string{"message": err.Error(), "type": "server_error"}}, "[DONE]")
		return nil
	}
	if sink.sse.Send(convert.CompletionEnd(id, sink.model, sink.created, out)) != nil {
		return out
	}
	_ = sink.sse.End("[DONE]")
	return out
}
