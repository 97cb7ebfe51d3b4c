package retrieval

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/pipelines/retrieval/bm25"
)

// memReceipts signs model-call receipts in memory.
type memReceipts struct{ k *attest.Key }

func (m memReceipts) Issue(_ context.Context, mc attest.ModelCall, _ string) (attest.SignedModelCall, error) {
	mc.Created = "0"
	return attest.IssueModelCall(m.k, mc)
}

func testService(t *testing.T) *Service {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	k := attest.NewKey(priv)
	return &Service{Embedder: &bagEmbedder{}, Reranker: &overlapReranker{}, Key: k, Receipts: memReceipts{k},
		EmbedderModel: Model{Ref: ModelRef{Repo: "bag", Revision: "1"}}, RerankerModel: Model{Ref: ModelRef{Repo: "overlap", Revision: "1"}}}
}

func TestQuotesFoundWordForWord(t *testing.T) {
	s := testService(t)
	ctx := context.Background()
	yes := true
	docs := []Document{{ID: "manual", Text: "Start-up. Open the suction valve fully before starting the pump.\n\n" +
		"Pressure. A drop below 3.5 bar after a filter change usually means AIR in the line: bleed it at the top vent."}}
	ix, err := s.Index(ctx, "owner", nil, IndexRequest{Documents: docs, Synthetic: &yes})
	if err != nil {
		t.Fatal(err)
	}
	hash := ix.Index.Hash
	for _, tc := range []struct {
		name string
		req  QuotesRequest
		want []bool
	}{
		{"by query, quotes", QuotesRequest{Index: hash, Query: "pressure drop filter", Quotes: []string{
			"a drop below 3.5 bar", "means air in the line", "Bleed it,   at the TOP vent!", "the pump explodes", "open the suction valve"}},
			[]bool{true, true, true, false, true}},
		{"by chunk ids, an answer", QuotesRequest{Index: hash, Chunks: []string{"c0"}, Answer: "Usually means air in the line. Replace the pump at once."},
			[]bool{true, false}},
	} {
		out, err := s.Quotes(ctx, "owner", nil, tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(out.Quotes) != len(tc.want) || out.Normalisation == "" {
			t.Fatalf("%s: %+v", tc.name, out)
		}
		for i, q := range out.Quotes {
			if q.Found != tc.want[i] {
				t.Errorf("%s: %q found %v, want %v", tc.name, q.Quote, q.Found, tc.want[i])
				continue
			}
			if !q.Found {
				continue
			}
			got := docs[0].Text[*q.ByteStart:*q.ByteEnd]
			if got != q.Text || !strings.EqualFold(strings.Join(bm25.Analyze(got), " "), strings.Join(bm25.Analyze(q.Quote), " ")) {
				t.Errorf("%s: %q at %d..%d reads %q (text %q)", tc.name, q.Quote, *q.ByteStart, *q.ByteEnd, got, q.Text)
			}
		}
		if tc.req.Query != "" && (out.Receipt == nil || len(out.ModelCalls) == 0) {
			t.Errorf("%s: the search's receipt is missing", tc.name)
		}
		if tc.req.Query == "" && (out.Receipt != nil || len(out.ModelCalls) != 0) {
			t.Errorf("%s: chunk ids made a model call", tc.name)
		}
	}
	const ok = problem.Kind(255)
	for _, bad := range []struct {
		req  QuotesRequest
		kind problem.Kind
	}{
		{QuotesRequest{Index: hash, Quotes: []string{"x"}}, problem.Invalid},
		{QuotesRequest{Index: hash, Query: "q", Chunks: []string{"c0"}, Quotes: []string{"x"}}, problem.Invalid},
		{QuotesRequest{Index: hash, Query: "q"}, problem.Invalid},
		{QuotesRequest{Index: hash, Query: "q", Quotes: []string{"..."}}, problem.Invalid},
		{QuotesRequest{Index: hash, Query: "q", Quotes: make([]string, 51)}, problem.TooLarge},
		{QuotesRequest{Index: hash, Chunks: []string{"c99"}, Quotes: []string{"x"}}, problem.NotFound},
		{QuotesRequest{Index: hash, Chunks: []string{"c01"}, Quotes: []string{"x"}}, problem.NotFound},
		{QuotesRequest{Index: strings.Repeat("b", 64), Chunks: []string{"c0"}, Quotes: []string{"x"}}, problem.NotFound},
		{QuotesRequest{Index: hash, Chunks: []string{"c0"}, Quotes: []string{"x"}}, ok},
	} {
		_, err := s.Quotes(ctx, "owner", nil, bad.req)
		if bad.kind == ok {
			if err != nil {
				t.Errorf("%+v: %v", bad.req, err)
			}
			continue
		}
		if !problem.Is(err, bad.kind) {
			t.Errorf("%+v: %v, want %v", bad.req, err, bad.kind)
		}
	}
}
