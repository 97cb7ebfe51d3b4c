package audit

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"boxd/internal/run"
)

func toks(parts ...string) []Token {
	out := make([]Token, len(parts))
	for i, p := range parts {
		t := Token{Text: p, Logprob: -1}
		if p == "\ufffd" {
			t.Hex = "c2" // a lone byte-fallback piece
		}
		out[i] = t
	}
	return out
}

// TestCompareAnswer: the comparison of one answer with the fixture's, with
// and without tokens, across engines' renderings of undecodable bytes,
// and for answers cut short.
func TestCompareAnswer(t *testing.T) {
	ref := &FixtureProbe{Text: "imter\ufffdsu lt", Tokens: toks("im", "ter", "\ufffd", "su", " lt"), CompletionTokens: 5, Finish: "length"}
	for _, c := range []struct {
		name         string
		rep          Reply
		exact, first bool
	}{
		{"same tokens", Reply{Text: "imter\ufffdsu lt", Tokens: toks("im", "ter", "\ufffd", "su", " lt"), CompletionTokens: 5, Finish: "length"}, true, true},
		// ollama's stream drops a lone byte and what follows it
		{"text only, lossy after a byte piece", Reply{Text: "imter lt", CompletionTokens: 5}, true, true},
		{"text only, other start", Reply{Text: "2w2w"}, false, false},
		{"cut short (tokens agree up to the byte piece)", Reply{Text: "imter", Tokens: toks("im", "ter"), CompletionTokens: 2, Finish: "stop"}, false, true},
		{"tokens claimed, text rewritten", Reply{Text: "hello", Tokens: toks("im", "ter", "\ufffd", "su", " lt")}, false, true},
		{"other first token", Reply{Text: "2w", Tokens: toks("2", "w")}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			exact, first, _, _ := compareAnswer(ref, c.rep)
			if exact != c.exact || first != c.first {
				t.Errorf("exact %v first %v, want %v %v", exact, first, c.exact, c.first)
			}
		})
	}
	if got := Normalize("a<|im_start|>b\ufffdc\xff"); got != "abc" {
		t.Errorf("Normalize: %q", got)
	}
}

// TestClassify: the verdict rules at their boundaries.
func TestClassify(t *testing.T) {
	th := thresholds{passLP: 0.005, passExact: 0.85}
	for _, c := range []struct {
		name string
		c    identity
		want string
	}{
		{"identical", identity{n: 14, exact: 1, first: 1, prefix: 1, lp: 0.001, lpN: 14, overlap: 1}, VerdictPass},
		{"identical, no logprobs", identity{n: 14, exact: 0.9, first: 1, prefix: 1}, VerdictPass},
		{"quantised", identity{n: 14, exact: 1, first: 1, prefix: 1, lp: 0.05, lpN: 14, overlap: 0.9}, VerdictDrift},
		{"quantised, no logprobs", identity{n: 14, exact: 0.3, first: 0.9, prefix: 0.6}, VerdictDrift},
		{"other weights", identity{n: 14, exact: 0, first: 0, prefix: 0, lp: 0.77, lpN: 14, overlap: 0.37}, VerdictFail},
		{"same first tokens, far logprobs", identity{n: 14, exact: 0.2, first: 0.8, prefix: 0.5, lp: 0.9, lpN: 14, overlap: 0.8}, VerdictFail},
		{"too many errors", identity{n: 14, errors: 4, exact: 1, first: 1}, VerdictInconclusive},
		{"nothing answered", identity{}, VerdictInconclusive},
	} {
		if got, why := classify(c.c, th); got != c.want || len(why) == 0 {
			t.Errorf("%s: %s (%v), want %s", c.name, got, why, c.want)
		}
	}
}

// fakeEndpoint answers from a function and counts requests.
type fakeEndpoint struct {
	n     atomic.Int64
	reply func(Call) (Reply, error)
}

func (f *fakeEndpoint) Chat(ctx context.Context, c Call) (Reply, error) {
	f.n.Add(1)
	return f.reply(c)
}

// serviceWith is a service auditing ep (through Registered target "t")
// against fx.
func runFake(t *testing.T, fx *Fixture, ep Endpoint, mod func(*Service)) (*Report, *events) {
	t.Helper()
	refs := &References{}
	if fx != nil {
		refs.byID = map[string]*Fixture{fx.ID: fx}
	}
	svc := &Service{Key: testKey(), Refs: refs}
	if mod != nil {
		mod(svc)
	}
	a := &audit{s: svc, env: run.Env{Events: &events{}}, ep: ep, fx: fx, deadline: time.Now().Add(svc.runTimeout()),
		target: ReportTarget{Kind: "endpoint", Model: "m", ClaimedModel: "m"}}
	ev := a.env.Events.(*events)
	rep, err := svc.runWith(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return rep, ev
}

// TestRunStopsProbing: an endpoint that fails every request is given up
// on once more than a quarter of the probes failed (inconclusive, the
// rest not sent); a run past its time limit sends no more; without a
// fixture no identity probe is sent.
func TestRunStopsProbing(t *testing.T) {
	fx := &Fixture{ID: "m", Model: "m"}
	for _, p := range DefaultSuite().Probes {
		fx.Probes = append(fx.Probes, FixtureProbe{ID: p.ID, Kind: p.Kind, Text: "hello"})
	}
	failing := &fakeEndpoint{reply: func(Call) (Reply, error) { return Reply{}, errors.New("503") }}
	rep, _ := runFake(t, fx, failing, nil)
	if rep.Verdict != VerdictInconclusive || failing.n.Load() != 7 || rep.Probes.Sent != 7 {
		t.Errorf("failing endpoint: %s after %d requests (%d sent)", rep.Verdict, failing.n.Load(), rep.Probes.Sent)
	}
	slow := &fakeEndpoint{reply: func(Call) (Reply, error) { time.Sleep(30 * time.Millisecond); return Reply{Text: "hello"}, nil }}
	rep, _ = runFake(t, fx, slow, func(s *Service) { s.RunTimeout = 100 * time.Millisecond })
	if rep.Verdict != VerdictInconclusive || slow.n.Load() > 6 {
		t.Errorf("slow endpoint: %s after %d requests", rep.Verdict, slow.n.Load())
	}
	good := &fakeEndpoint{reply: func(Call) (Reply, error) { return Reply{Text: "hello"}, nil }}
	rep, _ = runFake(t, nil, good, nil)
	if rep.Verdict != VerdictInconclusive || !strings.Contains(rep.Reasons[0], "no reference") || good.n.Load() != int64(len(DefaultSuite().Of(KindArithmetic, KindJSON, KindTool, KindThroughput))) {
		t.Errorf("no fixture: %s %v after %d requests", rep.Verdict, rep.Reasons, good.n.Load())
	}
	rep, _ = runFake(t, fx, good, nil)
	if rep.Verdict != VerdictPass {
		t.Errorf("same answers: %s %v", rep.Verdict, rep.Reasons)
	}
}
