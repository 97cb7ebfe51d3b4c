package guard

import "testing"

// TestConnTotal: the connection limit is the setting, capped (and, for
// 0, given) by the file limit; at least 16.
func TestConnTotal(t *testing.T) {
	for _, c := range []struct {
		setting int
		nofile  uint64
		want    int
	}{{0, 1200, 472}, {0, 1024, 384}, {100, 1200, 100}, {5000, 1200, 472}, {0, 100, 16}, {0, 0, 16}, {0, 1 << 20, (1<<20 - 256) / 2}} {
		if got := connTotal(c.setting, c.nofile); got != c.want {
			t.Errorf("connTotal(%d, %d) = %d, want %d", c.setting, c.nofile, got, c.want)
		}
	}
	if fileLimit() == 0 {
		t.Error("RLIMIT_NOFILE not read")
	}
}
