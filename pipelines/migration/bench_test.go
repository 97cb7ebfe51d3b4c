package migration

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"boxd/internal/run"
	"boxd/pipelines/llmcall/llmcalltest"
	"boxd/pipelines/migration/scoring"
)

type quiet struct{}

func (quiet) Emit(string, any)     {}
func (quiet) End(string, any) bool { return true }

// request200 is a check of 200 examples of the task.
func request200(task scoring.Task, output string) Request {
	r := Request{Task: task, Prompt: Prompt{System: "Answer briefly.", Template: "Question {{input}}"},
		Incumbent: Incumbent{Model: "gpt-4o-mini"}, MaxOutputTokens: 16}
	for i := range 200 {
		in, _ := json.Marshal(fmt.Sprintf("number %d", i))
		r.Examples = append(r.Examples, Example{ID: fmt.Sprint(i), Input: in, Output: output})
	}
	return r
}

// BenchmarkScoreExact200 and BenchmarkScoreJSON200: a whole check of 200
// examples on the tiny chat model (calls, scoring, summary, the signed
// record), as examples scored a second.
func BenchmarkScoreExact200(b *testing.B) {
	benchRun(b, request200(scoring.Task{Type: scoring.TaskExact}, "Paris"))
}

func BenchmarkScoreJSON200(b *testing.B) {
	benchRun(b, request200(scoring.Task{Type: scoring.TaskJSON, Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"n":{"type":"integer"}},"required":["city","n"]}`)}, `{"city":"Paris","n":1}`))
}

func benchRun(b *testing.B, req Request) *Report {
	s, _ := service(b)
	if err := s.Validate(&req); err != nil {
		b.Fatal(err)
	}
	var rep *Report
	start := time.Now()
	for b.Loop() {
		var err error
		rep, err = s.Run(context.Background(), req, run.Env{Events: quiet{}, Budget: &llmcalltest.Budget{}})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(req.Examples)*b.N)/time.Since(start).Seconds(), "examples/s")
	return rep
}

// BenchmarkVerify200: POST /migration/verify's work on the record of a
// 200-example check (chain, signature, 200 receipts, rescoring, the
// summary's 10,000-resample bootstrap recomputed).
func BenchmarkVerify200(b *testing.B) {
	s, key := service(b)
	req := request200(scoring.Task{Type: scoring.TaskExact}, "Paris")
	if err := s.Validate(&req); err != nil {
		b.Fatal(err)
	}
	rep, err := s.Run(context.Background(), req, run.Env{Events: quiet{}, Budget: &llmcalltest.Budget{}})
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := json.Marshal(rep.Report)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if v := Verify(raw, key.PublicKey()); !v.OK {
			b.Fatalf("%+v", v)
		}
	}
}
