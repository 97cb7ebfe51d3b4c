package retrieval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
)

// BenchmarkRetrieval measures, with the random-weight test embedder and
// reranker on this machine: building an index of 60 documents cut into
// 1,500 chunks (build_ms, chunks/s embedded), hybrid search without rerank
// over those 1,500 chunks (search_p50_ms, search_p95_ms over 50 queries;
// the goal is p95 under 50 ms on 2 cores), and reranking 40 candidates
// (rerank_p50_ms). engine/llm.BenchmarkEmbedVsOllama compares the
// embedding throughput with ollama's.
func BenchmarkRetrieval(b *testing.B) {
	ctx := context.Background()
	emb, err := llm.OpenEmbedder(ctx, llm.Options{Path: testmodels.Generated(b, testmodels.EmbedFile)})
	if err != nil {
		b.Fatal(err)
	}
	defer emb.Close()
	rr, err := llm.OpenEmbedder(ctx, llm.Options{Path: testmodels.Generated(b, testmodels.RerankFile)})
	if err != nil {
		b.Fatal(err)
	}
	defer rr.Close()
	var docs []Document
	for d := range MaxDocuments {
		var sb strings.Builder
		for p := range 25 { // 25 paragraphs of about 1,100 characters: a chunk each
			begin := sb.Len()
			for s := 0; sb.Len()-begin < 1050; s++ {
				fmt.Fprintf(&sb, "Pump %d valve %d reads %d bar after filter change %d. ", d, p, (d*p+s)%9, s)
			}
			sb.WriteString("\n\n")
		}
		docs = append(docs, Document{ID: fmt.Sprint("doc-", d), Text: sb.String()})
	}
	var ix *Index
	var build time.Duration
	for range b.N {
		start := time.Now()
		ix, err = BuildIndex(docs, DefaultChunker, ModelRef{Repo: "test", Revision: "1"})
		if err != nil {
			b.Fatal(err)
		}
		if err := ix.Prepare(ctx, emb); err != nil {
			b.Fatal(err)
		}
		build += time.Since(start)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(build)/float64(b.N), "build_ms")
	b.ReportMetric(float64(ix.NChunks)*float64(b.N)/build.Seconds(), "chunks/s")
	b.ReportMetric(float64(ix.NChunks), "chunks")
	var lat []time.Duration
	for q := range 50 {
		start := time.Now()
		if _, err := ix.Search(ctx, fmt.Sprintf("pressure after filter change %d on valve %d", q, q%25), Params{K: 10}, emb, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(ms(lat[len(lat)/2]), "search_p50_ms")
	b.ReportMetric(ms(lat[len(lat)*95/100]), "search_p95_ms")
	cands := make([]string, Candidates)
	for i := range cands {
		cands[i] = ix.Chunks[i].Text
	}
	var rl []time.Duration
	for range 10 {
		start := time.Now()
		if _, err := rr.Rerank(ctx, "pressure after a filter change", cands); err != nil {
			b.Fatal(err)
		}
		rl = append(rl, time.Since(start))
	}
	slices.Sort(rl)
	b.ReportMetric(ms(rl[len(rl)/2]), "rerank_p50_ms")
}
