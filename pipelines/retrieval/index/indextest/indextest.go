// Package indextest holds the retrieval packages' test models: an
// embedder and a reranker that need no weights, so tests of the index,
// the service and the receipts rank by words they can reason about.
package indextest

import (
	"context"
	"hash/fnv"
	"math"

	"boxd/pipelines/retrieval/bm25"
)

// BagEmbedder embeds a text as its hashed bag of words, normalised: texts
// sharing words are near.
type BagEmbedder struct{ Calls int }

func (b *BagEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	b.Calls++
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		for _, w := range bm25.Analyze(t) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%64]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		if n > 0 {
			for j := range v {
				v[j] /= float32(math.Sqrt(n))
			}
		}
		out[i] = v
	}
	return out, nil
}

// OverlapReranker scores a document by the query words it holds, minus a
// little for its length.
type OverlapReranker struct{ Got []string }

func (o *OverlapReranker) Rerank(_ context.Context, query string, docs []string) ([]float32, error) {
	o.Got = docs
	q := map[string]bool{}
	for _, w := range bm25.Analyze(query) {
		q[w] = true
	}
	out := make([]float32, len(docs))
	for i, d := range docs {
		ws := bm25.Analyze(d)
		for _, w := range ws {
			if q[w] {
				out[i]++
			}
		}
		out[i] -= float32(len(ws)) / 1000
	}
	return out, nil
}
