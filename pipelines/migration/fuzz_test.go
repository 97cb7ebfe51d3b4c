package migration

import (
	"context"
	"encoding/json"
	"testing"

	"boxd/internal/run"
	"boxd/pipelines/llmcall/llmcalltest"
)

// FuzzVerify: any bytes given as a record verify or fail without a panic,
// and a record that verifies has a recomputation without diffs.
func FuzzVerify(f *testing.F) {
	s, key := service(f)
	req := sample(f, "ticket-label")
	if err := s.Validate(&req); err != nil {
		f.Fatal(err)
	}
	rep, err := s.Run(context.Background(), req, run.Env{Events: quiet{}, Budget: &llmcalltest.Budget{}})
	if err != nil {
		f.Fatal(err)
	}
	raw, _ := json.Marshal(rep.Report)
	f.Add(raw)
	f.Add([]byte(`{"format":"service.record.v1","kind":"migration-check","entries":[{"type":"params","data":{"resamples":"999999999"}}]}`))
	f.Add([]byte(`{"kind":"migration-check","entries":[]}`))
	pub := key.PublicKey()
	f.Fuzz(func(t *testing.T, b []byte) {
		v := Verify(b, pub)
		if v.OK && (!v.Recompute.OK || len(v.Recompute.Diffs) != 0) {
			t.Fatalf("ok with diffs: %+v", v.Recompute)
		}
	})
}
