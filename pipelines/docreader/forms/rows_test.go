package forms

import (
	"slices"
	"testing"

	"boxd/engine/mupdf"
	"boxd/engine/raster"
)

func bx(x0, y0, x1, y1 float64) raster.Box { return raster.Box{X0: x0, Y0: y0, X1: x1, Y1: y1} }

// TestRows: which widget's row each line is read in.
func TestRows(t *testing.T) {
	w0, w1 := bx(600, 100, 1000, 130), bx(600, 140, 1000, 170)
	cases := []struct {
		name  string
		lines []Line
		ws    []raster.Box
		rtl   bool
		want  []int
	}{
		{"a label and its value across a wide gap",
			[]Line{{bx(100, 104, 250, 126), 0}, {bx(606, 104, 800, 126), 1}}, []raster.Box{w0}, false, []int{0, 0}},
		{"a block of stacked labels beside a column of widgets",
			[]Line{{bx(100, 104, 250, 126), 0}, {bx(100, 144, 280, 166), 0}, {bx(606, 104, 800, 126), 1}, {bx(606, 144, 700, 166), 1}},
			[]raster.Box{w0, w1}, false, []int{0, 1, 0, 1}},
		{"a heading over the labels stays apart",
			[]Line{{bx(100, 60, 400, 90), 0}, {bx(100, 104, 250, 126), 0}, {bx(100, 144, 280, 166), 0}},
			[]raster.Box{w0, w1}, false, []int{-1, 0, 1}},
		{"something between the line and the widget",
			[]Line{{bx(100, 104, 250, 126), 0}, {bx(300, 104, 500, 126), 1}}, []raster.Box{w0}, false, []int{-1, 0}},
		{"a label beside an unfilled widget",
			[]Line{{bx(100, 104, 250, 126), 0}}, []raster.Box{w0}, false, []int{0}},
		{"a label after its widget is not its label (a check box's option)",
			[]Line{{bx(1010, 104, 1100, 126), 0}}, []raster.Box{w0}, false, []int{-1}},
		{"a label above its widget is not on its row",
			[]Line{{bx(600, 70, 800, 92), 0}}, []raster.Box{w0}, false, []int{-1}},
		{"a paragraph one line of which ends beside a widget stays whole",
			[]Line{{bx(100, 64, 550, 86), 0}, {bx(100, 104, 550, 126), 0}, {bx(100, 184, 550, 206), 0}}, []raster.Box{w0}, false, []int{-1, -1, -1}},
		{"right to left: the label right of its widget",
			[]Line{{bx(1100, 104, 1200, 126), 0}, {bx(700, 104, 990, 126), 1}, {bx(100, 104, 500, 126), 2}}, []raster.Box{w0}, true, []int{0, 0, -1}},
		{"nested widgets: the smallest holds the line",
			[]Line{{bx(620, 104, 700, 126), 0}}, []raster.Box{bx(590, 90, 1010, 200), w0}, false, []int{1}},
		{"no widgets", []Line{{bx(100, 104, 250, 126), 0}}, nil, false, []int{-1}},
	}
	for _, c := range cases {
		if got := Rows(c.lines, c.ws, c.rtl); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestOrderWidgets: text, choice, check box and radio widgets guide
// reading order; buttons, signatures and widgets over a quarter of the
// page do not.
func TestOrderWidgets(t *testing.T) {
	ws := []mupdf.Field{
		{Type: "text", Box: bx(10, 10, 100, 30)},
		{Type: "checkbox", Box: bx(10, 40, 30, 60)},
		{Type: "signature", Box: bx(10, 70, 100, 90)},
		{Type: "button", Box: bx(10, 100, 100, 120)},
		{Type: "text", Box: bx(0, 0, 1000, 1000)},
		{Type: "text", Box: bx(10, 10, 10, 30)},
	}
	if got, want := OrderWidgets(ws, 1000, 1000), []raster.Box{ws[0].Box, ws[1].Box}; !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}
