package score

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func readFixture(t *testing.T) (ref, sys []Segment, dir string) {
	t.Helper()
	data := os.Getenv("BOXD_TEST_DATA")
	if data == "" {
		t.Skip("BOXD_TEST_DATA is not set; it names the shared data folder holding dscore-fixtures (source /tmp/goenv.sh)")
	}
	dir = filepath.Join(data, "dscore-fixtures")
	load := func(name string) []Segment {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		segs, err := ReadRTTM(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return segs
	}
	return load("ref.rttm"), load("sys.rttm"), dir
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6f, want %.6f (±%g)", what, got, want, tol)
	}
}

// TestDscoreFixture reproduces dscore's own test (scorelib/tests/
// test_score.py) and md-eval-22.pl's times on the same files.
func TestDscoreFixture(t *testing.T) {
	ref, sys, dir := readFixture(t)
	if len(ref) != 13 || len(sys) != 11 {
		t.Fatalf("read %d reference and %d system segments, want 13 and 11", len(ref), len(sys))
	}

	// dscore's test_score: UEM FILE1 [0, 43), no collar, overlaps scored.
	o := Options{UEM: UEM{"FILE1": {{0, 43}}}}
	s, err := Score(ref, sys, o)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "DER", s.DER, 26.39309, 1e-4)
	near(t, "JER", s.JER, 33.24631, 1e-4)
	files, err := ScoreFiles(ref, sys, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("ScoreFiles gave %d files, want 1", len(files))
	}
	near(t, "FILE1 DER", files["FILE1"].DER, 26.39309, 1e-4)
	near(t, "FILE1 JER", files["FILE1"].JER, 33.24631, 1e-4)

	// md-eval-22.pl's times on these files, by collar and -1 (the UEM
	// dscore derives: FILE1 0-41.046).
	for _, c := range []struct {
		o                           Options
		scored, miss, fa, conf, der float64
	}{
		{Options{}, 31.046, 3.726, 1.043, 3.425, 26.3931},
		{Options{Collar: 0.25}, 22.531, 2.230, 0.404, 2.776, 24.01136},
		{Options{IgnoreOverlaps: true}, 24.268, 1.200, 1.043, 3.425, 23.35586},
		{Options{Collar: 0.1, IgnoreOverlaps: true}, 21.816, 0.938, 0.704, 3.225, 22.30931},
	} {
		s, err := Score(ref, sys, c.o)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "scored", s.Scored, c.scored, 1e-6)
		near(t, "miss", s.Miss, c.miss, 1e-6)
		near(t, "false alarm", s.FalseAlarm, c.fa, 1e-6)
		near(t, "confusion", s.Confusion, c.conf, 1e-6)
		near(t, "DER", s.DER, c.der, 1e-4)
	}

	// test_load.uem: FILE1 0-15 and 25-30.4, FILE2 (no turns) 4.5-13.24;
	// md-eval on the turns cut to it.
	f, err := os.Open(filepath.Join(dir, "test_load.uem"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u, err := ReadUEM(f)
	if err != nil {
		t.Fatal(err)
	}
	want := UEM{"FILE1": {{0, 15}, {25, 30.4}}, "FILE2": {{4.5, 13.24}}}
	if len(u) != 2 || len(u["FILE1"]) != 2 || u["FILE1"][1] != want["FILE1"][1] || u["FILE2"][0] != want["FILE2"][0] {
		t.Fatalf("test_load.uem read as %v, want %v", u, want)
	}
	s, err = Score(ref, sys, Options{UEM: u})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "scored", s.Scored, 13.789, 1e-6)
	near(t, "miss", s.Miss, 0.311, 1e-6)
	near(t, "false alarm", s.FalseAlarm, 0.565, 1e-6)
	near(t, "confusion", s.Confusion, 0.457, 1e-6)
	files, err = ScoreFiles(ref, sys, Options{UEM: u})
	if err != nil {
		t.Fatal(err)
	}
	if fs, ok := files["FILE2"]; !ok || fs.DER != 0 || fs.JER != 0 {
		t.Errorf("FILE2 (no turns) scored %+v (present %v), want DER 0 and JER 0", fs, ok)
	}
}

func seg(file, spk string, start, end float64) Segment {
	return Segment{File: file, Speaker: spk, Start: start, End: end}
}

// TestScoreByHand checks cases worked out by hand.
func TestScoreByHand(t *testing.T) {
	two := []Segment{seg("f", "A", 0, 10), seg("f", "B", 10, 20)}
	overlap := []Segment{seg("f", "A", 0, 10), seg("f", "B", 5, 15)}
	nan := math.NaN() // not checked
	for _, c := range []struct {
		name                string
		ref, sys            []Segment
		o                   Options
		der, jer            float64
		scored, miss, fa, e float64
	}{
		{"perfect match, other names", two, []Segment{seg("f", "X", 0, 10), seg("f", "Y", 10, 20)}, Options{}, 0, 0, 20, 0, 0, 0},
		{"all missed", two, nil, Options{}, 100, 100, 20, 20, 0, 0},
		{"labels swapped", two, []Segment{seg("f", "B", 0, 10), seg("f", "A", 10, 20)}, Options{}, 0, 0, 20, 0, 0, 0},
		// Y should start at 10: one second confused. JER: A~X 1-10/11, B~Y 1-9/10.
		{"late change", two, []Segment{seg("f", "X", 0, 11), seg("f", "Y", 11, 20)}, Options{}, 5, 100 * (1.0/11 + 0.1) / 2, 20, 0, 0, 1},
		// Collar 0.5: scored 0.5-9.5 and 10.5-19.5; 10.5-11 confused.
		{"collar half", two, []Segment{seg("f", "X", 0, 11), seg("f", "Y", 11, 20)}, Options{Collar: 0.5}, 100 * 0.5 / 18, nan, 18, 0, 0, 0.5},
		// Collar 1: the error lies in the 9-11 zone.
		{"collar covers error", two, []Segment{seg("f", "X", 0, 11), seg("f", "Y", 11, 20)}, Options{Collar: 1}, 0, nan, 16, 0, 0, 0},
		// 5-10 both speak, the system nobody.
		{"overlap scored", overlap, []Segment{seg("f", "X", 0, 5), seg("f", "Y", 10, 15)}, Options{}, 50, 50, 20, 10, 0, 0},
		{"overlap ignored", overlap, []Segment{seg("f", "X", 0, 5), seg("f", "Y", 10, 15)}, Options{IgnoreOverlaps: true}, 0, 50, 10, 0, 0, 0},
		// JER: X fits A or B at 1-10/20; the other two are unmapped.
		{"unmapped reference", append(two[:2:2], seg("f", "C", 20, 30)), []Segment{seg("f", "X", 0, 20)}, Options{}, 100 * 20.0 / 30, 100 * (0.5 + 1 + 1) / 3, 30, 10, 0, 10},
		// An unmapped system speaker costs JER nothing, DER a false alarm.
		{"extra system speaker", two[:1], []Segment{seg("f", "X", 0, 10), seg("f", "Y", 10, 20)}, Options{}, 100, 0, 10, 0, 10, 0},
		// The UEM cuts the system turn to 5-10.
		{"uem cuts", two[:1], []Segment{seg("f", "X", 5, 15)}, Options{UEM: UEM{"f": {{0, 10}}}}, 50, 50, 10, 5, 0, 0},
		// md-eval leaves out files without reference turns.
		{"file without reference", two[:1], []Segment{seg("f", "X", 0, 10), seg("g", "Y", 0, 5)}, Options{}, 0, 0, 10, 0, 0, 0},
		// Times go to md-eval to the millisecond: 0-1.000 against 0-1.001.
		{"millisecond rounding", []Segment{seg("f", "A", 0, 1.0004)}, []Segment{seg("f", "X", 0, 1.0006)}, Options{}, 0.1, nan, 1, 0, 0.001, 0},
		// A speaker's overlapping turns merge; times count once.
		{"self overlap", []Segment{seg("f", "A", 0, 6), seg("f", "A", 4, 10)}, []Segment{seg("f", "X", 0, 10)}, Options{}, 0, 0, 10, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Score(c.ref, c.sys, c.o)
			if err != nil {
				t.Fatal(err)
			}
			near(t, "DER", s.DER, c.der, 1e-9)
			if !math.IsNaN(c.jer) {
				near(t, "JER", s.JER, c.jer, 0.05) // a frame either way
			}
			near(t, "scored", s.Scored, c.scored, 1e-9)
			near(t, "miss", s.Miss, c.miss, 1e-9)
			near(t, "false alarm", s.FalseAlarm, c.fa, 1e-9)
			near(t, "confusion", s.Confusion, c.e, 1e-9)
		})
	}
}

func TestScoreFilesWithoutReference(t *testing.T) {
	files, err := ScoreFiles([]Segment{seg("f", "A", 0, 10)}, []Segment{seg("f", "X", 0, 10), seg("g", "Y", 0, 5)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g := files["g"]; g.DER != 100 || g.JER != 100 {
		t.Errorf("file g (system only) = %+v, want DER and JER 100 as dscore reports", g)
	}
	if f := files["f"]; f.DER != 0 || f.JER != 0 {
		t.Errorf("file f = %+v, want 0", f)
	}
}

func TestScoreRejects(t *testing.T) {
	good := []Segment{seg("f", "A", 0, 1)}
	for name, c := range map[string]struct {
		ref []Segment
		o   Options
	}{
		"negative collar": {good, Options{Collar: -1}},
		"NaN collar":      {good, Options{Collar: math.NaN()}},
		"end before start": {
			[]Segment{seg("f", "A", 2, 1)}, Options{}},
		"no speaker":   {[]Segment{seg("f", "", 0, 1)}, Options{}},
		"bad uem":      {good, Options{UEM: UEM{"f": {{3, 1}}}}},
		"negative uem": {good, Options{UEM: UEM{"f": {{-1, 1}}}}},
	} {
		if _, err := Score(c.ref, good, c.o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestAssign checks the Hungarian method against every assignment.
func TestAssign(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 300 {
		n, m := 1+r.IntN(5), 1+r.IntN(5)
		cost := make([][]float64, n)
		for i := range cost {
			cost[i] = make([]float64, m)
			for j := range cost[i] {
				cost[i][j] = float64(r.IntN(10)) - 3
			}
		}
		got := assign(cost)
		total, used := 0.0, map[int]bool{}
		pairs := 0
		for i, j := range got {
			if j < 0 {
				continue
			}
			if used[j] {
				t.Fatalf("column %d used twice: %v", j, got)
			}
			used[j] = true
			total += cost[i][j]
			pairs++
		}
		if pairs != min(n, m) {
			t.Fatalf("%d pairs, want %d", pairs, min(n, m))
		}
		if best := bruteAssign(cost, 0, map[int]bool{}, min(n, m)); math.Abs(total-best) > 1e-9 {
			t.Fatalf("cost %v: total %v, best %v", cost, total, best)
		}
	}
}

// bruteAssign is the least cost pairing exactly k of rows i.. with unused
// columns.
func bruteAssign(cost [][]float64, i int, used map[int]bool, k int) float64 {
	if k == 0 {
		return 0
	}
	if len(cost)-i < k {
		return math.Inf(1)
	}
	best := bruteAssign(cost, i+1, used, k) // row i unpaired
	for j := range cost[i] {
		if used[j] {
			continue
		}
		used[j] = true
		best = min(best, cost[i][j]+bruteAssign(cost, i+1, used, k-1))
		used[j] = false
	}
	return best
}

func TestIntervals(t *testing.T) {
	a := merge([]span{{5, 8}, {0, 2}, {2, 3}, {7, 9}}, true)
	if len(a) != 2 || a[0] != (span{0, 3}) || a[1] != (span{5, 9}) {
		t.Fatalf("merge = %v", a)
	}
	d := subtract(a, []span{{1, 2}, {6, 7}, {8.5, 20}})
	want := []span{{0, 1}, {2, 3}, {5, 6}, {7, 8.5}}
	if len(d) != len(want) {
		t.Fatalf("subtract = %v, want %v", d, want)
	}
	for i := range want {
		if d[i] != want[i] {
			t.Fatalf("subtract = %v, want %v", d, want)
		}
	}
	if n := length(intersect(a, []span{{1, 6}})); n != 3 {
		t.Errorf("intersection length = %v, want 3", n)
	}
	if c := covered([]span{{0, 4}, {2, 6}, {3, 5}}, 2); len(c) != 1 || c[0] != (span{2, 5}) {
		t.Errorf("covered = %v, want [[2 5]]", c)
	}
	if m := merge([]span{{2, 3}, {0, 2}, {1, 1.5}}, false); len(m) != 2 || m[0] != (span{0, 2}) {
		t.Errorf("merge = %v: overlapping spans should merge, touching ones stay apart", m)
	}
}
