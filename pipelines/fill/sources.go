package fill

import (
	"fmt"
	"strings"

	"boxd/pipelines/fill/rules"
)

// Source is one of the person's documents, as text (a PDF or an image is
// read into text by the document reader first).
type Source struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Line is one numbered line of a source: what a value cites.
type Line struct {
	Doc  string `json:"doc_name"`
	Page int    `json:"page"`
	N    int    `json:"n"` // 1-based across the document
	Text string `json:"text"`
}

// Limits of sources (contract 2, section 8).
const (
	MaxSources    = 8
	MaxSourceSize = 8 << 20
	maxLineRunes  = 500
)

// Lines splits the sources into numbered lines: a form feed starts a new
// page, blank lines are dropped, and a long line is cut into pieces of at
// most 500 characters (each its own number) so a citation stays short.
func Lines(srcs []Source) ([]Line, error) {
	if len(srcs) > MaxSources {
		return nil, fmt.Errorf("fill: %d sources; at most %d", len(srcs), MaxSources)
	}
	var out []Line
	for _, s := range srcs {
		n := 0
		for p, page := range strings.Split(s.Text, "\f") {
			for _, raw := range strings.Split(page, "\n") {
				text := strings.Join(strings.Fields(raw), " ")
				for text != "" {
					piece := text
					if r := []rune(text); len(r) > maxLineRunes {
						piece, text = string(r[:maxLineRunes]), string(r[maxLineRunes:])
					} else {
						text = ""
					}
					n++
					out = append(out, Line{Doc: s.Name, Page: p + 1, N: n, Text: piece})
				}
			}
		}
	}
	return out, nil
}

// ForModel is a line as a model may see it: its secrets withheld.
func (l Line) ForModel() string {
	red, _ := rules.Redact(l.Text)
	return fmt.Sprintf("[%s:%d] %s", l.Doc, l.N, red)
}
