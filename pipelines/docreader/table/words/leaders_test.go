package words

import (
	"strings"
	"testing"

	"boxd/engine/raster"
)

// tocWords lays out lines as words 20 pixels high: each line is its
// words at x, separated by a space of 8 pixels, 10 pixels a character;
// a line given with a right edge has its last word ending there, and
// dots filling the space before it.
func tocWords(lines []struct {
	x, y, right float64
	text        string
}) []Word {
	var out []Word
	for _, l := range lines {
		fs := strings.Fields(l.text)
		x := l.x
		for i, f := range fs {
			w := float64(10 * len([]rune(f)))
			if i == len(fs)-1 && l.right > 0 {
				// Leader dots fill the line up to the reference.
				for x+18 <= l.right-w-8 {
					out = append(out, Word{Text: ".", Box: raster.Box{X0: x, Y0: l.y, X1: x + 10, Y1: l.y + 20}})
					x += 18
				}
				x = l.right - w
			}
			out = append(out, Word{Text: f, Box: raster.Box{X0: x, Y0: l.y, X1: x + w, Y1: l.y + 20}})
			x += w + 8
		}
	}
	return out
}

// TestFindLeaders: a table of contents (dots as separate words, dots
// trailing a title, a dot riding on the reference, roman numerals,
// section numbers) is a two-column table, a row a line; a heading line
// without a reference ends it; lines in a neighbouring column do not
// join it; two leader lines are too few; prose ending in a number, a
// line of dots with no title and a reference that is a word are not
// leader lines.
func TestFindLeaders(t *testing.T) {
	type ln = struct {
		x, y, right float64
		text        string
	}
	words := tocWords([]ln{
		{100, 100, 900, "Notices . . . . . . . . . vii"},
		{100, 130, 900, "Trademarks. . . . . . . . viii"},
		{1000, 130, 0, "a neighbouring column of prose text"},
		{100, 160, 900, "1.1 Security fundamentals . . . . . . .2"},
		{100, 190, 900, "Appendix . . . . . . A-1"},
		{100, 240, 0, "Chapter headings end the table"},
		{100, 280, 900, "Index . . . . . . 40"},
		{100, 310, 900, "Glossary . . . . . . 44"},
		{100, 400, 0, "In 2014 we counted 12"},
		{100, 430, 900, ". . . . . . 12"},
		{100, 460, 900, "Title . . . . . . . chapter"},
	})
	got := FindLeaders(words, make([]bool, len(words)))
	if len(got) != 1 {
		t.Fatalf("%d tables: %+v", len(got), got)
	}
	tb := got[0]
	if tb.Rows != 4 || tb.Cols != 2 || tb.Method != Leaders || len(tb.Cells) != 8 {
		t.Fatalf("table %d × %d %s, %d cells", tb.Rows, tb.Cols, tb.Method, len(tb.Cells))
	}
	text := func(c Cell) string {
		var parts []string
		for _, i := range c.Words {
			parts = append(parts, words[i].Text)
		}
		return strings.Join(parts, " ")
	}
	want := [][2]string{{"Notices . . . . . . . . .", "vii"}, {"Trademarks. . . . . . . .", "viii"},
		{"1.1 Security fundamentals . . . . . .", ".2"}, {"Appendix . . . . . .", "A-1"}}
	for r, w := range want {
		if c0, c1 := tb.Cells[2*r], tb.Cells[2*r+1]; !strings.HasPrefix(text(c0), w[0]) || strings.Trim(text(c0), ". ") != strings.Trim(w[0], ". ") || text(c1) != w[1] || c0.Row != r || c1.Col != 1 {
			t.Errorf("row %d: %q | %q, want %q | %q", r, text(c0), text(c1), w[0], w[1])
		}
	}
	for _, i := range tb.Words {
		if strings.Contains(words[i].Text, "neighbouring") || strings.Contains(words[i].Text, "Chapter") {
			t.Errorf("%q is in the table", words[i].Text)
		}
	}
	// Words taken by another table are not read again.
	taken := make([]bool, len(words))
	for i := range taken {
		taken[i] = true
	}
	if n := len(FindLeaders(words, taken)); n != 0 {
		t.Errorf("%d tables among taken words", n)
	}
}

func TestPageRef(t *testing.T) {
	for s, want := range map[string]bool{"12": true, "vii": true, "XIV": true, "A-1": true, "3.2": true, "B–12": true,
		"": false, "chapter": false, "A-B": false, "1-2-3": false, "123456789": false, "12a!": false} {
		if got := pageRef(s); got != want {
			t.Errorf("pageRef(%q) = %v", s, got)
		}
	}
}
