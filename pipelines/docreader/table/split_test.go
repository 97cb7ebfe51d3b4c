package table

import (
	"fmt"
	"testing"
)

// TestFigure: what counts as a figure in a cell, and what a cell holds.
func TestFigure(t *testing.T) {
	for _, c := range []struct {
		w    string
		want bool
	}{
		{"4,819", true}, {"12.5", true}, {"(3.2)", true}, {"-7", true}, {"$25.00", true}, {"48%", true}, {"1.", true}, {"2019", true},
		{"Q1", false}, {"12B", false}, {"555-0187", false}, {"12/03/1968", false}, {",5", false}, {"Total", false}, {"-", false}, {"", false},
	} {
		if got := figure(c.w); got != c.want {
			t.Errorf("figure(%q) = %v, want %v", c.w, got, c.want)
		}
	}
	for _, c := range []struct {
		ws   []string
		want int
	}{
		{nil, 0}, {[]string{"–"}, 0}, {[]string{"12.3", "(4.5)"}, 1}, {[]string{"12", "cases"}, 2}, {[]string{"Visits"}, 2},
	} {
		if got := cellKind(c.ws); got != c.want {
			t.Errorf("cellKind(%q) = %d, want %d", c.ws, got, c.want)
		}
	}
}

// drawRows draws rows of one-word cells, the first column left-aligned
// at xs[0] and the others right-aligned at xs[i], each row pitch pixels
// under the last (a blank row where a row is nil); the words, and the y
// under the last row.
func (p *page) drawRows(words []Word, xs []int, y, pitch int, rows [][]string) ([]Word, int) {
	for _, r := range rows {
		for c, s := range r {
			if s == "" {
				continue
			}
			x := xs[c]
			if c > 0 {
				x -= 10*len(s) - 2
			}
			words = append(words, p.word(s, x, y))
		}
		y += pitch
	}
	return words, y
}

// figs are n rows of a label and k figures, from a seed.
func figs(seed, n, k int) [][]string {
	labels := []string{"Harbour", "Mill", "Castle", "Station", "Quarry", "Bridge", "Market", "Abbey"}
	var out [][]string
	for i := range n {
		row := []string{labels[(seed+i)%len(labels)]}
		for j := range k {
			v := (seed*7919 + i*104729 + j*1299709) % 9000
			row = append(row, fmt.Sprintf("%d,%03d", 1+v/1000, v%1000))
		}
		out = append(out, row)
	}
	return out
}

// TestFindNarrowAndStacked: tables without rules or caption of two
// columns (a label and a figure) are tables; a table of contents (page
// numbers that never go down) and a printed form ("Label:" lines) are
// not. Two such tables a blank band apart (under twice the row pitch)
// are two, whether their columns differ or only a header of its own
// starts the second; row groups parted by blank rows, and a header
// parted from its body by one, stay one table.
func TestFindNarrowAndStacked(t *testing.T) {
	const pitch = 24
	find := func(build func(p *page) []Word) []Table {
		p := newPage(1000, 900)
		return Find(p.Image, build(p))
	}
	shape := func(ts []Table) string {
		s := ""
		for _, tb := range ts {
			s += fmt.Sprintf("[%d×%d %d words]", tb.Rows, tb.Cols, len(tb.Words))
		}
		return s
	}
	for _, c := range []struct {
		name  string
		build func(p *page) []Word
		want  string
	}{
		{"two columns", func(p *page) []Word {
			ws, _ := p.drawRows(nil, []int{100, 380}, 100, pitch, append([][]string{{"Site", "Visits"}}, figs(1, 6, 1)...))
			return ws
		}, "[7×2 14 words]"},
		{"three columns", func(p *page) []Word {
			ws, _ := p.drawRows(nil, []int{100, 380, 520}, 100, pitch, append([][]string{{"Site", "Visits", "Referrals"}}, figs(2, 5, 2)...))
			return ws
		}, "[6×3 18 words]"},
		{"contents", func(p *page) []Word {
			ws, _ := p.drawRows(nil, []int{100, 900}, 100, pitch, [][]string{{"Foreword", "2"}, {"Scope", "5"}, {"Terms", "6"}, {"Sampling", "11"}, {"Frames", "12"}, {"Annex", "33"}})
			return ws
		}, ""},
		{"printed form", func(p *page) []Word {
			ws, _ := p.drawRows(nil, []int{100, 380}, 100, pitch, [][]string{{"Amount:", "312.40"}, {"Fee:", "25.00"}, {"Balance:", "1,204"}, {"Account:", "4017"}, {"Office:", "2,210"}})
			return ws
		}, ""},
		{"stacked, other columns", func(p *page) []Word {
			ws, y := p.drawRows(nil, []int{100, 300, 450, 600}, 100, pitch, append([][]string{{"Ward", "Beds", "Days", "Rate"}}, figs(3, 4, 3)...))
			ws, _ = p.drawRows(ws, []int{100, 380, 600}, y+22, pitch, append([][]string{{"Unit", "Staff", "Posts"}}, figs(4, 4, 2)...))
			return ws
		}, "[5×4 20 words][5×3 15 words]"},
		{"stacked, same columns", func(p *page) []Word {
			ws, y := p.drawRows(nil, []int{100, 300, 450, 600}, 100, pitch, append([][]string{{"Ward", "Beds", "Days", "Rate"}}, figs(5, 4, 3)...))
			ws, _ = p.drawRows(ws, []int{100, 300, 450, 600}, y+22, pitch, append([][]string{{"Office", "Staff", "Posts", "Left"}}, figs(6, 4, 3)...))
			return ws
		}, "[5×4 20 words][5×4 20 words]"},
		{"row groups", func(p *page) []Word {
			rows := append([][]string{{"Course", "Applied", "Taken", "Rate"}}, figs(7, 3, 3)...)
			rows = append(append(append(rows, nil), figs(8, 3, 3)...), nil)
			ws, _ := p.drawRows(nil, []int{100, 300, 450, 600}, 100, pitch, append(rows, figs(9, 3, 3)...))
			return ws
		}, "[10×4 40 words]"},
		{"header over a blank row", func(p *page) []Word {
			rows := [][]string{{"", "Spring", "", "Autumn"}, {"Course", "Applied", "Taken", "Applied"}, nil}
			ws, _ := p.drawRows(nil, []int{100, 300, 450, 600}, 100, pitch, append(rows, figs(10, 4, 3)...))
			return ws
		}, "[6×4 22 words]"},
	} {
		if got := shape(find(c.build)); got != c.want {
			t.Errorf("%s: tables %s, want %s", c.name, got, c.want)
		}
	}
}

// TestLinelessBoxHoldsRule: a table without rules but the one under its
// header, which runs past its columns: the table's box holds the rule,
// and the header is a row of its own; a descender of the line over a
// short last line of prose just above (in that line's height) does not
// make the prose line a row of the table.
func TestLinelessBoxHoldsRule(t *testing.T) {
	p := newPage(1000, 700)
	words, y := p.drawRows(nil, []int{100, 380, 520}, 100, 24, [][]string{{"Site", "Visits", "Cases"}})
	p.fill(80, y-6, 560, y-4)
	words, _ = p.drawRows(words, []int{100, 380, 520}, y, 24, figs(1, 5, 2))
	ts := Find(p.Image, words)
	if len(ts) != 1 {
		t.Fatalf("%d tables", len(ts))
	}
	if b := ts[0].Box; b.X0 > 80 || b.X1 < 560 || ts[0].Rows != 6 {
		t.Errorf("table box %+v (%d rows), want it to hold the rule from 80 to 560 and 6 rows", b, ts[0].Rows)
	}
}
