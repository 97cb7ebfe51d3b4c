package audit

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/internal/run"
	"boxd/pipelines/audit/audittest"
	"boxd/pipelines/llmcall"
	"boxd/pipelines/llmcall/llmcalltest"
)

// plainPoster posts with net/http (the tests' endpoints are on loopback).
type plainPoster struct{}

func (plainPoster) Post(ctx context.Context, u string, h http.Header, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = h
	return http.DefaultClient.Do(req)
}

// events collects a run's events (run.Events).
type events struct {
	mu  sync.Mutex
	evs []run.Event
}

func (e *events) Emit(typ string, body any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evs = append(e.evs, run.Event{Type: typ, Body: body})
}

func (e *events) End(typ string, body any) bool { e.Emit(typ, body); return true }

// box is the ladder's base GGUF on boxd's engine (two sequences: the
// fixture's noise runs batch two probes at once).
func box(t testing.TB, path string) *llmcall.Model {
	t.Helper()
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: path, ContextLength: 4096, Parallel: 2, Threads: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return &llmcall.Model{Engine: e, ModelID: "boxd-tiny-chat", WeightsRoot: strings.Repeat("ab", 32), Upstream: "audit-base.gguf", Provider: "test", Receipts: &llmcalltest.Issuer{}}
}

func testKey() *attest.Key {
	return attest.NewKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{39}, 32)))
}

// flaky proxies to target and fails every other request with 500.
func flaky(t testing.TB, target string) string {
	u, _ := url.Parse(target)
	proxy := httputil.NewSingleHostReverseProxy(u)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			http.Error(w, `{"error":{"message":"upstream overloaded"}}`, http.StatusInternalServerError)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// ladderSetup records the base's fixture on boxd's engine and serves the
// ladder with ollama.
func ladderSetup(t testing.TB) (*Service, *audittest.Ollama, string) {
	t.Helper()
	files, err := audittest.WriteLadder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o := audittest.StartOllama(t, files)
	m := box(t, files[audittest.Base])
	key := testKey()
	fx, err := RecordModel(context.Background(), m, Recording{ID: "boxd-tiny-chat", Aliases: []string{"tiny-chat"}, Model: "boxd-tiny-chat",
		Engine: "boxd test engine", Runs: 3, Batched: true}, key)
	if err != nil {
		t.Fatal(err)
	}
	refs := &References{Dir: t.TempDir(), Trusted: []ed25519.PublicKey{key.PublicKey()}}
	if err := refs.Add(fx); err != nil {
		t.Fatal(err)
	}
	t.Logf("fixture %s recorded in %s s; noise %+v", fx.ID, fx.RecordSeconds, fx.Noise)
	svc := &Service{Key: key, Chat: m, Refs: refs, Poster: plainPoster{}, AllowPrivate: true, Software: "boxd test", ProbeTimeout: 20 * time.Second}
	return svc, o, flaky(t, o.URL) + "/v1"
}

type rung struct {
	name string
	req  Request
	want string
}

func ladder(o *audittest.Ollama, flakyV1 string) []rung {
	ep := func(model string) Request {
		return Request{BaseURL: o.V1(), Model: model, ClaimedModel: "boxd-tiny-chat", APIKey: "sk-ladder-test-key-0000"}
	}
	rs := []rung{{"boxd (demo target)", Request{Target: BoxTarget}, VerdictPass}}
	for _, r := range []struct{ model, want string }{
		{audittest.Base, VerdictPass}, {audittest.Q8, VerdictDrift}, {audittest.Q4, VerdictDrift},
		{audittest.Other, VerdictFail}, {audittest.Shape, VerdictFail},
	} {
		rs = append(rs, rung{"ollama " + r.model, ep(r.model), r.want})
	}
	return append(rs, rung{"half the probes fail", Request{BaseURL: flakyV1, Model: audittest.Base, ClaimedModel: "boxd-tiny-chat"}, VerdictInconclusive})
}

// TestLadder is the ladder: the same GGUF on boxd and on ollama
// passes, its Q8_0 and Q4_0 quantisations drift, other weights of the same
// shape and another shape fail, an endpoint failing half the probes is
// inconclusive — over AUDIT_LADDER_RUNS reruns (20; 2 with -short) with
// fresh seeds, at least 95% right and no pass target judged fail.
func TestLadder(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 2
	}
	if v, err := strconv.Atoi(os.Getenv("AUDIT_LADDER_RUNS")); err == nil && v > 0 {
		runs = v
	}
	svc, o, flakyV1 := ladderSetup(t)
	rungs := ladder(o, flakyV1)
	right, total, falseFails := 0, 0, 0
	tally := map[string]map[string]int{}
	figs := map[string]PassSummary{}
	for i := 0; i < runs; i++ {
		// Two rungs audit at once (each ollama model has its own
		// one-thread runner; more would only make them wait for the CPUs).
		reps := make([]*Report, len(rungs))
		errs := make([]error, len(rungs))
		var wg sync.WaitGroup
		slots := make(chan struct{}, 2)
		for k, r := range rungs {
			wg.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				reps[k], errs[k] = svc.Run(context.Background(), r.req, run.Env{Events: &events{}, Budget: &llmcalltest.Budget{}})
			})
		}
		wg.Wait()
		for k, r := range rungs {
			rep, err := reps[k], errs[k]
			if err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
			total++
			if tally[r.name] == nil {
				tally[r.name] = map[string]int{}
			}
			tally[r.name][rep.Verdict]++
			if rep.Verdict == r.want {
				right++
			} else {
				t.Logf("run %d, %s: %s, want %s: %v (passes %+v)", i, r.name, rep.Verdict, r.want, rep.Reasons, rep.Passes)
			}
			if r.want == VerdictPass && rep.Verdict == VerdictFail {
				falseFails++
			}
			if i == 0 && len(rep.Passes) > 0 {
				figs[r.name] = rep.Passes[0]
			}
			if i == 0 {
				if v := VerifyReport(mustJSON(t, rep), svc.Key.PublicKeyHex()); !v.ValidSignature || !v.SignedByThisAuditor {
					t.Errorf("%s: the report does not verify: %+v", r.name, v)
				}
				if rep.Probes.Sent > 43 {
					t.Errorf("%s: %d probe requests, the contract allows about 43", r.name, rep.Probes.Sent)
				}
			}
		}
	}
	var b strings.Builder
	for _, r := range rungs {
		f := figs[r.name]
		fmt.Fprintf(&b, "\n  %-22s want %-12s got %v (first run: exact %s, first token %s, prefix %s, |Δlp| %s, top-5 overlap %s, errors %d)",
			r.name, r.want, tally[r.name], f.Exact, f.First, f.Prefix, f.LogprobDelta, f.TopOverlap, f.Errors)
	}
	t.Logf("ladder over %d runs: %d of %d verdicts right (%.1f%%), %d false fails%s", runs, right, total, 100*float64(right)/float64(total), falseFails, b.String())
	if float64(right) < 0.95*float64(total) {
		t.Errorf("%d of %d verdicts right, want at least 95%%", right, total)
	}
	if falseFails > 0 {
		t.Errorf("%d pass targets judged fail, want 0", falseFails)
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
