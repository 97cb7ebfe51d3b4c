package table

import (
	"strconv"
	"testing"

	"boxd/engine/raster"
)

// page is a white raster to draw on.
type page struct{ raster.Image }

func newPage(w, h int) *page {
	p := &page{raster.Image{W: w, H: h, Pix: make([]byte, w*h*3)}}
	for i := range p.Pix {
		p.Pix[i] = 255
	}
	return p
}

func (p *page) fill(x0, y0, x1, y1 int) {
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			copy(p.Pix[(y*p.W+x)*3:], []byte{0, 0, 0})
		}
	}
}

// word draws a word as a block of ink (letters as 8-pixel strokes with
// 2-pixel gaps) and returns it.
func (p *page) word(text string, x, y int) Word {
	w := 10 * len(text)
	for i := range len(text) {
		p.fill(x+10*i, y, x+10*i+8, y+16)
	}
	return Word{Text: text, Box: raster.Box{X0: float64(x), Y0: float64(y), X1: float64(x + w - 2), Y1: float64(y + 16)}}
}

// TestFindLatticeSpans: a ruled 3 × 3 grid whose top-left cell spans
// two rows (no line through it) and whose top-right cell spans two
// columns.
func TestFindLatticeSpans(t *testing.T) {
	p := newPage(600, 400)
	xs, ys := []int{50, 200, 350, 500}, []int{50, 100, 150, 200}
	for _, y := range ys {
		p.fill(50, y, 501, y+2)
	}
	for _, x := range xs {
		p.fill(x, 50, x+2, 201)
	}
	// Span the first column over rows 0 and 1: white out that stretch
	// of the line at y=100. Span row 0 over columns 1 and 2: white out
	// the line at x=350 between y=50 and y=100.
	for y := 100; y < 102; y++ {
		for x := 52; x < 200; x++ {
			copy(p.Pix[(y*p.W+x)*3:], []byte{255, 255, 255})
		}
	}
	for y := 52; y < 100; y++ {
		for x := 350; x < 352; x++ {
			copy(p.Pix[(y*p.W+x)*3:], []byte{255, 255, 255})
		}
	}
	words := []Word{
		p.word("Name", 60, 92), p.word("Result", 220, 67),
		p.word("A", 220, 117), p.word("B", 370, 117),
		p.word("C", 60, 167), p.word("D", 220, 167), p.word("E", 370, 167),
	}
	ts := Find(p.Image, words)
	if len(ts) != 1 {
		t.Fatalf("%d tables", len(ts))
	}
	tb := ts[0]
	if tb.Rows != 3 || tb.Cols != 3 || tb.Method != Lattice || len(tb.Words) != len(words) {
		t.Fatalf("table %d × %d %s, %d words", tb.Rows, tb.Cols, tb.Method, len(tb.Words))
	}
	want := map[string][4]int{"Name": {0, 0, 2, 1}, "Result": {0, 1, 1, 2}, "A": {1, 1, 1, 1}, "B": {1, 2, 1, 1}, "C": {2, 0, 1, 1}, "D": {2, 1, 1, 1}, "E": {2, 2, 1, 1}}
	for _, c := range tb.Cells {
		got := [4]int{c.Row, c.Col, c.RowSpan, c.ColSpan}
		name := words[c.Words[0]].Text
		if want[name] != got {
			t.Errorf("%s at %v, want %v", name, got, want[name])
		}
	}
}

// TestFindRejects: what is not a table. Prose between two rules (many
// words a cell); a large drawing of lines holding a few words; two
// columns of text between two rules.
func TestFindRejects(t *testing.T) {
	t.Run("prose between rules", func(t *testing.T) {
		p := newPage(700, 300)
		p.fill(40, 40, 660, 42)
		p.fill(40, 200, 660, 202)
		var words []Word
		for line := range 6 {
			x := 50
			for i := 0; x < 600; i++ {
				n := 2 + (i*7+line*5)%7 // words of 2 to 8 letters, breaking at different places
				w := p.word("wordlong"[:n], x, 60+22*line)
				words = append(words, w)
				x = int(w.Box.X1) + 14
			}
		}
		if ts := Find(p.Image, words); len(ts) != 0 {
			t.Errorf("found %d tables: %+v", len(ts), ts[0])
		}
	})
	t.Run("drawing of lines", func(t *testing.T) {
		p := newPage(700, 700)
		for i := range 21 {
			p.fill(40, 40+30*i, 641, 42+30*i)
			p.fill(40+30*i, 40, 42+30*i, 641)
		}
		words := []Word{p.word("a", 50, 50), p.word("b", 110, 110), p.word("c", 170, 170), p.word("d", 230, 230), p.word("e", 290, 290)}
		if ts := Find(p.Image, words); len(ts) != 0 {
			t.Errorf("found %d tables: %d × %d", len(ts), ts[0].Rows, ts[0].Cols)
		}
	})
	t.Run("two columns in a frame", func(t *testing.T) {
		p := newPage(700, 300)
		p.fill(40, 40, 660, 42)
		p.fill(40, 200, 660, 202)
		var words []Word
		for line := range 5 {
			words = append(words, p.word("left", 50, 60+25*line), p.word("right", 400, 60+25*line))
		}
		if ts := Find(p.Image, words); len(ts) != 0 {
			t.Errorf("found %d tables", len(ts))
		}
	})
}

// TestEdges: a thin run is a rule; a filled band gives its two edges; a
// tall block gives nothing.
func TestEdges(t *testing.T) {
	if e := edges(rule{horiz: true, a: 0, b: 100, c0: 10, c1: 12}, ruleMaxThick); len(e) != 1 {
		t.Errorf("thin: %v", e)
	}
	if e := edges(rule{horiz: true, a: 0, b: 100, c0: 10, c1: 40}, ruleMaxThick); len(e) != 2 || e[0].c0 != 10 || e[1].c1 != 40 {
		t.Errorf("band: %v", e)
	}
	if e := edges(rule{horiz: true, a: 0, b: 100, c0: 10, c1: 200}, ruleMaxThick); len(e) != 0 {
		t.Errorf("block: %v", e)
	}
	if e := edges(rule{a: 0, b: 100, c0: 10, c1: 40}, ruleMaxThick); len(e) != 0 {
		t.Errorf("vertical band: %v", e)
	}
}

// TestTransposedRules: vertical lines come out of the transposed map
// as rules along y at their x; a crop offsets nothing else.
func TestTransposedRules(t *testing.T) {
	p := newPage(300, 200)
	p.fill(20, 10, 22, 150)
	p.fill(100, 30, 103, 60)
	p.fill(200, 5, 201, 195)
	p.word("text", 40, 40) // letters 16 pixels tall: shorter than a rule
	m := newInkMap(p.Image)
	got, _ := m.cropTransposed(0, 0, m.w, m.h, nil).rules(true, ruleMinV, ruleMaxThick)
	want := []rule{{horiz: true, a: 10, b: 150, c0: 20, c1: 22}, {horiz: true, a: 30, b: 60, c0: 100, c1: 103}, {horiz: true, a: 5, b: 195, c0: 200, c1: 201}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("no rule %+v in %v", w, got)
		}
	}
	c := m.cropTransposed(90, 20, 110, 70, nil)
	if rs, _ := c.rules(true, ruleMinV, ruleMaxThick); len(rs) != 1 || rs[0] != (rule{horiz: true, a: 10, b: 40, c0: 10, c1: 13}) {
		t.Errorf("cropped: %v", rs)
	}
}

// BenchmarkFind: the table pass over a letter page at 144 DPI holding
// one ruled table.
func BenchmarkFind(b *testing.B) {
	p := newPage(1224, 1584)
	for i := range 7 {
		p.fill(100, 200+40*i, 1100, 202+40*i)
	}
	for _, x := range []int{100, 400, 700, 1100} {
		p.fill(x, 200, x+2, 442)
	}
	var words []Word
	for r := range 6 {
		for _, x := range []int{120, 420, 720} {
			words = append(words, p.word("cell", x, 212+40*r))
		}
	}
	b.ResetTimer()
	for range b.N {
		if ts := Find(p.Image, words); len(ts) != 1 {
			b.Fatalf("%d tables", len(ts))
		}
	}
}

// tinted is a page of one colour.
func tinted(w, h int, c [3]byte) *page {
	p := &page{raster.Image{W: w, H: h, Pix: make([]byte, w*h*3)}}
	for i := 0; i < len(p.Pix); i += 3 {
		copy(p.Pix[i:], c[:])
	}
	return p
}

// box draws a hollow square: white inside a light border, as a form's
// check box on a tinted page.
func (p *page) box(x, y, s int) {
	for yy := y; yy < y+s; yy++ {
		for xx := x; xx < x+s; xx++ {
			copy(p.Pix[(yy*p.W+xx)*3:], []byte{255, 255, 255})
		}
	}
}

// TestFindWithoutRules: a table with no lines at all (labels, a column
// of numbers, a column of white check boxes on a tinted page, a header
// over the right columns) is found from whitespace, header row included;
// three columns of prose are not a table (no column of short things).
func TestFindWithoutRules(t *testing.T) {
	p := tinted(1200, 700, [3]byte{204, 211, 235})
	var words []Word
	words = append(words, p.word("Cases", 690, 110), p.word("Funded", 940, 110))
	labels := []string{"Persons", "Children", "Women", "Elderly", "Migrants"}
	for i, l := range labels {
		y := 140 + 40*i
		words = append(words, p.word(l, 100, y), p.word(strconv.Itoa(10+7*i), 700, y))
		p.box(960, y, 16)
	}
	ts := Find(p.Image, words)
	if len(ts) != 1 {
		t.Fatalf("%d tables", len(ts))
	}
	tb := ts[0]
	if tb.Method != Stream || tb.Rows != 6 || tb.Cols != 3 {
		t.Fatalf("table %d × %d %s", tb.Rows, tb.Cols, tb.Method)
	}
	at := map[string][2]int{}
	for _, c := range tb.Cells {
		at[words[c.Words[0]].Text] = [2]int{c.Row, c.Col}
	}
	if at["Cases"] != [2]int{0, 1} || at["Funded"] != [2]int{0, 2} || at["Persons"] != [2]int{1, 0} || at["Migrants"] != [2]int{5, 0} || at["38"] != [2]int{5, 1} {
		t.Errorf("cells %v", at)
	}

	prose := newPage(1200, 700)
	words = nil
	for line := range 12 {
		for col := range 3 {
			x := 60 + 380*col
			for x < 60+380*col+330 {
				n := 3 + (line*5+col*3+x/7)%6
				w := prose.word("wordlong"[:n], x, 60+30*line)
				words = append(words, w)
				x = int(w.Box.X1) + 12
			}
		}
	}
	if ts := Find(prose.Image, words); len(ts) != 0 {
		t.Errorf("three columns of prose: %d tables (%d × %d)", len(ts), ts[0].Rows, ts[0].Cols)
	}
}

// TestCaptionAndPhrase: a caption is "Table" (or Figure, Exhibit,
// Chart) with a number beside it; a phrase runs across a column only
// with a fifth of it on each side (a right-aligned header word reaching
// past a gutter's middle does not).
func TestCaptionAndPhrase(t *testing.T) {
	w := func(s string, x0, x1 float64) Word {
		return Word{Text: s, Box: raster.Box{X0: x0, Y0: 100, X1: x1, Y1: 120}}
	}
	for _, c := range []struct {
		words []Word
		want  bool
	}{
		{[]Word{w("Table", 10, 60), w("3.", 66, 80)}, true},
		{[]Word{w("TABLE", 10, 60), w("IV", 66, 80)}, true},
		{[]Word{w("Table", 10, 60), w("of", 66, 80)}, false},
		{[]Word{w("Table", 10, 60), w("3", 200, 210)}, false},
		{[]Word{w("Cable", 10, 60), w("3", 66, 80)}, false},
	} {
		if got := captionAt(c.words, 0); got != c.want {
			t.Errorf("%q %q: caption %v, want %v", c.words[0].Text, c.words[1].Text, got, c.want)
		}
	}
	men, women := w("Men", 100, 140), w("Women", 197, 262)
	if phraseAcross([]Word{men, women}, 200, 90, 130) {
		t.Error("a right-aligned header word 3 pixels over the cut spans it")
	}
	if !phraseAcross([]Word{w("Employed", 160, 240)}, 200, 90, 130) {
		t.Error("a header centred over the cut does not span it")
	}
	if !phraseAcross([]Word{w("Number", 150, 200), w("of", 205, 220), w("persons", 226, 290)}, 203, 90, 130) {
		t.Error("a phrase whose space falls on the cut does not span it")
	}
}
