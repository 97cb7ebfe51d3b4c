package a11y

import (
	"fmt"
	"strings"
	"testing"

	"boxd/pipelines/a11y/findings"
)

// TestFindingsBounded: an audit lists at most MaxFindings findings, the
// first (highest in priority), and says how many it left out; a list
// under the bound is kept whole and says nothing.
func TestFindingsBounded(t *testing.T) {
	var fs []findings.Finding
	for i := range 100_000 {
		fs = append(fs, findings.Finding{Priority: "P1", Title: fmt.Sprint(i)})
	}
	got, cut := bound(fs, MaxFindings, "findings")
	if len(got) != MaxFindings || got[0].Title != "0" || got[MaxFindings-1].Title != fmt.Sprint(MaxFindings-1) {
		t.Fatalf("%d kept", len(got))
	}
	if !strings.Contains(cut, "first 500 of 100000") || !strings.Contains(cut, "other 99500") {
		t.Errorf("cut: %q", cut)
	}
	if got, cut := bound(fs[:10], MaxFindings, "findings"); len(got) != 10 || cut != "" {
		t.Errorf("under the bound: %d, %q", len(got), cut)
	}
}
