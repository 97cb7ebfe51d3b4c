package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/gpu"
	"boxd/pipelines/chat"
	"boxd/web"
)

// issueLog records the ids of the receipts a server signs.
type issueLog struct {
	chat.Receipts
	mu  sync.Mutex
	ids []string
}

func (l *issueLog) Issue(ctx context.Context, mc attest.ModelCall, upstream string) (attest.SignedModelCall, error) {
	s, err := l.Receipts.Issue(ctx, mc, upstream)
	if err == nil {
		l.mu.Lock()
		l.ids = append(l.ids, mc.ID)
		l.mu.Unlock()
	}
	return s, err
}

func (l *issueLog) issued() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ids)
}

// cutServer is chatServer with the receipts it signs logged.
func cutServer(t *testing.T) (*chatEnv, *issueLog) {
	t.Helper()
	cfg := configs.Defaults()
	arbiter := gpu.NewArbiter()
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 4096, Parallel: 1, Threads: 1}, Arbiter: arbiter})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	log := &issueLog{}
	env := &chatEnv{engine: e}
	env.testServer = launch(t, cfg, web.Probes{LLMReady: func() bool { return true }, Queue: arbiter.Queued}, nil, func(s *Box) {
		log.Receipts = s.deps.Receipts
		s.Chat = &chat.Service{Engine: e, ModelID: cfg.Models.LLM.ID, WeightsRoot: strings.Repeat("ab", 32), Upstream: e.Info().Name, Provider: s.deps.Key.ID(), Receipts: log}
	})
	env.token = session(t, env.testServer, "code")
	return env, log
}

// charged is what the demo token has spent of its budget.
func (env *chatEnv) charged(t *testing.T) int64 {
	t.Helper()
	pr, d := env.deps.Platform.Authenticate(context.Background(), env.token, "code")
	if d != nil {
		t.Fatal(d)
	}
	left, err := pr.TokensLeft(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int64(configs.Defaults().Limits.TokenBudget) - left
}

// cutReceipt waits for the one receipt of a cut call and checks it: served
// by GET /receipts/{id}, finish_reason cancelled, fewer tokens than asked,
// and its completion tokens are what the token was charged.
func cutReceipt(t *testing.T, env *chatEnv, log *issueLog, id string, asked int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for env.engine.Stats().Active != 0 || len(log.issued()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the cut call still runs (%d active) or has no receipt (%v)", env.engine.Stats().Active, log.issued())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := log.issued(); len(got) != 1 || got[0] != id {
		t.Fatalf("receipts signed %v, want the call's one, %s", got, id)
	}
	r := env.do(t, call{method: "GET", path: "/receipts/" + id})
	if r.status != http.StatusOK {
		t.Fatalf("GET /receipts/%s: %d %s", id, r.status, r.body)
	}
	rec := r.json(t)
	params := rec["receipt"].(map[string]any)["params"].(map[string]any)
	tokens := int64(rec["usage"].(map[string]any)["completion_tokens"].(float64))
	if params["finish_reason"] != "cancelled" || tokens < 1 || tokens >= int64(asked) || rec["status"] != "attested" {
		t.Errorf("receipt: finish_reason %v, completion tokens %d (asked %d), status %v", params["finish_reason"], tokens, asked, rec["status"])
	}
	// The budget is committed after the receipt is signed.
	for env.charged(t) != tokens && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if c := env.charged(t); c != tokens {
		t.Errorf("charged %d tokens, the receipt says %d", c, tokens)
	}
}

// TestReceiptOfStreamCutByClient: a streamed completion whose client goes
// away after the first chunk is charged for what was generated, and the id
// of its x-service-receipt header resolves with GET /receipts/{id}
// (finish_reason cancelled, the tokens charged).
func TestReceiptOfStreamCutByClient(t *testing.T) {
	env, log := cutServer(t)
	const asked = 2048 // greedy on this prompt runs to max_tokens: the stream is going when cut
	body, _ := json.Marshal(chatBodyJSON(map[string]any{"max_tokens": asked, "stream": true, "temperature": 0}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", env.url+"/v1/chat/completions", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+env.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Header.Get("x-service-receipt")
	if resp.StatusCode != 200 || !strings.HasPrefix(id, "chatcmpl-") {
		t.Fatalf("%d, x-service-receipt %q", resp.StatusCode, id)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first chunk %q: %v", line, err)
	}
	cancel()
	resp.Body.Close()
	cutReceipt(t, env, log, id, asked)
}

// TestReceiptOfCallCutByClient: a completion with stream false whose client
// goes away while it generates is charged for what was generated and has
// its receipt, under the completion id the call was given (the
// x-service-receipt id an answer would have carried).
func TestReceiptOfCallCutByClient(t *testing.T) {
	env, log := cutServer(t)
	const asked = 2048
	body, _ := json.Marshal(chatBodyJSON(map[string]any{"max_tokens": asked, "temperature": 0}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", env.url+"/v1/chat/completions", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+env.token)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	// Cut once it generates.
	deadline := time.Now().Add(10 * time.Second)
	for env.engine.Stats().Active == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call never started generating")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the call answered before it was cut; the test needs a longer generation")
	}
	deadline = time.Now().Add(10 * time.Second)
	for len(log.issued()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	ids := log.issued()
	if len(ids) != 1 || !strings.HasPrefix(ids[0], "chatcmpl-") {
		t.Fatalf("receipts signed %v, want one", ids)
	}
	cutReceipt(t, env, log, ids[0], asked)
}
