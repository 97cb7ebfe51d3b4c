package markup

import (
	"testing"
)

func TestCoordOK(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want bool
	}{
		{"0", 90, true},
		{"-0", 90, true},
		{"45.5152", 90, true},
		{"90", 90, true},
		{"90.000", 90, true},
		{"-90", 90, true},
		{"90.0001", 90, false},
		{"91", 90, false},
		{"180", 180, true},
		{"-180.5", 180, false},
		{"00000179.9", 180, true},
		{"1000", 180, false},
		{"1e2", 180, false},
		{"+45", 90, false},
		{"45.", 90, false},
		{".5", 90, false},
		{"", 90, false},
	}
	for _, c := range cases {
		if got := coordOK(c.in, c.max); got != c.want {
			t.Errorf("coordOK(%q, %d) = %v, want %v", c.in, c.max, got, c.want)
		}
	}
}
