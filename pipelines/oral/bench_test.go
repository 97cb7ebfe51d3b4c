package oral

import (
	"context"
	"testing"
	"time"

	"boxd/internal/run"
	"boxd/pipelines/llmcall/llmcalltest"
)

type quiet struct{}

func (quiet) Emit(string, any)     {}
func (quiet) End(string, any) bool { return true }

// BenchmarkScoreTranscript scores the four samples with the tiny chat
// model: seconds and generated tokens per transcript, the share of the
// model's citations that passed the grounding check (the evidence kept is
// 100% verified by construction), and order invariance (each sample again
// with its criteria reversed: the share of criteria that keep their level).
func BenchmarkScoreTranscript(b *testing.B) {
	s := testService(b)
	var secs, tokens float64
	var cited, verified, same, total, n int
	for b.Loop() {
		for _, smp := range Samples() {
			budget := &llmcalltest.Budget{}
			r := ScoreRequest{SampleID: smp.ID}
			if err := s.Validate(&r); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			a, err := s.Score(context.Background(), r, run.Env{Events: quiet{}, Budget: budget})
			if err != nil {
				b.Fatal(err)
			}
			secs += time.Since(start).Seconds()
			for _, c := range budget.Committed() {
				tokens += float64(c)
			}
			n++
			cited += a.Draft.Summary.Cited
			verified += a.Draft.Summary.Verified
			var rev []string
			for i := len(r.rubric.Criteria) - 1; i >= 0; i-- {
				rev = append(rev, r.rubric.Criteria[i].ID)
			}
			r2 := ScoreRequest{SampleID: smp.ID}
			_ = s.Validate(&r2)
			r2.order = rev
			a2, err := s.Score(context.Background(), r2, run.Env{Events: quiet{}, Budget: &llmcalltest.Budget{}})
			if err != nil {
				b.Fatal(err)
			}
			for i := range a.Draft.Scores {
				total++
				if a.Draft.Scores[i].Level == a2.Draft.Scores[i].Level {
					same++
				}
			}
		}
	}
	b.ReportMetric(secs/float64(n), "s/transcript")
	b.ReportMetric(tokens/float64(n), "tokens/transcript")
	if cited > 0 {
		b.ReportMetric(float64(verified)/float64(cited), "verified/cited")
	}
	b.ReportMetric(float64(same)/float64(total), "order-invariant")
}
