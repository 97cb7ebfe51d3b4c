package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
)

// issuer records the receipts it signs.
type issuer struct {
	mu    sync.Mutex
	calls []attest.ModelCall
}

func (i *issuer) Issue(_ context.Context, mc attest.ModelCall, _ string) (attest.SignedModelCall, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.calls = append(i.calls, mc)
	return attest.SignedModelCall{ModelCall: mc, Sig: "sig"}, nil
}

// chargeBudget grants what is asked and records what is committed.
type chargeBudget struct{ committed []int64 }

func (b *chargeBudget) Reserve(_ context.Context, want int64) (int64, func(int64), error) {
	return want, func(used int64) { b.committed = append(b.committed, used) }, nil
}
func (b *chargeBudget) TokensLeft(context.Context) (int64, error) { return 1 << 20, nil }
func (b *chargeBudget) KeyID() *string                            { return nil }
func (b *chargeBudget) Daily() bool                               { return false }

// goneSink fails at the first piece, as a client that went away.
type goneSink struct{ pieces int }

var errGone = errors.New("the client went away")

func (s *goneSink) Content(string) error { s.pieces++; return errGone }

// TestStreamStoppedStillSigned: a streamed completion whose client goes
// away after the first piece was charged for what it generated, so it has
// its one receipt (finish_reason cancelled, the generated text's hash),
// with the tiny model on the real engine. Before llmcall, such a
// completion was charged and had no receipt.
func TestStreamStoppedStillSigned(t *testing.T) {
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 1024, Parallel: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	iss := &issuer{}
	s := &Service{Engine: e, ModelID: "model-27b", WeightsRoot: strings.Repeat("ab", 32), Upstream: "tiny", Provider: "test", Receipts: iss}
	var req Request
	// json_object: the grammar rules out an empty answer, so a piece comes.
	body := `{"model":"model-27b","messages":[{"role":"user","content":"hello"}],"max_tokens":24,"temperature":0,"response_format":{"type":"json_object"}}`
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	call, err := Prepare(s, &req)
	if err != nil {
		t.Fatal(err)
	}
	b, sink := &chargeBudget{}, &goneSink{}
	if _, err := call.Run(context.Background(), "chatcmpl-gone", b, sink); !errors.Is(err, errGone) {
		t.Fatalf("Run: %v, want the sink's error", err)
	}
	if sink.pieces != 1 || len(b.committed) != 1 || b.committed[0] < 1 {
		t.Fatalf("pieces %d, committed %v", sink.pieces, b.committed)
	}
	if len(iss.calls) != 1 {
		t.Fatalf("%d receipts, want 1", len(iss.calls))
	}
	mc := iss.calls[0]
	if mc.ID != "chatcmpl-gone" || mc.Params["finish_reason"] != "cancelled" || mc.Usage.CompletionTokens != strconv.FormatInt(b.committed[0], 10) ||
		mc.Params["response_format"] != "json_object" {
		t.Errorf("receipt %+v", mc)
	}
}
