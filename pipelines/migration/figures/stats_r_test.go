package figures

// The oracle: the intervals and percentiles of stats.go against R itself
// (prop.test, binom.test and quantile of R's stats package), run once per
// test through Rscript.

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rTolerance is the largest difference from R accepted for any figure.
const rTolerance = 1e-9

// runR runs script with Rscript under a 60-second timeout and returns its
// standard output. Without Rscript the test fails on CI and is skipped
// elsewhere.
func runR(t *testing.T, script string) string {
	t.Helper()
	path, err := exec.LookPath("Rscript")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Rscript not found (install r-base-core, `make deps`): %v", err)
		}
		t.Skipf("Rscript not found; install r-base-core to check the statistics against R: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	f, err := os.CreateTemp(t.TempDir(), "oracle-*.R")
	if err != nil {
		t.Fatalf("write R script: %v", err)
	}
	if _, err := f.WriteString(script); err != nil {
		t.Fatalf("write R script: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("write R script: %v", err)
	}
	cmd := exec.CommandContext(ctx, path, "--vanilla", f.Name())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("Rscript: %v\nstderr:\n%s", err, stderr.String())
	}
	return string(out)
}

// rFields parses R's output lines that start with tag into their remaining
// fields, as float64.
func rFields(t *testing.T, out, tag string, width int) [][]float64 {
	t.Helper()
	var rows [][]float64
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != tag {
			continue
		}
		if len(fields) != width+1 {
			t.Fatalf("R line %q: want %d fields after %s", sc.Text(), width, tag)
		}
		row := make([]float64, width)
		for i, s := range fields[1:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("R line %q: %v", sc.Text(), err)
			}
			row[i] = v
		}
		rows = append(rows, row)
	}
	return rows
}

// oracleGrid is the (k, n) pairs checked against R: for each n, k in
// {0, 1, 2, n/2, n−1, n} ∩ [0, n], plus a few pairs off that pattern.
func oracleGrid() [][2]int {
	var grid [][2]int
	for _, n := range []int{1, 2, 3, 5, 10, 17, 40, 100, 200} {
		var ks []int
		for _, k := range []int{0, 1, 2, n / 2, n - 1, n} {
			if k >= 0 && k <= n && !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
		}
		for _, k := range ks {
			grid = append(grid, [2]int{k, n})
		}
	}
	return append(grid, [][2]int{{3, 7}, {19, 20}, {37, 40}, {95, 100}, {180, 200}, {499, 500}, {1, 1000}, {970, 1000}}...)
}

func TestIntervalsMatchR(t *testing.T) {
	grid := oracleGrid()
	var ks, ns []string
	for _, kn := range grid {
		ks = append(ks, strconv.Itoa(kn[0]))
		ns = append(ns, strconv.Itoa(kn[1]))
	}
	script := fmt.Sprintf(`ks <- c(%s)
ns <- c(%s)
for (i in seq_along(ks)) {
  k <- ks[i]; n <- ns[i]
  w <- suppressWarnings(prop.test(k, n, correct = FALSE))$conf.int
  b <- binom.test(k, n)$conf.int
  cat("I", k, n, sprintf("%%.17g", c(w[1], w[2], b[1], b[2])), "\n")
}
`, strings.Join(ks, ", "), strings.Join(ns, ", "))
	rows := rFields(t, runR(t, script), "I", 6)
	if len(rows) != len(grid) {
		t.Fatalf("R gave %d intervals, want %d", len(rows), len(grid))
	}
	for i, row := range rows {
		k, n := grid[i][0], grid[i][1]
		if int(row[0]) != k || int(row[1]) != n {
			t.Fatalf("R row %d is for %g/%g, want %d/%d", i, row[0], row[1], k, n)
		}
		for _, c := range []struct {
			name string
			got  Interval
			want Interval
		}{
			{"Wilson", Wilson(k, n), Interval{row[2], row[3]}},
			{"ClopperPearson", ClopperPearson(k, n), Interval{row[4], row[5]}},
		} {
			if math.Abs(c.got.Lo-c.want.Lo) > rTolerance || math.Abs(c.got.Hi-c.want.Hi) > rTolerance {
				t.Errorf("%s(%d, %d) = [%.17g, %.17g], R gives [%.17g, %.17g]",
					c.name, k, n, c.got.Lo, c.got.Hi, c.want.Lo, c.want.Hi)
			}
		}
	}
}

func TestPercentileMatchesR(t *testing.T) {
	vectors := [][]float64{
		{3.5, -1, 2, 8.25, 0, 2, 11, 4.75, 6, -3.5, 9, 1},
		{0.91, 0.87, 0.95, 0.99, 0.5, 0.78, 0.83},
		{1e-3, 250, 17, 17, 42.125, 3, 1000, 0.5, 64, 8, 2, 128, 99, 5, 31, 7, 11},
	}
	probs := []float64{0.5, 0.95}
	var b strings.Builder
	for i, v := range vectors {
		parts := make([]string, len(v))
		for j, x := range v {
			parts[j] = strconv.FormatFloat(x, 'g', 17, 64)
		}
		fmt.Fprintf(&b, "x <- c(%s)\n", strings.Join(parts, ", "))
		for _, p := range probs {
			fmt.Fprintf(&b, "cat(\"Q\", %d, %g, sprintf(\"%%.17g\", unname(quantile(x, %g, type = 7))), \"\\n\")\n", i, p, p)
		}
	}
	rows := rFields(t, runR(t, b.String()), "Q", 3)
	if len(rows) != len(vectors)*len(probs) {
		t.Fatalf("R gave %d percentiles, want %d", len(rows), len(vectors)*len(probs))
	}
	for _, row := range rows {
		v, p, want := vectors[int(row[0])], row[1], row[2]
		if got := Percentile(v, p); math.Abs(got-want) > rTolerance {
			t.Errorf("Percentile(vector %d, %g) = %.17g, R gives %.17g", int(row[0]), p, got, want)
		}
	}
}
