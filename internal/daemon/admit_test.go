package daemon

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"boxd/configs"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/web"
	"boxd/web/api"
	"boxd/web/api/upload"
)

// otherVertical is a demo vertical no declared route is limited to.
const otherVertical = "clinical"

// openToEveryVertical are the run routes any valid session token or key
// may call (contract 3, section 5).
var openToEveryVertical = map[string]bool{"/retrieval/index": true, "/retrieval/search": true, "/retrieval/quotes": true,
	"/v1/embeddings": true, "/v1/rerank": true, "/docreader/read": true, "/docreader/chart": true, "/hcc/read-chart": true, "/retrieval/index-scans": true}

// TestAdmissionOrderEveryRoute checks, for every route declared through
// declare, that admission refuses in the one documented order: 401 before
// 400/413/415, 400 before 403, 403 before the run, 409 before 402, and 402
// before a live slot's 409/429. Each request fails two steps at once and
// must be refused by the earlier one.
func TestAdmissionOrderEveryRoute(t *testing.T) {
	cfg := configs.Defaults()
	ts := start(t, cfg, web.Probes{}, nil)
	ctx := context.Background()
	routes := ts.Server.API().Declared()
	if len(routes) < 6 {
		t.Fatalf("only %d declared routes; chat, models, site check, reviews, studio jobs and replay are declared", len(routes))
	}
	for _, rt := range routes {
		t.Run(rt.Method+" "+rt.Path, func(t *testing.T) {
			if rt.Auth != api.Bearer {
				return
			}
			if rt.Socket {
				// A socket is upgraded first and refuses with close codes
				// in the same order: TestLiveAdmissionOrder.
				return
			}
			vertical := otherVertical
			if len(rt.Verticals) > 0 {
				vertical = rt.Verticals[0]
			}
			if rt.Path == "/demo/replay" {
				vertical = "sales" // the example's script
			}
			tok := session(t, ts, vertical)
			wrong := session(t, ts, "translate")
			send := func(token, body string) reply {
				c := call{method: rt.Method, path: rt.Path, token: token}
				if rt.Body > 0 {
					c.body = body
				}
				return ts.do(t, c)
			}
			expect := func(step string, r reply, want int) {
				t.Helper()
				if r.status != want {
					t.Errorf("%s: status %d, want %d: %s", step, r.status, want, r.body)
				}
				if r.status >= 400 {
					r.errMsg(t)
				}
			}
			// 1. No credentials and a broken body: 401.
			expect("no token, broken body", send("", "{"), http.StatusUnauthorized)
			if rt.Body == 0 {
				return
			}
			if rt.Example == "" {
				t.Fatal("a route with a body declares an Example")
			}
			// 2. A token of another vertical and a broken body: 400.
			expect("wrong vertical, broken body", send(wrong, "{"), http.StatusBadRequest)
			// 3. A token of another vertical and a good body: 403; a route
			// open to every vertical (retrieval's) lets it through.
			if !openToEveryVertical[rt.Path] {
				expect("wrong vertical, good body", send(wrong, rt.Example), http.StatusForbidden)
			} else if r := send(wrong, rt.Example); r.status == http.StatusForbidden {
				t.Errorf("a route open to every vertical refused another vertical's token: %s", r.body)
			}

			pr, err := ts.deps.Platform.Authenticate(ctx, tok, "")
			if err != nil {
				t.Fatal(err)
			}
			spend := func() {
				res, err := pr.ReserveTokens(ctx, 1<<40)
				if err != nil {
					t.Fatal(err)
				}
				_ = res.Commit(ctx, res.Granted)
			}
			needsBudget := rt.MinTokens > 0
			switch {
			case rt.OneRun:
				// 5. A run in progress and no budget: 409, not 402.
				unlock, err := pr.Lock()
				if err != nil {
					t.Fatal(err)
				}
				spend()
				expect("run in progress, no budget", send(tok, rt.Example), http.StatusConflict)
				unlock()
				if needsBudget {
					expect("no budget", send(tok, rt.Example), http.StatusPaymentRequired)
				}
			case rt.LiveSlot:
				// 7. A live slot held: 409; with no budget too: 402 first.
				release, err := pr.AcquireLive()
				if err != nil {
					t.Fatal(err)
				}
				expect("live slot held", send(tok, rt.Example), http.StatusConflict)
				spend()
				expect("live slot held, no budget", send(tok, rt.Example), http.StatusPaymentRequired)
				release()
			case needsBudget:
				spend()
				expect("no budget", send(tok, rt.Example), http.StatusPaymentRequired)
			}
		})
	}
}

// testRunBody is the body of the test run route.
type testRunBody struct {
	Fail   string `json:"fail"` // "", "before" or "after"
	Stream bool   `json:"stream"`
}

// testRunAnswer is the test run's stream: false answer.
type testRunAnswer struct {
	RunID string `json:"run_id"`
	run.Tally
}

// TestRunRouteStreamsOrCollects declares a route the way a new family
// does and runs it both ways: SSE when asked (stream: true or Accept),
// else one JSON answer with the receipt ids; a failure before the first
// event is a status, after it an error event that ends the stream.
func TestRunRouteStreamsOrCollects(t *testing.T) {
	ts := start(t, configs.Defaults(), web.Probes{}, func(s *Box) {
		api.Declare(s.Server.API(), api.Declared[testRunBody]{
			Route: api.Route{Method: http.MethodPost, Path: "/test/run", Auth: api.Bearer, Verticals: []string{"code"},
				Body: 1 << 10, OneRun: true, MinTokens: 1, Stream: true, Example: `{}`},
			StreamOf: func(b *testRunBody) bool { return b.Stream },
			Serve: func(a *api.Admitted, b *testRunBody) {
				s.Server.API().Run(a, func(ctx context.Context, em *run.Emitter) (any, error) {
					if b.Fail == "before" {
						return nil, problem.New(problem.Upstream, "the model failed")
					}
					em.Emit(run.TypeReceipt, run.ReceiptBody{ID: "chatcmpl-1", Status: "attested"})
					if b.Fail == "after" {
						return nil, problem.New(problem.Upstream, "the model failed later")
					}
					em.Emit(run.TypeDone, map[string]any{"summary": map[string]int{"n": 1}})
					em.Emit(run.TypeBudget, run.BudgetBody{LLMTokensLeft: 7})
					return &testRunAnswer{RunID: "run_1"}, nil
				})
			},
		})
	})
	tok := session(t, ts, "code")

	r := ts.do(t, call{method: "POST", path: "/test/run", token: tok, body: `{}`})
	if r.status != http.StatusOK || r.json(t)["run_id"] != "run_1" || r.header.Get("x-service-receipt") != "chatcmpl-1" {
		t.Fatalf("collected: %d %v %s", r.status, r.header, r.body)
	}
	if m := r.json(t); fmt.Sprint(m["receipts"]) != "[map[gateway_sig: id:chatcmpl-1 key_id:<nil> model: provider: status:attested]]" ||
		fmt.Sprint(m["budget"]) != "map[llm_tokens_left:7 seconds_audio_left:0]" {
		t.Fatalf("the answer's tally: %s", r.body)
	}
	r = ts.do(t, call{method: "POST", path: "/test/run", token: tok, body: `{"fail": "before", "stream": true}`})
	if r.status != http.StatusBadGateway || r.errMsg(t) != "the model failed" {
		t.Fatalf("failed before the first event: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		body    string
		headers map[string]string
		last    string
	}{
		{`{"stream": true}`, nil, `"type":"budget"`},
		{`{}`, map[string]string{"Accept": "text/event-stream"}, `"type":"budget"`},
		{`{"fail": "after", "stream": true}`, nil, `"type":"error","at_ms":`},
	} {
		r := ts.do(t, call{method: "POST", path: "/test/run", token: tok, body: c.body, headers: c.headers})
		lines := strings.Split(strings.TrimSpace(string(r.body)), "\n\n")
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/event-stream" || len(lines) < 2 ||
			!strings.Contains(lines[0], `"type":"receipt"`) || !strings.Contains(lines[len(lines)-1], c.last) {
			t.Fatalf("%s: %d %q", c.body, r.status, lines)
		}
	}
}

// testUploadBody is the body of the test upload route (file_b64 is the
// upload field).
type testUploadBody struct {
	Title string `json:"title"`
}

// TestDeclaredUploadRoute: a route that declares an upload field gets it
// as a temporary file (removed after the run), its other fields decoded
// as usual, and 413 naming the limit above it.
func TestDeclaredUploadRoute(t *testing.T) {
	var kept string
	ts := start(t, configs.Defaults(), web.Probes{}, func(s *Box) {
		api.Declare(s.Server.API(), api.Declared[testUploadBody]{
			Route: api.Route{Method: http.MethodPost, Path: "/test/upload", Auth: api.Bearer, Verticals: []string{"code"},
				Body: 4 << 10, Uploads: []upload.Field{{Name: "file_b64", Limit: 1000}}, Example: `{"file_b64": "aGk="}`},
			Serve: func(a *api.Admitted, b *testUploadBody) {
				f := a.Upload.Files["file_b64"]
				data, err := os.ReadFile(f.Path)
				if err != nil {
					api.WriteProblem(a.W, err)
					return
				}
				kept = f.Path
				api.WriteJSON(a.W, http.StatusOK, map[string]any{"title": b.Title, "text": string(data), "size": f.Size})
			},
		})
	})
	tok := session(t, ts, "code")
	r := ts.do(t, call{method: "POST", path: "/test/upload", token: tok, body: `{"title": "note", "file_b64": "aGVsbG8="}`})
	if m := r.json(t); r.status != http.StatusOK || m["text"] != "hello" || m["title"] != "note" || m["size"] != 5.0 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if _, err := os.Stat(kept); !os.IsNotExist(err) {
		t.Fatalf("the upload's temporary file %s is still there after the run: %v", kept, err)
	}
	big := base64.StdEncoding.EncodeToString(make([]byte, 1001))
	r = ts.do(t, call{method: "POST", path: "/test/upload", token: tok, body: `{"file_b64": "` + big + `"}`})
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.errMsg(t), "1000 bytes") {
		t.Fatalf("over the limit: %d %s", r.status, r.body)
	}
	r = ts.do(t, call{method: "POST", path: "/test/upload", token: tok, body: `{"file_b64": "aGk=", "extra": 1}`})
	if r.status != http.StatusBadRequest || !strings.Contains(r.errMsg(t), "extra") {
		t.Fatalf("unknown field: %d %s", r.status, r.body)
	}
}
