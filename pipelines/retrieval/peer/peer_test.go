package peer

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/pipelines/retrieval/proof"
)

type fixed struct{}

func (fixed) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range texts {
		out[i] = []float32{1, float32(i)}
	}
	return out, nil
}

// Rerank scores a document by its length: the longest first.
func (fixed) Rerank(_ context.Context, _ string, docs []string) ([]float32, error) {
	out := make([]float32, len(docs))
	for i, d := range docs {
		out[i] = float32(len(d))
	}
	return out, nil
}

func (fixed) CountTokens(text string) (int, error) { return len(strings.Fields(text)), nil }
func (fixed) MaxTokens() int                       { return 8 }

type memReceipts struct {
	k     *attest.Key
	calls []attest.ModelCall
}

func (m *memReceipts) Issue(_ context.Context, mc attest.ModelCall, _ string) (attest.SignedModelCall, error) {
	m.calls = append(m.calls, mc)
	return attest.IssueModelCall(m.k, mc)
}

func models() (Models, *memReceipts) {
	k := attest.NewKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	rec := &memReceipts{k: k}
	return Models{Embedder: fixed{}, EmbedderModel: Model{Ref: proof.ModelRef{Repo: "emb", Revision: "1"}},
		Reranker: fixed{}, RerankerModel: Model{Ref: proof.ModelRef{Repo: "rr", Revision: "2"}}, MaxQueryChars: 100,
		Issuer: Issuer{Key: k, Receipts: rec}}, rec
}

// TestEmbeddings: OpenAI's shape, floats or base64 of little-endian
// float32, the tokens counted and signed, the model named.
func TestEmbeddings(t *testing.T) {
	m, rec := models()
	out, err := m.Embeddings(context.Background(), nil, EmbeddingsRequest{Model: "emb", Input: json.RawMessage(`["one two", "three"]`), EncodingFormat: "base64"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := base64.StdEncoding.DecodeString(out.Data[1].Embedding.(string))
	if len(out.Data) != 2 || out.Usage.PromptTokens != 3 || len(b) != 8 || b[3] != 0x3f || b[7] != 0x3f || out.Receipt.ID != rec.calls[0].ID {
		t.Errorf("answer %+v, vector %x", out, b)
	}
	if c := rec.calls[0]; c.Params["kind"] != "embed" || c.Usage.PromptTokens != "3" || c.OutputHash != VectorsHash([][]float32{{1, 0}, {1, 1}}) {
		t.Errorf("receipt %+v", c)
	}
	if _, err := m.Embeddings(context.Background(), nil, EmbeddingsRequest{Model: "other", Input: json.RawMessage(`"x"`)}); !problem.Is(err, problem.NotFound) {
		t.Errorf("another model: %v", err)
	}
	if _, err := m.Embeddings(context.Background(), nil, EmbeddingsRequest{Model: "emb", Input: json.RawMessage(`"a b c d e f g h i"`)}); !problem.Is(err, problem.Invalid) {
		t.Errorf("over the context: %v", err)
	}
}

// TestRerank: every document's relevance (the sigmoid of its score), best
// first, top_n kept, the query and document pairs' tokens signed.
func TestRerank(t *testing.T) {
	m, rec := models()
	top := 2
	out, err := m.Rerank(context.Background(), nil, RerankRequest{Model: "rr", Query: "q", TopN: &top,
		Documents: []json.RawMessage{json.RawMessage(`"ab"`), json.RawMessage(`{"text":"abcd"}`), json.RawMessage(`"abc"`)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 2 || out.Results[0].Index != 1 || out.Results[1].Index != 2 || out.Results[0].RelevanceScore <= out.Results[1].RelevanceScore || out.Usage.PromptTokens != 6 {
		t.Errorf("answer %+v", out)
	}
	if c := rec.calls[0]; c.Params["kind"] != "rerank" || c.OutputHash != ScoresHash([]float32{2, 4, 3}) || c.Model != "rr" {
		t.Errorf("receipt %+v", c)
	}
	m.Reranker = nil
	if _, err := m.Rerank(context.Background(), nil, RerankRequest{Model: "rr", Query: "q"}); !problem.Is(err, problem.Unavailable) {
		t.Errorf("no reranker: %v", err)
	}
}
