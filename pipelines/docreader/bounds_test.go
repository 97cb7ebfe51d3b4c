package docreader

import (
	"context"
	"strings"
	"testing"

	"boxd/internal/problem"

	"github.com/go-pdf/fpdf"
)

// TestPageTextBounded: a page whose text layer holds more than
// MaxPageChars characters (300,000 one-point letters: a few hundred KB of
// PDF) is refused with 413 naming the limit instead of becoming a
// receipt of megabytes; a page of more than MaxPageElements elements
// likewise.
func TestPageTextBounded(t *testing.T) {
	p := fpdf.New("P", "pt", "Letter", "")
	p.AddPage()
	p.SetFont("Helvetica", "", 1)
	line := strings.Repeat("ab ", 333)
	for y := range 300 {
		p.Text(10, 10+float64(y)*2.5, line)
	}
	_, _, err := (&reader{}).readFile(context.Background(), pdfBytes(t, p), MaxPages)
	if pr, ok := problem.As(err); !ok || pr.Kind != problem.TooLarge || !strings.Contains(pr.Message, "at most 200000") {
		t.Fatalf("a page of 300,000 characters: %v", err)
	}
	pg := &Page{Page: 3, Elements: make([]Element, MaxPageElements+1)}
	if pr, ok := problem.As(elementBound(pg)); !ok || pr.Kind != problem.TooLarge || !strings.Contains(pr.Message, "page 3") {
		t.Errorf("5,001 elements: %v", elementBound(pg))
	}
	pg.Elements = pg.Elements[:MaxPageElements]
	if err := elementBound(pg); err != nil {
		t.Error(err)
	}
}
