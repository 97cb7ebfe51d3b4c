package audit

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"boxd/engine/llm"
	"boxd/internal/run"
	"boxd/pipelines/chat"
	"boxd/pipelines/llmcall"
)

// Local is this box's own chat model as an endpoint: greedy probes go
// through llmcall with logprobs, tool probes through the chat route's own
// tool calling (pipelines/chat), so the model answers as
// /v1/chat/completions would. Every probe is a model call with a receipt
// (emitted to Events) and spends Budget.
type Local struct {
	Model  *llmcall.Model
	Budget run.Budget
	Events llmcall.Events
}

// Chat answers one probe on the box's engine.
func (l *Local) Chat(ctx context.Context, c Call) (Reply, error) {
	if len(c.Probe.Tools) > 0 {
		return l.tools(ctx, c)
	}
	msgs := make([]llmcall.Message, len(c.Probe.Messages))
	for i, m := range c.Probe.Messages {
		msgs[i] = llmcall.Message{Role: m.Role, Content: m.Content}
	}
	start := time.Now()
	var first time.Duration
	res, err := l.Model.Text(ctx, l.Budget, llmcall.Request{
		Messages: msgs, MaxTokens: c.Probe.MaxTokens, TopLogprobs: c.TopLogprobs, Events: l.Events,
		Params: map[string]string{"audit_probe": c.Probe.ID},
		Stream: func(string) error {
			if first == 0 {
				first = time.Since(start)
			}
			return nil
		},
	})
	if err != nil {
		return Reply{}, &ProbeError{Msg: "the box's model failed: " + err.Error()}
	}
	rep := Reply{Text: res.Text, Model: l.Model.ModelID, Finish: res.FinishReason, PromptTokens: res.Usage.PromptTokens,
		CompletionTokens: res.Usage.CompletionTokens, FirstToken: first, Total: time.Since(start), Tokens: tokensOf(res.Logprobs)}
	if first == 0 {
		rep.FirstToken = rep.Total
	}
	if res.Receipt != nil {
		rc := receiptBody(*res.Receipt, l.Budget)
		rep.Receipt = &rc
	}
	return rep, nil
}

// tools runs a tool probe through the chat route's tool calling.
func (l *Local) tools(ctx context.Context, c Call) (Reply, error) {
	body, err := json.Marshal(wireOf(l.Model.ModelID, Call{Probe: c.Probe, Seed: c.Seed}, false))
	if err != nil {
		return Reply{}, fmt.Errorf("audit: %w", err)
	}
	var req chat.Request
	if err := json.Unmarshal(body, &req); err != nil {
		return Reply{}, fmt.Errorf("audit: a tool probe is not a chat request: %w", err)
	}
	call, err := chat.Prepare(l.Model, &req)
	if err != nil {
		return Reply{}, &ProbeError{Msg: "the box refused the probe: " + err.Error()}
	}
	start := time.Now()
	comp, err := call.Run(ctx, chat.NewID(), l.Budget, nil)
	if err != nil {
		return Reply{}, &ProbeError{Msg: "the box's model failed: " + err.Error()}
	}
	rc := run.ReceiptBody{ID: comp.Receipt.ID, Model: comp.Receipt.Model, GatewaySig: comp.Receipt.GatewaySig,
		Provider: comp.Receipt.Provider, Status: comp.Receipt.Status, KeyID: l.Budget.KeyID()}
	if l.Events != nil {
		l.Events.Emit(run.TypeReceipt, rc)
	}
	rep := Reply{Text: comp.Content, Model: l.Model.ModelID, Finish: comp.FinishReason, PromptTokens: comp.Usage.PromptTokens,
		CompletionTokens: comp.Usage.CompletionTokens, Total: time.Since(start), Receipt: &rc}
	rep.FirstToken = rep.Total
	for _, tc := range comp.ToolCalls {
		rep.ToolCalls = append(rep.ToolCalls, ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return rep, nil
}

func receiptBody(r llmcall.Receipt, b run.Budget) run.ReceiptBody {
	return run.ReceiptBody{ID: r.ID, Model: r.Model, GatewaySig: r.GatewaySig, Provider: r.Provider, Status: r.Status, KeyID: b.KeyID()}
}

// tokensOf converts the engine's logprobs.
func tokensOf(lps []llm.TokenLogprob) []Token {
	if len(lps) == 0 {
		return nil
	}
	out := make([]Token, len(lps))
	for i, t := range lps {
		out[i] = Token{Text: strings.ToValidUTF8(t.Token, "\ufffd"), Hex: hex.EncodeToString(t.Bytes), Logprob: t.Logprob}
		for _, a := range t.Top {
			out[i].Top = append(out[i].Top, TopToken{Text: strings.ToValidUTF8(a.Token, "\ufffd"), Hex: hex.EncodeToString(a.Bytes), Logprob: a.Logprob})
		}
	}
	return out
}
