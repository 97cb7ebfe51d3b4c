package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/configs"
	"boxd/web"

	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/retrieval"
)

// retrievalServer is a server with the random-weight test embedder and
// reranker loaded, and a clock the test moves.
func retrievalServer(t *testing.T, wrap func(retrieval.Embedder) retrieval.Embedder) (*testServer, *time.Time) {
	t.Helper()
	return retrievalServerWith(t, nil, wrap)
}

// retrievalServerWith is retrievalServer with a configuration (nil: the
// defaults).
func retrievalServerWith(t *testing.T, cfg *configs.Config, wrap func(retrieval.Embedder) retrieval.Embedder) (*testServer, *time.Time) {
	t.Helper()
	ctx := context.Background()
	emb, err := llm.OpenEmbedder(ctx, llm.Options{Path: testmodels.Generated(t, testmodels.EmbedFile), Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	rr, err := llm.OpenEmbedder(ctx, llm.Options{Path: testmodels.Generated(t, testmodels.RerankFile), Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rr.Close)
	now := time.Now()
	ts := start(t, cfg, web.Probes{}, func(s *Box) {
		var e retrieval.Embedder = emb
		if wrap != nil {
			e = wrap(emb)
		}
		s.Retrieval.Embedder, s.Retrieval.Reranker = e, rr
		s.Retrieval.EmbedderModel = retrieval.Model{Ref: retrieval.ModelRef{Repo: "boxd-tiny-embed", Revision: "r-embed"}, WeightsRoot: "r-embed", File: "tiny-embed.gguf"}
		s.Retrieval.RerankerModel = retrieval.Model{Ref: retrieval.ModelRef{Repo: "boxd-tiny-rerank", Revision: "r-rerank"}, WeightsRoot: "r-rerank", File: "tiny-rerank.gguf"}
		s.Retrieval.Now = func() time.Time { return now }
	})
	return ts, &now
}

func decodeInto(t *testing.T, r reply, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("%v\n%s", err, r.body)
	}
}

func TestRetrievalIndexSearchVerify(t *testing.T) {
	ts, clock := retrievalServer(t, nil)
	tok := session(t, ts, "clinical")
	other := session(t, ts, "sales")

	info := ts.do(t, call{method: "GET", path: "/retrieval/info"})
	if info.status != 200 {
		t.Fatalf("info: %d %s", info.status, info.body)
	}
	var in retrieval.Info
	decodeInto(t, info, &in)
	if !in.Models.Embedder.Loaded || !in.Models.Reranker.Loaded || in.Limits.Documents != 60 || in.Limits.Chunks != 1500 || !in.Reachable || len(in.Samples) == 0 {
		t.Errorf("info: %s", info.body)
	}
	if in.Chunker.MaxTokens != 512 || in.Chunker.RerankMaxTokens < 1 {
		t.Errorf("info's chunker has no token bounds: %+v", in.Chunker)
	}

	// Index a sample.
	r := ts.do(t, call{method: "POST", path: "/retrieval/index", token: tok, body: map[string]any{"sample": "pump-station-manual"}})
	if r.status != 200 {
		t.Fatalf("index: %d %s", r.status, r.body)
	}
	var ix retrieval.IndexResponse
	decodeInto(t, r, &ix)
	if len(ix.Index.Hash) != 64 || ix.Index.NChunks == 0 || len(ix.Index.Chunks) != ix.Index.NChunks || !strings.HasPrefix(ix.Receipt.ID, "mc-") || ix.Receipt.Status != "attested" {
		t.Fatalf("index answer: %s", r.body)
	}
	if rc := ts.do(t, call{method: "GET", path: "/receipts/" + ix.Receipt.ID}); rc.status != 200 || !strings.Contains(string(rc.body), `"kind":"embed"`) {
		t.Errorf("the embedding receipt: %d %s", rc.status, rc.body)
	}

	// Search it: hybrid, reranked by default.
	r = ts.do(t, call{method: "POST", path: "/retrieval/search", token: tok, body: map[string]any{"index": ix.Index.Hash, "query": "pressure drops after the filter change", "k": 3}})
	if r.status != 200 {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	var sr retrieval.SearchResponse
	decodeInto(t, r, &sr)
	if len(sr.Results) != 3 || sr.Receipt == nil || sr.Receipt.V != retrieval.SearchFormat || sr.Receipt.Reranker == nil || len(sr.ModelCalls) != 2 {
		t.Fatalf("search answer: %s", r.body)
	}
	for i, mc := range sr.Receipt.ModelCalls {
		if mc.ID != sr.ModelCalls[i].ID || mc.Kind != []string{"embed", "rerank"}[i] {
			t.Errorf("model call %d: receipt names %+v, answer %+v", i, mc, sr.ModelCalls[i])
		}
	}
	// The run path: the model calls' receipt events fill x-service-receipt.
	if h, want := r.header.Get("x-service-receipt"), sr.ModelCalls[0].ID+", "+sr.ModelCalls[1].ID; h != want {
		t.Errorf("x-service-receipt %q, want %q", h, want)
	}
	for _, h := range sr.Results {
		if h.ScoresPPM.Rerank == nil || h.Text == "" || len(h.Proof.Path) == 0 && ix.Index.NChunks > 1 {
			t.Errorf("result %+v", h)
		}
	}

	// Verify it with its chunks and documents; then tampered.
	var chunks []retrieval.ProvenChunk
	for _, h := range sr.Results {
		chunks = append(chunks, retrieval.ProvenChunk{Chunk: h.Chunk, Text: h.Text, Proof: h.Proof})
	}
	raw, _ := json.Marshal(sr.Receipt)
	verify := func(chunks []retrieval.ProvenChunk) retrieval.VerifyResponse {
		t.Helper()
		r := ts.do(t, call{method: "POST", path: "/retrieval/verify", body: map[string]any{"receipt": json.RawMessage(raw), "chunks": chunks, "documents": retrieval.Samples["pump-station-manual"]}})
		if r.status != 200 {
			t.Fatalf("verify: %d %s", r.status, r.body)
		}
		var v retrieval.VerifyResponse
		decodeInto(t, r, &v)
		return v
	}
	if v := verify(chunks); !v.OK || len(v.Checks) != 4+len(chunks) || len(v.Unchecked) != 0 || len(v.OffsetsUnchecked) != 0 {
		t.Errorf("verify: %+v", v)
	}
	// Results left unchecked: ok false, each named in unchecked.
	if v := verify(chunks[:len(chunks)-1]); v.OK || len(v.Unchecked) != 1 || v.Unchecked[0] != chunks[len(chunks)-1].Chunk {
		t.Errorf("a result left unchecked: ok %v, unchecked %v", v.OK, v.Unchecked)
	}
	// A field nobody signed, added to the receipt: 400 naming it.
	var forged map[string]any
	_ = json.Unmarshal(raw, &forged)
	forged["results"].([]any)[0].(map[string]any)["text"] = "FORGED"
	if r := ts.do(t, call{method: "POST", path: "/retrieval/verify", body: map[string]any{"receipt": forged, "chunks": chunks}}); r.status != 400 || !strings.Contains(string(r.body), "receipt.results[0].text is not a field") {
		t.Errorf("an unsigned field: %d %s", r.status, r.body)
	}
	// One document twice: 400 naming it.
	pump := retrieval.Samples["pump-station-manual"]
	twice := append([]retrieval.Document{{ID: pump[0].ID, Text: "WRONG"}}, pump...)
	if r := ts.do(t, call{method: "POST", path: "/retrieval/verify", body: map[string]any{"receipt": json.RawMessage(raw), "chunks": chunks, "documents": twice}}); r.status != 400 || !strings.Contains(fmt.Sprint(r.json(t)["error"]), strconv.Quote(pump[0].ID)+" appears twice") {
		t.Errorf("a document twice: %d %s", r.status, r.body)
	}
	bad := append([]retrieval.ProvenChunk(nil), chunks...)
	bad[0].Text += "!"
	if v := verify(bad); v.OK {
		t.Error("a changed chunk verified")
	}

	// Rerank off; bm25 only; inline documents (which index on the spot).
	r = ts.do(t, call{method: "POST", path: "/retrieval/search", token: tok, body: map[string]any{"index": ix.Index.Hash, "query": "seal", "rerank": false, "mode": "bm25"}})
	decodeInto(t, r, &sr)
	if r.status != 200 || sr.Receipt.Reranker != nil || len(sr.ModelCalls) != 0 || sr.Receipt.Params.Mode != "bm25" {
		t.Errorf("bm25 without rerank: %d %s", r.status, r.body)
	}
	r = ts.do(t, call{method: "POST", path: "/retrieval/search", token: tok, body: map[string]any{"documents": []map[string]string{{"id": "a", "text": "The valve leaks.\n\nThe pump hums."}}, "synthetic": true, "query": "valve"}})
	decodeInto(t, r, &sr)
	if r.status != 200 || len(sr.ModelCalls) != 3 {
		t.Errorf("inline documents: %d %s", r.status, r.body)
	}

	// Another caller cannot use this caller's index; an hour later neither can it.
	if r := ts.do(t, call{method: "POST", path: "/retrieval/search", token: other, body: map[string]any{"index": ix.Index.Hash, "query": "pump"}}); r.status != 404 {
		t.Errorf("another caller's index: %d %s", r.status, r.body)
	}
	*clock = clock.Add(retrieval.IndexTTL + time.Second)
	if r := ts.do(t, call{method: "POST", path: "/retrieval/search", token: tok, body: map[string]any{"index": ix.Index.Hash, "query": "pump"}}); r.status != 404 || !strings.Contains(r.errMsg(t), "hour") {
		t.Errorf("an expired index: %d %s", r.status, r.body)
	}
}

func TestRetrievalBadInput(t *testing.T) {
	ts, _ := retrievalServer(t, nil)
	tok := session(t, ts, "clinical")
	doc := func(id string) map[string]string { return map[string]string{"id": id, "text": "Some synthetic text."} }
	many := make([]map[string]string, 61)
	for i := range many {
		many[i] = doc(fmt.Sprint(i))
	}
	hash := strings.Repeat("a", 64)
	for _, c := range []struct {
		name, path string
		body       any
		status     int
		msg        string
	}{
		{"no documents", "/retrieval/index", map[string]any{"synthetic": true}, 400, "documents is empty"},
		{"61 documents", "/retrieval/index", map[string]any{"documents": many, "synthetic": true}, 413, "at most 60"},
		{"duplicate ids", "/retrieval/index", map[string]any{"documents": []any{doc("a"), doc("a")}, "synthetic": true}, 400, "appears twice"},
		{"unknown sample", "/retrieval/index", map[string]any{"sample": "nope"}, 404, "no sample"},
		{"both", "/retrieval/index", map[string]any{"sample": "pump-station-manual", "documents": []any{doc("a")}, "synthetic": true}, 400, "not both"},
		{"unknown field", "/retrieval/index", map[string]any{"sample": "pump-station-manual", "colour": 1}, 400, "colour"},
		{"too many chunks", "/retrieval/index", map[string]any{"documents": []any{map[string]string{"id": "big", "text": strings.Repeat("Word after word. ", 1600*80)}}, "synthetic": true}, 413, "at most 1500"},
		{"empty query", "/retrieval/search", map[string]any{"index": hash, "query": ""}, 400, "query"},
		{"k 0", "/retrieval/search", map[string]any{"index": hash, "query": "q", "k": 0}, 400, "k must be"},
		{"k 41", "/retrieval/search", map[string]any{"index": hash, "query": "q", "k": 41}, 400, "k must be"},
		{"bad mode", "/retrieval/search", map[string]any{"index": hash, "query": "q", "mode": "fuzzy"}, 400, "mode"},
		{"bad hash", "/retrieval/search", map[string]any{"index": "xyz", "query": "q"}, 400, "hex"},
		{"index and documents", "/retrieval/search", map[string]any{"index": hash, "documents": []any{doc("a")}, "query": "q"}, 400, "not both"},
		{"neither", "/retrieval/search", map[string]any{"query": "q"}, 400, "send index"},
		{"unknown index", "/retrieval/search", map[string]any{"index": hash, "query": "q"}, 404, "no index"},
		{"long query", "/retrieval/search", map[string]any{"index": hash, "query": strings.Repeat("q", 2001)}, 400, "query"},
		{"verify without receipt", "/retrieval/verify", map[string]any{}, 400, "receipt is missing"},
		{"verify not a receipt", "/retrieval/verify", map[string]any{"receipt": map[string]any{"v": "x"}}, 400, "not a service.retrieval.search.v1"},
	} {
		token := tok
		if c.path == "/retrieval/verify" {
			token = ""
		}
		r := ts.do(t, call{method: "POST", path: c.path, token: token, body: c.body})
		if r.status != c.status || !strings.Contains(r.errMsg(t), c.msg) {
			t.Errorf("%s: %d %s, want %d naming %q", c.name, r.status, r.body, c.status, c.msg)
		}
	}
	if r := ts.do(t, call{method: "POST", path: "/retrieval/index", body: map[string]any{"sample": "pump-station-manual"}}); r.status != 401 {
		t.Errorf("no token: %d", r.status)
	}
	huge := map[string]any{"documents": []any{map[string]string{"id": "big", "text": strings.Repeat("x", 9<<20)}}, "synthetic": true}
	if r := ts.do(t, call{method: "POST", path: "/retrieval/index", token: tok, body: huge}); r.status != 413 || !strings.Contains(r.errMsg(t), "8388608") && !strings.Contains(r.errMsg(t), "8 MiB") {
		t.Errorf("a 9 MiB body: %d %s", r.status, r.body)
	}
}

// slowEmbedder holds every Embed until released.
type slowEmbedder struct {
	retrieval.Embedder
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *slowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return s.Embedder.Embed(ctx, texts)
}

// TestRetrievalOneRequestAtATime: while one request runs, another caller
// is told to come back (503 with Retry-After), and then it is served.
func TestRetrievalOneRequestAtATime(t *testing.T) {
	slow := &slowEmbedder{entered: make(chan struct{}), release: make(chan struct{})}
	ts, _ := retrievalServer(t, func(e retrieval.Embedder) retrieval.Embedder { slow.Embedder = e; return slow })
	a, b := session(t, ts, "clinical"), session(t, ts, "field")
	done := make(chan reply, 1)
	go func() {
		done <- ts.do(t, call{method: "POST", path: "/retrieval/index", token: a, body: map[string]any{"sample": "pump-station-manual"}})
	}()
	<-slow.entered
	r := ts.do(t, call{method: "POST", path: "/retrieval/index", token: b, body: map[string]any{"sample": "pump-station-manual"}})
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(r.errMsg(t), "one request at a time") {
		t.Errorf("while busy: %d %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	close(slow.release)
	if r := <-done; r.status != 200 {
		t.Fatalf("the first: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/retrieval/index", token: b, body: map[string]any{"sample": "pump-station-manual"}}); r.status != 200 {
		t.Errorf("after: %d %s", r.status, r.body)
	}
}

// TestRetrievalWithoutModels: a box with no embedding model answers 503
// on index and search, and still verifies and describes itself.
func TestRetrievalWithoutModels(t *testing.T) {
	ts := start(t, nil, web.Probes{}, nil)
	tok := session(t, ts, "clinical")
	if r := ts.do(t, call{method: "POST", path: "/retrieval/index", token: tok, body: map[string]any{"sample": "pump-station-manual"}}); r.status != 503 || !strings.Contains(r.errMsg(t), "models.embedder.path") {
		t.Errorf("index: %d %s", r.status, r.body)
	}
	r := ts.do(t, call{method: "GET", path: "/retrieval/info"})
	var in retrieval.Info
	decodeInto(t, r, &in)
	if r.status != 200 || in.Models.Embedder.Loaded || in.Reachable || in.Unavailable == "" {
		t.Errorf("info: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/retrieval/verify", body: map[string]any{}}); r.status != 400 {
		t.Errorf("verify: %d", r.status)
	}
}

func TestRetrievalQuotesRoute(t *testing.T) {
	ts, _ := retrievalServer(t, nil)
	tok := session(t, ts, "sales")
	r := ts.do(t, call{method: "POST", path: "/retrieval/index", token: tok, body: map[string]any{"sample": "pump-station-manual"}})
	var ix retrieval.IndexResponse
	decodeInto(t, r, &ix)
	r = ts.do(t, call{method: "POST", path: "/retrieval/quotes", token: tok, body: map[string]any{
		"index": ix.Index.Hash, "query": "pressure after a filter change",
		"quotes": []string{"A drop below 3.5 bar after a filter change", "the pump never needs venting"}}})
	if r.status != 200 {
		t.Fatalf("quotes: %d %s", r.status, r.body)
	}
	var out retrieval.QuotesResponse
	decodeInto(t, r, &out)
	if len(out.Quotes) != 2 || !out.Quotes[0].Found || out.Quotes[1].Found || out.Receipt == nil || out.Normalisation == "" {
		t.Fatalf("quotes answer: %s", r.body)
	}
	q := out.Quotes[0]
	doc := ""
	for _, d := range retrieval.Samples["pump-station-manual"] {
		if d.ID == q.Doc {
			doc = d.Text
		}
	}
	if q.ByteStart == nil || doc[*q.ByteStart:*q.ByteEnd] != q.Text || q.Text != "A drop below 3.5 bar after a filter change" {
		t.Errorf("the found quote: %+v", q)
	}
	if r := ts.do(t, call{method: "POST", path: "/retrieval/quotes", token: tok, body: map[string]any{"index": ix.Index.Hash, "quotes": []string{"x"}}}); r.status != 400 || !strings.Contains(r.errMsg(t), "send query") {
		t.Errorf("no query or chunks: %d %s", r.status, r.body)
	}
}

func TestPeerEmbeddingsAndRerank(t *testing.T) {
	ts, _ := retrievalServer(t, nil)
	tok := session(t, ts, "code")
	post := func(path string, body any) reply {
		return ts.do(t, call{method: "POST", path: path, token: tok, body: body})
	}
	r := post("/v1/embeddings", map[string]any{"model": "boxd-tiny-embed", "input": "the pump loses pressure"})
	if r.status != 200 {
		t.Fatalf("embeddings: %d %s", r.status, r.body)
	}
	var e struct {
		Object string
		Data   []struct {
			Object    string
			Index     int
			Embedding []float64
		}
		Model   string
		Usage   map[string]int
		Receipt struct{ ID string }
	}
	decodeInto(t, r, &e)
	if e.Object != "list" || len(e.Data) != 1 || e.Data[0].Object != "embedding" || len(e.Data[0].Embedding) != 64 || e.Usage["prompt_tokens"] == 0 || e.Model != "boxd-tiny-embed" {
		t.Fatalf("embeddings answer: %s", r.body)
	}
	if h := r.header.Get("x-service-receipt"); h == "" || h != e.Receipt.ID {
		t.Errorf("x-service-receipt %q, receipt %q", h, e.Receipt.ID)
	}
	if rc := ts.do(t, call{method: "GET", path: "/receipts/" + e.Receipt.ID}); rc.status != 200 {
		t.Errorf("the receipt: %d", rc.status)
	}
	var n float64
	for _, x := range e.Data[0].Embedding {
		n += x * x
	}
	if n < 0.9999 || n > 1.0001 {
		t.Errorf("not unit length: %v", n)
	}
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
		msg    string
	}{
		{"wrong model", map[string]any{"model": "text-embedding-3-small", "input": "x"}, 404, `use "boxd-tiny-embed"`},
		{"token arrays", map[string]any{"model": "boxd-tiny-embed", "input": []int{1, 2}}, 400, "token arrays"},
		{"empty", map[string]any{"model": "boxd-tiny-embed", "input": []string{}}, 400, "1 to 256"},
		{"empty text", map[string]any{"model": "boxd-tiny-embed", "input": ""}, 400, "input[0]"},
		{"too long", map[string]any{"model": "boxd-tiny-embed", "input": strings.Repeat("pump ", 600)}, 400, "at most 512"},
		{"dimensions", map[string]any{"model": "boxd-tiny-embed", "input": "x", "dimensions": 32}, 400, "no shortening"},
		{"format", map[string]any{"model": "boxd-tiny-embed", "input": "x", "encoding_format": "hex"}, 400, "encoding_format"},
	} {
		if r := post("/v1/embeddings", c.body); r.status != c.status || !strings.Contains(r.errMsg(t), c.msg) {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}

	r = post("/v1/rerank", map[string]any{"model": "boxd-tiny-rerank", "query": "why does the pump lose pressure",
		"documents": []any{"the pump loses pressure when the filter clogs", map[string]string{"text": "roof shingles"}, "bleed the air"}, "top_n": 2, "return_documents": true})
	if r.status != 200 {
		t.Fatalf("rerank: %d %s", r.status, r.body)
	}
	var rr retrieval.RerankResponse
	decodeInto(t, r, &rr)
	if len(rr.Results) != 2 || rr.Results[0].RelevanceScore < rr.Results[1].RelevanceScore || rr.Results[0].Document == nil || rr.Receipt.ID == "" {
		t.Fatalf("rerank answer: %s", r.body)
	}
	for _, res := range rr.Results {
		if res.RelevanceScore <= 0 || res.RelevanceScore >= 1 {
			t.Errorf("relevance %v", res.RelevanceScore)
		}
	}
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
		msg    string
	}{
		{"wrong model", map[string]any{"model": "rerank-english-v3.0", "query": "q", "documents": []string{"d"}}, 404, `use "boxd-tiny-rerank"`},
		{"top_n", map[string]any{"model": "boxd-tiny-rerank", "query": "q", "documents": []string{"d"}, "top_n": 2}, 400, "top_n must be 1 to"},
		{"no documents", map[string]any{"model": "boxd-tiny-rerank", "query": "q", "documents": []string{}}, 400, "1 to 100 documents"},
		{"bad document", map[string]any{"model": "boxd-tiny-rerank", "query": "q", "documents": []any{3}}, 400, `documents[0] must be a string or {"text": string}`},
		{"no query", map[string]any{"model": "boxd-tiny-rerank", "query": "", "documents": []string{"d"}}, 400, "query must be"},
	} {
		if r := post("/v1/rerank", c.body); r.status != c.status || !strings.Contains(r.errMsg(t), c.msg) {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}
}

// TestOpenAINodeEmbeddings drives /v1/embeddings with the official openai
// npm client (internal/daemon/testdata/openai, installed by make deps).
func TestOpenAINodeEmbeddings(t *testing.T) {
	dir, _ := filepath.Abs("testdata/openai")
	node, err := exec.LookPath("node")
	if _, statErr := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil || statErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or the openai package is missing (make deps installs it): %v %v", err, statErr)
		}
		t.Skip("node or the openai npm package is missing; run make deps")
	}
	ts, _ := retrievalServer(t, nil)
	cmd := exec.Command(node, "embeddings.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BOXD_URL="+ts.url, "BOXD_TOKEN="+session(t, ts, "code"), "BOXD_EMBED_MODEL=boxd-tiny-embed")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	var got struct {
		One struct {
			Object, Model string
			N, Dim        int
			First         []float64
			Usage         map[string]int
		}
		Batch struct {
			N       int
			Indexes []int
			First   []float64
		}
		Floats struct{ First []float64 }
		Wrong  struct {
			Status        int
			Message, Type string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.One.Object != "list" || got.One.N != 1 || got.One.Dim != 64 || got.One.Usage["prompt_tokens"] == 0 || got.Batch.N != 2 || fmt.Sprint(got.Batch.Indexes) != "[0 1]" {
		t.Errorf("client saw %s", out)
	}
	// base64 (the client's default, decoded by it) and floats agree.
	for i := range got.One.First {
		if math.Abs(got.One.First[i]-got.Floats.First[i]) > 1e-6 || math.Abs(got.Batch.First[i]-got.Floats.First[i]) > 1e-6 {
			t.Errorf("base64 and float vectors differ: %v %v %v", got.One.First, got.Batch.First, got.Floats.First)
			break
		}
	}
	if got.Wrong.Status != 404 || !strings.Contains(got.Wrong.Message, "not served") || got.Wrong.Type != "invalid_request_error" {
		t.Errorf("wrong model: %+v", got.Wrong)
	}
}
