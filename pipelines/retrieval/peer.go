package retrieval

import (
	"context"

	"boxd/pipelines/retrieval/peer"
)

// The peer routes (OpenAI's POST /v1/embeddings, the rerank route) are
// package peer's, run on this service's models.

type (
	// EmbeddingsRequest is OpenAI's embeddings body.
	EmbeddingsRequest = peer.EmbeddingsRequest
	// EmbeddingsResponse is OpenAI's answer shape.
	EmbeddingsResponse = peer.EmbeddingsResponse
	// RerankRequest is the rerank body the peers' clients send.
	RerankRequest = peer.RerankRequest
	// RerankResponse is the peers' answer shape.
	RerankResponse = peer.RerankResponse
	// Model is a loaded retrieval model and what its receipts and the
	// info route name.
	Model = peer.Model
)

// peers are the service's models as the peer routes run them.
func (s *Service) peers() peer.Models {
	return peer.Models{Embedder: s.Embedder, EmbedderModel: s.EmbedderModel, Reranker: s.Reranker, RerankerModel: s.RerankerModel,
		MaxQueryChars: MaxQueryChars, Issuer: s.issuer()}
}

// Embeddings answers POST /v1/embeddings.
func (s *Service) Embeddings(ctx context.Context, keyID *string, req EmbeddingsRequest) (*EmbeddingsResponse, error) {
	return s.peers().Embeddings(ctx, keyID, req)
}

// Rerank answers POST /v1/rerank: every document's relevance to the
// query (the sigmoid of the cross-encoder's logit, 0..1), best first.
func (s *Service) Rerank(ctx context.Context, keyID *string, req RerankRequest) (*RerankResponse, error) {
	return s.peers().Rerank(ctx, keyID, req)
}
