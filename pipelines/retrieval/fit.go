package retrieval

import (
	"boxd/internal/problem"
	"boxd/pipelines/retrieval/index"
)

// Models read every text whole (package index refuses a text over a
// model's context): chunks are cut to fit, and a query that does not fit
// is refused here (400).

// queryFits refuses a query the embedder (dense and hybrid) or the
// reranker (rerank) cannot read whole (400).
func (s *Service) queryFits(query string, p Params) error {
	if p.Mode != ModeBM25 {
		if tc, ok := s.Embedder.(index.TokenCounter); ok {
			if err := index.Fits(tc, "the query", "embedder", query, 0); err != nil {
				return problem.Wrap(problem.Invalid, err, "%v: shorten it", err)
			}
		}
	}
	if p.Rerank {
		if tc, ok := s.Reranker.(index.TokenCounter); ok {
			if err := index.Fits(tc, "the query", "reranker", query, 0); err != nil {
				return problem.Wrap(problem.Invalid, err, "%v: shorten it or send rerank false", err)
			}
		}
	}
	return nil
}
