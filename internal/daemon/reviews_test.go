package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"boxd/configs"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/gpu"
	"boxd/pipelines/chat"
	"boxd/pipelines/sitecheck"
	"boxd/pipelines/sitecheck/replyguard"
	"boxd/web"
)

func reviewBodyJSON(extra map[string]any) map[string]any {
	b := map[string]any{"review": "Waited an hour and the hygienist was rough.", "rating": 2,
		"business_name": "Maple Dental", "business_type": "Dentist",
		"reply": "Thank you for your feedback. Please contact our office directly so we can talk."}
	for k, v := range extra {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

func TestReviewCheck(t *testing.T) {
	ts := launch(t, configs.Defaults(), web.Probes{}, nil, nil)
	token := session(t, ts, "review-reply")
	// The route answers exactly what the guard (and the kits) answer.
	for _, body := range []map[string]any{
		reviewBodyJSON(nil),
		reviewBodyJSON(map[string]any{"reply": "Sorry about your wait during your cleaning, Mrs. Jones. Call 555-201-3344 for 20% off."}),
		reviewBodyJSON(map[string]any{"business_name": "Tony's Pizza", "business_type": "Restaurant", "reply": "Thanks! Your next slice is on us!"}),
		reviewBodyJSON(map[string]any{"reply": "Gracias por su opinión, lo sentimos mucho por la espera y el trato recibido."}),
	} {
		r := ts.do(t, call{method: "POST", path: "/reviews/check", token: token, body: body})
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		raw, _ := json.Marshal(body)
		want, err := replyguard.KitFunctions()["checkReply"](raw)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(want)
		var g, w any
		_ = json.Unmarshal(r.body, &g)
		_ = json.Unmarshal(wantJSON, &w)
		if !jsonEqual(g, w) {
			t.Errorf("route %s\nguard %s", r.body, wantJSON)
		}
	}
	// Healthcare leaks are blocked and named.
	r := ts.do(t, call{method: "POST", path: "/reviews/check", token: token, body: reviewBodyJSON(map[string]any{"reply": "Sorry your visit and the wait for your root canal were hard."})})
	var res replyguard.Result
	_ = json.Unmarshal(r.body, &res)
	if res.OK || !res.Healthcare || len(res.Blocked) == 0 {
		t.Errorf("healthcare leak not blocked: %s", r.body)
	}
	// Not English: the guard blocks and says it checks English only.
	r = ts.do(t, call{method: "POST", path: "/reviews/check", token: token, body: reviewBodyJSON(map[string]any{"reply": "Gracias por su opinión, lo sentimos mucho por la espera y el trato recibido."})})
	if !strings.Contains(string(r.body), "English only") {
		t.Errorf("non-English reply: %s", r.body)
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestReviewRoutesBadInput(t *testing.T) {
	ts := launch(t, configs.Defaults(), web.Probes{}, nil, nil)
	token := session(t, ts, "review-reply")
	geo := session(t, ts, "geo-audit")
	cases := []struct {
		path   string
		body   any
		token  string
		status int
		want   string
	}{
		{"/reviews/check", reviewBodyJSON(map[string]any{"rating": nil}), token, 400, `"rating" is required`},
		{"/reviews/check", reviewBodyJSON(map[string]any{"rating": 6}), token, 400, "from 1 to 5"},
		{"/reviews/check", reviewBodyJSON(map[string]any{"rating": "5"}), token, 400, "whole number"},
		{"/reviews/check", reviewBodyJSON(map[string]any{"reply": nil}), token, 400, `"reply" is required`},
		{"/reviews/check", reviewBodyJSON(map[string]any{"business_name": " "}), token, 400, `"business_name" is required`},
		{"/reviews/check", reviewBodyJSON(map[string]any{"stars": 5}), token, 400, "unknown field"},
		{"/reviews/check", reviewBodyJSON(map[string]any{"review": 3}), token, 400, `"review" must be a string`},
		{"/reviews/check", `[1, 2]`, token, 400, "JSON object"},
		{"/reviews/check", `{"review": "x"`, token, 400, "middle of its JSON"},
		{"/reviews/check", reviewBodyJSON(map[string]any{"review": strings.Repeat("long ", 2001)}), token, 413, "review is longer than 10000"},
		{"/reviews/check", reviewBodyJSON(map[string]any{"reply": strings.Repeat("x", 70000)}), token, 413, "limit"},
		{"/reviews/check", reviewBodyJSON(map[string]any{"reply": strings.Repeat("word ", 2001)}), token, 413, "reply is longer than 10000"},
		{"/reviews/check", reviewBodyJSON(map[string]any{"business_name": strings.Repeat("n", 201)}), token, 413, "business_name is longer than 200"},
		{"/reviews/check", reviewBodyJSON(map[string]any{"business_type": strings.Repeat("t", 201)}), token, 413, "business_type is longer than 200"},
		{"/reviews/check", reviewBodyJSON(nil), "", 401, "Authorization"},
		{"/reviews/check", reviewBodyJSON(nil), geo, 403, ""},
		{"/reviews/reply", reviewBodyJSON(nil), token, 400, `unknown field "reply"`},
		{"/reviews/reply", reviewBodyJSON(map[string]any{"reply": nil, "rating": 0}), token, 400, "from 1 to 5"},
		{"/reviews/reply", reviewBodyJSON(map[string]any{"reply": nil}), geo, 403, ""},
	}
	for _, c := range cases {
		r := ts.do(t, call{method: "POST", path: c.path, token: c.token, body: c.body})
		if r.status != c.status {
			t.Errorf("%s %v: %d %s; want %d", c.path, c.body, r.status, r.body, c.status)
			continue
		}
		if msg := r.errMsg(t); !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q does not say %q", c.path, msg, c.want)
		}
	}
}

// TestReviewReply drafts with the tiny random-weight chat model: its text
// is noise, so the guard blocks it, a redraft follows naming the blocked
// phrases, and the safe reply is posted; every model call is receipted and
// charged.
func TestReviewReply(t *testing.T) {
	env := chatServerTweaked(t, nil, 2048, 2, 0, func(b *Box) { b.ReplyTokens = 24 }) // the tiny model's noise, kept short
	token := session(t, env.testServer, "review-reply")
	r := env.do(t, call{method: "POST", path: "/reviews/reply", token: token, body: reviewBodyJSON(map[string]any{"reply": nil})})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var res sitecheck.ReplyResult
	if err := json.Unmarshal(r.body, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) == 0 || len(res.Attempts) > 2 || len(res.Receipts) != len(res.Attempts) {
		t.Fatalf("attempts %d receipts %d", len(res.Attempts), len(res.Receipts))
	}
	if !res.OK || !res.Check.OK || !res.Healthcare {
		t.Errorf("final reply not passed: %s", r.body)
	}
	// The posted reply is what the guard passed, from the source named.
	switch res.Source {
	case sitecheck.SourceDraft:
		if res.Reply != res.Attempts[0].Text {
			t.Error("draft source but another text")
		}
	case sitecheck.SourceRedraft:
		if res.Reply != res.Attempts[1].Text {
			t.Error("redraft source but another text")
		}
	case sitecheck.SourceSafeReply:
		if res.Reply != replyguard.SafeReply("Maple Dental", true) {
			t.Errorf("safe reply source but %q", res.Reply)
		}
		if res.Attempts[0].Check.OK {
			t.Error("safe reply although the draft passed")
		}
	default:
		t.Fatalf("source %q", res.Source)
	}
	total := 0
	var ids []string
	for _, a := range res.Attempts {
		total += a.Usage.CompletionTokens
		ids = append(ids, a.Receipt.ID)
		rr := env.do(t, call{method: "GET", path: "/receipts/" + a.Receipt.ID})
		if rr.status != 200 {
			t.Errorf("receipt %s: %d %s", a.Receipt.ID, rr.status, rr.body)
		}
	}
	if res.Usage.CompletionTokens != total || total == 0 {
		t.Errorf("usage %+v, attempts total %d", res.Usage, total)
	}
	if got := r.header.Get("x-service-receipt"); got != strings.Join(ids, ", ") {
		t.Errorf("x-service-receipt %q, want %q", got, strings.Join(ids, ", "))
	}
	// The budget was charged with the completion tokens.
	pr, d := env.deps.Platform.Authenticate(context.Background(), token, "review-reply")
	if d != nil {
		t.Fatal(d)
	}
	left, _ := pr.TokensLeft(context.Background())
	if want := int64(configs.Defaults().Limits.TokenBudget - total); left != want {
		t.Errorf("tokens left %d, want %d", left, want)
	}
	// A review that is not English is refused before any model call.
	r = env.do(t, call{method: "POST", path: "/reviews/reply", token: token, body: reviewBodyJSON(map[string]any{"reply": nil,
		"review": "Hemos esperado una hora y la higienista fue muy brusca con nosotros."})})
	if r.status != 400 || !strings.Contains(r.errMsg(t), "English only") {
		t.Errorf("non-English review: %d %s", r.status, r.body)
	}
}

// TestReviewReplyWithoutModel: with no chat model loaded the route says so
// (502), like chat completions.
func TestReviewReplyWithoutModel(t *testing.T) {
	ts := launch(t, configs.Defaults(), web.Probes{}, nil, nil)
	token := session(t, ts, "review-reply")
	r := ts.do(t, call{method: "POST", path: "/reviews/reply", token: token, body: reviewBodyJSON(map[string]any{"reply": nil})})
	if r.status != http.StatusBadGateway {
		t.Errorf("%d %s", r.status, r.body)
	}
	_ = r.errMsg(t)
}

// TestReviewReplyBudget: a caller with no tokens left gets 402 before any
// draft. The drafts sample (temperature 0.7), so one may stop before the
// budget of 3 tokens is spent: calls go on, each within what was left,
// until the tokens are used up, and the next is 402.
func TestReviewReplyBudget(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.TokenBudget = 3
	env := chatServer(t, cfg, 2048, 2, 0)
	token := session(t, env.testServer, "review-reply")
	spent := 0
	for i := 0; spent < 3; i++ {
		if i == 3 {
			t.Fatalf("three replies spent %d of 3 tokens", spent)
		}
		r := env.do(t, call{method: "POST", path: "/reviews/reply", token: token, body: reviewBodyJSON(map[string]any{"reply": nil})})
		if r.status != 200 {
			t.Fatalf("reply %d with %d of 3 tokens spent: %d %s", i+1, spent, r.status, r.body)
		}
		var res sitecheck.ReplyResult
		_ = json.Unmarshal(r.body, &res)
		if res.Usage.CompletionTokens < 1 || spent+res.Usage.CompletionTokens > 3 || (res.Source == sitecheck.SourceSafeReply && len(res.Attempts) == 1 && res.RedraftError == "") {
			t.Fatalf("reply %d: %s", i+1, r.body)
		}
		spent += res.Usage.CompletionTokens
	}
	r := env.do(t, call{method: "POST", path: "/reviews/reply", token: token, body: reviewBodyJSON(map[string]any{"reply": nil})})
	if r.status != http.StatusPaymentRequired {
		t.Errorf("after the budget: %d %s", r.status, r.body)
	}
}

// heldEngine is the chat engine of a test that holds a draft: Tokenize
// (the first engine call of a draft) says it entered and waits for release.
type heldEngine struct {
	chat.Engine
	entered chan struct{}
	release chan struct{}
}

func (e *heldEngine) Tokenize(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	select {
	case e.entered <- struct{}{}:
	default:
	}
	<-e.release
	return e.Engine.Tokenize(text, addSpecial, parseSpecial)
}

// TestReviewReplyOneRunPerToken: a demo token drafts one reply at a time;
// a second /reviews/reply while the first drafts gets 409, and runs once
// the first is done. /reviews/check takes no lock and answers meanwhile.
func TestReviewReplyOneRunPerToken(t *testing.T) {
	cfg := configs.Defaults()
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 2048, Parallel: 2, Threads: 1}, Arbiter: gpu.NewArbiter()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	held := &heldEngine{Engine: e, entered: make(chan struct{}, 1), release: make(chan struct{})}
	ts := launch(t, cfg, web.Probes{LLMReady: func() bool { return true }}, nil, func(s *Box) {
		s.Chat = &chat.Service{Engine: held, ModelID: cfg.Models.LLM.ID, WeightsRoot: strings.Repeat("ab", 32), Upstream: e.Info().Name, Provider: s.deps.Key.ID(), Receipts: s.deps.Receipts}
		s.ReplyTokens = 8
	})
	token := session(t, ts, "review-reply")
	body := reviewBodyJSON(map[string]any{"reply": nil})
	first := make(chan reply, 1)
	go func() { first <- ts.do(t, call{method: "POST", path: "/reviews/reply", token: token, body: body}) }()
	<-held.entered
	second := make(chan reply, 1)
	go func() { second <- ts.do(t, call{method: "POST", path: "/reviews/reply", token: token, body: body}) }()
	select {
	case r := <-second:
		if r.status != http.StatusConflict || !strings.Contains(r.errMsg(t), "already has a run in progress") {
			t.Errorf("second draft: %d %s", r.status, r.body)
		}
	case <-held.entered:
		close(held.release)
		t.Fatalf("a second draft with the same token reached the model: %d", (<-second).status)
	}
	if r := ts.do(t, call{method: "POST", path: "/reviews/check", token: token, body: reviewBodyJSON(nil)}); r.status != 200 {
		t.Errorf("check while drafting: %d %s", r.status, r.body)
	}
	// Another token is not held up by this one.
	other := session(t, ts, "review-reply")
	otherDone := make(chan reply, 1)
	go func() { otherDone <- ts.do(t, call{method: "POST", path: "/reviews/reply", token: other, body: body}) }()
	close(held.release)
	if r := <-first; r.status != 200 {
		t.Errorf("first draft: %d %s", r.status, r.body)
	}
	if r := <-otherDone; r.status != 200 {
		t.Errorf("other token: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/reviews/reply", token: token, body: body}); r.status != 200 {
		t.Errorf("after the first finished: %d %s", r.status, r.body)
	}
}
