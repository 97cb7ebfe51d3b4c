package verticals_test

import (
	"os"
	"strings"
	"testing"

	"boxd/pipelines/live/verticals"
)

func TestVerticals(t *testing.T) {
	vs, err := verticals.Build(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "clinical") || vs["clinical"] != nil || len(vs) != 3 {
		t.Errorf("without tables: %v, %d verticals", err, len(vs))
	}
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("BOXD_TEST_DATA is not set (the Makefile sets it)")
		}
		t.Skip("BOXD_TEST_DATA is not set; run through make")
	}
	vs, err = verticals.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"clinical", "sales", "field", "translate"} {
		v := vs[id]
		if v == nil || v.ID != id || len(v.Live) == 0 || v.Summary == nil {
			t.Errorf("%s: %+v", id, v)
		}
	}
}
