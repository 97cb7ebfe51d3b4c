package llmcall

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/models"
	"boxd/gpu"
	"boxd/internal/problem"
	"boxd/internal/run"
)

// fakeEngine hands out scripted jobs (through starter): each generates
// pieces, one token each, then ends with fail (nil: finish).
type fakeEngine struct {
	ctxLen   int
	pieces   []string
	finish   llm.Finish
	fail     error // the job's error after the pieces
	startErr error // Generate's refusal
	started  []llm.Request
	logprobs []llm.TokenLogprob // the result's
}

func (e *fakeEngine) Template() models.Template { return models.TemplateChatML }
func (e *fakeEngine) Tokenize(text string, _, _ bool) ([]int32, error) {
	return make([]int32, len(text)/4+1), nil
}
func (e *fakeEngine) Generate(context.Context, llm.Request) (*llm.Job, error) {
	return nil, errors.New("fakeEngine starts jobs through start")
}
func (e *fakeEngine) ContextPerRequest() int { return e.ctxLen }

func (e *fakeEngine) start(ctx context.Context, r llm.Request) (job, error) {
	e.started = append(e.started, r)
	if e.startErr != nil {
		return nil, e.startErr
	}
	finish := e.finish
	if finish == "" {
		finish = llm.FinishStop
	}
	return &fakeJob{ctx: ctx, prompt: len(r.Prompt), pieces: e.pieces, finish: finish, fail: e.fail, logprobs: e.logprobs}, nil
}

// fakeJob behaves as *llm.Job: Next returns pieces, io.EOF once it ended,
// or the reader's context error; the job's own context ending cancels it.
type fakeJob struct {
	ctx      context.Context
	prompt   int
	pieces   []string
	finish   llm.Finish
	fail     error
	logprobs []llm.TokenLogprob
	text     strings.Builder
	n        int
	res      *llm.Result
}

func (j *fakeJob) end(f llm.Finish, err error) {
	j.res = &llm.Result{Text: j.text.String(), PromptTokens: j.prompt, CompletionTokens: j.n, Finish: f, Err: err, Logprobs: j.logprobs}
}

func (j *fakeJob) Next(ctx context.Context) (string, error) {
	if j.res != nil {
		return "", io.EOF
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	switch {
	case j.ctx.Err() != nil:
		j.end(llm.FinishCancelled, j.ctx.Err())
	case j.n < len(j.pieces):
		p := j.pieces[j.n]
		j.n++
		j.text.WriteString(p)
		return p, nil
	case j.fail != nil:
		j.end(llm.FinishError, j.fail)
	default:
		j.end(j.finish, nil)
	}
	return "", io.EOF
}

func (j *fakeJob) Wait(ctx context.Context) (llm.Result, error) {
	for {
		if _, err := j.Next(ctx); err != nil {
			if errors.Is(err, io.EOF) {
				return j.Result(), nil
			}
			return llm.Result{}, err
		}
	}
}

func (j *fakeJob) Result() llm.Result {
	if j.res == nil {
		return llm.Result{}
	}
	return *j.res
}

// issuer records the receipts it signs.
type issuer struct {
	mu    sync.Mutex
	calls []attest.ModelCall
}

func (i *issuer) Issue(ctx context.Context, mc attest.ModelCall, upstream string) (attest.SignedModelCall, error) {
	if ctx.Err() != nil {
		return attest.SignedModelCall{}, ctx.Err() // as a store would
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.calls = append(i.calls, mc)
	return attest.SignedModelCall{ModelCall: mc, Sig: "sig-" + mc.ID}, nil
}

// budget grants what is asked and records commits.
type budget struct {
	refuse    error
	reserved  []int64
	committed []int64
}

func (b *budget) Reserve(_ context.Context, want int64) (int64, func(int64), error) {
	if b.refuse != nil {
		return 0, nil, b.refuse
	}
	b.reserved = append(b.reserved, want)
	return want, func(used int64) { b.committed = append(b.committed, used) }, nil
}
func (b *budget) TokensLeft(context.Context) (int64, error) { return 1000, nil }
func (b *budget) KeyID() *string                            { k := "key_test"; return &k }
func (b *budget) Daily() bool                               { return true }

// events records what a call emits.
type events struct{ evs []run.Event }

func (e *events) Emit(typ string, body any) { e.evs = append(e.evs, run.Event{Type: typ, Body: body}) }

var hello = []Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hello"}}

// TestReceiptOnFailedCall: every call that generated sends exactly one
// receipt (event and stored receipt), also when it fails after generating
// (the model fails, the caller cancels, the stream fails); the budget is
// charged the tokens generated. A call refused before generating sends
// none.
func TestReceiptOnFailedCall(t *testing.T) {
	boom := errors.New("boom")
	streamGone := errors.New("the client went away")
	budgetUsedUp := problem.New(problem.Budget, "token budget used up")
	cases := []struct {
		name      string
		eng       fakeEngine
		budget    budget
		cancelAt  int   // cancel the caller's context at this streamed piece (1-based)
		streamErr int   // the stream fails at this piece
		errIs     error // the call's error (errors.Is)
		kind      problem.Kind
		receipt   bool
		finish    string
		output    string
		committed []int64
	}{
		{name: "success", eng: fakeEngine{pieces: []string{"a", "b"}},
			receipt: true, finish: "stop", output: "ab", committed: []int64{2}},
		{name: "model fails after generating", eng: fakeEngine{pieces: []string{"a", "b", "c"}, fail: boom},
			errIs: boom, kind: problem.Upstream, receipt: true, finish: "error", output: "abc", committed: []int64{3}},
		{name: "cancelled mid-way", eng: fakeEngine{pieces: []string{"a", "b", "c", "d"}}, cancelAt: 2,
			errIs: context.Canceled, kind: problem.Internal, receipt: true, finish: "cancelled", output: "ab", committed: []int64{2}},
		{name: "stream fails mid-way", eng: fakeEngine{pieces: []string{"a", "b", "c", "d"}}, streamErr: 3,
			errIs: streamGone, kind: problem.Internal, receipt: true, finish: "cancelled", output: "abc", committed: []int64{3}},
		{name: "model fails before the first token", eng: fakeEngine{fail: boom},
			errIs: boom, kind: problem.Upstream, committed: []int64{0}},
		{name: "busy", eng: fakeEngine{startErr: llm.ErrBusy},
			errIs: llm.ErrBusy, kind: problem.Busy, committed: []int64{0}},
		{name: "prompt too long for the engine", eng: fakeEngine{startErr: llm.ErrPromptTooLong},
			errIs: llm.ErrPromptTooLong, kind: problem.TooLarge, committed: []int64{0}},
		{name: "grammar", eng: fakeEngine{startErr: llm.ErrGrammar},
			errIs: llm.ErrGrammar, kind: problem.Invalid, committed: []int64{0}},
		{name: "budget used up", eng: fakeEngine{pieces: []string{"a"}}, budget: budget{refuse: budgetUsedUp},
			errIs: budgetUsedUp, kind: problem.Budget},
		{name: "prompt over the context", eng: fakeEngine{ctxLen: 2, pieces: []string{"a"}},
			kind: problem.TooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng, b, iss, evs := c.eng, c.budget, &issuer{}, &events{}
			if eng.ctxLen == 0 {
				eng.ctxLen = 4096
			}
			m := &Model{Engine: &eng, ModelID: "model-27b", WeightsRoot: "root", Upstream: "tiny", Provider: "box", Receipts: iss,
				Now: func() time.Time { return time.Unix(1700000000, 0) }}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			res, err := m.Text(ctx, &b, Request{Messages: hello, MaxTokens: 16, Events: evs, Stream: func(string) error {
				n++
				if n == c.cancelAt {
					cancel()
				}
				if n == c.streamErr {
					return streamGone
				}
				return nil
			}})
			if c.errIs != nil && !errors.Is(err, c.errIs) || c.errIs == nil && c.kind == problem.Internal && err != nil {
				t.Fatalf("err = %v, want %v", err, c.errIs)
			}
			if problem.KindOf(err) != c.kind {
				t.Errorf("kind %v, want %v (%v)", problem.KindOf(err), c.kind, err)
			}
			if got := len(evs.evs); got != map[bool]int{true: 1, false: 0}[c.receipt] {
				t.Fatalf("%d receipt events, want receipt %v", got, c.receipt)
			}
			if len(iss.calls) != len(evs.evs) {
				t.Fatalf("%d receipts stored, %d events", len(iss.calls), len(evs.evs))
			}
			if len(b.committed) != len(c.committed) || len(b.committed) > 0 && b.committed[0] != c.committed[0] {
				t.Errorf("committed %v, want %v (exactly once)", b.committed, c.committed)
			}
			if !c.receipt {
				if res != nil {
					t.Errorf("a call refused before generating returned %+v", res)
				}
				return
			}
			mc := iss.calls[0]
			used := c.committed[0]
			if mc.Params["finish_reason"] != c.finish || mc.OutputHash != attest.HashText(c.output) {
				t.Errorf("receipt finish %q output hash of %q, want %q and %q", mc.Params["finish_reason"], mc.OutputHash, c.finish, c.output)
			}
			if mc.Usage.CompletionTokens != strconv.FormatInt(used, 10) || *mc.KeyID != "key_test" || mc.Model != "model-27b" || mc.WeightsRoot != "root" {
				t.Errorf("receipt %+v", mc)
			}
			ev := evs.evs[0]
			body, ok := ev.Body.(run.ReceiptBody)
			if ev.Type != run.TypeReceipt || !ok || body.ID != mc.ID || body.GatewaySig != "sig-"+mc.ID || body.Status != "attested" ||
				body.Provider != "box" || body.KeyID == nil || *body.KeyID != "key_test" {
				t.Errorf("event %+v", ev)
			}
			if res == nil || res.Receipt == nil || res.Receipt.ID != mc.ID || res.FinishReason != c.finish || res.Text != c.output ||
				res.Usage.CompletionTokens != int(used) {
				t.Errorf("result %+v", res)
			}
		})
	}
}

// TestOneReceiptPerCall: calls that succeed each send one receipt, with
// their own id, the sampling params and max_tokens; the call runs at its
// priority (Interactive by default) and reserves MaxTokens.
func TestOneReceiptPerCall(t *testing.T) {
	eng, iss, evs, b := &fakeEngine{ctxLen: 4096, pieces: []string{"x"}}, &issuer{}, &events{}, &budget{}
	m := &Model{Engine: eng, ModelID: "model-27b", Receipts: iss}
	for i, r := range []Request{
		{Messages: hello, Events: evs},
		{Messages: hello, Events: evs, Priority: gpu.Live, MaxTokens: 7, Sampling: Temperature(0), ID: "chatcmpl-mine"},
		{Prompt: []int32{1, 2, 3}, RequestHash: "h", Events: evs, Params: map[string]string{"seed": "-1"}},
	} {
		if _, err := m.Text(context.Background(), b, r); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if len(evs.evs) != i+1 || len(iss.calls) != i+1 {
			t.Fatalf("after call %d: %d events, %d receipts", i, len(evs.evs), len(iss.calls))
		}
	}
	if eng.started[0].Priority != gpu.Interactive || eng.started[1].Priority != gpu.Live {
		t.Errorf("priorities %v %v", eng.started[0].Priority, eng.started[1].Priority)
	}
	if b.reserved[0] != DefaultMaxTokens || b.reserved[1] != 7 || iss.calls[1].Params["max_tokens"] != "7" {
		t.Errorf("reserved %v, params %v", b.reserved, iss.calls[1].Params)
	}
	if iss.calls[0].ID == iss.calls[2].ID || iss.calls[1].ID != "chatcmpl-mine" || !strings.HasPrefix(iss.calls[0].ID, "chatcmpl-") {
		t.Errorf("ids %q %q %q", iss.calls[0].ID, iss.calls[1].ID, iss.calls[2].ID)
	}
	if p := iss.calls[1].Params; p["temperature"] != "0" || p["top_k"] != "40" || p["top_p"] != "0.95" || p["min_p"] != "0.05" {
		t.Errorf("params %v", p)
	}
	if iss.calls[2].RequestHash != "h" || iss.calls[2].Params["seed"] != "-1" {
		t.Errorf("prompt call receipt %+v", iss.calls[2])
	}
	if iss.calls[0].RequestHash == iss.calls[1].RequestHash {
		t.Error("calls with other params share a request hash")
	}
}

// TestNoModel: without an engine a call is refused before anything is
// reserved, with the route's message.
func TestNoModel(t *testing.T) {
	b := &budget{}
	_, err := (&Model{ModelID: "model-27b"}).Text(context.Background(), b, Request{Messages: hello})
	if !problem.Is(err, problem.Upstream) || !strings.Contains(err.Error(), "no chat model is loaded") || len(b.reserved) != 0 {
		t.Errorf("err %v, reserved %v", err, b.reserved)
	}
	if (*Model)(nil).Ready() || (&Model{}).Ready() {
		t.Error("a model without an engine is ready")
	}
}

// TestJSON: a JSON call returns the answer under its schema's grammar; an
// answer cut at MaxTokens is ErrCut (an Upstream problem) and still has
// its one receipt.
func TestJSON(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}`)
	cases := []struct {
		name   string
		eng    fakeEngine
		want   string
		cut    bool
		finish string
	}{
		{"whole", fakeEngine{pieces: []string{`{"topic":`, `"roofs"}`}}, `{"topic":"roofs"}`, false, "stop"},
		{"cut", fakeEngine{pieces: []string{`{"topic":`, `"ro`}, finish: llm.FinishLength}, "", true, "length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eng, iss, evs := c.eng, &issuer{}, &events{}
			eng.ctxLen = 4096
			m := &Model{Engine: &eng, ModelID: "model-27b", Receipts: iss}
			answer, res, err := m.JSON(context.Background(), &budget{}, schema, Request{Messages: hello, MaxTokens: 2, Events: evs})
			if c.cut != errors.Is(err, ErrCut) || c.cut && !problem.Is(err, problem.Upstream) || !c.cut && err != nil {
				t.Fatalf("err = %v, cut %v", err, c.cut)
			}
			if string(answer) != c.want {
				t.Errorf("answer %s, want %s", answer, c.want)
			}
			if eng.started[0].Grammar == "" {
				t.Error("no grammar")
			}
			if len(evs.evs) != 1 || len(iss.calls) != 1 || res == nil || res.Receipt == nil {
				t.Fatalf("%d events, %d receipts, result %+v", len(evs.evs), len(iss.calls), res)
			}
			p := iss.calls[0].Params
			if p["finish_reason"] != c.finish || p["response_format"] != "json_schema" || p["schema_sha256"] != attest.HashText(string(schema)) {
				t.Errorf("params %v", p)
			}
		})
	}
	if _, _, err := (&Model{Engine: &fakeEngine{ctxLen: 4096}}).JSON(context.Background(), &budget{}, json.RawMessage(`{"type":`), Request{Messages: hello}); !problem.Is(err, problem.Invalid) {
		t.Errorf("bad schema: %v", err)
	}
}
