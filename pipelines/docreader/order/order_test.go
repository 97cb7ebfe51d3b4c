package order

import (
	"slices"
	"testing"

	"boxd/engine/raster"
)

func box(x0, y0, x1, y1 float64) raster.Box { return raster.Box{X0: x0, Y0: y0, X1: x1, Y1: y1} }

// TestOrder: a header, a full-width title, two columns whose paragraph
// breaks line up (each column read whole, left first), and a footer;
// right to left, the columns swap.
func TestOrder(t *testing.T) {
	bs := []Block{
		{Box: box(60, 1500, 900, 1520), Size: 10, Place: Footer}, // 0
		{Box: box(520, 200, 900, 300), Size: 10},                 // 1 right column, first paragraph
		{Box: box(60, 200, 440, 300), Size: 10},                  // 2 left column, first paragraph
		{Box: box(60, 320, 440, 420), Size: 10},                  // 3 left, second
		{Box: box(520, 320, 900, 420), Size: 10},                 // 4 right, second
		{Box: box(60, 100, 900, 150), Size: 20},                  // 5 title
		{Box: box(60, 20, 900, 40), Size: 10, Place: Header},     // 6
	}
	if got, want := Order(slices.Clone(bs), 1000, false), []int{6, 5, 2, 3, 1, 4, 0}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if got, want := Order(slices.Clone(bs), 1000, true), []int{6, 5, 1, 4, 2, 3, 0}; !slices.Equal(got, want) {
		t.Errorf("right to left: %v, want %v", got, want)
	}
	if got := Order(nil, 1000, false); len(got) != 0 {
		t.Errorf("no blocks: %v", got)
	}
}

// TestOrderGroups: a form's labels (left) and values (right, across a
// wide gap) read as two columns when nothing ties them; grouped, each
// label is read with its value, row by row. Two column pairs of grouped
// rows are two columns; right to left, the value (left of its label) is
// read after it; a group of one block is a block.
func TestOrderGroups(t *testing.T) {
	rows := func(x0, x1, vx0, vx1 float64, n, group int) []Block {
		var bs []Block
		for i := range n {
			y := 100 + 40*float64(i)
			bs = append(bs, Block{Box: box(x0, y, x1, y+28), Size: 20, Group: group + i},
				Block{Box: box(vx0, y+1, vx1, y+29), Size: 20, Group: group + i})
		}
		return bs
	}
	ungrouped := func(bs []Block) []Block {
		out := slices.Clone(bs)
		for i := range out {
			out[i].Group = 0
		}
		return out
	}
	form := rows(100, 250, 600, 900, 4, 1) // label i at 2i, value at 2i+1
	if got, want := Order(ungrouped(form), 1224, false), []int{0, 2, 4, 6, 1, 3, 5, 7}; !slices.Equal(got, want) {
		t.Errorf("ungrouped: %v, want the label column, then the value column %v", got, want)
	}
	if got, want := Order(slices.Clone(form), 1224, false), []int{0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(got, want) {
		t.Errorf("grouped: %v, want %v", got, want)
	}
	// The value's box starts a pixel above its label's: still label first.
	lifted := slices.Clone(form)
	lifted[1].Box.Y0 = lifted[0].Box.Y0 - 1
	if got := Order(lifted, 1224, false); got[0] != 0 || got[1] != 1 {
		t.Errorf("a value set a little higher: %v", got)
	}
	// Two column pairs: the left pair's rows, then the right pair's.
	two := append(rows(100, 250, 300, 550, 3, 1), rows(650, 800, 850, 1100, 3, 10)...)
	if got, want := Order(two, 1224, false), []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; !slices.Equal(got, want) {
		t.Errorf("two column pairs: %v, want %v", got, want)
	}
	// Right to left: labels on the right, values on the left.
	rtl := rows(900, 1100, 100, 600, 3, 1)
	if got, want := Order(rtl, 1224, true), []int{0, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("right to left: %v, want %v", got, want)
	}
	// Unfilled fields: labels alone in their groups read as blocks.
	var labels []Block
	for i, b := range form {
		if i%2 == 0 {
			labels = append(labels, b)
		}
	}
	if got, want := Order(labels, 1224, false), []int{0, 1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("labels alone: %v, want %v", got, want)
	}
	// A page header in a group is still a header.
	withHeader := slices.Clone(form)
	withHeader = append(withHeader, Block{Box: box(100, 10, 400, 30), Size: 10, Place: Header, Group: 1})
	if got := Order(withHeader, 1224, false); got[0] != 8 || got[1] != 0 || got[2] != 1 {
		t.Errorf("header in a group: %v", got)
	}
}
