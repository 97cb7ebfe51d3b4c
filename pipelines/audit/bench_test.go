package audit

import (
	"context"
	"testing"
	"time"

	"boxd/internal/run"
	"boxd/pipelines/audit/audittest"
	"boxd/pipelines/llmcall/llmcalltest"
)

// BenchmarkAuditOllama is one whole audit (first pass, quality and
// performance lanes; a pass needs no second) of the ladder's base served
// by `ollama serve` on this machine, against the fixture boxd recorded:
// wall time and requests per audit (make bench; the goal is at
// most 60 s on 2 cores with the test models).
func BenchmarkAuditOllama(b *testing.B) {
	svc, o, _ := ladderSetup(b)
	req := Request{BaseURL: o.V1(), Model: audittest.Base, ClaimedModel: "boxd-tiny-chat"}
	if _, err := svc.Run(context.Background(), req, run.Env{Events: &events{}, Budget: &llmcalltest.Budget{}}); err != nil {
		b.Fatal(err) // warm: the model loaded
	}
	probes := 0
	start := time.Now()
	b.ResetTimer()
	for b.Loop() {
		rep, err := svc.Run(context.Background(), req, run.Env{Events: &events{}, Budget: &llmcalltest.Budget{}})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Verdict != VerdictPass {
			b.Fatalf("verdict %s: %v", rep.Verdict, rep.Reasons)
		}
		probes += rep.Probes.Sent
	}
	b.ReportMetric(float64(probes)/float64(b.N), "probes/audit")
	b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "s/audit")
}
