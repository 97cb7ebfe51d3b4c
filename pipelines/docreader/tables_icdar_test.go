package docreader

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"boxd/engine/mupdf"
	"boxd/engine/raster"
)

// The ICDAR 2013 table competition's measures (Göbel, Hassan, Oro and
// Orsi, "ICDAR 2013 Table Competition", ICDAR 2013, pp. 1449-1453):
//
//   - Regions: a ground-truth table's completeness is the share of its
//     words inside the detection holding most of them; a detection's
//     purity the share of its words that belong to that table. A table
//     is complete at 1, pure at 1. Under the containment rule a
//     detection is correct when its box contains a ground-truth table's
//     box and meets no other ground-truth table; each table counts once.
//   - Structure: each non-empty cell's relations with its nearest
//     non-empty neighbour to the right (in each row it spans) and below
//     (in each column it spans), compared by the cells' text
//     (normalised: lower-cased runs of letters and digits); precision
//     over the relations of every detection (a detection where there is
//     no table counts against it), recall over the ground truth's.

// icdarTable is a table as the scorer sees it: its box in pixels and
// its cells.
type icdarTable struct {
	box   raster.Box
	cells []fxCell
}

// icdarScore adds up over pages.
type icdarScore struct {
	gtTables, detections       int
	contained, erroneous       int // containment rule: tables found; detections correct for none
	complete, pure             int
	relGT, relDet, relCorrect  int
	completeness, purity       float64 // sums, for the means
	missed, split, overreached []string
}

func (s *icdarScore) add(o icdarScore) {
	s.gtTables += o.gtTables
	s.detections += o.detections
	s.contained += o.contained
	s.erroneous += o.erroneous
	s.complete += o.complete
	s.pure += o.pure
	s.relGT += o.relGT
	s.relDet += o.relDet
	s.relCorrect += o.relCorrect
	s.completeness += o.completeness
	s.purity += o.purity
	s.missed = append(s.missed, o.missed...)
	s.split = append(s.split, o.split...)
	s.overreached = append(s.overreached, o.overreached...)
}

func (s icdarScore) precision() float64 { return ratio(s.relCorrect, s.relDet) }
func (s icdarScore) recall() float64    { return ratio(s.relCorrect, s.relGT) }
func (s icdarScore) f1() float64 {
	p, r := s.precision(), s.recall()
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

func (s icdarScore) String() string {
	return fmt.Sprintf("tables %d, detections %d: containment %d correct, %d erroneous; complete %d, pure %d (mean completeness %.3f, purity %.3f); relations precision %.3f recall %.3f F1 %.3f (%d correct of %d detected, %d true)",
		s.gtTables, s.detections, s.contained, s.erroneous, s.complete, s.pure, s.completeness/math.Max(1, float64(s.gtTables)),
		s.purity/math.Max(1, float64(s.gtTables)), s.precision(), s.recall(), s.f1(), s.relCorrect, s.relDet, s.relGT)
}

// relations are a grid's adjacency relations, as "a\x00b\x00h|v" keys
// with their counts.
func relations(cells []fxCell) map[string]int {
	type slot struct{ r, c int }
	at := map[slot]int{}
	var norm []string
	for i, c := range cells {
		norm = append(norm, strings.Join(words(c.text), " "))
		if norm[i] == "" {
			continue
		}
		for r := c.r; r < c.r+max(1, c.rs); r++ {
			for k := c.c; k < c.c+max(1, c.cs); k++ {
				at[slot{r, k}] = i
			}
		}
	}
	rows, cols := 0, 0
	for s := range at {
		rows, cols = max(rows, s.r+1), max(cols, s.c+1)
	}
	out := map[string]int{}
	for i, c := range cells {
		if norm[i] == "" {
			continue
		}
		seen := map[int]bool{}
		for r := c.r; r < c.r+max(1, c.rs); r++ {
			for k := c.c + max(1, c.cs); k < cols; k++ {
				if j, ok := at[slot{r, k}]; ok && j != i {
					if !seen[j] {
						seen[j] = true
						out[norm[i]+"\x00"+norm[j]+"\x00h"]++
					}
					break
				}
			}
		}
		seen = map[int]bool{}
		for k := c.c; k < c.c+max(1, c.cs); k++ {
			for r := c.r + max(1, c.rs); r < rows; r++ {
				if j, ok := at[slot{r, k}]; ok && j != i {
					if !seen[j] {
						seen[j] = true
						out[norm[i]+"\x00"+norm[j]+"\x00v"]++
					}
					break
				}
			}
		}
	}
	return out
}

func relCount(m map[string]int) int {
	n := 0
	for _, k := range m {
		n += k
	}
	return n
}

// tokens are a table's words as a multiset.
func tokens(cells []fxCell) map[string]int {
	out := map[string]int{}
	for _, c := range cells {
		for _, w := range words(c.text) {
			out[w]++
		}
	}
	return out
}

func common(a, b map[string]int) int {
	n := 0
	for k, v := range a {
		n += min(v, b[k])
	}
	return n
}

func boxMeets(a, b raster.Box) bool {
	return min(a.X1, b.X1) > max(a.X0, b.X0) && min(a.Y1, b.Y1) > max(a.Y0, b.Y0)
}

func boxHolds(outer, inner raster.Box) bool {
	return outer.X0 <= inner.X0 && outer.Y0 <= inner.Y0 && outer.X1 >= inner.X1 && outer.Y1 >= inner.Y1
}

// scorePage scores one page's detections against its ground truth.
func scorePage(name string, gt, det []icdarTable) icdarScore {
	s := icdarScore{gtTables: len(gt), detections: len(det)}
	correctDet := make([]bool, len(det))
	detToks := make([]map[string]int, len(det))
	for i, d := range det {
		detToks[i] = tokens(d.cells)
		s.relDet += relCount(relations(d.cells))
	}
	for gi, g := range gt {
		gTok := tokens(g.cells)
		nTok := 0
		for _, v := range gTok {
			nTok += v
		}
		// Containment.
		found := false
		for di, d := range det {
			if !boxHolds(d.box, g.box) {
				continue
			}
			other := false
			for gj, h := range gt {
				if gj != gi && boxMeets(d.box, h.box) {
					other = true
				}
			}
			if !other {
				found = true
				correctDet[di] = true
			}
		}
		if found {
			s.contained++
		}
		// Completeness and purity against the detection holding most of
		// its words.
		best, bestN := -1, 0
		pieces := 0
		for di, d := range det {
			n := common(gTok, detToks[di])
			if n > 0 && boxMeets(d.box, g.box) {
				pieces++
			}
			if n > bestN {
				best, bestN = di, n
			}
		}
		gRel := relations(g.cells)
		s.relGT += relCount(gRel)
		if best < 0 {
			s.missed = append(s.missed, fmt.Sprintf("%s#%d", name, gi))
			continue
		}
		if pieces > 1 {
			s.split = append(s.split, fmt.Sprintf("%s#%d (%d pieces)", name, gi, pieces))
		}
		dn := 0
		for _, v := range detToks[best] {
			dn += v
		}
		comp, pur := float64(bestN)/float64(nTok), float64(bestN)/float64(dn)
		s.completeness += comp
		s.purity += pur
		if bestN == nTok {
			s.complete++
		}
		if bestN == dn {
			s.pure++
		} else {
			s.overreached = append(s.overreached, fmt.Sprintf("%s#%d (purity %.2f)", name, gi, pur))
		}
		s.relCorrect += common(gRel, relations(det[best].cells))
	}
	for _, ok := range correctDet {
		if !ok {
			s.erroneous++
		}
	}
	return s
}

// detectedTables are a page's table elements as the scorer sees them.
func detectedTables(pg Page) []icdarTable {
	var out []icdarTable
	idx := map[string]int{}
	for _, e := range pg.Elements {
		if e.Kind == KindTable {
			idx[e.ID] = len(out)
			b := e.BBox
			out = append(out, icdarTable{box: raster.Box{X0: float64(b[0]), Y0: float64(b[1]), X1: float64(b[0] + b[2]), Y1: float64(b[1] + b[3])}})
		}
	}
	for _, e := range pg.Elements {
		if e.Kind == KindCell && e.Cell != nil {
			if i, ok := idx[e.Cell.Table]; ok {
				out[i].cells = append(out[i].cells, fxCell{e.Cell.Row, e.Cell.Col, e.Cell.RowSpan, e.Cell.ColSpan, e.Text})
			}
		}
	}
	return out
}

// truthTables turns a fixture page's truths into scorer tables: the box
// is the rules' extent (for a table with rules) joined with the glyphs
// the text layer places inside the nominal box, in pixels.
func truthTables(t *testing.T, data []byte, truths []fxTruth) []icdarTable {
	t.Helper()
	d, err := mupdf.Open(data, "application/pdf")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	layer, err := d.Text(context.Background(), 0, Scale)
	if err != nil {
		t.Fatal(err)
	}
	var out []icdarTable
	for _, tr := range truths {
		nb := raster.Box{X0: tr.box[0] * Scale, Y0: tr.box[1] * Scale, X1: tr.box[2] * Scale, Y1: tr.box[3] * Scale}
		var box raster.Box
		if tr.ruled {
			box = raster.Box{X0: tr.rules[0]*Scale - 0.6, Y0: tr.rules[1]*Scale - 0.6, X1: tr.rules[2]*Scale + 0.6, Y1: tr.rules[3]*Scale + 0.6}
		}
		for _, c := range layer.Chars {
			if c.R == ' ' || c.Box.Empty() {
				continue
			}
			if x, y := c.Box.Center(); x >= nb.X0 && x <= nb.X1 && y >= nb.Y0 && y <= nb.Y1 {
				box = box.Union(c.Box)
			}
		}
		out = append(out, icdarTable{box: box, cells: tr.cells})
	}
	return out
}

// TestTableFixturesICDAR reads the fixture pages and scores them with
// the ICDAR 2013 measures. The floors only go up: they are the figures
// measured when they were set (see the notes below), less nothing but
// rounding.
func TestTableFixturesICDAR(t *testing.T) {
	rd := &reader{}
	var all icdarScore
	var lines []string
	for _, fp := range fxPages() {
		data, truths := fp.pdf(t)
		_, pages := read(t, rd, data)
		gt := truthTables(t, data, truths)
		det := detectedTables(pages[0])
		s := scorePage(fp.name, gt, det)
		all.add(s)
		lines = append(lines, fmt.Sprintf("%-24s %s", fp.name, s))
		if os.Getenv("BOXD_TABLE_FIXTURES") != "" {
			for i, d := range det {
				t.Logf("%s det %d box %v", fp.name, i, d.box)
				sort.Slice(d.cells, func(a, b int) bool {
					if d.cells[a].r != d.cells[b].r {
						return d.cells[a].r < d.cells[b].r
					}
					return d.cells[a].c < d.cells[b].c
				})
				for _, c := range d.cells {
					t.Logf("   r%d c%d %dx%d %q", c.r, c.c, c.rs, c.cs, c.text)
				}
			}
			for i, g := range gt {
				t.Logf("%s gt %d box %v", fp.name, i, g.box)
			}
		}
	}
	for _, l := range lines {
		t.Log(l)
	}
	t.Logf("missed %v; split %v; impure %v", all.missed, all.split, all.overreached)
	t.Logf("all: %s", all)
	if all.gtTables < 43 {
		t.Errorf("%d fixture tables, want at least 43", all.gtTables)
	}
	if all.contained < fixtureContainedFloor || all.erroneous > fixtureErroneousCeiling || all.f1() < fixtureF1Floor ||
		all.precision() < fixturePrecisionFloor || all.recall() < fixtureRecallFloor {
		t.Errorf("under the floors (containment %d, erroneous at most %d, relations precision %.2f recall %.2f F1 %.2f): %s",
			fixtureContainedFloor, fixtureErroneousCeiling, fixturePrecisionFloor, fixtureRecallFloor, fixtureF1Floor, all)
	}
}

// The fixture floors (TestTableFixturesICDAR): raised as the reader
// improves, never lowered. Before issue 35 the reader scored
// containment 3 of 31 (23 erroneous), relations precision 0.886, recall
// 0.587, F1 0.706; after it, 31 of 31 (0 erroneous), 0.994, 0.989,
// 0.992. With the held-out report's classes added (43 tables: stacked
// tables without rules, narrow tables, a header rule past the columns,
// prose just above; three more distractors), the code of issue 35
// scored 33 of 43 (4 erroneous), 0.991, 0.952, 0.972; after the fix,
// 43 of 43 (0 erroneous), 0.995, 0.991, 0.993.
const (
	fixtureContainedFloor   = 43
	fixtureErroneousCeiling = 0
	fixturePrecisionFloor   = 0.99
	fixtureRecallFloor      = 0.99
	fixtureF1Floor          = 0.99
)

// TestRelations: the adjacency relations of a small grid with a
// spanning header, and the scorer's measures on a split detection.
func TestRelations(t *testing.T) {
	cells := []fxCell{{0, 1, 1, 2, "Men"}, {1, 0, 1, 1, "Area"}, {1, 1, 1, 1, "A"}, {1, 2, 1, 1, "B"}, {2, 0, 1, 1, "x"}, {2, 1, 1, 1, "1"}, {2, 2, 1, 1, "2"}}
	got := relations(cells)
	var keys []string
	for k, n := range got {
		keys = append(keys, strings.ReplaceAll(k, "\x00", " ")+fmt.Sprintf(" %d", n))
	}
	sort.Strings(keys)
	want := "1 2 h 1|a 1 v 1|a b h 1|area a h 1|area x v 1|b 2 v 1|men a v 1|men b v 1|x 1 h 1"
	if strings.Join(keys, "|") != want {
		t.Errorf("relations\n %s\nwant\n %s", strings.Join(keys, "|"), want)
	}
	box := raster.Box{X0: 10, Y0: 10, X1: 100, Y1: 100}
	gt := []icdarTable{{box: box, cells: cells}}
	half := []icdarTable{{box: raster.Box{X0: 10, Y0: 10, X1: 100, Y1: 50}, cells: cells[:4]}, {box: raster.Box{X0: 10, Y0: 50, X1: 100, Y1: 100}, cells: cells[4:]}}
	s := scorePage("t", gt, half)
	if s.contained != 0 || s.erroneous != 2 || s.complete != 0 || len(s.split) != 1 {
		t.Errorf("split: %s", s)
	}
	s = scorePage("t", gt, []icdarTable{{box: raster.Box{X0: 9, Y0: 9, X1: 101, Y1: 101}, cells: cells}})
	if s.contained != 1 || s.erroneous != 0 || s.f1() != 1 {
		t.Errorf("whole: %s", s)
	}
}
