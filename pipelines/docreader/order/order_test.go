package order

import (
	"slices"
	"testing"

	"boxd/pipelines/docreader/raster"
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
