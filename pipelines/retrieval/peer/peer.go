// Package peer is evidence retrieval's models served bare, in their
// peers' shapes, on the same engines the search runs: OpenAI's POST
// /v1/embeddings and the rerank route llama-server, Jina and Cohere
// clients call (scores on the search's scale, index.Relevance). Every call
// to those models, the search's too, is metered and signed here (call.go):
// the tokens the model read, the hash of what it returned, its receipt.
package peer

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"

	"boxd/internal/problem"
	"boxd/pipelines/retrieval/index"
)

// Peer route limits.
const (
	MaxEmbedInputs  = 256
	MaxEmbedChars   = 32000
	MaxRerankDocs   = 100
	MaxRerankChars  = 8000
	embeddingObject = "embedding"
)

// Models are what the peer routes run on: the retrieval service's models,
// its one request at a time and its model-call receipts.
type Models struct {
	Embedder      index.Embedder // nil: no embedder configured (503)
	EmbedderModel Model
	Reranker      index.Reranker // nil: no reranker (503)
	RerankerModel Model
	// MaxQueryChars bounds a rerank query (the search's bound).
	MaxQueryChars int
	// Issuer signs each call's receipt.
	Issuer Issuer
}

// EmbeddingsRequest is OpenAI's embeddings body.
type EmbeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
	User           string          `json:"user"`
}

// Embedding is one vector: floats, or base64 of little-endian float32.
type Embedding struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// Usage is the peers' token count.
type Usage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// EmbeddingsResponse is OpenAI's answer shape.
type EmbeddingsResponse struct {
	Object  string           `json:"object"`
	Data    []Embedding      `json:"data"`
	Model   string           `json:"model"`
	Usage   Usage            `json:"usage"`
	Receipt ModelCallReceipt `json:"receipt"`
}

// inputs reads input: a string or an array of strings.
func (r *EmbeddingsRequest) inputs() ([]string, error) {
	var one string
	if json.Unmarshal(r.Input, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(r.Input, &many); err != nil {
		return nil, problem.New(problem.Invalid, "input must be a string or an array of strings (token arrays are not accepted: send the text)")
	}
	return many, nil
}

func modelCheck(m Model, loaded bool, name, setting string) error {
	if !loaded {
		return problem.New(problem.Unavailable, "no %s is configured on this box (%s)", map[string]string{"models.embedder.path": "embedding model", "models.reranker.path": "reranker"}[setting], setting)
	}
	if name != m.Ref.Repo {
		return problem.New(problem.NotFound, "model %q is not served on this box; use %q", name, m.Ref.Repo)
	}
	return nil
}

// Embeddings answers POST /v1/embeddings.
func (s Models) Embeddings(ctx context.Context, keyID *string, req EmbeddingsRequest) (*EmbeddingsResponse, error) {
	if err := modelCheck(s.EmbedderModel, s.Embedder != nil, req.Model, "models.embedder.path"); err != nil {
		return nil, err
	}
	texts, err := req.inputs()
	if err != nil {
		return nil, err
	}
	switch {
	case len(texts) == 0 || len(texts) > MaxEmbedInputs:
		return nil, problem.New(problem.Invalid, "input must hold 1 to %d texts", MaxEmbedInputs)
	case req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64":
		return nil, problem.New(problem.Invalid, "encoding_format %q: use float or base64", req.EncodingFormat)
	}
	for i, t := range texts {
		if t == "" || utf8.RuneCountInString(t) > MaxEmbedChars || !utf8.ValidString(t) {
			return nil, problem.New(problem.Invalid, "input[%d] must be 1 to %d characters of UTF-8", i, MaxEmbedChars)
		}
	}
	tokens, err := countTokens(s.Embedder, texts, "input")
	if err != nil {
		return nil, err
	}
	vs, err := s.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, problem.Wrap(problem.Upstream, err, "the embedding model failed: %v", err)
	}
	if req.Dimensions != nil && len(vs) > 0 && *req.Dimensions != len(vs[0]) {
		return nil, problem.New(problem.Invalid, "dimensions %d: this model's vectors have %d (no shortening)", *req.Dimensions, len(vs[0]))
	}
	rc, err := s.Issuer.Sign(ctx, "embed", s.EmbedderModel, texts, VectorsHash(vs), map[string]string{"inputs": strconv.Itoa(len(texts)), "api": "openai.embeddings"}, tokens, keyID)
	if err != nil {
		return nil, err
	}
	out := &EmbeddingsResponse{Object: "list", Model: s.EmbedderModel.Ref.Repo, Usage: Usage{tokens, tokens}, Receipt: rc}
	for i, v := range vs {
		var e any = v
		if req.EncodingFormat == "base64" {
			b := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
			}
			e = base64.StdEncoding.EncodeToString(b)
		}
		out.Data = append(out.Data, Embedding{Object: embeddingObject, Index: i, Embedding: e})
	}
	return out, nil
}

// RerankRequest is the rerank body llama-server, Jina and Cohere clients
// send: documents as strings or {text} objects.
type RerankRequest struct {
	Model           string            `json:"model"`
	Query           string            `json:"query"`
	Documents       []json.RawMessage `json:"documents"`
	TopN            *int              `json:"top_n"`
	ReturnDocuments *bool             `json:"return_documents"`
}

// RerankResult is one document's score.
type RerankResult struct {
	Index          int             `json:"index"`
	RelevanceScore float64         `json:"relevance_score"`
	Document       *RerankDocument `json:"document,omitempty"`
}

// RerankDocument is a returned document.
type RerankDocument struct {
	Text string `json:"text"`
}

// RerankResponse is the peers' answer shape.
type RerankResponse struct {
	Object  string           `json:"object"`
	Model   string           `json:"model"`
	Results []RerankResult   `json:"results"`
	Usage   Usage            `json:"usage"`
	Receipt ModelCallReceipt `json:"receipt"`
}

// Rerank answers POST /v1/rerank: every document's relevance to the
// query (the sigmoid of the cross-encoder's logit, 0..1), best first.
func (s Models) Rerank(ctx context.Context, keyID *string, req RerankRequest) (*RerankResponse, error) {
	if err := modelCheck(s.RerankerModel, s.Reranker != nil, req.Model, "models.reranker.path"); err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(req.Query); n == 0 || n > s.MaxQueryChars {
		return nil, problem.New(problem.Invalid, "query must be 1 to %d characters", s.MaxQueryChars)
	}
	if len(req.Documents) == 0 || len(req.Documents) > MaxRerankDocs {
		return nil, problem.New(problem.Invalid, "documents must hold 1 to %d documents", MaxRerankDocs)
	}
	docs := make([]string, len(req.Documents))
	for i, raw := range req.Documents {
		var obj struct {
			Text *string `json:"text"`
		}
		if json.Unmarshal(raw, &docs[i]) != nil && (json.Unmarshal(raw, &obj) != nil || obj.Text == nil) {
			return nil, problem.New(problem.Invalid, "documents[%d] must be a string or {\"text\": string}", i)
		}
		if obj.Text != nil {
			docs[i] = *obj.Text
		}
		if docs[i] == "" || utf8.RuneCountInString(docs[i]) > MaxRerankChars {
			return nil, problem.New(problem.Invalid, "documents[%d] must be 1 to %d characters", i, MaxRerankChars)
		}
	}
	if req.TopN != nil && (*req.TopN < 1 || *req.TopN > len(docs)) {
		return nil, problem.New(problem.Invalid, "top_n must be 1 to the number of documents (%d)", len(docs))
	}
	for i, d := range docs {
		if _, err := countTokens(s.Reranker, []string{req.Query + " " + d}, "documents"); err != nil {
			return nil, problem.New(problem.Invalid, "documents[%d] with the query is over the model's context: shorten it", i)
		}
	}
	tokens, err := RerankTokens(s.Reranker, req.Query, docs)
	if err != nil {
		return nil, err
	}
	scores, err := s.Reranker.Rerank(ctx, req.Query, docs)
	if err != nil {
		return nil, problem.Wrap(problem.Upstream, err, "the reranker failed: %v", err)
	}
	rc, err := s.Issuer.Sign(ctx, "rerank", s.RerankerModel, append([]string{req.Query}, docs...), ScoresHash(scores),
		map[string]string{"candidates": strconv.Itoa(len(docs)), "api": "rerank"}, tokens, keyID)
	if err != nil {
		return nil, err
	}
	out := &RerankResponse{Object: "list", Model: s.RerankerModel.Ref.Repo, Usage: Usage{tokens, tokens}, Receipt: rc}
	for i, sc := range scores {
		r := RerankResult{Index: i, RelevanceScore: index.Relevance(sc)}
		if req.ReturnDocuments != nil && *req.ReturnDocuments {
			r.Document = &RerankDocument{Text: docs[i]}
		}
		out.Results = append(out.Results, r)
	}
	sort.SliceStable(out.Results, func(i, j int) bool { return out.Results[i].RelevanceScore > out.Results[j].RelevanceScore })
	if req.TopN != nil {
		out.Results = out.Results[:*req.TopN]
	}
	return out, nil
}
