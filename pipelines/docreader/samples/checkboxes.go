package samples

import (
	"image"
	"image/color"
)

// Check boxes on a scanned intake form: the reader's tests find them and
// read which are marked.

// CheckItem is one check box: its question (printed left of the boxes on
// its line, "" to share the previous one's line), its option and whether
// it is marked, and how (x, tick or fill).
type CheckItem struct {
	Question string
	Option   string
	Marked   bool
	Mark     string
}

// CheckboxForm is the scanned form's lines of check boxes.
func CheckboxForm() [][]CheckItem {
	return [][]CheckItem{
		{{Question: "Smoker", Option: "Yes", Marked: false}, {Option: "No", Marked: true, Mark: "x"}},
		{{Question: "Diabetes", Option: "Yes", Marked: true, Mark: "tick"}, {Option: "No", Marked: false}},
		{{Question: "Allergies", Option: "Yes", Marked: true, Mark: "fill"}, {Option: "No", Marked: false}, {Option: "Unsure", Marked: false}},
	}
}

// DrawCheckboxForm draws the form as a page scan (1224 × 1584, 144 DPI):
// a title, then one line per question with its boxes (24 px, 2 px
// outlines) each followed by its option.
func DrawCheckboxForm(lines [][]CheckItem) (*image.RGBA, error) {
	cv, err := newCanvas(1224, 1584, 28)
	if err != nil {
		return nil, err
	}
	black := color.RGBA{20, 20, 20, 255}
	cv.text("Patient intake (synthetic)", 120, 160, black, false)
	for i, l := range lines {
		y := 280 + i*90
		cv.text(l[0].Question+":", 120, y, black, false)
		x := 420
		for _, it := range l {
			bx, by := x, y-22
			cv.rect(bx, by, bx+24, by+2, black)
			cv.rect(bx, by+22, bx+24, by+24, black)
			cv.rect(bx, by, bx+2, by+24, black)
			cv.rect(bx+22, by, bx+24, by+24, black)
			if it.Marked {
				switch it.Mark {
				case "fill":
					cv.rect(bx+5, by+5, bx+19, by+19, black)
				case "tick":
					for k := 0; k < 6; k++ {
						cv.rect(bx+5+k, by+12+k, bx+8+k, by+14+k, black)
					}
					for k := 0; k < 10; k++ {
						cv.rect(bx+10+k, by+17-k, bx+13+k, by+19-k, black)
					}
				default: // x
					for k := 0; k < 14; k++ {
						cv.rect(bx+5+k, by+5+k, bx+7+k, by+7+k, black)
						cv.rect(bx+18-k, by+5+k, bx+20-k, by+7+k, black)
					}
				}
			}
			cv.text(it.Option, bx+38, y, black, false)
			x += 220
		}
	}
	return cv.done(), nil
}
