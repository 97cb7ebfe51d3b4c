package peer

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"

	"boxd/engine/attest"
	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/retrieval/index"
	"boxd/pipelines/retrieval/proof"
)

// A call to a retrieval model: what it is signed as (its model, the
// tokens it read, the hash of what it returned) and its receipt.

// Model is a loaded retrieval model and what its receipts and the info
// route name.
type Model struct {
	Ref         proof.ModelRef // repo: the model's name; revision: its weights root
	WeightsRoot string
	File        string // the GGUF's file name (receipt upstream)
	Licence     string // general.license of the file, "" when it names none
}

// ModelCallReceipt is a model call's receipt as the answers carry it (the
// shape of the platform's receipt events).
type ModelCallReceipt = run.ReceiptBody

// Receipts signs and stores model-call receipts (receipts.Book is one).
type Receipts interface {
	Issue(ctx context.Context, mc attest.ModelCall, upstream string) (attest.SignedModelCall, error)
}

// Issuer issues the receipts of calls to the retrieval models, signed by
// Key and kept by Receipts.
type Issuer struct {
	Key      *attest.Key
	Receipts Receipts
}

// Sign issues a model call's receipt (service.model-call.v1): the request
// hash covers the texts (canonical JSON list), the output hash the vectors
// or scores; usage signs the tokens the model read (prompt_tokens, as the
// routes report them) and generated none (completion_tokens 0).
func (s Issuer) Sign(ctx context.Context, kind string, m Model, inputs []string, outputHash string, params map[string]string, tokens int, keyID *string) (ModelCallReceipt, error) {
	if s.Receipts == nil || s.Key == nil {
		return ModelCallReceipt{}, fmt.Errorf("retrieval: no receipt issuer")
	}
	reqHash, err := attest.HashJSON(inputs)
	if err != nil {
		return ModelCallReceipt{}, err
	}
	p := map[string]string{"kind": kind}
	for k, v := range params {
		p[k] = v
	}
	id := ids.New("mc-", 12)
	signed, err := s.Receipts.Issue(context.WithoutCancel(ctx), attest.ModelCall{
		ID: id, Model: m.Ref.Repo, WeightsRoot: m.WeightsRoot, RequestHash: reqHash, OutputHash: outputHash,
		Params: p, Usage: attest.NewUsage(tokens, 0), KeyID: keyID,
	}, m.File)
	if err != nil {
		return ModelCallReceipt{}, fmt.Errorf("retrieval: sign the %s call: %w", kind, err)
	}
	return ModelCallReceipt{ID: id, Model: m.Ref.Repo, GatewaySig: signed.Sig, Provider: s.Key.ID(), Status: "attested", KeyID: keyID}, nil
}

// countTokens sums the texts' tokens and refuses one over the model's
// context (400 naming it), as the peers do.
func countTokens(m any, texts []string, field string) (int, error) {
	tc, ok := m.(index.TokenCounter)
	if !ok {
		return 0, nil
	}
	total := 0
	for i, t := range texts {
		n, err := tc.CountTokens(t)
		if err != nil {
			return 0, problem.Wrap(problem.Invalid, err, "%s[%d] cannot be tokenized: %v", field, i, err)
		}
		if n > tc.MaxTokens() {
			return 0, problem.New(problem.Invalid, "%s[%d] is %d tokens; this model takes at most %d: shorten it", field, i, n, tc.MaxTokens())
		}
		total += n
	}
	return total, nil
}

// SumTokens is the texts' tokens as the model counts them (0 for a model
// that keeps no count): what an embedding call's receipt signs as
// prompt_tokens, and /v1/embeddings reports.
func SumTokens(m any, texts []string) (int, error) {
	tc, ok := m.(index.TokenCounter)
	if !ok {
		return 0, nil
	}
	total := 0
	for i, t := range texts {
		n, err := tc.CountTokens(t)
		if err != nil {
			return 0, fmt.Errorf("retrieval: count the tokens of text %d: %w", i, err)
		}
		total += n
	}
	return total, nil
}

// RerankTokens is a rerank call's tokens: for each document, those of the
// query, a space and the document, as the reranker counts them (what
// /v1/rerank reports and a rerank receipt signs as prompt_tokens).
func RerankTokens(m any, query string, docs []string) (int, error) {
	pairs := make([]string, len(docs))
	for i, d := range docs {
		pairs[i] = query + " " + d
	}
	return SumTokens(m, pairs)
}

// VectorsHash is the hex SHA-256 of the vectors as little-endian float32,
// one after another: what an embedding receipt's output_hash covers.
func VectorsHash(vs [][]float32) string {
	h := sha256.New()
	var b [4]byte
	for _, v := range vs {
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ScoresHash is the hex SHA-256 of the scores' JSON: what a rerank
// receipt's output_hash covers.
func ScoresHash(scores []float32) string {
	b, _ := json.Marshal(scores)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
