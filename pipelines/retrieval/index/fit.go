package index

import "fmt"

// Models read every text whole: a text over a model's context is refused
// here, never cut by the model (engine/llm cuts what it is given to its
// context without a word). Chunks are cut to fit (chunker.Bounded); what
// is left to check is the query, and chunks of indexes made before the
// chunker counted tokens.

// TokenCounter counts a text's tokens as the model takes them
// (engine/llm.Embedder is one); a model without it is not checked.
type TokenCounter interface {
	CountTokens(text string) (int, error)
	MaxTokens() int
}

// FitError says that a text does not fit a model's context.
type FitError struct {
	What          string // "the query", "chunk c3", "the query with chunk c3"
	Model         string // "embedder" or "reranker"
	Tokens, Limit int
}

func (e *FitError) Error() string {
	return fmt.Sprintf("%s takes %d tokens; the %s reads at most %d", e.What, e.Tokens, e.Model, e.Limit)
}

// Fits checks that text, with extra tokens beside it, is within tc's
// context.
func Fits(tc TokenCounter, what, model, text string, extra int) error {
	n, err := tc.CountTokens(text)
	if err != nil {
		return fmt.Errorf("retrieval: count the tokens of %s: %w", what, err)
	}
	if n+extra > tc.MaxTokens() {
		return &FitError{What: what, Model: model, Tokens: n + extra, Limit: tc.MaxTokens()}
	}
	return nil
}

// RerankFits checks that the reranker reads the query beside each
// candidate whole: their token counts (each with its special tokens, at
// least what the pair takes) within its context.
func RerankFits(tc TokenCounter, query string, docs []string) error {
	if tc == nil {
		return nil
	}
	q, err := tc.CountTokens(query)
	if err != nil {
		return fmt.Errorf("retrieval: count the query's tokens: %w", err)
	}
	for i, d := range docs {
		if err := Fits(tc, fmt.Sprintf("the query with candidate %d", i+1), "reranker", d, q); err != nil {
			return err
		}
	}
	return nil
}

// ChunksFit checks that the embedder reads every chunk whole (an index
// whose chunker counted no tokens, or kept on disk before it did).
func (ix *Index) ChunksFit(emb Embedder) error {
	tc, ok := emb.(TokenCounter)
	if !ok {
		return nil
	}
	for _, c := range ix.Chunks {
		if err := Fits(tc, "chunk "+c.ID, "embedder", c.Text, 0); err != nil {
			return err
		}
	}
	return nil
}
